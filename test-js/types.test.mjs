// The published d.ts is a tested artifact: strict consumers (ES module and CommonJS)
// type-check, each against its own declaration file, and the `@ts-expect-error` lines in
// them prove that wrong uses are rejected.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT } from "./lib/util.mjs";

test("tsc --noEmit --strict accepts the ESM, CommonJS and pricing-entry consumers in test-js/types", () => {
  const tsc = path.join(ROOT, "node_modules", ".bin", "tsc");
  const r = spawnSync(tsc, ["--noEmit", "--strict", "--listFiles", "-p", path.join(ROOT, "test-js", "types")], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}\n${r.stderr}`);
  const files = r.stdout.split("\n");
  for (const dts of ["pkg/kvledger.d.ts", "pkg/kvledger.d.cts", "pkg/pricing.d.ts"]) {
    assert.ok(files.includes(path.join(ROOT, dts)), `${dts} not used by the consumers`);
  }
});
