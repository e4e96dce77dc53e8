// The WASM build in Node against the native CLI on the same bytes, in the same run.
//   node bench/wasm.mjs [--cli PATH] [--repeats N] [--tsv OUT] FILE...
// For each FILE (an AIPerf file kvledger recognises by its name, e.g. server_metrics_export.json)
// it times `accountRun([{ name, bytes }])` of the npm package's Node entry (pkg/ from
// scripts/build-pkg) and `kvledger account --json FILE` (the native CLI, the baseline: same
// bytes, one run made of that one file), best of N each (default 5), and prints WASM ÷ native
// throughput. The WASM side's first call is also reported against the same native best: V8 runs
// a module's code first in its baseline compiler and optimises the hot functions in the
// background, so a small input needs about four calls to reach its steady speed (the 9.9 MB
// CSV: 0.55-0.64 best of 3, 0.72-0.73 best of 5 or 8, 2026-12-02). A first call after
// `warmUp()` and half a second idle (what the visualizer's worker does before files arrive) is
// reported too, from a process of its own.
// Each file is accounted in a fresh Node process, so the wasm linear memory after the call
// (`WebAssembly.Memory.buffer.byteLength`: it only grows) is that input's high-water mark.
// Both sides' verdicts are compared: a ratio between different results would mean nothing.
// Beside wall time it reports the ratio of CPU time (user + system, every thread of the process:
// V8's compiler and collector threads count): on a machine shared with other work the wall ratio
// swings with the load, the CPU ratio much less.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./args.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);

function best(fn, repeats) {
  let min = Infinity;
  let cpuMin = Infinity;
  let first;
  let out;
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    out = fn();
    const used = process.cpuUsage(c);
    const ms = performance.now() - t;
    first ??= ms;
    min = Math.min(min, ms);
    cpuMin = Math.min(cpuMin, (used.user + used.system) / 1000);
  }
  return { ms: min, firstMs: first, cpuMs: cpuMin, out };
}

/**
 * In a child of its own: `warmUp()`, half a second idle (a page or worker waiting for a user's
 * files), then one call on `file`; print its time as JSON.
 */
async function afterWarmUp(file) {
  const { accountRun, warmUp } = await import("../js/node.mjs");
  await warmUp();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const files = [{ name: path.basename(file), bytes: readFileSync(file) }];
  const t = performance.now();
  accountRun(files);
  process.stdout.write(JSON.stringify({ ms: performance.now() - t }));
}

/** In the child: account one file with the WASM build; print timing and memory as JSON. */
async function one(file, repeats) {
  const { accountRun } = await import("../js/node.mjs");
  const glue = await import("../pkg/web/kvledger.js");
  const bytes = readFileSync(file);
  const files = [{ name: path.basename(file), bytes }];
  const { ms, firstMs, cpuMs, out } = best(() => accountRun(files), repeats);
  // The glue's initSync returns the instance's exports once initialised (the entry did it).
  const memory = glue.initSync({ module: new Uint8Array() }).memory.buffer.byteLength;
  process.stdout.write(JSON.stringify({ ms, firstMs, cpuMs, memory, status: out.cache_validity.status }));
}

/** The native CLI, timed by GNU time (its CPU time is the child's, which Node cannot see). */
function native(cli, file, repeats) {
  const times = path.join(mkdtempSync(path.join(tmpdir(), "kvledger-bench-")), "time");
  let ms = Infinity;
  let cpuMs = Infinity;
  let out;
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    const text = execFileSync("/usr/bin/time", ["-f", "%U %S", "-o", times, cli, "account", "--json", file], {
      maxBuffer: 1 << 30,
    });
    ms = Math.min(ms, performance.now() - t);
    const [user, sys] = readFileSync(times, "utf8").trim().split(/\s+/).slice(-2).map(Number);
    cpuMs = Math.min(cpuMs, (user + sys) * 1000);
    out = JSON.parse(text).result.cache_validity.status;
  }
  rmSync(path.dirname(times), { recursive: true, force: true });
  return { ms, cpuMs, out };
}

async function main() {
  if (args[0] === "--one") return one(args[1], Number(args[2]));
  if (args[0] === "--after-warm-up") return afterWarmUp(args[1]);
  const cli = option(args, "--cli", path.join(ROOT, "target", "release", "kvledger"));
  const repeats = Number(option(args, "--repeats", "5"));
  const tsvPath = option(args, "--tsv", null);
  if (!args.length) {
    console.error("usage: node bench/wasm.mjs [--cli PATH] [--repeats N] [--tsv OUT] FILE...");
    process.exit(2);
  }
  const rows = [];
  console.log("file                                   size_MB  wasm_MB/s  native_MB/s  wasm/native  first_call  warmed_1st  cpu_ratio  wasm_mem_MB  mem/input");
  for (const file of args) {
    const size = statSync(file).size;
    const child = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--one", file, String(repeats)], {
      maxBuffer: 1 << 20,
    });
    const w = JSON.parse(child);
    const warmed = JSON.parse(
      execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--after-warm-up", file], { maxBuffer: 1 << 20 }),
    );
    const n = native(cli, file, repeats);
    if (n.out !== w.status) {
      console.error(`${file}: the WASM verdict ${w.status} differs from the native ${n.out}`);
      process.exit(1);
    }
    const mbs = (ms) => size / 1e6 / (ms / 1000);
    const row = {
      file,
      bytes: size,
      wasm_s: w.ms / 1000,
      native_s: n.ms / 1000,
      ratio: n.ms / w.ms,
      first_ratio: n.ms / w.firstMs,
      warmed_first_ratio: n.ms / warmed.ms,
      cpu_ratio: n.cpuMs / w.cpuMs,
      memory: w.memory,
      mem_ratio: w.memory / size,
    };
    rows.push(row);
    const name = path.relative(process.cwd(), file);
    console.log(
      `${name.slice(-38).padEnd(38)} ${(size / 1e6).toFixed(1).padStart(8)} ${mbs(w.ms).toFixed(1).padStart(10)} ${mbs(n.ms).toFixed(1).padStart(12)} ${row.ratio.toFixed(3).padStart(12)} ${row.first_ratio.toFixed(3).padStart(11)} ${row.warmed_first_ratio.toFixed(3).padStart(11)} ${row.cpu_ratio.toFixed(3).padStart(10)} ${(w.memory / 1e6).toFixed(1).padStart(12)} ${row.mem_ratio.toFixed(2).padStart(10)}`,
    );
  }
  console.log("wasm/native: the WASM build's throughput / the native CLI's on the same file (best of " + repeats + "); first_call: the WASM build's first call in its process / the same native best; warmed_1st: the same for a first call after warmUp() and 500 ms idle, in a process of its own; cpu_ratio: the same for CPU time (user + system); mem: wasm linear memory after the call");
  if (tsvPath) {
    const head = "file\tbytes\twasm_s\tnative_s\twasm_vs_native\twasm_memory_bytes\twasm_memory_vs_input\twasm_vs_native_cpu\twasm_first_vs_native\twasm_warmed_first_vs_native\n";
    writeFileSync(
      tsvPath,
      head + rows.map((r) => [r.file, r.bytes, r.wasm_s, r.native_s, r.ratio.toFixed(4), r.memory, r.mem_ratio.toFixed(4), r.cpu_ratio.toFixed(4), r.first_ratio.toFixed(4), r.warmed_first_ratio.toFixed(4)].join("\t")).join("\n") + "\n",
    );
  }
}

await main();
