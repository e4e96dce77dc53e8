// accountRun through the package over every bundled generated run: the verdict is the one the
// generator's truth.json requires, and the result is exactly the `result` of the CLI's
// `kvledger account --json` envelope (one shape: same JSON, field for field).
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
const cli = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug", "kvledger");

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

  test(`${run}: exactly the result of the CLI's --json envelope`, () => {
    const dir = path.join(EXAMPLES, run);
    const envelope = JSON.parse(execFileSync(cli, ["account", "--json", dir], { encoding: "utf8" }));
    assert.equal(envelope.kvledger, "1");
    assert.equal(envelope.command, "account");
    assert.deepStrictEqual(accountRun(filesOf(dir)), envelope.result);
  });
}
