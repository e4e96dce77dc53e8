// ESM consumers in Node: `import ... from "kvledger"` resolves through the exports map's
// `node` + `import` conditions to js/node.mjs (initialised on import).
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import * as k from "kvledger";
import { ROOT, checkApi } from "./lib/util.mjs";

test("resolves to js/node.mjs; the .wasm and the schema are exported", () => {
  assert.equal(fileURLToPath(import.meta.resolve("kvledger")), `${ROOT}js/node.mjs`);
  assert.equal(fileURLToPath(import.meta.resolve("kvledger/kvledger_bg.wasm")), `${ROOT}pkg/web/kvledger_bg.wasm`);
  assert.equal(fileURLToPath(import.meta.resolve("kvledger/schema.json")), `${ROOT}schema/kvledger.schema.json`);
});

test("init() and initSync() are no-ops after the import-time initialisation", async () => {
  assert.equal(typeof k.init, "function");
  assert.equal(k.init, k.default);
  await k.init();
  k.initSync(new Uint8Array([0]));
  assert.equal(k.contractVersion(), "kvledger/1");
});

test("kvledger (ESM, node condition)", async (t) => {
  await checkApi(t, k);
});
