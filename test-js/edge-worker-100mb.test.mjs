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
import { buildExample, removeBuild, startWorkerd, sampleMemory, mib } from "./lib/edge-worker.mjs";
import { tar, gzip, jsonBytes, producerResult, runFiles, kvledgerCli } from "./lib/uploads.mjs";
import { streamOf } from "./lib/upload-classes.mjs";
import { MEMORY_LIMIT } from "./lib/edge-load.mjs";

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
  try {
    const memory = sampleMemory(worker.pid, 20);
    const t0 = performance.now();
    const init = typeof body === "function" ? { body: body(), duplex: "half" } : { body };
    const res = await fetch(`${worker.base}/`, { method: "POST", ...init, headers: { "content-type": type }, signal: AbortSignal.timeout(120_000) });
    const verdict = await res.json();
    const ms = performance.now() - t0;
    const mem = memory.stop();
    assert.doesNotMatch(worker.output(), /Uncaught|edge-worker: /, worker.output());
    return { status: res.status, verdict, ms, memory: mem };
  } finally {
    await worker.stop();
  }
}

/** Validated inside 128 MiB, or refused by a named limit within 1 s; logs which and the figures. */
function judge(t, what, r) {
  const first = r.verdict.errors[0];
  const named = first?.limit ? `${first.limit.name} (limit ${first.limit.value}, observed ${first.limit.observed ?? "?"})` : "";
  t.diagnostic(
    `${what}: ${r.status} ${r.verdict.outcome}${named ? ` by ${named}` : ""} in ${r.ms.toFixed(0)} ms; workerd RSS start ${mib(r.memory.start)} MiB, peak ${mib(r.memory.peak)} MiB, end ${mib(r.memory.end)} MiB`,
  );
  assert.equal(r.status, STATUS[r.verdict.outcome]);
  if (r.verdict.outcome === "limit_exceeded") {
    assert.ok(first.limit?.name, "the limit is named");
    assert.ok(r.ms < 1000, `refused in ${r.ms} ms, not within 1 s`);
  } else {
    assert.notEqual(r.verdict.outcome, "malformed", JSON.stringify(r.verdict.errors));
    assert.ok(r.memory.peak <= MEMORY_LIMIT, `validated with workerd at ${mib(r.memory.peak)} MiB`);
  }
}

test("100 MB tar with Content-Length: answered within 1 s by a named limit, or validated inside 128 MiB", async (t) => {
  t.diagnostic(`bundle: ${mib(bundle.length)} MiB tar of a synth run (${readdirSync(path.join(run, "aiperf_artifacts")).join(", ")})`);
  judge(t, "tar, Content-Length", await sendFresh(bundle, "application/x-tar"));
});

test("100 MB tar sent chunked (no Content-Length): the same", async (t) => {
  judge(t, "tar, chunked", await sendFresh(() => streamOf(bundle, { chunk: 1 << 20 }), "application/x-tar"));
});

test("the same bundle gzip'd (100 MB inflated): the same", async (t) => {
  const gz = gzip(bundle);
  t.diagnostic(`tar.gz: ${mib(gz.length)} MiB sent, ${mib(bundle.length)} MiB inflated`);
  judge(t, "tar.gz, Content-Length", await sendFresh(gz, "application/gzip"));
});
