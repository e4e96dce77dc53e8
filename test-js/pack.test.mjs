// The npm tarball: what the exports map and the README point at is in it, the .wasm once,
// licenses and docs, no sources; the package export checker (attw) and publint find nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { ROOT } from "./lib/util.mjs";
import { packTarball } from "./lib/pack.mjs";

const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8"));
let packed;
let files;

before(() => {
  packed = packTarball();
  files = new Set(packed.info.files.map((f) => f.path));
});
after(() => packed?.cleanup());

test("every exports target, sideEffects entry and README link is in the tarball", () => {
  const targets = new Set();
  const walk = (v) => (typeof v === "string" ? targets.add(v.replace(/^\.\//, "")) : Object.values(v).forEach(walk));
  walk(pkg.exports);
  for (const t of targets) assert.ok(files.has(t), `${t} (exports) missing from the tarball`);
  for (const f of pkg.sideEffects) assert.ok(files.has(f.replace(/^\.\//, "")), `${f} (sideEffects) missing`);
  const readme = readFileSync(`${ROOT}README.md`, "utf8");
  const links = [...readme.matchAll(/\]\((?!https?:|#)([^)#]+)/g)].map((m) => m[1]);
  assert.ok(links.length >= 3, `${links}`);
  for (const l of links) assert.ok(files.has(l), `README links ${l}, not in the tarball`);
  for (const f of ["package.json", "README.md", "LICENSE-MIT", "LICENSE-APACHE", "schema/kvledger.schema.json", pkg.main.slice(2), pkg.types.slice(2)]) {
    assert.ok(files.has(f), `${f} missing`);
  }
});

test("the two .wasm modules (full, pricing), no sources, a small tarball", () => {
  const wasm = [...files].filter((f) => f.endsWith(".wasm")).sort();
  assert.deepEqual(wasm, ["pkg/pricing/kvledger_bg.wasm", "pkg/web/kvledger_bg.wasm"]);
  for (const f of files) {
    assert.ok(!/^(src|tests|test-js|target|scripts|node_modules|examples|bench)\//.test(f), `${f} should not ship`);
  }
  for (const f of ["js/node-cjs.js", "js/pricing-node-cjs.js", "js/api.d.ts", "pkg/web/kvledger.d.ts"]) {
    assert.ok(!files.has(f), `${f} is a build input`);
  }
  // Everything but the .wasm files (glue, types, schema, docs and their image) fits in 300 KB
  // compressed; a share of the .wasm's raw size would fail as the .wasm shrinks.
  const wasmGz = wasm.reduce((sum, w) => sum + gzipSync(readFileSync(`${ROOT}${w}`), { level: 9 }).length, 0);
  const rest = packed.info.size - wasmGz;
  assert.ok(rest < 300_000, `tarball ${packed.info.size} B: ${rest} B besides the .wasm files' ${wasmGz} B gzip`);
});

test("package.json: licenses, repository, sideEffects, types first", () => {
  assert.equal(pkg.license, "MIT OR Apache-2.0");
  assert.match(pkg.repository.url, /^git\+https:\/\//);
  assert.ok(Array.isArray(pkg.sideEffects) && pkg.sideEffects.length > 0, "sideEffects lists the entries that initialise");
  assert.equal(pkg.type, "module");
  const check = (v, where) => {
    if (typeof v !== "object") return;
    if ("types" in v) assert.equal(Object.keys(v)[0], "types", `${where}: types must come first`);
    for (const [k, sub] of Object.entries(v)) check(sub, `${where}.${k}`);
  };
  check(pkg.exports, "exports");
  assert.equal(pkg.exports["."].node.require.types, "./pkg/kvledger.d.cts");
  assert.equal(pkg.exports["."].node.import.types, "./pkg/kvledger.d.ts");
});

test("arethetypeswrong: no problem in any resolution mode", () => {
  // node10 (TypeScript's legacy resolution) ignores `exports`, so no subpath resolves there
  // ("." does, through main/types); the .wasm is an asset, not a module with types.
  const out = execFileSync(path.join(ROOT, "node_modules", ".bin", "attw"), [packed.tarball, "--profile", "node16", "--exclude-entrypoints", "./kvledger_bg.wasm", "./pricing_bg.wasm", "--format", "json"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  // attw exits non-zero on a problem the profile does not ignore (execFileSync would throw);
  // its JSON lists the ignored ones too: only node10 failures on subpaths may be there.
  const report = JSON.parse(out);
  const problems = Object.values(report.problems).flat();
  assert.deepEqual(problems.filter((p) => p.resolutionKind !== "node10" || p.entrypoint === "."), []);
  const files = (mode, entry = ".") => {
    const r = report.analysis.entrypoints[entry].resolutions[mode];
    return [r.resolution.fileName, r.implementationResolution.fileName].map((f) => f.replace("/node_modules/kvledger/", ""));
  };
  assert.deepEqual(files("node16-cjs"), ["pkg/kvledger.d.cts", "pkg/kvledger.cjs"]);
  assert.deepEqual(files("node16-esm"), ["pkg/kvledger.d.ts", "js/node.mjs"]);
  assert.deepEqual(files("bundler"), ["pkg/kvledger.d.ts", "js/web.js"]);
  assert.deepEqual(files("node16-cjs", "./pricing"), ["pkg/pricing.d.cts", "pkg/pricing.cjs"]);
  assert.deepEqual(files("node16-esm", "./pricing"), ["pkg/pricing.d.ts", "js/pricing-node.mjs"]);
  assert.deepEqual(files("bundler", "./pricing"), ["pkg/pricing.d.ts", "js/pricing.js"]);
});

test("publint: no error, warning or suggestion", () => {
  const out = execFileSync(path.join(ROOT, "node_modules", ".bin", "publint"), ["--level", "suggestion", "--strict"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.match(out, /All good!/, out);
});
