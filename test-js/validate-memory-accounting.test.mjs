// The accounting of an upload's raw artifacts is held to the `memory_budget` limit as their
// reading is: each table it makes is admitted first (src/admission.rs), as in accountStream.
// In a process of its own (linear memory only grows). Unadmitted, this capture of 200,000
// series was read within a 24 MiB budget and then accounted in 50.3 MiB of linear memory, and
// the upload accepted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { validateUpload } from "../js/node.mjs";
import * as glue from "../pkg/web/kvledger.js";
import { ROOT } from "./lib/util.mjs";
import { gzip, jsonBytes, tar } from "./lib/uploads.mjs";
import { streamOf } from "./lib/upload-classes.mjs";

const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
const linearMemory = () => wasm.memory.buffer.byteLength;
const MiB = 2 ** 20;

/** A Prometheus capture of `n` prefix-cache query series. */
function capture(n) {
  let text = "# TYPE vllm:prefix_cache_queries counter\n";
  for (let i = 0; i < n; i++) text += `vllm:prefix_cache_queries_total{engine="${i}",model_name="m"} ${i}.0 1781634703000\n`;
  return new TextEncoder().encode(text);
}

test("a capture read within the budget is accounted within it, or refused naming memory_budget", async (t) => {
  const budget = 24 * MiB;
  const upload = gzip(tar([
    { name: "result.json", bytes: jsonBytes({}) },
    { name: "capture.prom", bytes: capture(200_000) },
  ]));
  let high = linearMemory();
  const v = await validateUpload(streamOf(upload), { series: 1_000_000, memory_budget: budget }, {
    onProgress: () => (high = Math.max(high, linearMemory())),
  });
  high = Math.max(high, linearMemory());
  const named = v.errors.map((e) => e.limit?.name ?? e.code);
  t.diagnostic(`${v.outcome} ${named.join(" ")}: linear memory high-water ${(high / MiB).toFixed(1)} MiB, budget ${budget / MiB} MiB`);
  if (v.outcome !== "accepted") assert.deepEqual(named, ["memory_budget"]);
  // The heap within the budget; linear memory also holds the stack, the static data and what
  // the allocator has not reused (the streams' bound: a third more).
  assert.ok(high <= (budget * 4) / 3, `linear memory ${(high / MiB).toFixed(1)} MiB`);
});
