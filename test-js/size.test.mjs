// The size budget of the one .wasm every entry loads (issue 11): at most 250 KB gzip -9, that is
// 256,000 bytes as GNU gzip -9 writes it (the figure scripts/test prints). It is what a browser or
// an edge worker downloads before the first call, so a change that grows it past the budget fails
// here, with the sizes, instead of shipping. Run after `npm run build` (scripts/build-pkg).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { ROOT } from "./lib/util.mjs";

const WASM = `${ROOT}pkg/web/kvledger_bg.wasm`;
const BUDGET_GZIP9 = 256_000;

test(`pkg/web/kvledger_bg.wasm is at most ${BUDGET_GZIP9} B gzip -9`, () => {
  const raw = statSync(WASM).size;
  // GNU gzip itself, not node:zlib: the budget is stated in its bytes.
  const gz = execFileSync("gzip", ["-9c", WASM], { maxBuffer: 64 << 20 }).length;
  const line = `${raw} B raw, ${gz} B gzip -9 (budget ${BUDGET_GZIP9} B gzip -9)`;
  console.log(`kvledger_bg.wasm: ${line}`);
  assert.ok(gz <= BUDGET_GZIP9, `kvledger_bg.wasm is over its size budget: ${line}`);
});
