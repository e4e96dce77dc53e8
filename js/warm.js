// `warmUp()`: the module's hot code made ready before the first real run. V8 runs a WebAssembly
// function first in baseline code and optimises it in the background once it has run enough
// (BENCHMARKS.md: a first call on a 10 MB CSV took 3-5x a warm one). Accounting a few small
// generated runs, one per format AIPerf writes, while the page or worker is otherwise idle lets
// V8 optimise the readers, the accounting and the reply before a user's files arrive.
//
// The runs are generated here, in the shapes AIPerf's exports have, so that each reader's
// common path (not an error path) is what runs: about 0.4-1.5 MB each.

import { badOptions, describe } from "./api.js";

/** Epoch ns of the generated runs' start (a bigint: ns are beyond 2^53). */
const T0 = 1781776700000000000n;
const SECOND = 1000000000n;
const MODEL = "warm/Model-8B";
const encoder = new TextEncoder();

/** Deterministic small numbers (a linear congruential generator): the readers see varied digits. */
function numbers(seed) {
  let s = seed >>> 0;
  return (scale) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * scale;
  };
}

const host = (i) => `10.${(i >> 8) & 255}.${i & 255}.1:8000`;
const url = (i) => `http://${host(i)}/metrics`;
const fixed = (v) => v.toFixed(4);

const GAUGES = [
  ["vllm:kv_cache_usage_perc", "ratio", 1, "KV-cache usage. 1 means 100 percent usage."],
  ["vllm:num_requests_running", "", 8, "Number of requests in model execution batches."],
  ["vllm:num_requests_waiting", "", 2, "Number of requests waiting to be processed."],
];
const COUNTERS = [
  ["vllm:generation_tokens", "tokens", "", "Number of generation tokens processed."],
  ["vllm:prefix_cache_hits", "", "", "Prefix cache hits, in terms of number of cached tokens."],
  ["vllm:prefix_cache_queries", "", "", "Prefix cache queries, in terms of number of queried tokens."],
  ["vllm:prompt_tokens", "tokens", "", "Number of prefill tokens processed."],
  ["vllm:prompt_tokens_by_source", "", "local_cache_hit", "Number of prompt tokens by source."],
  ["vllm:prompt_tokens_by_source", "", "local_compute", "Number of prompt tokens by source."],
  ["vllm:prompt_tokens_cached", "", "", "Number of cached prompt tokens (local + external)."],
];
const BUCKETS = ["0.3", "0.5", "1.0", "2.5", "5.0", "10.0", "+Inf"];

/** `server_metrics_export.csv` of `n` endpoints: AIPerf's gauge, counter, histogram and info sections. */
function csvExport(n) {
  const r = numbers(1);
  const out = [
    "# AIPerf Server Metrics Export (CSV)",
    "# aiperf_version: 0.12.0",
    "# schema_version: 1.0",
    "# benchmark_id: 00000000-0000-4000-8000-000000000001",
    "#",
    "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description",
  ];
  for (let i = 0; i < n; i++) {
    const t = fixed(1781776100 + i);
    out.push(`${host(i)},gauge,process_start_time_seconds,seconds,${Array(13).fill(t).join(",")},,,Start time of the process since unix epoch in seconds.`);
  }
  for (const [name, unit, scale, help] of GAUGES) {
    for (let i = 0; i < n; i++) {
      const stats = Array.from({ length: 13 }, () => fixed(r(scale)));
      out.push(`${host(i)},gauge,${name},${unit},${stats.join(",")},0,${MODEL},${help}`);
    }
  }
  out.push("", "Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,engine,model_name,source,finished_reason,Description");
  for (const [name, unit, source, help] of COUNTERS) {
    for (let i = 0; i < n; i++) {
      const total = Math.floor(r(300000));
      const rates = Array.from({ length: 5 }, () => fixed(r(20000)));
      out.push(`${host(i)},counter,${name},${unit},${fixed(total)},${rates.join(",")},0,${MODEL},${source},,"${help}"`);
    }
  }
  out.push("", "Endpoint,Type,Metric,Unit,count,count_rate,sum,sum_rate,avg,p1_estimate,p5_estimate,p10_estimate,p25_estimate,p50_estimate,p75_estimate,p90_estimate,p95_estimate,p99_estimate,engine,model_name,Description,buckets");
  for (let i = 0; i < n; i++) {
    const count = 10 + Math.floor(r(20));
    const buckets = BUCKETS.map((le, k) => `${le}=${Math.round((count * (k + 1)) / BUCKETS.length)}`).join(";");
    const est = Array.from({ length: 13 }, () => fixed(r(10)));
    out.push(`${host(i)},histogram,vllm:e2e_request_latency_seconds,seconds,${count},${est.join(",")},0,${MODEL},Histogram of e2e request latency in seconds.,${buckets}`);
  }
  out.push("", "Endpoint,Metric,Key,Value,Description");
  for (let i = 0; i < n; i++) {
    out.push(`${host(i)},vllm:cache_config_info,enable_prefix_caching,True,Information of the LLMEngine CacheConfig`);
    out.push(`${host(i)},vllm:cache_config_info,num_gpu_blocks,65536,Information of the LLMEngine CacheConfig`);
  }
  return out.join("\n") + "\n";
}

/** The start of each one-second timeslice from the profiling start (`{"start_ns":…,"end_ns":…,`). */
function sliceHeads(slices) {
  return Array.from({ length: slices }, (_, k) => {
    const start = T0 + 10n * SECOND + BigInt(k) * SECOND;
    return `{"start_ns":${start},"end_ns":${start + SECOND},`;
  });
}

/** A JSON export's series: its stats and a timeslice per head. */
function exportSeries(i, labels, stats, slice, heads) {
  const parts = heads.map((head, k) => `${head}${slice(k)}}`);
  return `{"endpoint_url":"${url(i)}","labels":${labels},"stats":{${stats}},"timeslices":[${parts.join(",")}]}`;
}

/** `server_metrics_export.json` of `n` endpoints and `slices` timeslices. */
function jsonExport(n, slices) {
  const r = numbers(2);
  const heads = sliceHeads(slices);
  const labels = `{"engine":"0","model_name":"${MODEL}"}`;
  const urls = Array.from({ length: n }, (_, i) => `"${url(i)}"`).join(",");
  const info = Array.from(
    { length: n },
    (_, i) => `"${url(i)}":{"total_fetches":40,"first_fetch_ns":${T0},"last_fetch_ns":${T0 + 30n * SECOND},"avg_fetch_latency_ms":5.0}`,
  ).join(",");
  const family = (name, type, series) => `"${name}":{"type":"${type}","description":"${name}","series":[${series.join(",")}]}`;
  const perEndpoint = (make) => Array.from({ length: n }, (_, i) => make(i));
  const counter = (name) =>
    family(name, "counter", perEndpoint((i) =>
      exportSeries(i, labels, `"total":${Math.floor(r(300000))}.0,"rate":${r(20000)}`, () => {
        const step = Math.floor(r(5000));
        return `"total":${step}.0,"rate":${step}.0`;
      }, heads),
    ));
  const gauge = (name) =>
    family(name, "gauge", perEndpoint((i) =>
      exportSeries(i, labels, `"avg":${r(1)},"min":0.0,"max":${r(1)},"std":${r(1)},"p50":${r(1)},"p99":${r(1)}`, () => `"avg":${r(1)},"min":0.0,"max":${r(1)}`, heads),
    ));
  const metrics = [
    family("process_start_time_seconds", "gauge", perEndpoint((i) =>
      exportSeries(i, "{}", `"avg":${1781776100 + i}.0,"min":${1781776100 + i}.0,"max":${1781776100 + i}.0`, () => `"avg":${1781776100 + i}.0,"min":${1781776100 + i}.0,"max":${1781776100 + i}.0`, heads),
    )),
    family("vllm:e2e_request_latency_seconds", "histogram", perEndpoint((i) =>
      exportSeries(i, labels, `"count":20,"sum":${r(60)},"avg":${r(3)}`, () => `"count":2,"sum":${r(6)},"buckets":{"0.5":0,"1.0":1,"+Inf":2}`, heads),
    )),
    gauge("vllm:kv_cache_usage_perc"),
    counter("vllm:prefix_cache_hits"),
    counter("vllm:prefix_cache_queries"),
    counter("vllm:prompt_tokens"),
  ];
  return (
    `{"schema_version":"1.1","aiperf_version":"0.12.0","benchmark_id":"00000000-0000-4000-8000-000000000002",` +
    `"summary":{"endpoints_configured":[${urls}],"endpoints_successful":[${urls}],` +
    `"start_time":"2026-06-18T09:58:30.000000","end_time":"2026-06-18T09:59:00.000000","endpoint_info":{${info}},` +
    `"phase_time_ranges":{"profiling":{"start_ns":${T0 + 10n * SECOND},"end_ns":${T0 + BigInt(10 + slices) * SECOND}},` +
    `"warmup":{"start_ns":${T0},"end_ns":${T0 + 10n * SECOND - 1n}}}},` +
    `"metrics_phase":"profiling","metrics":{${metrics.join(",")}}}`
  );
}

/** `server_metrics_export.jsonl`: `scrapes` scrapes of `n` endpoints, counters rising. */
function scrapeJsonl(n, scrapes) {
  const r = numbers(3);
  const labels = `{"engine":"0","model_name":"${MODEL}"}`;
  const lines = [];
  const totals = new Array(n).fill(0);
  for (let s = 0; s < scrapes; s++) {
    for (let i = 0; i < n; i++) {
      totals[i] += Math.floor(r(4000));
      const t = totals[i];
      const c = (name, v) => `"${name}":[{"labels":${labels},"value":${v}.0}]`;
      const hist = `"vllm:e2e_request_latency_seconds":[{"labels":${labels},"count":${s},"sum":${(s * 1.5).toFixed(1)},"buckets":{"0.5":0,"1.0":${s >> 1},"+Inf":${s}}}]`;
      lines.push(
        `{"endpoint_url":"${url(i)}","timestamp_ns":${T0 + BigInt(s) * SECOND + BigInt(i)},"endpoint_latency_ns":5000000,"metrics":{` +
          `"process_start_time_seconds":[{"value":${1781776100 + i}.0}],` +
          `"vllm:kv_cache_usage_perc":[{"labels":${labels},"value":${r(1)}}],` +
          `${c("vllm:prompt_tokens_total", t)},${c("vllm:prefix_cache_queries_total", t)},${c("vllm:prefix_cache_hits_total", Math.floor(t * 0.8))},${hist}}}`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/** `profile_export.jsonl`: `n` request records, the first tenth in the warmup phase. */
function profileJsonl(n) {
  const r = numbers(4);
  const lines = [];
  for (let k = 0; k < n; k++) {
    const start = T0 + BigInt(k) * 10000000n;
    const isl = 1000 + Math.floor(r(16000));
    const osl = 20 + Math.floor(r(200));
    const id = k.toString(16).padStart(12, "0");
    lines.push(
      `{"metadata":{"session_num":${k},"x_request_id":"00000000-0000-4000-8000-${id}","conversation_id":"${id}","turn_index":0,` +
        `"request_start_ns":${start},"request_ack_ns":${start + 400000000n},"request_end_ns":${start + 900000000n},` +
        `"worker_id":"worker_0","benchmark_phase":"${k < n / 10 ? "warmup" : "profiling"}","was_cancelled":false},` +
        `"metrics":{"request_latency":{"value":${r(900)},"unit":"ms"},"time_to_first_token":{"value":${r(400)},"unit":"ms"},` +
        `"output_sequence_length":{"value":${osl},"unit":"tokens"},"input_sequence_length":{"value":${isl},"unit":"tokens"},` +
        `"usage_prompt_tokens":{"value":${isl},"unit":"tokens"},"usage_completion_tokens":{"value":${osl},"unit":"tokens"}}}`,
    );
  }
  return lines.join("\n") + "\n";
}

/** A Prometheus text capture of `n` labelled series per family, the `k`th of a pair (counters rise). */
function capture(n, k) {
  const r = numbers(5 + k);
  const out = ["# HELP vllm:prompt_tokens_total Number of prefill tokens processed.", "# TYPE vllm:prompt_tokens_total counter"];
  for (let i = 0; i < n; i++) out.push(`vllm:prompt_tokens_total{engine="${i}",model_name="${MODEL}"} ${(k + 1) * 1000000 + Math.floor(r(1e6))}.0`);
  out.push("# TYPE vllm:prefix_cache_hits_total counter");
  for (let i = 0; i < n; i++) out.push(`vllm:prefix_cache_hits_total{engine="${i}",model_name="${MODEL}"} ${(k + 1) * 500000 + Math.floor(r(5e5))}.0`);
  out.push("# TYPE vllm:kv_cache_usage_perc gauge");
  for (let i = 0; i < n; i++) out.push(`vllm:kv_cache_usage_perc{engine="${i}",model_name="${MODEL}"} ${r(1)}`);
  return out.join("\n") + "\n";
}

/** `launch.json` naming the `n` endpoints aggregated vLLM workers: their roles resolve. */
function launch(n) {
  const endpoints = Array.from({ length: n }, (_, i) => `"${host(i)}"`).join(",");
  return `{"agg_endpoints":[${endpoints}],"disaggregated":false,"framework":"vllm","kv_offloading":"none"}`;
}

/** Two captures of one endpoint, a minute apart (`captures.json` says where and when). */
function captures(n) {
  const manifest =
    `{"captures":[{"file":"before.prom","endpoint_url":"${url(0)}","timestamp_ns":${T0}},` +
    `{"file":"after.prom","endpoint_url":"${url(0)}","timestamp_ns":${T0 + 60n * SECOND}}]}`;
  return [
    { name: "captures.json", text: manifest },
    { name: "before.prom", text: capture(n, 0) },
    { name: "after.prom", text: capture(n, 1) },
    { name: "launch.json", text: launch(1) },
  ];
}

/** The generated runs, each a list of `{ name, bytes }`, made one at a time as asked. */
export const WARM_RUNS = /* @__PURE__ */ [
  () => [
    { name: "server_metrics_export.csv", text: csvExport(160) },
    { name: "launch.json", text: launch(160) },
  ],
  () => [
    { name: "server_metrics_export.json", text: jsonExport(24, 60) },
    { name: "launch.json", text: launch(24) },
  ],
  () => [
    { name: "server_metrics_export.jsonl", text: scrapeJsonl(24, 60) },
    { name: "profile_export.jsonl", text: profileJsonl(600) },
    { name: "launch.json", text: launch(24) },
  ],
  () => captures(1500),
].map((make) => () => make().map(({ name, text }) => ({ name, bytes: encoder.encode(text) })));

/** `options.signal` of `warmUp`, or BAD_OPTIONS by path. */
function signalOf(options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== "object" || Array.isArray(options)) {
    throw badOptions("options", `expected an object or nothing, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== "signal") throw badOptions("options", `unknown field \`${key}\`, expected \`signal\``);
  }
  const { signal } = options;
  if (signal !== undefined && (signal === null || typeof signal !== "object" || typeof signal.aborted !== "boolean")) {
    throw badOptions("options.signal", `expected an AbortSignal, got ${describe(signal)}`);
  }
  return signal;
}

/**
 * `warmUp` of an entry's bound API (js/api.d.ts documents it). Each generated run is accounted
 * as `accountStream` accounts a dropped run; between runs the event loop turns, so a message or
 * a user's call waits for at most one of them, and an aborted signal stops the rest.
 */
export function makeWarmUp(api) {
  return async function warmUp(options) {
    const signal = signalOf(options);
    const started = performance.now();
    let runs = 0;
    let bytes = 0;
    for (const make of WARM_RUNS) {
      if (signal?.aborted) break;
      const files = make();
      await api.accountStream(files.map((f) => ({ name: f.name, stream: f.bytes })));
      runs += 1;
      bytes += files.reduce((sum, f) => sum + f.bytes.length, 0);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    return { runs, bytes, seconds: (performance.now() - started) / 1000, aborted: runs < WARM_RUNS.length };
  };
}
