// A stream's linear memory on server-metrics CSVs that name more endpoints than its budget
// holds. The CSV reader's endpoint tables (display forms, URLs) and an info section's tables
// grew without admission: streaming the 994 MB bench CSV (256,000 endpoints) reached 78.4 MiB
// of linear memory before its refusal at byte 72 MB, past the 64 MiB a stream's default budget
// of 48 MiB promises. Each shape runs in a process of its own (this file, run with
// KVLEDGER_CSV_SHAPE set): linear memory only grows, so another call's high-water mark would
// hide this one's. The bound is the default's proportion: a budget of 16 MiB, 21.3 MiB of
// linear memory (before admission: 21.8 and 25.0 MiB; after: 18.7 and 18.9).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const HEADERS = {
  gauges: "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description",
  info: "Endpoint,Metric,Key,Value,Description",
};

/** Rows of `shape` naming `n` endpoints, 10,000 rows a chunk (gauges: two families' rows). */
async function* csv(shape, n) {
  const encoder = new TextEncoder();
  yield encoder.encode(`# AIPerf Server Metrics Export (CSV)\n#\n${HEADERS[shape]}\n`);
  const families = shape === "gauges" ? ["vllm:kv_cache_usage_perc", "vllm:num_requests_running"] : ["vllm:cache_config_info"];
  for (const family of families) {
    for (let at = 0; at < n; at += 10_000) {
      let text = "";
      for (let i = at; i < Math.min(n, at + 10_000); i++) {
        const host = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8000`;
        text += shape === "gauges" ? `${host},gauge,${family},,0.5,0.5,0.5,0.0,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0,m,d\n` : `${host},${family},block_size,16,d\n`;
      }
      yield encoder.encode(text);
    }
  }
}

/** In the child: stream the shape under a 16 MiB budget, then a small one; print what happened. */
async function child(shape) {
  const { readFileSync } = await import("node:fs");
  const path = await import("node:path");
  const { accountStream } = await import("../js/node.mjs");
  const glue = await import("../pkg/web/kvledger.js");
  const root = fileURLToPath(new URL("../", import.meta.url));
  const wasm = glue.initSync({ module: readFileSync(path.join(root, "pkg/web/kvledger_bg.wasm")) });
  const linearMemory = () => wasm.memory.buffer.byteLength;
  let high = linearMemory();
  const refused = await accountStream([{ name: "server_metrics_export.csv", stream: csv(shape, 600_000) }], { memory_budget: 16 * 2 ** 20 }, {
    onProgress: () => (high = Math.max(high, linearMemory())),
  }).then(
    () => null,
    (e) => ({ code: e.code, file: e.file }),
  );
  high = Math.max(high, linearMemory());
  const small = await accountStream([{ name: "server_metrics_export.csv", stream: csv(shape, 1000) }]);
  const endpoints = small.cache_validity.roles.unresolved.length;
  process.stdout.write(JSON.stringify({ refused, high, endpoints }));
}

if (process.env.KVLEDGER_CSV_SHAPE) {
  await child(process.env.KVLEDGER_CSV_SHAPE);
} else {
  for (const shape of Object.keys(HEADERS)) {
    test(`a CSV of more endpoints than the budget holds (${shape} rows) is refused while it is read, within the budget's proportion of linear memory`, (t) => {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, KVLEDGER_CSV_SHAPE: shape },
      });
      const { refused, high, endpoints } = JSON.parse(out.toString());
      t.diagnostic(`linear memory high-water ${(high / 2 ** 20).toFixed(1)} MiB`);
      assert.deepEqual(refused, { code: "INPUT_TOO_LARGE", file: "server_metrics_export.csv" });
      assert.ok(high <= (16 * 2 ** 20 * 4) / 3, `linear memory ${(high / 2 ** 20).toFixed(1)} MiB`);
      // The instance stays usable: a CSV that fits is accounted, its endpoints all there.
      assert.equal(endpoints, 1000);
    });
  }
}
