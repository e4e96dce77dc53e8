// The WASM build's first calls in fresh Node processes: what a user who drops one run waits.
//   node bench/first-calls.mjs [--processes N] [--calls N] FILE...
// For each FILE, N processes (default 7), one after the other, each import the package's Node
// entry (pkg/ from scripts/build-pkg) and call `accountRun([{ name, bytes }])` on the file
// `--calls` times (default 5). It prints each process's import and call times (ms), then the
// median first call and the median of each process's best later call.
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

/** In the child: import, then `calls` calls; print the times as JSON. */
async function child(file, calls) {
  let t = performance.now();
  const { accountRun } = await import("../js/node.mjs");
  const importMs = performance.now() - t;
  const files = [{ name: path.basename(file), bytes: readFileSync(file) }];
  const ms = [];
  for (let i = 0; i < calls; i++) {
    t = performance.now();
    accountRun(files);
    ms.push(performance.now() - t);
  }
  process.stdout.write(JSON.stringify({ importMs, ms }));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  if (args[0] === "--child") return child(args[1], Number(args[2]));
  const processes = Number(option(args, "--processes", "7"));
  const calls = Number(option(args, "--calls", "5"));
  if (!args.length || !(processes >= 1) || !(calls >= 2)) {
    console.error("usage: node bench/first-calls.mjs [--processes N] [--calls N>=2] FILE...");
    process.exit(2);
  }
  const self = fileURLToPath(import.meta.url);
  for (const file of args) {
    const firsts = [];
    const warms = [];
    for (let p = 0; p < processes; p++) {
      const out = execFileSync(process.execPath, [self, "--child", file, String(calls)], { maxBuffer: 1 << 20 });
      const { importMs, ms } = JSON.parse(out);
      firsts.push(ms[0]);
      warms.push(Math.min(...ms.slice(1)));
      console.log(`${path.basename(file)}: import ${importMs.toFixed(0)} ms, calls ${ms.map((m) => m.toFixed(0)).join(" ")} ms`);
    }
    console.log(
      `${file}: first call median ${median(firsts).toFixed(0)} ms (${Math.min(...firsts).toFixed(0)}-${Math.max(...firsts).toFixed(0)}), ` +
        `best later call median ${median(warms).toFixed(0)} ms, ${processes} processes`,
    );
  }
}

await main();
