// The browser entry (js/web.js) in Node: unusable before init (a KvledgerError, never a crash
// inside the glue), then the full API once initialised from the .wasm bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as web from "../js/web.js";
import { ROOT, TIMESLICES, checkApi, expectKvError, fileInput } from "./lib/util.mjs";

test("web entry: NOT_INITIALIZED before init, INIT_FAILED for a bad .wasm, then the full API", async (t) => {
  assert.equal(web.init, web.default);
  // Plain JS before init: the class, the guard and the error's fields.
  const e = new web.KvledgerError("BAD_OPTIONS", "x");
  assert.ok(web.isKvledgerError(e) && e instanceof web.KvledgerError && e instanceof Error);
  for (const call of [() => web.contractVersion(), () => web.inspectRun([fileInput(TIMESLICES)]), () => web.pricePoint({ row: {} }), () => web.errorCodes()]) {
    const err = expectKvError(call, "NOT_INITIALIZED", web);
    assert.match(err.message, /await init\(\)/);
  }
  // A bad .wasm is INIT_FAILED, and leaves the module uninitialised.
  const initFailed = (err) => web.isKvledgerError(err) && err.code === "INIT_FAILED";
  // Bytes that do not compile: the engine's CompileError, and what a module needs to compile.
  await assert.rejects(web.init(new Uint8Array([0, 1, 2, 3])), (err) => initFailed(err) && /Fix: use an engine with the WebAssembly features the module uses \(README, Install: the full module needs SIMD/.test(err.message));
  assert.throws(() => web.initSync(new Uint8Array([0, 1, 2, 3])), initFailed);
  assert.throws(() => web.initSync(), initFailed);
  // Node's fetch cannot read file: URLs: the message says what to do instead.
  await assert.rejects(web.init(), (err) => initFailed(err) && /initSync\(\{ module: bytes \}\)/.test(err.message));
  expectKvError(() => web.contractVersion(), "NOT_INITIALIZED", web);

  const bytes = readFileSync(`${ROOT}pkg/web/kvledger_bg.wasm`);
  await web.init(bytes);
  // Later inits are no-ops (same instance).
  await web.init();
  web.initSync({ module: bytes });
  await checkApi(t, web);
});
