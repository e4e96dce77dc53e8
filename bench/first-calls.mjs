// The WASM build's first calls in fresh Node processes: what a user who drops one run waits.
//   node bench/first-calls.mjs [--processes N] [--calls N] [--idle MS] FILE...
// For each FILE, N pairs of processes (default 7), one after the other: each imports the
// package's Node entry (pkg/ from scripts/build-pkg) and calls `accountRun([{ name, bytes }])`
// on the file `--calls` times (default 5); the second of each pair first calls `warmUp()` and
// waits `--idle` ms (default 500: a page or worker idle before the user's files arrive). It
// prints each process's import, warm-up and call times (ms), then for both kinds the median
// first call and the median of each process's best later call: the cold first call and the
// one after `warmUp()` measured side by side in the same run.
// V8 runs a module's functions first in baseline code and optimises the hot ones on other
// threads, so the first call is slower than later ones, and by how much varies with the
// machine's load. A median over fresh processes is steadier than any one run.
// To compare two builds, swap pkg/web/kvledger_bg.wasm between runs (the glue is the same for
// the same Rust code).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./args.mjs";

const args = process.argv.slice(2);

/** In the child: import, warm up when `idleMs` is a number, then `calls` calls; print the times as JSON. */
async function child(file, calls, idleMs) {
  let t = performance.now();
  const { accountRun, warmUp } = await import("../js/node.mjs");
  const importMs = performance.now() - t;
  let warmMs;
  if (idleMs !== undefined) {
    t = performance.now();
    await warmUp();
    warmMs = performance.now() - t;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
  }
  const files = [{ name: path.basename(file), bytes: readFileSync(file) }];
  const ms = [];
  for (let i = 0; i < calls; i++) {
    t = performance.now();
    accountRun(files);
    ms.push(performance.now() - t);
  }
  process.stdout.write(JSON.stringify({ importMs, warmMs, ms }));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  if (args[0] === "--child") return child(args[1], Number(args[2]), args[3] === undefined ? undefined : Number(args[3]));
  const processes = Number(option(args, "--processes", "7"));
  const calls = Number(option(args, "--calls", "5"));
  const idle = Number(option(args, "--idle", "500"));
  if (!args.length || !(processes >= 1) || !(calls >= 2) || !(idle >= 0)) {
    console.error("usage: node bench/first-calls.mjs [--processes N] [--calls N>=2] [--idle MS] FILE...");
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  for (const file of args) {
    const kinds = { cold: { firsts: [], warms: [] }, "after warmUp": { firsts: [], warms: [], warmUps: [] } };
    for (let p = 0; p < processes; p++) {
      for (const [kind, acc] of Object.entries(kinds)) {
        const extra = kind === "cold" ? [] : [String(idle)];
        const out = execFileSync(process.execPath, [self, "--child", file, String(calls), ...extra], { maxBuffer: 1 << 20 });
        const { importMs, warmMs, ms } = JSON.parse(out);
        acc.firsts.push(ms[0]);
        acc.warms.push(Math.min(...ms.slice(1)));
        if (warmMs !== undefined) acc.warmUps.push(warmMs);
        const warm = warmMs === undefined ? "" : `, warmUp ${warmMs.toFixed(0)} ms + ${idle} ms idle`;
        console.log(`${path.basename(file)} (${kind}): import ${importMs.toFixed(0)} ms${warm}, calls ${ms.map((m) => m.toFixed(0)).join(" ")} ms`);
      }
    }
    for (const [kind, { firsts, warms, warmUps }] of Object.entries(kinds)) {
      const warm = warmUps ? `, warmUp median ${median(warmUps).toFixed(0)} ms` : "";
      console.log(
        `${file} (${kind}): first call median ${median(firsts).toFixed(0)} ms (${Math.min(...firsts).toFixed(0)}-${Math.max(...firsts).toFixed(0)}), ` +
          `best later call median ${median(warms).toFixed(0)} ms${warm}, ${processes} processes`,
      );
    }
  }
}

await main();
