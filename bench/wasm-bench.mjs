// Benchmark of the WASM build in Node: inspectRun and accountRun over generated runs of
// several sizes. Not a test (nothing is asserted about time); run it by hand:
//   npm run build && cargo build --release && node bench/wasm-bench.mjs [sizes in MB...]
// It generates each run with `kvledger synth --target-bytes`, then times each call.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inspectRun, accountRun } from "../js/node.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CLI = path.join(ROOT, "target", "release", "kvledger");
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);

function filesOf(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== "truth.json") out.push({ name: path.relative(dir, p), bytes: readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

function time(fn, reps) {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) fn();
  return (performance.now() - t0) / reps;
}

console.log("size_MB  files  inspectRun_ms  accountRun_ms  account_MB_per_s  status");
for (const mb of sizes.length ? sizes : [1, 10, 50]) {
  const dir = mkdtempSync(path.join(tmpdir(), "kvledger-bench-"));
  execFileSync(CLI, ["synth", "--engine", "vllm", "--topology", "1P1D", "--tiers", "gpu,cpu", "--seed", "1", "--target-bytes", `${mb}MB`, "--out", dir], { stdio: "ignore" });
  const files = filesOf(dir);
  const bytes = files.reduce((n, f) => n + f.bytes.length, 0);
  const reps = mb <= 1 ? 10 : mb <= 10 ? 3 : 1;
  const ti = time(() => inspectRun(files), reps);
  let status;
  const ta = time(() => {
    status = accountRun(files).cache_validity.status;
  }, reps);
  console.log(
    `${(bytes / 1e6).toFixed(1).padStart(7)}  ${String(files.length).padStart(5)}  ${ti.toFixed(1).padStart(13)}  ${ta.toFixed(1).padStart(13)}  ${(bytes / 1e6 / (ta / 1000)).toFixed(1).padStart(16)}  ${status}`,
  );
  rmSync(dir, { recursive: true, force: true });
}
