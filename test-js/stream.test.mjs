// The streaming API (accountStream, AccountStream) in Node: the same result as accountRun on
// the same files whatever the chunks and sources, progress after each chunk, INPUT_TOO_LARGE
// (a stream past its memory budget, a whole-buffer call that cannot fit) with the instance
// usable afterwards, and the linear memory of a large generated run streamed.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { accountRun, accountStream, AccountStream, inspectRun, KvledgerError } from "../js/node.mjs";
import * as glue from "../pkg/web/kvledger.js";
import { ROOT } from "./lib/util.mjs";

/** The instance's exports (the entry initialised it on import: this returns that instance). */
const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
const linearMemory = () => wasm.memory.buffer.byteLength;

/** Every file below `dir` as {name (relative path), bytes}. */
function filesOf(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== "truth.json") out.push({ name: path.relative(dir, p), bytes: readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

/** A ReadableStream giving `bytes` in chunks of `size` (a copy each: streams own their chunks). */
function streamOf(bytes, size) {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function* generatorOf(bytes, size) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const RUNS = ["examples/synth/vllm-agg-clean", "examples/vllm-mi355x-conc1", "examples/sglang-minimax-conc16-captures", "examples/vllm-doc-timeslices"];

for (const run of RUNS) {
  test(`${run}: streamed in odd chunks equals accountRun`, async () => {
    const files = filesOf(path.join(ROOT, run));
    const want = accountRun(files);
    for (const size of [1009, 4093, 65537]) {
      const got = await accountStream(files.map((f) => ({ name: f.name, stream: streamOf(f.bytes, size) })));
      assert.deepStrictEqual(got, want, `chunks of ${size}`);
    }
    // Other sources, in reverse file order: a Blob, an async generator, a buffer.
    const kinds = [(b) => new Blob([b]), (b) => generatorOf(b, 777), (b) => new Uint8Array(b)];
    const mixed = files
      .slice()
      .reverse()
      .map((f, i) => ({ name: f.name, stream: kinds[i % kinds.length](f.bytes) }));
    assert.deepStrictEqual(await accountStream(mixed), want, "Blob, async iterable, Uint8Array");
  });
}

test("the push class: any order, any split", () => {
  const files = filesOf(path.join(ROOT, "examples/synth/vllm-agg-clean"));
  const s = new AccountStream();
  for (const f of files.slice().reverse()) {
    s.beginFile(f.name);
    for (let at = 0; at < f.bytes.length; at += 333) s.push(f.bytes.subarray(at, at + 333));
    s.endFile();
  }
  assert.equal(s.bytesRead, files.reduce((n, f) => n + f.bytes.length, 0));
  assert.deepStrictEqual(s.finish(), accountRun(files));
  assert.throws(() => s.finish(), (e) => e instanceof KvledgerError && /has finished/.test(e.message));
});

test("progress after each chunk, with increasing bytes, up to every byte read", async () => {
  const files = filesOf(path.join(ROOT, "examples/vllm-mi355x-conc1"));
  const seen = [];
  await accountStream(
    files.map((f) => ({ name: f.name, stream: streamOf(f.bytes, 50_000) })),
    null,
    { onProgress: (p) => seen.push(p) },
  );
  assert.ok(seen.length > files.length, `${seen.length} calls`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].bytes_read > seen[i - 1].bytes_read, `call ${i}`);
  assert.ok(seen.every((p) => files.some((f) => f.name === p.file)));
  const read = files.filter((f) => seen.some((p) => p.file === f.name)).reduce((n, f) => n + f.bytes.length, 0);
  assert.equal(seen.at(-1).bytes_read, read);
});

test("errors: as accountRun's, malformed calls are BAD_OPTIONS", async () => {
  const broken = [{ name: "server_metrics_export.json", stream: new TextEncoder().encode('{\n  "summary": {\n') }];
  await assert.rejects(accountStream(broken), (e) => e instanceof KvledgerError && e.code === "JSON_SYNTAX" && e.file === "server_metrics_export.json" && e.line >= 2);
  const bad = (p, json_path) => assert.rejects(p, (e) => e instanceof KvledgerError && e.code === "BAD_OPTIONS" && e.json_path === json_path);
  await bad(accountStream(null), "files");
  await bad(accountStream([{ name: "a.json" }]), "files[0]");
  await bad(accountStream([{ name: "a.json", stream: "text" }]), "files[0].stream");
  // A file not read (by its name) is not pulled, but what is given for it is checked all the same.
  await bad(accountStream([{ name: "profile_export_aiperf.csv", stream: "text" }]), "files[0].stream");
  await bad(accountStream([{ name: "a.json", text: "{}", stream: new Uint8Array() }]), "files[0].text");
  await bad(accountStream([], { memory_budget: "48M" }), "options.memory_budget");
  await bad(accountStream([], { memory_budget: -1 }), "options.memory_budget");
  await bad(accountStream([], { policy: { maxRateWidth: 0.01 } }), "options.policy.maxRateWidth");
  await bad(accountStream([], null, { onProgress: 3 }), "onProgress");
});

test("INPUT_TOO_LARGE past a stream's memory budget; the instance stays usable", async () => {
  const files = filesOf(path.join(ROOT, "examples/vllm-mi355x-conc1"));
  const big = files.reduce((a, f) => (f.bytes.length > a.bytes.length ? f : a));
  assert.ok(big.bytes.length > 1 << 20, `${big.name} is ${big.bytes.length} bytes`);
  // Every reader streams, so a run this size fits any realistic budget: 4 KiB does not.
  const err = await accountStream([{ name: big.name, stream: streamOf(big.bytes, 65536) }], { memory_budget: 4096 }).catch((e) => e);
  assert.ok(err instanceof KvledgerError, String(err));
  assert.equal(err.code, "INPUT_TOO_LARGE", err.message);
  assert.equal(err.file, big.name);
  assert.equal(typeof err.byte_offset, "number");
  assert.match(err.message, /4096 bytes/);
  // Usable afterwards: a stream and a whole-buffer call give the usual result.
  const want = accountRun(files);
  assert.deepStrictEqual(await accountStream(files.map((f) => ({ name: f.name, stream: streamOf(f.bytes, 65536) }))), want);
});

test("a run whose evidence fits but whose accounting would not is refused before its tables are made", async () => {
  // A capture of 50,000 series (4.2 MB): read within 6 MiB of heap, but the accounting's
  // tables of its series would pass that, so it is refused (admitted before made, not measured
  // after); with 10 MiB and the default budget it is accounted as accountRun accounts it.
  const lines = ["# TYPE vllm:prefix_cache_queries counter"];
  for (let i = 0; i < 50000; i++) lines.push(`vllm:prefix_cache_queries_total{engine="${i}",model_name="m"} ${i}.0 1781634703000`);
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
  const file = () => [{ name: "capture.prom", stream: streamOf(bytes, 1 << 20) }];
  const err = await accountStream(file(), { memory_budget: 6 << 20 }).catch((e) => e);
  assert.ok(err instanceof KvledgerError, String(err));
  assert.equal(err.code, "INPUT_TOO_LARGE", err.message);
  assert.equal(err.file, "accounting");
  assert.match(err.message, /the budget of 6291456 bytes of heap and \d+ of linear memory allows: a table of its series would pass it/);
  const want = accountRun([{ name: "capture.prom", bytes }]);
  assert.deepStrictEqual(await accountStream(file(), { memory_budget: 10 << 20 }), want);
  assert.deepStrictEqual(await accountStream(file()), want);
});

test("a reply of megabytes comes out of the stream in pieces, the same as accountRun's", async () => {
  // 6,000 endpoints: a reply of about 3 MB, handed over a megabyte at a time.
  const rows = ["# AIPerf Server Metrics Export (CSV)", "#", "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description"];
  for (let i = 0; i < 6000; i++) {
    rows.push(`10.0.${i >> 8}.${i & 255}:8000,gauge,vllm:kv_cache_usage_perc,,0.5,0.5,0.5,0.0,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0,m,d`);
  }
  const bytes = new TextEncoder().encode(rows.join("\n") + "\n");
  const want = accountRun([{ name: "server_metrics_export.csv", bytes }]);
  assert.ok(JSON.stringify(want).length > 2 * 2 ** 20, `${JSON.stringify(want).length} B`);
  const got = await accountStream([{ name: "server_metrics_export.csv", stream: streamOf(bytes, 65536) }]);
  assert.deepStrictEqual(got, want);
});

test("a whole-buffer call streams every file from JavaScript: 4 GiB of input is not copied in; usable after", () => {
  // 4 GiB of input (one 1 GiB buffer of zeros, given four times), more than an instance can
  // hold: each file is read a chunk at a time, so the call fails on the first one's first
  // byte (not JSON) with linear memory as it was, give or take a chunk.
  const gib = new Uint8Array(1 << 30);
  const before = linearMemory();
  const files = [0, 1, 2, 3].map((i) => ({ name: `part${i}/server_metrics_export.json`, bytes: gib }));
  assert.throws(() => accountRun(files), (e) => e instanceof KvledgerError && e.code === "JSON_SYNTAX" && e.file === "part0/server_metrics_export.json");
  assert.ok(linearMemory() - before <= 4 * 2 ** 20, `linear memory grew by ${linearMemory() - before} B`);
  const run = filesOf(path.join(ROOT, "examples/vllm-doc-timeslices"));
  assert.ok(accountRun(run).cache_validity.status);
});

/** The native CLI, to generate a large run (`kvledger synth --target-bytes`). */
function cli() {
  const dirs = [process.env.CARGO_TARGET_DIR, path.join(ROOT, "target")].filter(Boolean);
  for (const d of dirs) {
    for (const profile of ["release", "debug"]) {
      const p = path.join(d, profile, "kvledger");
      if (existsSync(p)) return p;
    }
  }
  return undefined;
}

// A generated run of KVLEDGER_STREAM_MB (default 300) MB streamed with the default budget
// (48 MiB of heap): every reader streams, the scrape JSONL is folded per series as it is read
// (a few bytes per sample, never its scrapes) and thinned soundly past three quarters of the
// budget, and the accounting step after the last byte is held to the budget too. So any size
// must be accounted with linear memory within 64 MiB. The result must equal the native CLI's
// `account --json` of the same folder byte for byte, unless the evidence was thinned
// (`evidence_coarsened`): then every interval must contain the CLI's. By hand:
// KVLEDGER_STREAM_MB=1000 node --test test-js/stream.test.mjs (KVLEDGER_STREAM_DIR=DIR keeps
// the generated run there; KVLEDGER_STREAM_ASSERT_MEMORY=0 only reports the memory).
/** The generated run of the two tests below, made once (KVLEDGER_STREAM_DIR keeps it). */
let generated;
function generatedRun(bin) {
  if (generated) return generated;
  const mb = Number(process.env.KVLEDGER_STREAM_MB ?? 300);
  const dir = process.env.KVLEDGER_STREAM_DIR ?? mkdtempSync(path.join(tmpdir(), "kvledger-stream-"));
  if (!existsSync(path.join(dir, "launch.json"))) {
    execFileSync(bin, ["synth", "--engine", "vllm", "--topology", "1P1D", "--tiers", "gpu,cpu", "--seed", "3", "--target-bytes", `${mb}MB`, "--out", dir], { stdio: "ignore" });
  }
  const out = execFileSync(bin, ["account", "--json", dir], { maxBuffer: 1 << 28 }).toString();
  generated = { dir, out, native: JSON.parse(out).result };
  return generated;
}

after(() => {
  if (generated && !process.env.KVLEDGER_STREAM_DIR) rmSync(generated.dir, { recursive: true, force: true });
});

test("a large generated run streamed: result equals the native CLI's, linear memory within 64 MiB", async (t) => {
  const bin = cli();
  if (!bin) return t.skip("no native kvledger binary (cargo build --release) to generate the run");
  const strict = process.env.KVLEDGER_STREAM_ASSERT_MEMORY !== "0";
  {
    const { dir, out, native } = generatedRun(bin);
    const names = filesOf(dir).map((f) => f.name);
    const total = names.reduce((n, name) => n + statSync(path.join(dir, name)).size, 0);
    const before = linearMemory();
    const files = names.map((name) => ({ name, stream: new Blob([readFileSync(path.join(dir, name))]).stream() }));
    let high = before;
    const started = performance.now();
    const result = await accountStream(files, null, { onProgress: () => (high = Math.max(high, linearMemory())) }).catch((e) => e);
    const seconds = (performance.now() - started) / 1000;
    high = Math.max(high, linearMemory());
    const mib = (n) => (n / 2 ** 20).toFixed(1);
    t.diagnostic(`input ${mib(total)} MiB in ${names.length} files, streamed in ${seconds.toFixed(1)} s; linear memory ${mib(before)} MiB before, ${mib(high)} MiB high-water`);
    if (result instanceof Error) {
      t.diagnostic(`refused: ${result.code} ${result.file}: ${result.message}`);
      assert.ok(result instanceof KvledgerError && result.code === "INPUT_TOO_LARGE", String(result));
      assert.ok(!strict, "the run must be accounted within the budget");
      return;
    }
    if (strict) assert.ok(high <= 64 * 2 ** 20, `linear memory ${mib(high)} MiB`);
    const thinned = result.cache_validity.reasons.some((r) => r.code === "evidence_coarsened");
    t.diagnostic(thinned ? "evidence thinned (evidence_coarsened)" : "evidence not thinned");
    if (!thinned) {
      // Byte for byte: the CLI's result text is the stream's serialised the same way.
      const text = out.slice(out.indexOf('"result":') + 9, out.lastIndexOf("}"));
      assert.equal(JSON.stringify(result), JSON.stringify(JSON.parse(text)));
      assert.deepStrictEqual(result, native);
      return;
    }
    for (const name of ["gpu", "cpu", "external", "overall"]) {
      const [ours, theirs] = [result.rates[name], native.rates[name]];
      if (!theirs) continue;
      assert.ok(ours, `rates.${name} missing`);
      assert.ok(ours.lo <= theirs.lo + 1e-12 && ours.hi >= theirs.hi - 1e-12, `rates.${name}: [${ours.lo}, ${ours.hi}] does not contain [${theirs.lo}, ${theirs.hi}]`);
    }
  }
});

// A JSON export's family is read into a list of pieces (src/model/pieces.rs: 1 MiB each in
// WASM, about 21,800 series; natively one vector), and accounting takes it a piece at a time,
// each piece a quarter at a time. Families of 50,000 counter and gauge series (three pieces
// each here), every value different: the totals of a piece lost, repeated or taken twice would
// not be the native CLI's.
test("an export of families larger than a piece equals the native CLI's, whole-buffer and streamed", async (t) => {
  const bin = cli();
  if (!bin) return t.skip("no native kvledger binary (cargo build --release) to compare with");
  const n = 50_000;
  const [t0, t1] = ["1781634703000000000", "1781634763000000000"];
  const url = "http://h:8000/metrics";
  const counter = (total) => `{"endpoint_url":"${url}","labels":{"engine":"${total % n}","model_name":"m"},"stats":{"total":${total}},"timeslices":[{"start_ns":${t0},"end_ns":${t1},"total":${total}}]}`;
  const gauge = (i) => `{"endpoint_url":"${url}","labels":{"engine":"${i}","model_name":"m"},"stats":{"avg":${i / 2},"min":${i / 4},"max":${i}}}`;
  const family = (name, type, series) => `"${name}":{"type":"${type}","description":"d","series":[${series.join(",")}]}`;
  const ids = Array.from({ length: n }, (_, i) => i);
  const text = `{"schema_version":"1.0","aiperf_version":"0.12.0","benchmark_id":"x","metrics":{${[
    family("vllm:prefix_cache_queries", "counter", ids.map((i) => counter(2 * n + 3 * i))),
    family("vllm:prefix_cache_hits", "counter", ids.map((i) => counter(n + i))),
    family("vllm:kv_cache_usage_perc", "gauge", ids.map(gauge)),
  ].join(",")}}}`;
  const dir = mkdtempSync(path.join(tmpdir(), "kvledger-pieces-"));
  try {
    writeFileSync(path.join(dir, "server_metrics_export.json"), text);
    const out = execFileSync(bin, ["account", "--json", dir], { maxBuffer: 1 << 28 }).toString();
    const reply = out.slice(out.indexOf('"result":') + 9, out.lastIndexOf("}"));
    const native = JSON.stringify(JSON.parse(reply));
    // Every series counts: the sums of the counters' totals, the gauges' largest value.
    const { counters, kv_cache } = JSON.parse(reply);
    assert.equal(counters.unresolved.prompt.value, 2 * n * n + (3 * n * (n - 1)) / 2);
    assert.equal(counters.unresolved.hit_gpu.value, n * n + (n * (n - 1)) / 2);
    assert.equal(kv_cache.endpoints[0].usage_max, (n - 1) / 100);
    const bytes = new TextEncoder().encode(text);
    const files = [{ name: "server_metrics_export.json", bytes }];
    assert.equal(JSON.stringify(accountRun(files)), native);
    const streamed = await accountStream([{ name: "server_metrics_export.json", stream: streamOf(bytes, 1 << 16) }]);
    assert.equal(JSON.stringify(streamed), native);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The whole-buffer call on the same run: its files are read from JavaScript a chunk at a time,
// so linear memory stays within 1.3 times the input, and the result is the native CLI's byte for byte (no thinning: the call's
// budget is the instance's memory, not a stream's 48 MiB).
test("the large generated run whole-buffer: result equals the native CLI's, linear memory within 1.3x input", (t) => {
  const bin = cli();
  if (!bin) return t.skip("no native kvledger binary (cargo build --release) to generate the run");
  const { dir, out } = generatedRun(bin);
  const files = filesOf(dir);
  const total = files.reduce((n, f) => n + f.bytes.length, 0);
  const started = performance.now();
  const result = accountRun(files);
  const seconds = (performance.now() - started) / 1000;
  const high = linearMemory();
  const mib = (n) => (n / 2 ** 20).toFixed(1);
  const json = files.filter((f) => f.name.endsWith(".json")).reduce((n, f) => n + f.bytes.length, 0);
  t.diagnostic(`input ${mib(total)} MiB (${mib(json)} MiB of it JSON), accounted in ${seconds.toFixed(1)} s; linear memory ${mib(high)} MiB high-water`);
  assert.ok(high <= 1.3 * total, `linear memory ${mib(high)} MiB for ${mib(total)} MiB of input`);
  const text = out.slice(out.indexOf('"result":') + 9, out.lastIndexOf("}"));
  assert.equal(JSON.stringify(result), JSON.stringify(JSON.parse(text)));
});

// A text given as a string is encoded a piece of 2^20 UTF-16 units at a time: pieces never
// split a surrogate pair, so the bytes read are those of the whole string encoded (a lone
// surrogate becomes U+FFFD either way).
test("a text input equals its bytes: large texts, a surrogate pair across the encoder's pieces", () => {
  const files = filesOf(path.join(ROOT, "examples/vllm-mi355x-conc1"));
  const big = files.reduce((a, f) => (f.bytes.length > a.bytes.length ? f : a));
  assert.ok(big.bytes.length > 1 << 20, `${big.name} is ${big.bytes.length} bytes`);
  const text = (f) => ({ name: f.name, text: new TextDecoder().decode(f.bytes) });
  assert.deepStrictEqual(accountRun(files.map((f) => (f === big ? text(f) : f))), accountRun(files));
  // The run summary's benchmark_id (which inspectRun lists) holds an emoji whose surrogate
  // pair straddles the first piece's end, and a lone surrogate.
  const summary = files.find((f) => f.name.endsWith("profile_export_aiperf.json"));
  // (JSON.stringify would escape the lone surrogate: it goes in raw.)
  const body = JSON.stringify({ ...JSON.parse(new TextDecoder().decode(summary.bytes)), benchmark_id: "id-\u{1F600}-LONE-x" }).replace("LONE", "\uD800");
  const padded = " ".repeat(2 ** 20 - 1 - body.indexOf("\u{1F600}")) + body;
  assert.equal(padded.charCodeAt(2 ** 20 - 1), 0xd83d, "the high surrogate ends the first piece");
  const withSummary = (content) => files.map((f) => (f === summary ? { name: f.name, ...content } : f));
  const fromText = inspectRun(withSummary({ text: padded }));
  assert.deepStrictEqual(fromText, inspectRun(withSummary({ bytes: new TextEncoder().encode(padded) })));
  assert.equal(fromText.benchmark_ids[summary.name], "id-\u{1F600}-\uFFFD-x");
});

test("a file's stream is cancelled once its bytes are not needed (an ignored file, an endless stream)", async () => {
  let pulls = 0;
  let cancelled = false;
  const endless = new ReadableStream({
    pull(controller) {
      pulls += 1;
      controller.enqueue(new Uint8Array(4096).fill(65));
    },
    cancel() {
      cancelled = true;
    },
  });
  const files = filesOf(path.join(ROOT, "examples/vllm-doc-timeslices"));
  const got = await accountStream([{ name: "engine.log", stream: endless }, ...files.map((f) => ({ name: f.name, stream: f.bytes }))]);
  assert.ok(cancelled, "the ignored file's stream was cancelled");
  assert.ok(pulls <= 3, `${pulls} chunks pulled`);
  assert.deepStrictEqual(got, accountRun(files));
});

test("no stream is pulled for a file whose name is not read, nor for the files after a refusal", async () => {
  const counted = (bytes) => {
    const s = { pulls: 0, cancelled: false };
    s.stream = new ReadableStream({
      pull(controller) {
        s.pulls += 1;
        controller.enqueue(bytes);
        controller.close();
      },
      cancel() {
        s.cancelled = true;
      },
    }, { highWaterMark: 0 });
    return s;
  };
  const files = filesOf(path.join(ROOT, "examples/vllm-mi355x-conc1"));
  const big = files.reduce((a, f) => (f.bytes.length > a.bytes.length ? f : a));
  // The run summary as CSV is not read (its JSON is), whatever its bytes.
  const ignored = counted(new TextEncoder().encode("Metric,avg\nrequest_count,64\n"));
  // Named after the refused file: they can no longer change the outcome.
  const after = Array.from({ length: 50 }, () => counted(big.bytes));
  const err = await accountStream([
    { name: "profile_export_aiperf.csv", stream: ignored.stream },
    { name: big.name, stream: streamOf(big.bytes, 65536) },
    ...after.map((s, i) => ({ name: `zz/${String(i).padStart(2, "0")}/${big.name}`, stream: s.stream })),
  ], { memory_budget: 4096 }).catch((e) => e);
  assert.ok(err instanceof KvledgerError, String(err));
  assert.equal(err.code, "INPUT_TOO_LARGE", err.message);
  assert.equal(err.file, big.name);
  for (const [what, s] of [["the ignored file", ignored], ...after.map((s, i) => [`file ${i} after the refusal`, s])]) {
    assert.equal(s.pulls, 0, `${what} was pulled`);
    assert.ok(s.cancelled, `${what} was not cancelled`);
  }
});
