// A stream of a run of many files, each its own endpoint. An endpoint kept a place for every
// file given before its own (the scrape fold's places by file): quadratic in files, so 3,000
// scrape JSONL files of 420 bytes each (1.3 MB) took hundreds of MB and were refused under a
// 16 MiB budget (`INPUT_TOO_LARGE`); 8,000 were refused under the default budget. Now each
// endpoint keeps a place for its own file only.
import { test } from "node:test";
import assert from "node:assert/strict";
import { accountStream } from "../js/node.mjs";

const FILES = 3000;

/** A scrape JSONL of three scrapes of endpoint `i`, as one chunk. */
function scrapes(i) {
  const lines = [0, 1, 2].map((s) => {
    const metrics = `{"vllm:prefix_cache_queries_total":[{"labels":{"engine":"0"},"value":${s * 10}.0}],"vllm:prefix_cache_hits_total":[{"labels":{"engine":"0"},"value":${s * 5}.0}]}`;
    return `{"endpoint_url":"http://10.0.${i >> 8}.${i & 255}:8000/metrics","timestamp_ns":${1781634703000000000n + BigInt(s) * 1000000000n},"endpoint_latency_ns":1000,"metrics":${metrics}}\n`;
  });
  const bytes = new TextEncoder().encode(lines.join(""));
  return new ReadableStream({
    pull(c) {
      c.enqueue(bytes);
      c.close();
    },
  }, { highWaterMark: 0 });
}

test(`${FILES} scrape files of one endpoint each are accounted under a 16 MiB budget`, async () => {
  const files = Array.from({ length: FILES }, (_, i) => ({ name: `r${String(i).padStart(5, "0")}.server_metrics_export.jsonl`, stream: scrapes(i) }));
  const accounting = await accountStream(files, { memory_budget: 16 * 2 ** 20 });
  assert.equal(accounting.cache_validity.roles.unresolved.length, FILES);
  const codes = new Set(accounting.cache_validity.reasons.map((r) => r.code));
  assert.ok(!codes.has("evidence_coarsened"), [...codes].join(","));
});
