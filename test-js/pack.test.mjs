// The npm tarball holds every file the exports map points at, and no sources.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ROOT } from "./lib/util.mjs";

test("npm pack --dry-run: exports targets present, nothing else", () => {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  const files = new Set(JSON.parse(out)[0].files.map((f) => f.path));
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8"));
  const targets = new Set();
  const walk = (v) => (typeof v === "string" ? targets.add(v.replace(/^\.\//, "")) : Object.values(v).forEach(walk));
  walk(pkg.exports);
  for (const t of targets) assert.ok(files.has(t), `${t} missing from the tarball`);
  for (const f of ["package.json", "js/web.js", "js/node.mjs", "js/workerd.js", "js/kvledger.d.ts",
    "pkg/web/kvledger_bg.wasm", "pkg/node/kvledger_bg.wasm", "pkg/bundler/kvledger_bg.wasm",
    "pkg/bundler/kvledger_bg.js", "pkg/node/package.json"]) {
    assert.ok(files.has(f), `${f} missing`);
  }
  for (const f of files) {
    assert.ok(!/^(src|tests|test-js|target|scripts|node_modules)\//.test(f), `${f} should not ship`);
  }
  // The generated d.ts files import each other relatively; each entry's d.ts must ship.
  assert.equal(pkg.sideEffects, false);
  assert.equal(pkg.type, "module");
  assert.equal(Object.keys(pkg.exports["."])[0], "types");
});
