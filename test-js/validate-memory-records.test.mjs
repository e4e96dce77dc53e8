// An upload's raw artifacts are read as accountStream reads them: scrapes and per-request
// records folded as they pass, not kept. In a process of its own: linear memory only grows, so
// other tests' calls would hide this one's high-water mark. Kept whole, the 200,000 records of
// this bundle (54 MiB, 1.7 MiB gzip'd) grew the record list by doubling to 81.9 MiB of linear
// memory before the 48 MiB budget was checked (400,000 records: 162 MiB, past an edge
// isolate's 128 MB, for a 3.6 MB upload).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { accountStream, validateUpload } from "../js/node.mjs";
import * as glue from "../pkg/web/kvledger.js";
import { ROOT } from "./lib/util.mjs";
import { gzip, jsonBytes, tar } from "./lib/uploads.mjs";
import { streamOf } from "./lib/upload-classes.mjs";

const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
const linearMemory = () => wasm.memory.buffer.byteLength;
const MiB = 2 ** 20;

/** `profile_export.jsonl` of `n` profiling requests, a microsecond apart. */
function records(n) {
  const t0 = 1_781_634_703_000_000_000n;
  let text = "";
  for (let i = 0; i < n; i++) {
    const start = t0 + BigInt(i) * 1000n;
    text +=
      `{"metadata":{"x_request_id":"r${i}","request_start_ns":${start},"request_end_ns":${start + 1_000_000_000n},` +
      `"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"input_sequence_length":{"value":100,"unit":"tokens"},` +
      `"usage_prompt_tokens":{"value":100,"unit":"tokens"}}}\n`;
  }
  return new TextEncoder().encode(text);
}

test("a bundle of 200,000 request records is validated in full, linear memory within 64 MiB", async (t) => {
  const profile = records(200_000);
  const upload = gzip(tar([
    { name: "result.json", bytes: jsonBytes({}) },
    { name: "profile_export.jsonl", bytes: profile },
  ]));
  let high = linearMemory();
  const v = await validateUpload(streamOf(upload), null, { onProgress: () => (high = Math.max(high, linearMemory())) });
  high = Math.max(high, linearMemory());
  t.diagnostic(`${(profile.length / MiB).toFixed(1)} MiB of records in a ${(upload.length / MiB).toFixed(1)} MiB upload: ${v.outcome}, linear memory high-water ${(high / MiB).toFixed(1)} MiB`);
  assert.deepEqual(v.errors, []);
  assert.equal(v.outcome, "accepted");
  assert.ok(high <= 64 * MiB, `linear memory ${(high / MiB).toFixed(1)} MiB`);
  // Folded, the recomputation is accountStream's on the same file.
  const streamed = await accountStream([{ name: "profile_export.jsonl", stream: streamOf(profile, { chunk: 1 << 20 }) }]);
  assert.deepEqual(v.recomputed, streamed);
});
