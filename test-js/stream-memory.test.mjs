// A stream's linear memory, in a process of its own (linear memory only grows: other tests'
// calls would hide this one's high-water mark). The tables a reader grows by series are
// admitted under the stream's budget before each growth (src/admission.rs): a capture of
// 800,000 series (58 MB) doubled its label-set table and its values past the budget while
// it was read, and linear memory reached 79 MB before the refusal, past the 64 MiB a stream
// promises.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { accountStream, KvledgerError } from "../js/node.mjs";
import * as glue from "../pkg/web/kvledger.js";
import { ROOT } from "./lib/util.mjs";

const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
const linearMemory = () => wasm.memory.buffer.byteLength;

/** A Prometheus capture of `n` counter series, 10,000 lines a chunk. */
async function* capture(n) {
  const encoder = new TextEncoder();
  yield encoder.encode("# TYPE vllm:prefix_cache_queries counter\n");
  for (let at = 0; at < n; at += 10_000) {
    let text = "";
    for (let i = at; i < Math.min(n, at + 10_000); i++) {
      text += `vllm:prefix_cache_queries_total{engine="${i}",model_name="m"} ${i}.0 1781634703000\n`;
    }
    yield encoder.encode(text);
  }
}

test("a capture too large for the budget is refused while it is read, linear memory within 64 MiB", async (t) => {
  let high = linearMemory();
  const result = await accountStream([{ name: "capture.prom", stream: capture(800_000) }], null, {
    onProgress: () => (high = Math.max(high, linearMemory())),
  }).catch((e) => e);
  high = Math.max(high, linearMemory());
  t.diagnostic(`linear memory high-water ${(high / 2 ** 20).toFixed(1)} MiB`);
  assert.ok(result instanceof KvledgerError, String(result));
  assert.equal(result.code, "INPUT_TOO_LARGE");
  assert.equal(result.file, "capture.prom");
  assert.ok(high <= 64 * 2 ** 20, `linear memory ${(high / 2 ** 20).toFixed(1)} MiB`);
  // The instance stays usable: a capture that fits is accounted.
  const small = await accountStream([{ name: "capture.prom", stream: capture(1000) }]);
  assert.ok(small.cache_validity.status);
});
