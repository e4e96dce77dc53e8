// A stream's linear memory on inputs that name more endpoints than its budget holds. Tables
// grown by endpoint were not admitted under the budget: streaming the 994 MB bench CSV
// (256,000 endpoints) reached 78.4 MiB of linear memory before its refusal at byte 72 MB, and
// a scrape JSONL of a million endpoints 74.5 MiB, past the 64 MiB a stream's default budget of
// 48 MiB promises (the CSV reader's endpoint and info tables; the scrape fold's endpoints).
// Each shape runs in a process of its own (this file, run with KVLEDGER_ENDPOINTS_SHAPE set):
// linear memory only grows, so another call's high-water mark would hide this one's. The CSVs
// run under a budget of 16 MiB and are held to the default's proportion, 21.3 MiB (before
// admission: 21.8 and 25.0 MiB; after: 18.7 and 18.9); the scrape JSONL under the default, to
// 64 MiB (74.5 before, 50.1 after).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { apiWithMemory } from "./lib/util.mjs";

const HEADERS = {
  gauges: "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description",
  info: "Endpoint,Metric,Key,Value,Description",
};

/** Each shape: its file's name, its chunks, the stream's budget (none: the default) and the bound. */
const SHAPES = {
  gauges: { name: "server_metrics_export.csv", chunks: (n) => csv("gauges", n), budget: 16 * 2 ** 20, bound: (16 * 2 ** 20 * 4) / 3 },
  info: { name: "server_metrics_export.csv", chunks: (n) => csv("info", n), budget: 16 * 2 ** 20, bound: (16 * 2 ** 20 * 4) / 3 },
  scrapes: { name: "server_metrics_export.jsonl", chunks: scrapes, budget: undefined, bound: 64 * 2 ** 20 },
};

/** A CSV's rows of `shape` naming `n` endpoints, 10,000 rows a chunk (gauges: two families' rows). */
async function* csv(shape, n) {
  const encoder = new TextEncoder();
  yield encoder.encode(`# AIPerf Server Metrics Export (CSV)\n#\n${HEADERS[shape]}\n`);
  const families = shape === "gauges" ? ["vllm:kv_cache_usage_perc", "vllm:num_requests_running"] : ["vllm:cache_config_info"];
  for (const family of families) {
    for (let at = 0; at < n; at += 10_000) {
      let text = "";
      for (let i = at; i < Math.min(n, at + 10_000); i++) {
        text += shape === "gauges" ? `${host(i)},gauge,${family},,0.5,0.5,0.5,0.0,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0,m,d\n` : `${host(i)},${family},block_size,16,d\n`;
      }
      yield encoder.encode(text);
    }
  }
}

/** A scrape JSONL of one scrape of each of `n` endpoints with long URLs, 10,000 lines a chunk. */
async function* scrapes(n) {
  const encoder = new TextEncoder();
  for (let at = 0; at < n; at += 10_000) {
    let text = "";
    for (let i = at; i < Math.min(n, at + 10_000); i++) {
      const url = `http://${host(i)}/some/longer/path/for/the/worker/of/this/deployment/metrics`;
      const metrics = `{"vllm:prompt_tokens_total":[{"labels":{"engine":"0"},"value":${i}.0}]}`;
      text += `{"endpoint_url":"${url}","timestamp_ns":${1781634703000000000n + BigInt(i)},"endpoint_latency_ns":1000,"metrics":${metrics}}\n`;
    }
    yield encoder.encode(text);
  }
}

/** The `i`th endpoint's host and port. */
function host(i) {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8000`;
}

/** In the child: stream the shape (refused), then a small one of it; print what happened. */
async function child(shape) {
  const { api, linearMemory } = await apiWithMemory();
  const { accountStream } = api;
  const { name, chunks, budget } = SHAPES[shape];
  let high = linearMemory();
  const refused = await accountStream([{ name, stream: chunks(1_000_000) }], budget === undefined ? null : { memory_budget: budget }, {
    onProgress: () => (high = Math.max(high, linearMemory())),
  }).then(
    () => null,
    (e) => ({ code: e.code, file: e.file }),
  );
  high = Math.max(high, linearMemory());
  const small = await accountStream([{ name, stream: chunks(1000) }]);
  const endpoints = small.cache_validity.roles.unresolved.length;
  process.stdout.write(JSON.stringify({ refused, high, endpoints }));
}

if (process.env.KVLEDGER_ENDPOINTS_SHAPE) {
  await child(process.env.KVLEDGER_ENDPOINTS_SHAPE);
} else {
  for (const [shape, { name, bound }] of Object.entries(SHAPES)) {
    test(`${shape}: more endpoints than the budget holds are refused while read, within ${(bound / 2 ** 20).toFixed(1)} MiB of linear memory`, (t) => {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, KVLEDGER_ENDPOINTS_SHAPE: shape },
      });
      const { refused, high, endpoints } = JSON.parse(out.toString());
      t.diagnostic(`linear memory high-water ${(high / 2 ** 20).toFixed(1)} MiB`);
      assert.deepEqual(refused, { code: "INPUT_TOO_LARGE", file: name });
      assert.ok(high <= bound, `linear memory ${(high / 2 ** 20).toFixed(1)} MiB`);
      // The instance stays usable: a file of the shape that fits is accounted, its endpoints all there.
      assert.equal(endpoints, 1000);
    });
  }
}
