// The two package additions the visualizer streams with: `groupRuns` (a dropped tree's runs
// from its paths alone, as accountRuns groups them) and `accountStream`'s `onDetail` (the files
// and the counters over time beside the result, which stays accountRun's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { accountRun, accountRuns, accountStream, groupRuns, KvledgerError } from "kvledger";
import { ROOT } from "./lib/util.mjs";

function tree(dir, rel = "") {
  return readdirSync(path.join(dir, rel)).flatMap((n) => {
    const r = rel ? `${rel}/${n}` : n;
    return statSync(path.join(dir, r)).isDirectory() ? tree(dir, r) : [r];
  });
}

test("groupRuns groups a sweep's paths into the runs accountRuns finds, reading nothing", () => {
  const dir = path.join(ROOT, "tests", "fixtures", "sweep");
  const paths = tree(dir);
  const files = paths.map((name) => ({ name, bytes: readFileSync(path.join(dir, name)) }));
  const runs = accountRuns(files).map((r) => r.run);
  const groups = groupRuns(paths);
  assert.deepEqual(groups.runs.map((g) => g.root || "."), runs);
  for (const g of groups.runs) {
    assert.ok(g.files.length > 0);
    assert.ok(g.files.every((f) => paths.includes(f)), "paths relative to the top");
  }
  // Each group streamed on its own gives accountRuns' result for that run.
  const byRun = new Map(accountRuns(files).map((r) => [r.run, r]));
  const g = groups.runs[0];
  const alone = accountRun(g.files.map((name) => ({ name, bytes: readFileSync(path.join(dir, name)) })));
  assert.deepEqual(alone.cache_validity, byRun.get(g.root || ".").result.cache_validity);
  assert.throws(() => groupRuns("conc1/x.json"), (e) => e instanceof KvledgerError && e.code === "BAD_OPTIONS" && e.json_path === "paths");
  assert.throws(() => groupRuns(["a", 3]), (e) => e.code === "BAD_OPTIONS" && e.json_path === "paths[1]");
});

test("accountStream's onDetail: files, ignored and the counters over time; the result is accountRun's", async () => {
  const dir = path.join(ROOT, "examples", "synth", "vllm-agg-clean");
  const names = tree(dir).filter((n) => n !== "truth.json");
  const whole = accountRun(names.map((name) => ({ name, bytes: readFileSync(path.join(dir, name)) })));
  let detail;
  let calls = 0;
  const streamed = await accountStream(
    names.map((name) => ({ name, stream: readFileSync(path.join(dir, name)) })),
    null,
    { onDetail: (d) => { detail = d; calls++; } },
  );
  assert.equal(calls, 1);
  assert.deepEqual(streamed, whole);
  assert.deepEqual(detail.files.map((f) => f.name).sort(), names.sort());
  const ep = detail.timeline.endpoints[0];
  assert.equal(ep.role, "unified");
  const prompt = ep.counters.find((c) => c.counter === "prompt");
  assert.ok(prompt.slices.length > 10 && prompt.samples.length > 10);
  assert.equal(typeof detail.timeline.origin_ns, "string", "epoch ns stays a decimal string");
  assert.deepEqual(JSON.parse(JSON.stringify(detail)), detail);
  await assert.rejects(accountStream([], null, { onDetail: 1 }), (e) => e.code === "BAD_OPTIONS" && e.json_path === "onDetail");
});
