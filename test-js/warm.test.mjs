// warmUp(): its generated runs are read as what they claim to be (each reader's common path,
// not an error), it changes no later result, a signal stops it between runs, and malformed
// options are refused by path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { accountRun, inspectRun, warmUp, KvledgerError } from "../js/node.mjs";
import { WARM_RUNS } from "../js/warm.js";
import { ROOT } from "./lib/util.mjs";

const KINDS = {
  "server_metrics_export.csv": "server_metrics_csv",
  "server_metrics_export.json": "server_metrics_json",
  "server_metrics_export.jsonl": "server_metrics_jsonl",
  "profile_export.jsonl": "profile_jsonl",
  "before.prom": "prometheus_text",
  "after.prom": "prometheus_text",
};

test("every generated run is read whole, each file as its kind, and accounted with its roles known", () => {
  const seen = new Set();
  for (const make of WARM_RUNS) {
    const files = make();
    const inspection = inspectRun(files);
    assert.deepEqual(inspection.ignored, [], "nothing ignored");
    for (const f of inspection.files) {
      if (KINDS[f.name]) {
        assert.equal(f.kind, KINDS[f.name], f.name);
        seen.add(f.kind);
      }
    }
    const accounting = accountRun(files);
    assert.deepEqual(accounting.cache_validity.roles.unresolved ?? [], [], "roles resolved by launch.json");
    assert.ok(accounting.counters && Object.keys(accounting.counters).length > 0, "counters accounted");
  }
  assert.equal(seen.size, 5, `every reader is warmed: ${[...seen].join(", ")}`);
});

test("warmUp accounts every run and changes no later result", async () => {
  const dir = path.join(ROOT, "examples", "synth", "vllm-agg-clean");
  const files = readdirSync(path.join(dir, "aiperf_artifacts"))
    .map((name) => ({ name, bytes: readFileSync(path.join(dir, "aiperf_artifacts", name)) }))
    .concat([{ name: "launch.json", bytes: readFileSync(path.join(dir, "launch.json")) }]);
  const before = JSON.stringify(accountRun(files));
  const summary = await warmUp();
  assert.equal(summary.runs, WARM_RUNS.length);
  assert.equal(summary.aborted, false);
  assert.ok(summary.bytes > 1e6 && summary.seconds >= 0, JSON.stringify(summary));
  assert.equal(JSON.stringify(accountRun(files)), before);
});

test("a signal stops warmUp between runs", async () => {
  const stop = new AbortController();
  stop.abort();
  assert.deepEqual({ ...(await warmUp({ signal: stop.signal })), seconds: 0 }, { runs: 0, bytes: 0, seconds: 0, aborted: true });
  const later = new AbortController();
  const running = warmUp({ signal: later.signal });
  // The first run is accounted before the event loop turns; the abort lands before the second.
  setTimeout(() => later.abort(), 0);
  const summary = await running;
  assert.ok(summary.aborted && summary.runs >= 1 && summary.runs < WARM_RUNS.length, JSON.stringify(summary));
});

test("malformed options are refused by path", async () => {
  const refused = async (options, jsonPath) => {
    await assert.rejects(warmUp(options), (e) => e instanceof KvledgerError && e.code === "BAD_OPTIONS" && e.json_path === jsonPath);
  };
  await refused(5, "options");
  await refused([], "options");
  await refused({ budget: 1 }, "options");
  await refused({ signal: true }, "options.signal");
  await refused({ signal: null }, "options.signal");
});
