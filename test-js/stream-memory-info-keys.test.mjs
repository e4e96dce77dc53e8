// A stream's memory on an info metric of many keys: a server-metrics CSV whose info section
// gives one endpoint's `vllm:cache_config_info` 400,000 keys (22.6 MB). The CSV reader kept
// each key and value as a String in a table and another in a list, and each key of the open
// series as an allocation of its own (140 bytes a string): at the default budget the stream was
// refused (INPUT_TOO_LARGE) at byte 15.1 MB (597c6ed's module, with 66.3 MiB of linear memory).
// Its strings are now one text found by a keyed hash, and the stream accounts it in 55.7 MiB
// of linear memory. It runs in a process of its
// own (this file, run with KVLEDGER_INFO_KEYS set): linear memory only grows, so another
// call's high-water mark would hide this one's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { apiWithMemory } from "./lib/util.mjs";

const KEYS = 400_000;
const NAME = "server_metrics_export.csv";

/** The CSV: one gauge row, then the info section, 50,000 rows a chunk. */
function* chunks() {
  const encoder = new TextEncoder();
  yield encoder.encode(
    "# AIPerf Server Metrics Export (CSV)\n#\n" +
      "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description\n" +
      "10.0.0.1:8000,gauge,vllm:kv_cache_usage_perc,,1.0,1.0,1.0,0.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,0,m,d\n" +
      "\nEndpoint,Metric,Key,Value,Description\n",
  );
  for (let at = 0; at < KEYS; at += 50_000) {
    let text = "";
    for (let i = at; i < Math.min(KEYS, at + 50_000); i++) {
      text += `10.0.0.1:8000,vllm:cache_config_info,key_${i},${i},d\n`;
    }
    yield encoder.encode(text);
  }
}

/** In the child: stream the CSV at the default budget, then account the same bytes whole. */
async function child() {
  const { api, linearMemory } = await apiWithMemory();
  const { accountStream, accountRun } = api;
  let high = linearMemory();
  const streamed = await accountStream([{ name: NAME, stream: chunks() }], null, {
    onProgress: () => (high = Math.max(high, linearMemory())),
  }).then(
    (a) => JSON.stringify(a),
    (e) => `${e.code}: ${e.message}`,
  );
  high = Math.max(high, linearMemory());
  const parts = [...chunks()];
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
  const whole = JSON.stringify(accountRun([{ name: NAME, bytes }]));
  process.stdout.write(JSON.stringify({ high, same: streamed === whole, streamed: streamed.slice(0, 300) }));
}

if (process.env.KVLEDGER_INFO_KEYS) {
  await child();
} else {
  test(`an info metric of ${KEYS} keys on one endpoint streams at the default budget within 64 MiB, as accountRun accounts it`, (t) => {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, KVLEDGER_INFO_KEYS: "1" },
      maxBuffer: 1 << 20,
    });
    const { high, same, streamed } = JSON.parse(out.toString());
    t.diagnostic(`linear memory high-water ${(high / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(same, `the stream's result is not accountRun's: ${streamed}`);
    assert.ok(high <= 64 * 2 ** 20, `linear memory ${(high / 2 ** 20).toFixed(1)} MiB`);
  });
}
