// A trap inside the WebAssembly module (a Rust panic aborts; memory can run out) must reach
// the caller as a KvledgerError INTERNAL, and every later call must refuse to run on the
// module's undefined state instead of returning garbage. The trap here is real: the glue's
// allocator asked for 4 GiB aborts with `unreachable`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as glue from "../pkg/web/kvledger.js";
import { makeApi } from "../js/api.js";
import { isKvledgerError } from "../js/error.js";
import { ROOT, TIMESLICES, fileInput } from "./lib/util.mjs";

test("a trap is INTERNAL, and later calls are refused with INTERNAL", () => {
  const exports = glue.initSync({ module: readFileSync(`${ROOT}pkg/web/kvledger_bg.wasm`) });
  const trapping = { ...glue, inspectRun: () => exports.__wbindgen_malloc(0xfffffff0, 8) };
  const api = makeApi(trapping, () => undefined);
  api.initSync({ module: readFileSync(`${ROOT}pkg/web/kvledger_bg.wasm`) });
  assert.equal(api.contractVersion(), "kvledger/1");

  let first;
  try {
    api.inspectRun([fileInput(TIMESLICES)]);
  } catch (e) {
    first = e;
  }
  assert.ok(isKvledgerError(first), `not a KvledgerError: ${first}`);
  assert.equal(first.code, "INTERNAL");
  assert.ok(first.cause instanceof WebAssembly.RuntimeError, `cause: ${first.cause}`);
  assert.match(first.message, /^inspectRun: the WebAssembly module trapped \(unreachable\)/);

  for (const later of [() => api.contractVersion(), () => api.accountRun([fileInput(TIMESLICES)])]) {
    assert.throws(later, (e) => isKvledgerError(e) && e.code === "INTERNAL" && /an earlier call trapped/.test(e.message));
  }
});
