// `kvledger/pricing`: the pricing module (pkg/pricing, the crate built without the run
// exports) behind an entry of its own, for pages that only price points. Every pricing case
// passes through it, it answers exactly as the full module, and it exports nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import * as full from "kvledger";
import * as pricing from "kvledger/pricing";
import * as glue from "../pkg/pricing/kvledger.js";
import { ROOT, TIMESLICES, CSV, SUMMARY, fileInput } from "./lib/util.mjs";

const PRICING = [
  "KvledgerError", "isKvledgerError", "init", "initSync", "default",
  "contractVersion", "packageVersion", "errorCodes", "rateCards", "pricingReasonCodes",
  "pricePoint", "priceRows", "priceFrontier", "interpolateFrontier", "trendSeries",
  "moneyMetrics", "estimateProfit", "billableInputRate", "splitTokenStreams", "cacheObservation",
];

test("every case of pricing.test.mjs passes through kvledger/pricing", () => {
  // Without the runner's own context variable the child reports in text (TAP), not to us.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", path.join(ROOT, "test-js", "pricing.test.mjs")], {
    cwd: ROOT,
    env: { ...env, KVLEDGER_ENTRY: "kvledger/pricing" },
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `pricing.test.mjs failed on kvledger/pricing:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^# pass [1-9]/m, r.stdout);
  assert.match(r.stdout, /^# fail 0$/m, r.stdout);
});

test("kvledger/pricing exports the pricing functions only, from a module without the run exports", () => {
  assert.deepEqual(Object.keys(pricing).sort(), [...PRICING].sort());
  for (const raw of ["accountRun", "accountRuns", "inspectRun", "inspectRuns", "groupRuns", "AccountStream", "UploadValidator"]) {
    assert.equal(glue[raw], undefined, `pkg/pricing has the raw export ${raw}`);
  }
  assert.notEqual(pricing.KvledgerError, undefined);
  assert.equal(pricing.KvledgerError, full.KvledgerError, "one error class: `instanceof` holds across entries");
});

test("kvledger/pricing answers as the full module", () => {
  for (const name of ["contractVersion", "packageVersion", "errorCodes", "rateCards", "pricingReasonCodes"]) {
    assert.deepStrictEqual(pricing[name](), full[name](), name);
  }
  const accounting = full.accountRun([fileInput(TIMESLICES), fileInput(CSV), fileInput(SUMMARY)]);
  const observation = pricing.cacheObservation(accounting);
  assert.deepStrictEqual(observation, full.cacheObservation(accounting));
  const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: observation } };
  assert.deepStrictEqual(pricing.pricePoint(point), full.pricePoint(point));
  // Errors are the same typed errors, with the same codes and messages.
  const bad = (k) => {
    try {
      k.pricePoint({ observed: { throughput_per_gpu: "fast" } });
    } catch (e) {
      return { code: e.code, message: e.message, json_path: e.json_path, kv: k.isKvledgerError(e) };
    }
    assert.fail("pricePoint accepted a string throughput");
  };
  assert.deepStrictEqual(bad(pricing), bad(full));
});

test("require('kvledger/pricing') (pkg/pricing.cjs) loads the pricing module and answers the same", () => {
  const cjs = createRequire(import.meta.url)("kvledger/pricing");
  assert.deepEqual(Object.keys(cjs).sort(), PRICING.filter((n) => n !== "default").sort());
  assert.deepStrictEqual(cjs.rateCards(), pricing.rateCards());
  const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9 } };
  assert.deepStrictEqual(cjs.pricePoint(point), pricing.pricePoint(point));
});

/** `bytes` without its `target_features` custom section: wasm-opt writes there the features
 * it was run with (every module is optimised with --enable-simd), not the ones the code uses. */
function withoutTargetFeatures(bytes) {
  const decoder = new TextDecoder();
  let at = 8;
  const leb = () => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      n += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return n;
    }
  };
  const kept = [bytes.subarray(0, 8)];
  while (at < bytes.length) {
    const start = at;
    const id = bytes[at++];
    const end = leb() + at;
    const nameLength = id === 0 ? leb() : 0;
    if (id !== 0 || decoder.decode(bytes.subarray(at, at + nameLength)) !== "target_features") {
      kept.push(bytes.subarray(start, end));
    }
    at = end;
  }
  return Buffer.concat(kept);
}

/** Whether binaryen validates the module with every feature the package needs but SIMD. */
function validWithoutSimd(dir) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "kvledger-simd-")), "m.wasm");
  writeFileSync(file, withoutTargetFeatures(readFileSync(path.join(ROOT, "pkg", dir, "kvledger_bg.wasm"))));
  const features = ["bulk-memory", "nontrapping-float-to-int", "sign-ext", "mutable-globals", "reference-types", "multivalue", "bulk-memory-opt", "call-indirect-overlong"];
  const r = spawnSync(path.join(ROOT, "node_modules/.bin/wasm-opt"), [file, "--mvp-features", ...features.map((f) => `--enable-${f}`), "-o", "/dev/null"], { encoding: "utf8" });
  rmSync(path.dirname(file), { recursive: true });
  return { ok: r.status === 0, why: r.stderr.split("\n").find((l) => l.includes("SIMD")) ?? r.stderr.slice(0, 200) };
}

test("the pricing module needs no WebAssembly SIMD (the dashboard's visitors' browsers); the full module uses it", () => {
  const pricingModule = validWithoutSimd("pricing");
  assert.ok(pricingModule.ok, pricingModule.why);
  const fullModule = validWithoutSimd("web");
  assert.ok(!fullModule.ok && fullModule.why.includes("SIMD operations require SIMD"), fullModule.why);
});
