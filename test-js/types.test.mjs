// The published .d.ts is a tested artifact: a strict consumer type-checks, and the
// `@ts-expect-error` lines in it prove that wrong uses are rejected.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT } from "./lib/util.mjs";

test("tsc --noEmit --strict accepts test-js/types/consumer.ts", () => {
  const tsc = path.join(ROOT, "node_modules", ".bin", "tsc");
  const r = spawnSync(tsc, ["--noEmit", "--strict", "-p", path.join(ROOT, "test-js", "types")], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}\n${r.stderr}`);
});
