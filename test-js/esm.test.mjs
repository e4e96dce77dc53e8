// ESM consumers in Node: `import ... from "kvledger"` resolves through the exports map's
// `node` + `import` conditions to js/node.mjs (initialised on import).
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import * as k from "kvledger";
import { ROOT, checkApi } from "./lib/util.mjs";

test("resolves to js/node.mjs", () => {
  assert.equal(fileURLToPath(import.meta.resolve("kvledger")), `${ROOT}js/node.mjs`);
  assert.equal(fileURLToPath(import.meta.resolve("kvledger/bundler")), `${ROOT}pkg/bundler/kvledger.js`);
  assert.equal(fileURLToPath(import.meta.resolve("kvledger/web")), `${ROOT}js/web.js`);
  assert.equal(fileURLToPath(import.meta.resolve("kvledger/kvledger_bg.wasm")), `${ROOT}pkg/web/kvledger_bg.wasm`);
});

test("init() is a no-op after the import-time initialisation", async () => {
  assert.equal(typeof k.init, "function");
  assert.equal(k.init, k.default);
  await k.init();
  assert.equal(k.contractVersion(), "kvledger/1");
});

test("kvledger (ESM, node condition)", async (t) => {
  await checkApi(t, k);
});
