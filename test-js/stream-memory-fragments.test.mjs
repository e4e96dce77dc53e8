// A stream's linear memory when the heap's free room is in pieces. 3,000 captures of 200
// series, each file its own endpoint (24 MB): the accounting kept at most 36.5 MB of heap live,
// within the default budget of 48 MiB, yet linear memory grew to 72.4 MiB here (74.4 streamed
// from files) and the run was accounted past the 64 MiB the budget promises. The captures
// read, then folded and freed, left holes too small for the fold's doubling list of series and
// the evidence's table, which went above everything. Tables are now admitted only if they fit
// placed above all linear memory holds (crate::admission::MemoryCeiling): the run is refused
// with INPUT_TOO_LARGE within 58.8 MiB, and a tenth of it is accounted as accountRun does.
// The run is streamed in a process of its own (this file, run with KVLEDGER_FRAGMENTS_CHILD
// set): linear memory only grows, so another call's high-water mark would hide this one's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const MIB = 2 ** 20;

/** Capture `f` of `series` counter series of two families, its own endpoint (file) each. */
function capture(f, series) {
  const ts = 1781634703000 + f * 1000;
  const lines = [];
  for (const [family, step] of [["prefix_cache_queries", 10], ["prefix_cache_hits", 5]]) {
    lines.push(`# TYPE vllm:${family} counter`);
    for (let s = 0; s < series; s++) lines.push(`vllm:${family}_total{engine="${s}",model_name="m"} ${f * step + s}.0 ${ts}`);
  }
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

function captures(n) {
  return Array.from({ length: n }, (_, f) => ({ name: `cap${String(f).padStart(5, "0")}.prom`, bytes: capture(f, 100) }));
}

/** In the child: stream 3,000 captures, then 300; print what happened. */
async function child() {
  const { readFileSync } = await import("node:fs");
  const path = await import("node:path");
  const { accountStream, accountRun } = await import("../js/node.mjs");
  const glue = await import("../pkg/web/kvledger.js");
  const root = fileURLToPath(new URL("../", import.meta.url));
  const wasm = glue.initSync({ module: readFileSync(path.join(root, "pkg/web/kvledger_bg.wasm")) });
  const stream = (files) => files.map(({ name, bytes }) => ({ name, stream: bytes }));
  const refused = await accountStream(stream(captures(3000))).then(
    () => null,
    (e) => ({ code: e.code, file: e.file }),
  );
  const high = wasm.memory.buffer.byteLength;
  const few = captures(300);
  const same = JSON.stringify(await accountStream(stream(few))) === JSON.stringify(accountRun(few));
  process.stdout.write(JSON.stringify({ refused, high, same }));
}

if (process.env.KVLEDGER_FRAGMENTS_CHILD) {
  await child();
} else {
  test("3,000 captures of 200 series: held within 64 MiB of linear memory at the default budget, whatever the heap's holes", (t) => {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, KVLEDGER_FRAGMENTS_CHILD: "1" },
    });
    const { refused, high, same } = JSON.parse(out.toString());
    t.diagnostic(`linear memory high-water ${(high / MIB).toFixed(1)} MiB`);
    assert.ok(high <= 64 * MIB, `linear memory ${(high / MIB).toFixed(1)} MiB`);
    assert.deepEqual(refused, { code: "INPUT_TOO_LARGE", file: "accounting" });
    // The instance stays usable, and a run that fits is accounted as the whole-buffer call does.
    assert.equal(same, true);
  });
}
