// The size of the .wasm files: what a browser or an edge worker downloads before the first call.
// Issue 11 asks for at most 250 KB gzip -9 (256,000 bytes as GNU gzip -9 writes them).
// The full module (every entry of `kvledger`: the visualizer's and the edge worker's) is not
// there, so this test holds a ceiling a little above today's size, so that nothing grows it
// unnoticed, and prints how far the goal is. Today: 530,871 B gzip -9, 1,383,984 B raw (2.9 KB
// less than 533,782 B: the profile JSONL's derived record parsers compiled for one serde_json
// reader, not two; a CSV info section's strings in one text, BENCHMARKS.md, ninth 2026-12-05
// session; +60 B in the tenth for the conflict check and the samples' first room), built
// at opt-level 2 since the pages that count bytes have the pricing module: 506,010 B at "s" and
// 475 KB at "z", each step 3-20 % slower in Node (Cargo.toml, `profile.wasm-full`). The pricing module
// (`kvledger/pricing`, at the end, opt-level "z") is within the goal. Every step up and down,
// with what it bought, is in BENCHMARKS.md ("Where the .wasm bytes go").
// Lower the ceilings with every cut. Run after `npm run build` (scripts/build-pkg).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { ROOT } from "./lib/util.mjs";

const WASM = `${ROOT}pkg/web/kvledger_bg.wasm`;
const GOAL_GZIP9 = 256_000;
const CEILING_GZIP9 = 531_000;

test(`pkg/web/kvledger_bg.wasm is at most ${CEILING_GZIP9} B gzip -9 (goal ${GOAL_GZIP9} B)`, () => {
  const raw = statSync(WASM).size;
  // GNU gzip itself, not node:zlib: the budget is stated in its bytes.
  const gz = execFileSync("gzip", ["-9c", WASM], { maxBuffer: 64 << 20 }).length;
  const line = `${raw} B raw, ${gz} B gzip -9 (ceiling ${CEILING_GZIP9} B, goal ${GOAL_GZIP9} B: ${gz - GOAL_GZIP9} B to cut)`;
  console.log(`kvledger_bg.wasm: ${line}`);
  assert.ok(gz <= CEILING_GZIP9, `kvledger_bg.wasm is over its size ceiling: ${line}`);
});

// The pricing module (pkg/pricing: no run exports), what a page that only prices points loads:
// within the goal, with a ceiling about 0.2 % above 101,100 B gzip -9 (273,503 B raw, built without SIMD; 115,122 B before
// wasm-opt's one-caller inlining was capped, Cargo.toml).
const PRICING_WASM = `${ROOT}pkg/pricing/kvledger_bg.wasm`;
const PRICING_CEILING_GZIP9 = 101_300;

test(`pkg/pricing/kvledger_bg.wasm is at most ${PRICING_CEILING_GZIP9} B gzip -9 (goal ${GOAL_GZIP9} B)`, () => {
  const raw = statSync(PRICING_WASM).size;
  const gz = execFileSync("gzip", ["-9c", PRICING_WASM], { maxBuffer: 64 << 20 }).length;
  const line = `${raw} B raw, ${gz} B gzip -9 (ceiling ${PRICING_CEILING_GZIP9} B, goal ${GOAL_GZIP9} B)`;
  console.log(`pricing kvledger_bg.wasm: ${line}`);
  assert.ok(PRICING_CEILING_GZIP9 <= GOAL_GZIP9);
  assert.ok(gz <= PRICING_CEILING_GZIP9, `the pricing module is over its size ceiling: ${line}`);
});
