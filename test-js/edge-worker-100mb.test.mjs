// A 100 MB upload with raw artifacts (a `kvledger synth --target-bytes 100MB` run bundled as
// tar) sent to examples/edge-worker in the real workerd, at the default limits: either
// validated by streaming with workerd inside 128 MiB, or refused by a named limit within 1 s.
// Each way of sending it is timed and workerd's memory sampled (a fresh workerd per upload).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as k from "kvledger";
import { buildExample, removeBuild, startWorkerd, sampleMemory, sampleIsolate, mib } from "./lib/edge-worker.mjs";
import { tar, gzip, jsonBytes, producerResult, runFiles, kvledgerCli } from "./lib/uploads.mjs";
import { streamOf } from "./lib/upload-classes.mjs";
import { MEMORY_LIMIT, postChunked, postExpectContinue } from "./lib/edge-load.mjs";

const STATUS = { accepted: 200, limit_exceeded: 413, malformed: 400, claims_refused: 422 };

let dist;
let run;
let bundle;

before(() => {
  dist = buildExample();
  run = mkdtempSync(path.join(tmpdir(), "kvledger-edge-100mb-"));
  execFileSync(kvledgerCli(), ["synth", "--engine", "vllm", "--topology", "1P1D", "--tiers", "gpu,cpu", "--seed", "3", "--target-bytes", "100MB", "--out", run], { stdio: "pipe" });
  const art = path.join(run, "aiperf_artifacts");
  const entries = readdirSync(art).sort().map((n) => ({ name: `aiperf_artifacts/${n}`, bytes: new Uint8Array(readFileSync(path.join(art, n))) }));
  entries.push({ name: "launch.json", bytes: new Uint8Array(readFileSync(path.join(run, "launch.json"))) });
  // The honest claims, so a validation that gets through accepts it.
  const acc = k.accountRun(runFiles(entries));
  bundle = tar([{ name: "result.json", bytes: jsonBytes(producerResult(acc)) }, ...entries]);
});

after(() => {
  removeBuild(dist);
  if (run) rmSync(run, { recursive: true, force: true });
});

/**
 * Sends `body` (bytes, or a stream factory for a chunked upload) to a fresh workerd; resolves
 * to {status, verdict, ms, memory}.
 */
async function sendFresh(body, type) {
  const worker = await startWorkerd(dist);
  // The samplers are stopped on every path: a sampler left running keeps this file's process
  // alive, and node --test would wait for it for ever.
  let memory;
  let isolate;
  try {
    memory = sampleMemory(worker.pid, 20);
    isolate = sampleIsolate(worker.inspector, 20);
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    let status;
    let text;
    if (typeof body === "function") {
      ({ status, text } = await postChunked(`${worker.base}/`, body(), { "content-type": type }, 120_000));
    } else {
      ({ status, text } = await postExpectContinue(`${worker.base}/`, body, { "content-type": type }, 120_000));
    }
    const ms = performance.now() - t0;
    const mem = memory.stop();
    memory = undefined;
    const iso = await isolate.stop();
    isolate = undefined;
    assert.doesNotMatch(worker.output(), /Uncaught|edge-worker: /, worker.output());
    return { status, verdict: JSON.parse(text), ms, memory: mem, isolate: iso };
  } finally {
    memory?.stop();
    await isolate?.stop();
    await worker.stop();
  }
}

/** Validated inside 128 MiB, or refused by a named limit within 1 s; logs which and the figures. */
function judge(t, what, r, { refusalMs = 1000 } = {}) {
  const first = r.verdict.errors[0];
  const named = first?.limit ? `${first.limit.name} (limit ${first.limit.value}, observed ${first.limit.observed ?? "?"})` : "";
  const other = first && !first.limit ? ` ${first.code}${first.artifact_code ? `/${first.artifact_code}` : ""}: ${first.message}` : "";
  t.diagnostic(
    `${what}: ${r.status} ${r.verdict.outcome}${named ? ` by ${named}` : ""}${other} in ${r.ms.toFixed(0)} ms; isolate (JS heap committed + backing stores) start ${mib(r.isolate.start)} MiB, peak ${mib(r.isolate.peak)} MiB; workerd process RSS start ${mib(r.memory.start)} MiB, peak ${mib(r.memory.peak)} MiB, end ${mib(r.memory.end)} MiB`,
  );
  assert.equal(r.status, STATUS[r.verdict.outcome]);
  if (r.verdict.outcome === "limit_exceeded") {
    assert.ok(first.limit?.name, "the limit is named");
    assert.ok(r.ms < refusalMs, `refused in ${r.ms} ms, not within ${refusalMs} ms`);
  } else {
    assert.notEqual(r.verdict.outcome, "malformed", JSON.stringify(r.verdict.errors));
    assert.ok(r.isolate.peak <= MEMORY_LIMIT, `validated with the isolate at ${mib(r.isolate.peak)} MiB`);
  }
}

test("100 MB tar with Content-Length: answered within 1 s by a named limit, or validated inside 128 MiB", async (t) => {
  t.diagnostic(`bundle: ${mib(bundle.length)} MiB tar of a synth run (${readdirSync(path.join(run, "aiperf_artifacts")).join(", ")})`);
  judge(t, "tar, Content-Length", await sendFresh(bundle, "application/x-tar"));
});

// Without a declared length the worker must read up to the `bytes` limit (32 MiB) to know the
// body is over it: that read, through workerd's body stream and the validator's parse of the
// artifacts on the way, takes seconds here (a worker that only drains the body takes ~1 s for
// 32 MiB), so the refusal cannot come within 1 s. Checked: it is the named limit, and reading
// stopped there (not 100 MB). The client keeps the answer whenever the reset lets it (below).
test("100 MB tar sent chunked (no Content-Length): refused by the bytes limit once 32 MiB are read", async (t) => {
  let sent = 0;
  const counted = () => {
    const reader = streamOf(bundle, { chunk: 1 << 20 }).getReader();
    return new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        sent += value.length;
        controller.enqueue(value);
      },
      cancel: (why) => reader.cancel(why),
    });
  };
  // workerd answers the 413 and closes the connection with the rest of the upload unread; the
  // close can reach the client as a reset (EPIPE/ECONNRESET) before it has read the answer, the
  // kernel then dropping it: a race of TCP, not of the worker. Up to 5 tries; each loss is shown
  // (three lost in a row once in a full suite run on a loaded 2-core machine).
  const TRIES = 5;
  let r;
  for (let attempt = 1; !r && attempt <= TRIES; attempt++) {
    sent = 0;
    try {
      r = await sendFresh(counted, "application/x-tar");
    } catch (e) {
      if (!["EPIPE", "ECONNRESET"].includes(e?.code) || attempt === TRIES) throw e;
      t.diagnostic(`try ${attempt}: the answer was lost to the connection's reset (${e.code}) after ${mib(sent)} MiB sent`);
    }
  }
  judge(t, "tar, chunked", r, { refusalMs: 30_000 });
  t.diagnostic(`the client's stream gave ${mib(sent)} MiB of ${mib(bundle.length)} MiB before the answer`);
  assert.equal(r.verdict.errors[0].limit.name, "bytes");
  assert.equal(r.verdict.errors[0].byte_offset, r.verdict.limits.bytes);
  assert.ok(sent < bundle.length / 2, `${sent} B of the body were taken`);
});

// Inflated, the run's artifacts are read within the memory_budget (48 MiB of the module's heap):
// validated inside 128 MiB, or else refused naming memory_budget (413).
test("the same bundle gzip'd (100 MB inflated): validated inside 128 MiB, or refused by a named limit within 1 s", async (t) => {
  const gz = gzip(bundle);
  t.diagnostic(`tar.gz: ${mib(gz.length)} MiB sent, ${mib(bundle.length)} MiB inflated`);
  judge(t, "tar.gz, Content-Length", await sendFresh(gz, "application/gzip"));
});
