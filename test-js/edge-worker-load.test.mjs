// The short CI variant of scripts/load-test: examples/edge-worker in the real workerd, 150
// mixed uploads (every class at least once) at concurrency 16, with the same assertions:
// every upload answered (the aborted ones excepted), zero 5xx, each its class's status,
// workerd's memory within 128 MiB and flat. `npm run load-test` runs the 1,000-upload version.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as k from "kvledger";
import { buildExample, removeBuild, startWorkerd } from "./lib/edge-worker.mjs";
import { buildBodies, uploadClasses } from "./lib/upload-classes.mjs";
import { runLoad, formatReport, loadProblems } from "./lib/edge-load.mjs";

let worker;
let dist;

before(async () => {
  dist = buildExample();
  worker = await startWorkerd(dist);
});

after(async () => {
  await worker?.stop();
  removeBuild(dist);
});

test("150 mixed uploads at concurrency 16: all answered, no 5xx, right statuses, memory flat within 128 MiB", async (t) => {
  const usage = await (await fetch(`${worker.base}/`, { signal: AbortSignal.timeout(10_000) })).json();
  const classes = uploadClasses(buildBodies(k, { bytesLimit: usage.limits.bytes }));
  const report = await runLoad({ base: worker.base, pid: worker.pid, classes, total: 150, concurrency: 16 });
  for (const line of formatReport(report)) t.diagnostic(line);
  assert.equal(Object.keys(report.per_class).length, classes.length, "every class was sent");
  assert.deepEqual(loadProblems(report, worker.output()), []);
});
