// A stream's linear memory when the heap's free room is in pieces. 3,000 captures of 100
// series, each file its own endpoint (24 MB): the accounting kept at most 36.5 MB of heap live,
// within the default budget of 48 MiB, yet linear memory grew to 74.4 MiB, past the 64 MiB
// the budget promises. The captures read, then folded and freed,
// left holes too small for the fold's list of series, grown by doubling, and the evidence's
// table, which went above everything. Tables are now admitted only if they fit placed above
// all linear memory holds (crate::admission::MemoryCeiling), and the fold's list is sized once
// from the scrapes' series: accounted within 59.6 MiB, as accountRun accounts it.
// And 80,000 captures of two series (19 MB): their scrapes were gathered after the last
// byte outside any admission, by doubling, and sorted into new lists beside the old (76.9 MiB
// before the refusal in accounting); they are now sized once and admitted (54.9 MiB).
// Each run is streamed in a process of its own (this file, run with KVLEDGER_FRAGMENTS_CHILD
// set to its case): linear memory only grows, so another call's high-water mark would hide
// this one's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { apiWithMemory } from "./lib/util.mjs";

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
  return Array.from({ length: n }, (_, f) => ({ name: `cap${String(f).padStart(5, "0")}.prom`, bytes: capture(f, 50) }));
}

/** 80,000 captures of one series of each family, a file each. */
function tinyCaptures(n) {
  const encoder = new TextEncoder();
  return Array.from({ length: n }, (_, f) => {
    const text = [["prefix_cache_queries", 10], ["prefix_cache_hits", 5]]
      .map(([family, step]) => `# TYPE vllm:${family} counter\nvllm:${family}_total{engine="0",model_name="m"} ${f * step}.0 ${1781634703000 + f}\n`)
      .join("");
    return { name: `cap${String(f).padStart(6, "0")}.prom`, bytes: encoder.encode(text) };
  });
}

/** Each case: its run, a run of a tenth of it, and whether the whole run is refused. */
const CASES = {
  wide: { files: () => captures(3000), few: () => captures(300), refused: null },
  many: { files: () => tinyCaptures(80_000), few: () => tinyCaptures(8000), refused: { code: "INPUT_TOO_LARGE", file: "accounting" } },
};

/**
 * In the child: stream the case's run (and, when it is accounted, compare it with accountRun's
 * after measuring), then a tenth of it; print what happened.
 */
async function child(name) {
  const { api, linearMemory } = await apiWithMemory();
  const { accountStream, accountRun } = api;
  const stream = (files) => files.map(({ name, bytes }) => ({ name, stream: bytes }));
  const { files, few: fewOf } = CASES[name];
  const all = files();
  let accounted = null;
  const refused = await accountStream(stream(all)).then(
    (a) => ((accounted = a), null),
    (e) => ({ code: e.code, file: e.file }),
  );
  const high = linearMemory();
  const sameAll = accounted === null || JSON.stringify(accounted) === JSON.stringify(accountRun(all));
  const few = fewOf();
  const same = sameAll && JSON.stringify(await accountStream(stream(few))) === JSON.stringify(accountRun(few));
  process.stdout.write(JSON.stringify({ refused, high, same }));
}

if (process.env.KVLEDGER_FRAGMENTS_CHILD) {
  await child(process.env.KVLEDGER_FRAGMENTS_CHILD);
} else {
  const titles = {
    wide: "3,000 captures of 100 series: accounted within 64 MiB of linear memory at the default budget, whatever the heap's holes",
    many: "80,000 captures of two series: their scrapes gathered within 64 MiB of linear memory at the default budget",
  };
  for (const [name, title] of Object.entries(titles)) {
    test(title, (t) => {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, KVLEDGER_FRAGMENTS_CHILD: name },
      });
      const { refused, high, same } = JSON.parse(out.toString());
      t.diagnostic(`linear memory high-water ${(high / MIB).toFixed(1)} MiB`);
      assert.ok(high <= 64 * MIB, `linear memory ${(high / MIB).toFixed(1)} MiB`);
      assert.deepEqual(refused, CASES[name].refused);
      // The instance stays usable, and a run that fits is accounted as the whole-buffer call does.
      assert.equal(same, true);
    });
  }
}
