// The bundler build (ESM-integration `import * as wasm from "./kvledger_bg.wasm"`), loaded in
// Node with --experimental-wasm-modules as a stand-in for a bundler.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { ROOT } from "./lib/util.mjs";

test("kvledger/bundler loads and runs with wasm ESM integration", () => {
  const code = `
    import { inspectRun, contractVersion } from "kvledger/bundler";
    import { readFileSync } from "node:fs";
    const name = "vllm-1-endpoint-timeslices.server_metrics_export.json";
    const r = inspectRun([{ name, text: readFileSync("test-js/fixtures/" + name, "utf8") }]);
    console.log(JSON.stringify([contractVersion(), r.endpoints.length, String(r.endpoints[0].lastFetchNs)]));
  `;
  const r = spawnSync(process.execPath, ["--experimental-wasm-modules", "--no-warnings", "--input-type=module", "-e", code], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ["kvledger/1", 1, "1765793114960054143"]);
});
