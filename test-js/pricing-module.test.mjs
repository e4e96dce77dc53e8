// `kvledger/pricing`: the pricing module (pkg/pricing, the crate built without the run
// exports) behind an entry of its own, for pages that only price points. Every pricing case
// passes through it, it answers exactly as the full module, and it exports nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
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

/** The features a module's `target_features` custom section lists, each with its prefix (`+`
 * used), as LLVM writes it and wasm-opt keeps it: what an engine must have to compile it. */
function targetFeatures(bytes) {
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
  const out = [];
  while (at < bytes.length) {
    const id = bytes[at++];
    const end = leb() + at;
    if (id === 0) {
      const nameLength = leb();
      const name = decoder.decode(bytes.subarray(at, at + nameLength));
      at += nameLength;
      if (name === "target_features") {
        for (let n = leb(); n > 0; n--) {
          const prefix = String.fromCharCode(bytes[at++]);
          const length = leb();
          out.push(prefix + decoder.decode(bytes.subarray(at, at + length)));
          at += length;
        }
      }
    }
    at = end;
  }
  return out;
}

test("the pricing module needs no WebAssembly SIMD (the dashboard's visitors' browsers); the full module uses it", () => {
  const features = (dir) => targetFeatures(readFileSync(path.join(ROOT, "pkg", dir, "kvledger_bg.wasm")));
  const pricingFeatures = features("pricing");
  assert.ok(pricingFeatures.includes("+bulk-memory"), pricingFeatures.join(" "));
  assert.ok(!pricingFeatures.includes("+simd128"), pricingFeatures.join(" "));
  assert.ok(features("web").includes("+simd128"), features("web").join(" "));
});
