// accountRun through the package (ESM, node condition): the contract result of a real run.
// The result keeps the contract's snake_case field names (the same JSON as `kvledger account --json`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { accountRun, isKvledgerError } from "kvledger";
import { fileInput, CSV, SUMMARY, TIMESLICES, expectKvError } from "./lib/util.mjs";

const LAUNCH = JSON.stringify({ framework: "vllm", disaggregated: false, kv_offloading: "none" });

test("real vLLM point (CSV only): upstream rates only as counter telemetry, WINDOW_UNRESOLVED", () => {
  const a = accountRun([fileInput(CSV), fileInput(SUMMARY)], { launch_json: LAUNCH });
  const v = a.cache_validity;
  assert.equal(v.status, "WINDOW_UNRESOLVED");
  assert.equal(v.pricing_eligible, false);
  assert.equal(v.contract_version, "kvledger/1");
  assert.equal(v.cpu_component, "not_offloaded");
  assert.ok(v.reasons.some((r) => r.code === "window_missing"));
  // No prompt token is surely in the window: the rate has no value (contract r2), only bounds.
  assert.equal(a.rates.gpu.value, null);
  assert.deepEqual([a.rates.gpu.lo, a.rates.gpu.hi], [0, 1]);
  assert.ok(v.reasons.some((r) => r.code === "no_prompt_in_window"));
  const c = a.counters.unified;
  assert.ok(Math.abs(c.hit_gpu.value / c.prompt.value - 0.92475) < 1e-5);
  assert.deepEqual(v.roles.unified, ["http://localhost:8889/metrics"]);
  // Legacy keys mirror the dashboard's stored keys: null where unknown, never undefined.
  assert.equal(a.legacy.server_gpu_cache_hit_rate, null);
  assert.equal(a.legacy.server_external_cache_hit_rate, null);
  assert.equal(a.legacy.total_prompt_tokens, 19129495);
  assert.equal(a.legacy.cache_pricing_eligible, false);
  assert.equal(a.legacy.cache_validity_status, "WINDOW_UNRESOLVED");
  assert.equal(typeof a.counters.unified.prompt.value, "number");
});

test("no launch facts: roles unresolved, rates still reported as telemetry", () => {
  const a = accountRun([fileInput(TIMESLICES)]);
  assert.equal(a.cache_validity.status, "ROLES_UNRESOLVED");
  assert.equal(a.legacy.server_gpu_cache_hit_rate, null);
  assert.equal(a.legacy.kv_cache_pool_tokens, null);
});

test("policy is validated and echoed", () => {
  const a = accountRun([fileInput(CSV)], { launch_json: LAUNCH, policy: { max_rate_width: 0.01 } });
  assert.equal(a.policy.max_rate_width, 0.01);
  assert.equal(a.policy.trust_phase_totals, false);
  const err = expectKvError(
    () => accountRun([fileInput(CSV)], { policy: { max_rate_width: -1 } }),
    "BAD_OPTIONS",
  );
  assert.ok(isKvledgerError(err));
  assert.equal(err.json_path, "options.policy");
  assert.match(err.message, /max_rate_width/);
  const typo = expectKvError(() => accountRun([fileInput(CSV)], { polcy: {} }), "BAD_OPTIONS");
  assert.equal(typo.json_path, "options.polcy");
});
