// CommonJS consumers: `require("kvledger")` resolves to the nodejs build (pkg/node).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

test("require resolves to pkg/node/kvledger.js", () => {
  const root = path.resolve(__dirname, "..");
  assert.equal(require.resolve("kvledger"), path.join(root, "pkg", "node", "kvledger.js"));
  assert.equal(require.resolve("kvledger/node"), path.join(root, "pkg", "node", "kvledger.js"));
});

test("kvledger (CJS)", async (t) => {
  const k = require("kvledger");
  assert.equal(typeof k.inspectRun, "function");
  const { checkApi } = await import("./lib/util.mjs");
  await checkApi(t, k);
});
