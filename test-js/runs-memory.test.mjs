// accountRuns reads each run folded, as accountRun does, and accounts it before the next is
// read: a call holds one run's evidence at a time. In a process of its own (linear memory only
// grows). Read first and accounted after, 16 runs of the 19 MB bench JSONL and records grew
// linear memory to 99.4 MiB, 6 MiB a run; one run at a time, 3.8 MiB.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { accountRun, accountRuns } from "../js/node.mjs";
import * as glue from "../pkg/web/kvledger.js";
import { ROOT } from "./lib/util.mjs";

const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
const linearMemory = () => wasm.memory.buffer.byteLength;
const MiB = 2 ** 20;

/** A scrape JSONL of `scrapes` scrapes of one endpoint, 40 label sets per counter. */
function scrapes(scrapes) {
  const t0 = 1_781_634_703_000_000_000n;
  let text = "";
  for (let s = 0; s < scrapes; s++) {
    const series = (f) => Array.from({ length: 40 }, (_, e) => `{"labels":{"engine":"${e}","model_name":"m"},"value":${s * f + e}.0}`).join(",");
    text +=
      `{"endpoint_url":"http://10.0.0.1:8000/metrics","timestamp_ns":${t0 + BigInt(s) * 1_000_000_000n},"endpoint_latency_ns":1000,` +
      `"metrics":{"vllm:prefix_cache_queries_total":[${series(10)}],"vllm:prefix_cache_hits_total":[${series(5)}],"vllm:prompt_tokens_total":[${series(10)}]}}\n`;
  }
  return new TextEncoder().encode(text);
}

test("a sweep of eight runs is accounted in the memory of about one", (t) => {
  const bytes = scrapes(1500);
  const sweep = (n) => Array.from({ length: n }, (_, i) => ({ name: `sweep/conc${i}/server_metrics_export.jsonl`, bytes }));
  const start = linearMemory();
  const one = accountRuns(sweep(1));
  const afterOne = linearMemory();
  const eight = accountRuns(sweep(8));
  const afterEight = linearMemory();
  t.diagnostic(`${(bytes.length / MiB).toFixed(1)} MiB a run; linear memory ${(start / MiB).toFixed(1)} MiB at the start, ${(afterOne / MiB).toFixed(1)} after one run, ${(afterEight / MiB).toFixed(1)} after eight`);
  assert.equal(eight.length, 8);
  // Each run's result is accountRun's on its files.
  const alone = accountRun([{ name: "server_metrics_export.jsonl", bytes }]);
  for (const r of [...one, ...eight]) assert.deepStrictEqual(r.result, alone, r.run);
  // Seven more runs may take a little more room (their results), never seven runs' evidence.
  const perRun = afterOne - start;
  assert.ok(afterEight - afterOne <= perRun, `eight runs grew linear memory by ${((afterEight - afterOne) / MiB).toFixed(1)} MiB past one run's ${(perRun / MiB).toFixed(1)} MiB`);
});
