// accountRun through the package over every bundled generated run: the verdict is the one the
// generator's truth.json requires, and the result equals the CLI's `kvledger account --json`
// (same core, same field names; 64-bit integers are bigint in JS).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { accountRun } from "kvledger";
import { ROOT } from "./lib/util.mjs";

const EXAMPLES = path.join(ROOT, "examples", "synth");

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

const runs = readdirSync(EXAMPLES).filter((d) => statSync(path.join(EXAMPLES, d)).isDirectory());

test("there are generated example runs", () => assert.ok(runs.length >= 10, `${runs.length}`));

// The debug CLI that `cargo test` builds (scripts/test runs it before this suite).
const cli = path.join(ROOT, "target", "debug", "kvledger");

test("the CLI is built", () => assert.ok(statSync(cli).isFile(), `${cli} missing: run cargo test first`));

for (const run of runs) {
  test(`${run}: verdict as the truth requires`, () => {
    const dir = path.join(EXAMPLES, run);
    const truth = JSON.parse(readFileSync(path.join(dir, "truth.json"), "utf8")).expected;
    const a = accountRun(filesOf(dir));
    assert.equal(a.cache_validity.status, truth.status);
    const codes = a.cache_validity.reasons.map((r) => r.code);
    for (const c of truth.reasons) {
      if (c === "rate_too_wide" || c === "increase_unbounded") continue;
      assert.ok(codes.includes(c), `${c} missing from ${codes}`);
    }
    assert.equal(a.cache_validity.pricing_eligible, truth.status === "VALID_COMPLETE");
  });

  test(`${run}: same result as the CLI`, () => {
    const dir = path.join(EXAMPLES, run);
    const fromCli = JSON.parse(execFileSync(cli, ["account", "--json", dir], { encoding: "utf8" }));
    const fromJs = accountRun(filesOf(dir));
    // Integers above 2^53 (epoch ns) lose digits through the CLI side's JSON.parse: compare
    // them by presence only; every other bigint must equal the CLI's number.
    const big = 2n ** 53n;
    const norm = (v) =>
      JSON.parse(
        JSON.stringify(v, (k, x) => {
          if (typeof x === "bigint") return x > big ? "big" : Number(x);
          if (typeof x === "number" && Number.isInteger(x) && Math.abs(x) > 2 ** 53) return "big";
          return x;
        }),
      );
    const stripNs = norm;
    assert.deepEqual(stripNs(fromJs), stripNs(fromCli));
  });
}
