// Upload generators for the edge-worker tests and scripts/load-test: real result uploads (the
// producer's result JSON, gzip'd or not, or a tar / tar.gz bundle of result.json with a run's
// raw artifacts) and hostile ones, each with the HTTP status and verdict outcome it must get.
// The tar writer is here (POSIX ustar, ~40 lines) so a test can also break a bundle on purpose.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { gzipSync, constants as zlibConstants } from "node:zlib";
import path from "node:path";
import { ROOT } from "./util.mjs";

const enc = new TextEncoder();
const BLOCK = 512;

/** Octal field of `width` bytes (width - 1 digits and a NUL). */
function octal(value, width) {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

/**
 * One ustar header. `entry`: {name, size, type ("0" file, "5" dir, "2" symlink), link?}.
 * `breakChecksum` stores a wrong checksum.
 */
function header(entry, breakChecksum = false) {
  const h = new Uint8Array(BLOCK);
  const put = (text, at, width) => h.set(enc.encode(text).subarray(0, width), at);
  put(entry.name, 0, 100);
  put(octal(entry.type === "5" ? 0o755 : 0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(entry.size, 12), 124, 12);
  put(octal(1_780_000_000, 12), 136, 12);
  put("        ", 148, 8);
  put(entry.type ?? "0", 156, 1);
  put(entry.link ?? "", 157, 100);
  put("ustar\0" + "00", 257, 8);
  let sum = h.reduce((a, b) => a + b, 0);
  if (breakChecksum) sum += 1;
  put(octal(sum, 7) + " ", 148, 8);
  return h;
}

/** A tar archive of `entries` ({name, bytes, type?, link?, breakChecksum?}), with its end marker. */
export function tar(entries, { end = true } = {}) {
  const parts = [];
  for (const e of entries) {
    const bytes = e.bytes ?? new Uint8Array(0);
    parts.push(header({ ...e, size: bytes.length }, e.breakChecksum));
    parts.push(bytes);
    const pad = (BLOCK - (bytes.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  if (end) parts.push(new Uint8Array(2 * BLOCK));
  return concat(parts);
}

export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const gzip = (bytes) => new Uint8Array(gzipSync(bytes));

/** A run's raw artifacts as bundle entries: `aiperf_artifacts/<file>` and `launch.json`. */
export function runEntries(dir) {
  const art = path.join(dir, "aiperf_artifacts");
  const entries = readdirSync(art)
    .sort()
    .map((n) => ({ name: `aiperf_artifacts/${n}`, bytes: new Uint8Array(readFileSync(path.join(art, n))) }));
  try {
    entries.push({ name: "launch.json", bytes: new Uint8Array(readFileSync(path.join(dir, "launch.json"))) });
  } catch {
    // A run without launch facts is a run too.
  }
  return entries;
}

/** The same files as accountRun takes them (names without folders). */
export function runFiles(entries) {
  return entries.map((e) => ({ name: path.basename(e.name), bytes: e.bytes }));
}

/**
 * A producer's result JSON (research/producer.md section 6: nested `server_metrics` keys,
 * `kv_cache_pool_tokens`) whose cache claims are what `accounting` (accountRun's result on the
 * run's raw artifacts) says, the way an honest producer running kvledger would write them.
 */
export function producerResult(accounting, overrides = {}) {
  const { legacy } = accounting;
  return {
    infmax_model_prefix: "dsr1",
    model: "deepseek-ai/DeepSeek-R1-0528",
    hw: "mi355x",
    framework: accounting.engine?.name ?? "vllm",
    precision: "fp8",
    conc: 16,
    num_requests_total: 200,
    num_requests_successful: 200,
    request_metrics: { cache: { theoretical_cache_hit_rate: legacy.theoretical_cache_hit_rate } },
    server_metrics: {
      present: true,
      adapter: "vllm",
      metric_count: 40,
      cache: {
        gpu_cache_hit_rate: legacy.server_gpu_cache_hit_rate,
        cpu_cache_hit_rate: legacy.server_cpu_cache_hit_rate,
        external_cache_hit_rate: legacy.server_external_cache_hit_rate,
      },
      kv_cache: { gpu_total_tokens: legacy.kv_cache_pool_tokens },
      tokens: { prompt_total: legacy.total_prompt_tokens, generation_total: legacy.total_generation_tokens },
      cache_validity: {
        status: legacy.cache_validity_status,
        pricing_eligible: legacy.cache_pricing_eligible,
      },
    },
    kv_cache_pool_tokens: legacy.kv_cache_pool_tokens,
    ...overrides,
  };
}

export const jsonBytes = (value) => enc.encode(JSON.stringify(value));

/** A JSON object nested `depth` arrays deep: `{"a":[[[...]]]}`. */
export function deepJson(depth) {
  return enc.encode(`{"a":${"[".repeat(depth)}${"]".repeat(depth)}}`);
}

/**
 * A gzip bomb in the right format: gzip(tar of result.json and one member of `zeros` zero
 * bytes), a few hundred KiB sent that inflate to `zeros` bytes.
 */
export function bundleBomb(resultBytes, zeros) {
  const head = tar([{ name: "result.json", bytes: resultBytes }], { end: false });
  const body = new Uint8Array(head.length + BLOCK + zeros + 2 * BLOCK);
  body.set(head);
  body.set(header({ name: "aiperf_artifacts/padding.bin", size: zeros }), head.length);
  return new Uint8Array(gzipSync(body, { level: zlibConstants.Z_BEST_COMPRESSION }));
}

/** The example runs the uploads are built from (bundled in the repo, real and generated). */
export const CLEAN_RUN = path.join(ROOT, "examples", "synth", "vllm-agg-clean");
export const NOT_ELIGIBLE_RUN = path.join(ROOT, "examples", "synth", "vllm-agg-straddle-no-proof");

/**
 * The native CLI (for `kvledger synth`): release, else debug, in CARGO_TARGET_DIR or target/;
 * built (debug) when there is none.
 */
export function kvledgerCli() {
  const dirs = [process.env.CARGO_TARGET_DIR, path.join(ROOT, "target")].filter(Boolean);
  const find = () => dirs.flatMap((d) => ["release", "debug"].map((p) => path.join(d, p, "kvledger"))).find((p) => existsSync(p));
  if (!find()) execFileSync("cargo", ["build", "--bin", "kvledger"], { cwd: ROOT, stdio: "pipe", timeout: 900_000 });
  return find();
}
