// CommonJS consumers: `require("kvledger")` resolves to pkg/kvledger.cjs, the same API and
// glue converted to CommonJS, loading the one shared .wasm (pkg/web/kvledger_bg.wasm).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

test("require resolves to pkg/kvledger.cjs; one .wasm for both module systems", () => {
  assert.equal(require.resolve("kvledger"), path.join(root, "pkg", "kvledger.cjs"));
  assert.equal(require.resolve("kvledger/kvledger_bg.wasm"), path.join(root, "pkg", "web", "kvledger_bg.wasm"));
});

test("kvledger (CJS)", async (t) => {
  const k = require("kvledger");
  assert.equal(typeof k.inspectRun, "function");
  assert.equal("default" in k, false, "CommonJS has no default export");
  const { checkApi } = await import("./lib/util.mjs");
  await checkApi(t, k);
});

test("KvledgerError: instanceof holds across the CommonJS and ES module copies", async () => {
  const cjs = require("kvledger");
  const esm = await import("kvledger");
  assert.notEqual(cjs.KvledgerError, esm.KvledgerError, "two copies of the class");
  const fromCjs = (() => { try { cjs.inspectRun(null); } catch (e) { return e; } })();
  const fromEsm = (() => { try { esm.inspectRun(null); } catch (e) { return e; } })();
  for (const e of [fromCjs, fromEsm]) {
    assert.ok(e instanceof cjs.KvledgerError);
    assert.ok(e instanceof esm.KvledgerError);
    assert.ok(cjs.isKvledgerError(e) && esm.isKvledgerError(e));
    assert.equal(e.code, "BAD_OPTIONS");
  }
  // Built by hand, before any call into the wasm: the class is plain JS.
  const own = new cjs.KvledgerError("BAD_OPTIONS", "mine", { json_path: "options.x" });
  assert.ok(own instanceof esm.KvledgerError);
  assert.deepEqual(own.toJSON(), { name: "KvledgerError", code: "BAD_OPTIONS", message: "mine", json_path: "options.x" });
});
