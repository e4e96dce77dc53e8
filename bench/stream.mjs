// The streaming API on large files: what `accountStream` takes to account each one, and the
// linear memory it needed.
//   node bench/stream.mjs [--budget MIB] FILE...
// Each FILE is accounted alone (a run of that one file) in a fresh Node process, so the
// linear memory reported is that file's high-water mark (a module's memory never shrinks).
// The file is read as a `ReadableStream` of 1 MiB pieces (`Readable.toWeb` of a file
// stream), at the default memory budget unless `--budget` gives one in MiB. It prints the
// seconds, the bytes read and progress calls made, the status and its reason codes (or the
// error's code and byte, e.g. `INPUT_TOO_LARGE`), and the linear memory after the call, also as
// a share of the 64 MiB the streaming API is held to.
// Uses the package's Node entry (pkg/ from scripts/build-pkg). A benchmark, not a test.
import { execFileSync } from "node:child_process";
import { createReadStream, statSync } from "node:fs";
import { Readable } from "node:stream";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { option } from "./args.mjs";

const MiB = 2 ** 20;

/** In the child: stream `file` through accountStream; print what happened as JSON. */
async function child(file, budgetMiB) {
  const { accountStream } = await import("../js/node.mjs");
  const glue = await import("../pkg/web/kvledger.js");
  const stream = Readable.toWeb(createReadStream(file, { highWaterMark: MiB }));
  const options = budgetMiB ? { memory_budget: budgetMiB * MiB } : null;
  let read = 0;
  let calls = 0;
  const onProgress = ({ bytes_read }) => {
    read = bytes_read;
    calls += 1;
  };
  const t = performance.now();
  let outcome;
  try {
    const result = await accountStream([{ name: path.basename(file), stream }], options, { onProgress });
    const codes = [...new Set((result.cache_validity.reasons ?? []).map((r) => r.code))];
    outcome = `${result.cache_validity.status} (${codes.join(", ")})`;
  } catch (e) {
    outcome = `${e.code ?? "error"}: ${e.message}`;
  }
  const seconds = (performance.now() - t) / 1000;
  // The instance's memory: `initSync` on a module already initialised returns its exports.
  const memory = glue.initSync({ module: new Uint8Array() }).memory.buffer.byteLength;
  process.stdout.write(JSON.stringify({ seconds, read, calls, outcome, memory }));
}

const args = process.argv.slice(2);
if (args[0] === "--one") {
  await child(args[1], Number(args[2]) || 0);
} else {
  const budget = Number(option(args, "--budget", 0));
  const files = args;
  if (files.length === 0 || files.some((f) => f.startsWith("--"))) {
    console.error("usage: node bench/stream.mjs [--budget MIB] FILE...");
    process.exit(2);
  }
  for (const file of files) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--one", file, String(budget)], {
      maxBuffer: 1 << 20,
    });
    const r = JSON.parse(out);
    const size = statSync(file).size;
    console.log(
      `${file}: ${size} B, ${r.seconds.toFixed(1)} s, read ${r.read} B in ${r.calls} progress calls, ${r.outcome}; linear memory ${(r.memory / MiB).toFixed(1)} MiB (${(r.memory / (64 * MiB)).toFixed(2)} of the 64 MiB issue 11 allows)`,
    );
  }
}
