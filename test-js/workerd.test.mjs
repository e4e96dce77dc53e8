// A real workerd running test-js/workerd/worker.js, which imports "kvledger" through the
// package's `workerd` entry (static .wasm import + initSync), with no bundler, and
// "kvledger/pricing" through its own `workerd` entry (the pricing module).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { pricePoint } from "kvledger";
import { ROOT, TIMESLICES, fixtureText, literal } from "./lib/util.mjs";
import { freePort, waitForHttp, stop } from "./lib/proc.mjs";

let child;
let base;
let output = "";

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(
    path.join(ROOT, "node_modules", ".bin", "workerd"),
    ["serve", path.join(ROOT, "test-js", "workerd", "config.capnp"), "--socket-addr", `http=127.0.0.1:${port}`],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  await waitForHttp(`${base}/`, 20_000, child, () => output);
});

after(async () => {
  if (child) await stop(child);
});

const post = (name, body) =>
  fetch(`${base}/?name=${encodeURIComponent(name)}`, {
    method: "POST",
    body,
    signal: AbortSignal.timeout(10_000),
  });

test("workerd: the worker is up and initialised", async () => {
  const res = await fetch(`${base}/`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { contract_version: "kvledger/1" });
});

test("workerd: warmUp accounts its generated runs", async () => {
  const res = await fetch(`${base}/warm-up`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200, output);
  const w = await res.json();
  assert.equal(w.runs, 4, JSON.stringify(w));
  assert.equal(w.aborted, false);
});

test("workerd: a real server-metrics export is inspected, epoch ns exact", async () => {
  const text = fixtureText(TIMESLICES);
  const res = await post("server_metrics_export.json", text);
  assert.equal(res.status, 200, output);
  const r = await res.json();
  assert.equal(r.files[0].kind, "server_metrics_json");
  assert.equal(r.endpoints.length, 1);
  assert.equal(r.endpoints[0].endpoint_url, "http://localhost:8000/metrics");
  assert.equal(r.endpoints[0].first_fetch_ns, literal(text, "first_fetch_ns"));
  assert.equal(r.endpoints[0].last_fetch_ns, literal(text, "last_fetch_ns"));
});

test("workerd: garbage gives 400 with the error code", async () => {
  const res = await post("server_metrics_export.json", "garbage{");
  assert.equal(res.status, 400);
  const { error, instance } = await res.json();
  assert.equal(instance, true);
  assert.equal(error.name, "KvledgerError");
  assert.equal(error.code, "JSON_SYNTAX");
  assert.equal(error.file, "server_metrics_export.json");
  assert.equal(error.line, 1);

  const res2 = await post("notes.txt", "hello");
  assert.equal(res2.status, 400);
  assert.equal((await res2.json()).error.code, "NO_ARTIFACTS");

  // Still healthy afterwards.
  const ok = await post("server_metrics_export.json", fixtureText(TIMESLICES));
  assert.equal(ok.status, 200);
});

test("workerd: kvledger/pricing (its own module, statically imported) prices a point as Node does", async () => {
  const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: { status: "VALID_COMPLETE", pricing_eligible: true, rates: { overall: { value: 0.7 } } } } };
  const res = await fetch(`${base}/price`, { method: "POST", body: JSON.stringify(point), signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, output);
  assert.deepStrictEqual(await res.json(), pricePoint(point));
  const bad = await fetch(`${base}/price`, { method: "POST", body: JSON.stringify({ observed: { throughput_per_gpu: "fast" } }), signal: AbortSignal.timeout(10_000) });
  assert.equal(bad.status, 400);
  const { error, instance } = await bad.json();
  assert.equal(instance, true);
  assert.equal(error.code, "BAD_OPTIONS");
});
