// The web build (what browsers get) in Node, initialised with initSync({ module: bytes }).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as web from "kvledger/web";
import { ROOT, checkApi } from "./lib/util.mjs";

test("web build: unusable before init, then the full API", async (t) => {
  assert.equal(web.init, web.default);
  assert.throws(() => web.contractVersion(), "calls before init must fail");
  const bytes = readFileSync(`${ROOT}pkg/web/kvledger_bg.wasm`);
  web.initSync({ module: bytes });
  // A second init is a no-op (same instance).
  await web.init();
  await checkApi(t, web);
});
