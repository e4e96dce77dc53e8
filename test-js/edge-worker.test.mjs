// examples/edge-worker bundled by Wrangler (its `npm run build`) and served by the real workerd
// binary on loopback (what its `npm run start` runs): every class of upload gets its status and
// verdict, an oversize upload is refused before its body is read, and the same upload gives the
// same verdict JSON in Node (validateUpload called directly), Chromium and workerd.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as k from "kvledger";
import { ROOT } from "./lib/util.mjs";
import { EXAMPLE, buildExample, removeBuild, startWorkerd, mib } from "./lib/edge-worker.mjs";
import { freePort, waitForHttp } from "./lib/proc.mjs";
import { buildBodies, uploadClasses } from "./lib/upload-classes.mjs";
import { sendOne, postExpectContinue } from "./lib/edge-load.mjs";
import { tar, jsonBytes, producerResult, runFiles, kvledgerCli } from "./lib/uploads.mjs";
import { serveStatic } from "./lib/serve.mjs";
import { launchChromium } from "./lib/chromium.mjs";

let worker;
let dist;
let usage;
let bodies;
let classes;

before(async () => {
  dist = buildExample();
  worker = await startWorkerd(dist);
  usage = await (await fetch(`${worker.base}/`, { signal: AbortSignal.timeout(10_000) })).json();
  bodies = buildBodies(k, { bytesLimit: usage.limits.bytes });
  classes = uploadClasses(bodies);
});

after(async () => {
  await worker?.stop();
  removeBuild(dist);
});

const post = (body, headers = {}, extra = {}) =>
  fetch(`${worker.base}/`, { method: "POST", body, headers, signal: AbortSignal.timeout(60_000), ...extra });

/** Fails when workerd logged an uncaught error or the worker's own 500 line. */
function assertNoWorkerErrors() {
  assert.doesNotMatch(worker.output(), /Uncaught|edge-worker: |Error: /, worker.output());
}

test("GET / answers usage with the effective limits; other methods 405, other paths 404", async () => {
  assert.equal(usage.contract_version, k.contractVersion());
  assert.deepEqual(Object.keys(usage.limits).sort(), Object.keys((await k.validateUpload(new Uint8Array(0))).limits).sort());
  assert.ok(Number.isSafeInteger(usage.limits.bytes) && usage.limits.bytes > 0);
  for (const method of ["PUT", "DELETE", "PATCH"]) {
    const res = await fetch(`${worker.base}/`, { method, body: "x", signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET, HEAD, POST");
    assert.equal((await res.json()).error.code, "METHOD_NOT_ALLOWED");
  }
  const missing = await fetch(`${worker.base}/nope`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, "NOT_FOUND");
});

test("every class of upload: its status, outcome, error code and limit name", async (t) => {
  for (const c of classes) {
    await t.test(c.name, async () => {
      const r = await sendOne(worker.base, c);
      assert.ok(r.ok, `${c.name}: ${r.status} ${r.problem}`);
    });
  }
  assertNoWorkerErrors();
});

test("a valid bundle: accepted, every claim verified against the raw artifacts", async () => {
  const res = await post(bodies.bundleGz, { "content-type": "application/gzip" });
  assert.equal(res.status, 200);
  const v = await res.json();
  assert.equal(v.accepted, true);
  assert.deepEqual(v.errors, []);
  assert.ok(v.claims.length > 0);
  const rate = v.claims.find((c) => c.field === "server_metrics.cache.gpu_cache_hit_rate");
  assert.equal(rate?.status, "verified", JSON.stringify(v.claims));
  assert.equal(v.recomputed?.cache_validity.status, "VALID_COMPLETE");
});

test("an aborted upload: no answer to the client, no error in the worker, which stays healthy", async () => {
  const c = classes.find((x) => x.name === "aborted_body");
  for (let i = 0; i < 5; i++) {
    const r = await sendOne(worker.base, c);
    assert.equal(r.status, "aborted", r.problem);
  }
  const ok = await post(bodies.resultOnly, { "content-type": "application/json" });
  assert.equal(ok.status, 200);
  assertNoWorkerErrors();
});

/** Median of `n` timings of `fn` (ms). */
async function medianMs(n, fn) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[n >> 1];
}

test("an oversize upload is refused from its Content-Length before its body is read: timed against a valid upload of similar size", async (t) => {
  const limit = usage.limits.bytes;
  // A real run of about the limit's size, so the valid upload is as large as one may be.
  const dir = mkdtempSync(path.join(tmpdir(), "kvledger-edge-similar-"));
  try {
    const mb = Math.floor((limit * 0.9) / 1e6);
    execFileSync(kvledgerCli(), ["synth", "--engine", "vllm", "--topology", "agg", "--seed", "5", "--target-bytes", `${mb}MB`, "--out", dir], { stdio: "pipe" });
    const art = path.join(dir, "aiperf_artifacts");
    const entries = readdirSync(art).sort().map((n) => ({ name: `aiperf_artifacts/${n}`, bytes: new Uint8Array(readFileSync(path.join(art, n))) }));
    entries.push({ name: "launch.json", bytes: new Uint8Array(readFileSync(path.join(dir, "launch.json"))) });
    const acc = k.accountRun(runFiles(entries));
    const valid = tar([{ name: "result.json", bytes: jsonBytes(producerResult(acc)) }, ...entries]);
    assert.ok(valid.length <= limit && valid.length > limit * 0.8, `${valid.length} B`);
    const oversize = new Uint8Array(limit + 1);

    // Both sent as a careful client sends a large body (Expect: 100-continue), the same way.
    const send = (body) => postExpectContinue(`${worker.base}/`, body, { "content-type": "application/x-tar" });
    let validVerdict;
    const validMs = await medianMs(3, async () => {
      const res = await send(valid);
      validVerdict = JSON.parse(res.text);
      assert.equal(res.status, 200, JSON.stringify(validVerdict.errors));
    });
    let refused;
    const oversizeMs = await medianMs(3, async () => {
      const res = await send(oversize);
      refused = JSON.parse(res.text);
      assert.equal(res.status, 413);
    });
    assert.equal(refused.outcome, "limit_exceeded");
    assert.deepEqual(refused.errors[0].limit, { name: "bytes", value: limit, observed: limit + 1 });
    assert.equal(refused.limits.bytes, limit);
    t.diagnostic(`valid ${mib(valid.length)} MiB tar (${statSync(path.join(art, "server_metrics_export.json")).size} B JSON export): ${validMs.toFixed(1)} ms (median of 3), accepted=${validVerdict.accepted}`);
    t.diagnostic(`oversize ${mib(oversize.length)} MiB with Content-Length: 413 in ${oversizeMs.toFixed(1)} ms (median of 3): ${(validMs / oversizeMs).toFixed(0)}x faster, ${(validMs - oversizeMs).toFixed(1)} ms less`);
    assert.ok(oversizeMs * 5 < validMs, `refusal ${oversizeMs} ms vs valid ${validMs} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assertNoWorkerErrors();
});

test("the same upload gives the same verdict JSON in Node, Chromium and workerd", async (t) => {
  const names = ["valid_result_json", "valid_bundle_gzip", "lying_rate", "lying_eligibility", "bad_tar_traversal", "duplicate_key", "deep_nesting", "out_of_range"];
  const cases = {
    valid_result_json: bodies.resultOnly,
    valid_bundle_gzip: bodies.bundleGz,
    lying_rate: bodies.lyingRate,
    lying_eligibility: bodies.lyingEligible,
    bad_tar_traversal: bodies.badTarTraversal,
    duplicate_key: bodies.duplicateKey,
    deep_nesting: bodies.deepNesting,
    out_of_range: bodies.outOfRange,
  };
  const server = await serveStatic(ROOT);
  const browser = await launchChromium();
  t.after(async () => {
    await browser.close();
    await server.close();
  });
  const page = await browser.newPage();
  // Any page of the origin: the package's browser entry is imported into it below.
  await page.goto(`${server.base}/package.json`);
  for (const name of names) {
    const bytes = cases[name];
    const copy = bytes.slice();
    const node = await k.validateUpload(bytes);
    assert.deepStrictEqual(bytes, copy, "the caller's buffer is unchanged");
    const res = await post(bytes);
    const workerd = await res.json();
    const chromium = await page.evaluate(async (b64) => {
      const m = await import("/js/web.js");
      await m.default();
      const raw = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      return JSON.parse(JSON.stringify(await m.validateUpload(new Blob([raw]).stream())));
    }, Buffer.from(bytes).toString("base64"));
    const nodeJson = JSON.parse(JSON.stringify(node));
    assert.deepStrictEqual(workerd, nodeJson, `${name}: workerd differs from Node`);
    assert.deepStrictEqual(chromium, nodeJson, `${name}: Chromium differs from Node`);
    t.diagnostic(`${name}: ${node.outcome} (${[...node.errors, ...node.warnings].map((e) => e.code).join(", ") || "no issue"}) in all three`);
  }
});

test("npm run dev (wrangler dev, local workerd, offline) serves the same worker", async (t) => {
  const port = await freePort();
  let output = "";
  // Its own process group, so stopping it stops npm, wrangler and the workerd it runs.
  const child = spawn("npm", ["run", "dev"], {
    cwd: EXAMPLE,
    env: { ...process.env, PORT: String(port), CI: "true", WRANGLER_LOG_PATH: path.join(dist, "wrangler-dev-logs"), PATH: `${path.join(ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH}` },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  t.after(() => stopGroup(child));
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`, 60_000, child, () => output);
  const got = await (await fetch(`${base}/`, { signal: AbortSignal.timeout(10_000) })).json();
  assert.deepStrictEqual(got, usage);
  const res = await fetch(`${base}/`, { method: "POST", body: bodies.bundleGz, headers: { "content-type": "application/gzip" }, signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200, output);
  assert.deepStrictEqual(await res.json(), JSON.parse(JSON.stringify(await k.validateUpload(bodies.bundleGz))));
});

/** SIGTERM to the process group `child` leads, SIGKILL after 5 s; resolves when it has exited. */
function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => process.kill(-child.pid, "SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    process.kill(-child.pid, "SIGTERM");
  });
}

test("a malformed UPLOAD_LIMITS is a deployment mistake: 500 INTERNAL naming the limit, never a crash", async () => {
  const bad = await startWorkerd(dist, { limits: { byte: 1 } });
  try {
    for (const init of [{}, { method: "POST", body: bodies.resultOnly }]) {
      const res = await fetch(`${bad.base}/`, { ...init, signal: AbortSignal.timeout(10_000) });
      assert.equal(res.status, 500);
      const { error } = await res.json();
      assert.equal(error.code, "INTERNAL");
      assert.equal(error.cause_code, "BAD_OPTIONS");
      assert.match(error.message, /limits\.byte/);
    }
    assert.doesNotMatch(bad.output(), /Uncaught/);
    // workerd prints the worker's console: the 500 is logged, so the load test's log check can see one.
    assert.match(bad.output(), /edge-worker: INTERNAL/);
  } finally {
    await bad.stop();
  }
});
