// The edge worker's load test, shared by scripts/load-test (1,000 uploads) and
// test-js/edge-worker-load.test.mjs (the short CI variant): mixed uploads (valid and every
// hostile class of test-js/lib/upload-classes.mjs) sent at bounded concurrency to a real
// workerd, each answer checked against its class, latencies and workerd's memory recorded.
import { request as httpRequest } from "node:http";
import { sampleMemory, sampleIsolate } from "./edge-worker.mjs";

/**
 * POSTs `body` (bytes) with `Expect: 100-continue`: the body is written only after the
 * server's 100 Continue, never when it answers from the headers. Resolves to {status, text}.
 */
export function postExpectContinue(url, body, headers = {}, ms = 60_000) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(body.length), expect: "100-continue" },
      agent: false,
      timeout: ms,
    });
    req.on("continue", () => req.end(body));
    req.on("response", (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${ms} ms`)));
    req.on("error", reject);
    req.flushHeaders();
  });
}

/**
 * POSTs a ReadableStream as a chunked body and resolves with the answer, even when the server
 * answers (a limit) and closes before the body is all sent: fetch() then fails with the broken
 * upload ("fetch failed", EPIPE/ECONNRESET) and loses the answer; here the answer wins.
 */
export function postChunked(url, stream, headers = {}, ms = 60_000) {
  return new Promise((resolve, reject) => {
    let answered = false;
    const reader = stream.getReader();
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" }, agent: false, timeout: ms });
    req.on("response", (res) => {
      answered = true;
      reader.cancel("answered").catch(() => {});
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${ms} ms`)));
    // A write error after the answer is the server closing the upload it refused.
    req.on("error", (e) => { if (!answered) reject(e); });
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || answered || req.destroyed) break;
        if (!req.write(value)) await drained(req);
      }
      if (!answered && !req.destroyed) req.end();
    })().catch((e) => { if (!answered) reject(e); });
  });
}

/** Resolves when `req` can take more, or is closed. */
function drained(req) {
  return new Promise((resolve) => {
    const done = () => {
      req.off("drain", done);
      req.off("close", done);
      resolve();
    };
    req.on("drain", done);
    req.on("close", done);
  });
}

/** A deterministic PRNG (mulberry32), so a run's mix is the same every time. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `total` class names: every class at least once (when total allows), the rest drawn by
 * weight, shuffled with a fixed seed.
 */
export function schedule(classes, total, seed = 12) {
  const random = rng(seed);
  const names = classes.map((c) => c.name).slice(0, total);
  const weights = classes.map((c) => c.weight ?? 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  while (names.length < total) {
    let r = random() * sum;
    let i = 0;
    while (r >= weights[i]) r -= weights[i++];
    names.push(classes[i].name);
  }
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [names[i], names[j]] = [names[j], names[i]];
  }
  return names;
}

/** Nearest-rank percentile of sorted numbers. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Sends one upload of class `c` and checks the answer. Resolves to
 * {class, ok, status, ms, problem?}: `ok` when the answer is what the class expects.
 */
export async function sendOne(base, c) {
  const start = performance.now();
  const { init, aborted, expect100 } = c.request();
  try {
    const res = expect100
      ? await postExpectContinue(`${base}/`, init.body, init.headers)
      : await fetch(`${base}/`, { method: "POST", ...init, signal: init.signal ?? AbortSignal.timeout(60_000) });
    const text = typeof res.text === "string" ? res.text : await res.text();
    const ms = performance.now() - start;
    if (aborted) return { class: c.name, ok: false, status: res.status, ms, problem: `an aborted upload got an answer (${res.status})` };
    const problem = c.check(res.status, text);
    return { class: c.name, ok: problem === undefined, status: res.status, ms, problem };
  } catch (e) {
    const ms = performance.now() - start;
    // The client gave up on purpose: no answer is the right outcome; the worker must stay healthy.
    if (aborted && aborted()) return { class: c.name, ok: true, status: "aborted", ms };
    return { class: c.name, ok: false, status: "no answer", ms, problem: `${e.name}: ${e.cause?.code ?? ""} ${e.cause?.message ?? e.message}` };
  }
}

/**
 * Runs `total` uploads at `concurrency` against `base`, sampling the memory of process `pid`.
 * Resolves to the report: totals, per-class latency percentiles, memory, failures.
 */
export async function runLoad({ base, pid, inspector, classes, total, concurrency, warmup = 0, onProgress }) {
  const byName = new Map(classes.map((c) => [c.name, c]));
  // Uploads before the measured run (same mix, another order), so its first quarter is not
  // the heap sizing itself: neither checked nor counted.
  const early = schedule(classes, warmup, 99);
  await Promise.all(Array.from({ length: Math.min(concurrency, early.length) }, async () => {
    while (early.length) await sendOne(base, byName.get(early.pop()));
  }));
  const plan = schedule(classes, total);
  const results = [];
  const memory = sampleMemory(pid);
  // Sampled every 10 ms from the first sample on: the run lasts about a second on a quick
  // machine, and the per-quarter floors need samples in every quarter.
  const isolate = sampleIsolate(inspector, 10);
  await isolate.ready;
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < plan.length) {
      const c = byName.get(plan[next++]);
      results.push(await sendOne(base, c));
      onProgress?.(results.length, plan.length);
    }
  };
  let seconds;
  let isolateSummary;
  let memorySummary;
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, plan.length) }, lane));
    seconds = (performance.now() - started) / 1000;
  } finally {
    // Stopped on every path: a sampler left running would keep the process alive.
    isolateSummary = await isolate.stop();
    memorySummary = memory.stop();
  }
  return report({ results, total, concurrency, warmup, seconds, memory: memorySummary, memorySamples: memory.samples, isolate: isolateSummary, isolateSamples: isolate.samples });
}

function report({ results, total, concurrency, warmup, seconds, memory, memorySamples, isolate, isolateSamples }) {
  const perClass = {};
  for (const r of results) {
    const s = (perClass[r.class] ??= { n: 0, statuses: {}, ms: [] });
    s.n += 1;
    s.statuses[r.status] = (s.statuses[r.status] ?? 0) + 1;
    s.ms.push(r.ms);
  }
  for (const s of Object.values(perClass)) {
    s.ms.sort((a, b) => a - b);
    s.p50_ms = percentile(s.ms, 50);
    s.p99_ms = percentile(s.ms, 99);
    delete s.ms;
  }
  const all = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    requests: total,
    concurrency,
    warmup,
    seconds,
    sent: results.length,
    answered: results.filter((r) => typeof r.status === "number").length,
    aborted_by_client: results.filter((r) => r.status === "aborted").length,
    no_answer: results.filter((r) => r.status === "no answer").length,
    server_errors: results.filter((r) => typeof r.status === "number" && r.status >= 500).length,
    wrong: results.filter((r) => !r.ok),
    p50_ms: percentile(all, 50),
    p99_ms: percentile(all, 99),
    per_class: perClass,
    memory,
    memory_samples: memorySamples,
    isolate,
    isolate_samples: isolateSamples,
  };
}

const f1 = (n) => n.toFixed(1);
const mb = (n) => (n / 2 ** 20).toFixed(1);

/** The report as text lines (what scripts/load-test prints and the CI test logs). */
export function formatReport(r) {
  const lines = [
    `requests ${r.requests}${r.warmup ? ` (after ${r.warmup} warm-up uploads)` : ""}, concurrency ${r.concurrency}, ${f1(r.seconds)} s (${f1(r.requests / r.seconds)} uploads/s)`,
    `answered ${r.answered}, aborted by the client on purpose ${r.aborted_by_client}, no answer ${r.no_answer}, 5xx ${r.server_errors}, wrong answers ${r.wrong.length}`,
    `latency all: p50 ${f1(r.p50_ms)} ms, p99 ${f1(r.p99_ms)} ms`,
    `isolate (V8 inspector: JS heap committed + ArrayBuffer backing stores; the .wasm's linear memory is not in it): start ${mb(r.isolate.start)} MiB, peak ${mb(r.isolate.peak)} MiB, end ${mb(r.isolate.end)} MiB (JS heap used peak ${mb(r.isolate.heap_used_peak)} MiB, backing stores peak ${mb(r.isolate.backing_peak)} MiB; ${r.isolate.samples} samples)`,
    `isolate live memory (JS heap used + backing stores) at its lowest per quarter of the run: ${liveFloors(r.isolate_samples).map(mb).join(", ")} MiB`,
    `workerd process RSS: start ${mb(r.memory.start)} MiB, peak ${mb(r.memory.peak)} MiB, end ${mb(r.memory.end)} MiB, VmHWM ${mb(r.memory.hwm)} MiB (${r.memory.samples} samples; second half ${mb(r.memory.second_half_min)}..${mb(r.memory.second_half_max)} MiB)`,
    "class                      n  statuses                    p50 ms    p99 ms",
  ];
  for (const [name, s] of Object.entries(r.per_class).sort()) {
    const statuses = Object.entries(s.statuses).map(([k, v]) => `${k}x${v}`).join(" ");
    lines.push(`${name.padEnd(24)} ${String(s.n).padStart(4)}  ${statuses.padEnd(24)} ${f1(s.p50_ms).padStart(9)} ${f1(s.p99_ms).padStart(9)}`);
  }
  for (const w of r.wrong.slice(0, 20)) lines.push(`WRONG ${w.class}: ${w.status} ${w.problem}`);
  return lines;
}

/** An edge isolate's memory limit (Cloudflare Workers: 128 MB per isolate). */
export const MEMORY_LIMIT = 128 * 2 ** 20;
/** How much the last quarter's live-memory floor may exceed the middle quarters' lowest. */
export const GROWTH_TOLERANCE = 8 * 2 ** 20;

/**
 * The isolate's live memory (JS heap used + ArrayBuffer backing stores) at its lowest in each
 * quarter of the run: what survives garbage collection. Peaks follow what is in flight (a
 * 32 MiB body being read); a leak shows as floors that rise.
 */
export function liveFloors(samples) {
  const n = samples.length;
  return [0, 1, 2, 3].map((q) => Math.min(...samples.slice(Math.floor((q * n) / 4), Math.floor(((q + 1) * n) / 4)).map((s) => s.used + s.backing)));
}

/** What is wrong with a load run, as messages (none: it passed). */
export function loadProblems(r, workerOutput, tolerance = GROWTH_TOLERANCE) {
  const problems = [];
  if (r.sent !== r.requests) problems.push(`${r.sent} of ${r.requests} uploads sent`);
  if (r.answered + r.aborted_by_client !== r.requests) problems.push(`${r.no_answer} uploads got no answer`);
  if (r.server_errors !== 0) problems.push(`${r.server_errors} answers were 5xx`);
  if (r.wrong.length !== 0) problems.push(`${r.wrong.length} wrong answers, first: ${r.wrong[0].class}: ${r.wrong[0].problem}`);
  if (!(r.isolate.samples > 10)) problems.push(`only ${r.isolate.samples} samples of the isolate's memory`);
  if (!(r.isolate.peak <= MEMORY_LIMIT)) problems.push(`the isolate peaked at ${mb(r.isolate.peak)} MiB, above ${mb(MEMORY_LIMIT)} MiB`);
  const floors = liveFloors(r.isolate_samples);
  if (floors.at(-1) > Math.min(...floors.slice(1, -1)) + tolerance) {
    problems.push(`the isolate's live memory grew: its floor per quarter of the run was ${floors.map(mb).join(", ")} MiB`);
  }
  if (/Uncaught|edge-worker: /.test(workerOutput)) problems.push(`workerd logged errors:\n${workerOutput.slice(0, 2000)}`);
  return problems;
}

/**
 * The .wasm's linear memory after the same uploads run through validateUpload in this process
 * at the same concurrency (workerd's inspector does not show an instance's memory; the module,
 * its allocator and the uploads are the same, and linear memory only grows): bytes.
 */
export async function wasmHighWater(k, glue, wasmBytes, classes, concurrency) {
  const wasm = glue.initSync({ module: wasmBytes });
  const work = classes.flatMap((c) => [c, c]);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (work.length) {
        const { init } = work.pop().request();
        if (init.signal) continue;
        await k.validateUpload(init.body ?? new Uint8Array(0));
      }
    }),
  );
  return wasm.memory.buffer.byteLength;
}
