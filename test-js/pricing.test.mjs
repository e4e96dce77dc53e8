// Pricing through the npm package (CONTRACT section 8): the same cases as the Rust tests
// in tests/pricing_*.rs, called the way the dashboard calls them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, assertNoNull, expectKvError } from "./lib/util.mjs";

// The full entry, or the pricing module's (`KVLEDGER_ENTRY=kvledger/pricing`, as
// pricing-module.test.mjs runs this file): every case holds for both.
const {
  pricePoint,
  priceRows,
  priceFrontier,
  interpolateFrontier,
  trendSeries,
  rateCards,
  pricingReasonCodes,
  moneyMetrics,
  estimateProfit,
  billableInputRate,
  splitTokenStreams,
} = await import(process.env.KVLEDGER_ENTRY || "kvledger");

const close = (a, b) => assert.ok(Math.abs(a - b) <= 1e-9 * (1 + Math.max(Math.abs(a), Math.abs(b))), `${a} != ${b}`);
const OPENROUTER = { name: "openrouter-test", as_of: "2026-09-23", input_per_million: 2, output_per_million: 10, usage_convention: "subset" };
const agentic = (metrics, extra = {}) => ({ row: { benchmark_type: "agentic_traces", isl: null, osl: null, metrics, ...extra } });
const refusals = (o) => o.reasons.filter((r) => !["no-cache-telemetry", "unmeasured-no-discount", "theoretical-fallback", "hit-rate-clamped", "share-not-needed", "target-clamped", "partial-frontier-no-discount", "partial-frontier-no-share", "fallback-not-on-surface"].includes(r.code)).map((r) => r.code);

function knot(x, t, h, eligible, s = 0.85) {
  const cache = h === undefined && eligible === undefined ? undefined : {
    status: eligible === undefined ? undefined : eligible ? "VALID_COMPLETE" : "WINDOW_UNRESOLVED",
    pricing_eligible: eligible,
    rates: h === undefined ? undefined : { overall: { value: h } },
  };
  const observed = { interactivity: x, throughput_per_gpu: t, input_share: s };
  if (cache) observed.cache = JSON.parse(JSON.stringify(cache));
  return { observed };
}

test("shipped rate cards and reason codes", () => {
  const cards = rateCards();
  assert.equal(cards[0].name, "normalized");
  assert.deepEqual(cards.map((c) => c.name), ["normalized", "kimi-k3-moonshot", "glm-5.2-zai", "minimax-m3", "deepseek-v4-pro", "deepseek-v4.1-flash"]);
  for (const c of cards) assert.match(c.as_of, /^\d{4}-\d{2}-\d{2}$/);
  const codes = pricingReasonCodes();
  for (const c of ["cache-ineligible", "cache-unmeasured", "no-token-mix", "outside-measured-range"]) assert.ok(codes.includes(c));
});

test("legacy: hit-rate selection and revenue numbers of consumer.md (f)", () => {
  const h = (m, hw) => pricePoint(agentic({ tput_per_gpu: 1000, ...m }, hw ? { hardware: hw } : {}), { policy: "legacy" }).hit_rate;
  close(h({ server_gpu_cache_hit_rate: 0.8, server_external_cache_hit_rate: 0.06, server_cpu_cache_hit_rate: 0.07 }), 0.86);
  close(h({ server_gpu_cache_hit_rate: 0.77, server_cpu_cache_hit_rate: 0.055 }), 0.825);
  close(h({ server_gpu_cache_hit_rate: 0.4, server_external_cache_hit_rate: 0, server_cpu_cache_hit_rate: 0.5 }), 0.4);
  assert.equal(h({}), undefined);
  assert.equal(h({ server_gpu_cache_hit_rate: 1.185 }), 1);
  assert.equal(h({ server_external_cache_hit_rate: 0, server_cpu_cache_hit_rate: 0.5 }), 0);
  assert.equal(h({ theoretical_cache_hit_rate: 0.969 }, "gb300"), 0.969);
  assert.equal(h({ theoretical_cache_hit_rate: 0.97 }, "b200"), undefined);

  const r = pricePoint({ row: { isl: 1024, osl: 1024, metrics: { tput_per_gpu: 2000, input_tput_per_gpu: 1600, output_tput_per_gpu: 400 } } });
  close(r.revenue_per_gpu_hour, 7.2);
  assert.equal(r.hit_rate, undefined);
  assertNoNull(r);
  const o = pricePoint({ row: { isl: 1024, osl: 1024, metrics: { tput_per_gpu: 1000, input_tput_per_gpu: 800, output_tput_per_gpu: 200 } } }, { rate_card: OPENROUTER });
  close(o.input_share, 0.8);
  close(o.revenue_per_gpu_hour, 12.96);
});

test("strict refuses ineligible, unmeasured and mix-unknown points with their codes", () => {
  const m = { tput_per_gpu: 2000, input_tput_per_gpu: 1600, output_tput_per_gpu: 400, server_gpu_cache_hit_rate: 0.8, server_external_cache_hit_rate: 0.06 };
  const ok = pricePoint(agentic({ ...m, cache_pricing_eligible: 1 }));
  assert.equal(ok.status, "PRICED");
  assert.equal(ok.policy, "strict");
  const legacy = pricePoint(agentic({ ...m, cache_pricing_eligible: 1 }), { policy: "legacy" });
  assert.equal(ok.revenue_per_gpu_hour, legacy.revenue_per_gpu_hour);

  const bad = pricePoint(agentic({ ...m, cache_pricing_eligible: 0, cache_validity_status: "WINDOW_UNRESOLVED" }));
  assert.equal(bad.status, "NOT_PRICED");
  assert.equal(bad.priced, false);
  assert.equal(bad.revenue_per_gpu_hour, undefined);
  assert.deepEqual(refusals(bad), ["cache-ineligible"]);
  assert.equal(bad.reasons[0].verdict_status, "WINDOW_UNRESOLVED");

  assert.deepEqual(refusals(pricePoint(agentic({ tput_per_gpu: 7500 }, { hardware: "b200" }))), ["cache-unmeasured"]);
  assert.deepEqual(refusals(pricePoint(agentic({ tput_per_gpu: 2000, server_gpu_cache_hit_rate: 0.5, cache_pricing_eligible: 1 }), { rate_card: OPENROUTER })), ["no-token-mix"]);

  const obs = pricePoint({ observed: { throughput_per_gpu: 2000, input_share: 0.8, cache: { status: "REQUEST_SCOPE_UNRESOLVED", pricing_eligible: false, reasons: ["no_request_records"], rates: { overall: { value: 0.5 } } } } });
  assert.deepEqual(refusals(obs), ["cache-ineligible"]);
  assert.deepEqual(obs.reasons[0].verdict_reasons, ["no_request_records"]);
});

test("no-op on the dashboard's fixed-sequence rows (cypress fixture)", () => {
  const rows = JSON.parse(readFileSync(path.join(ROOT, "tests/fixtures/app/cypress-api-benchmarks.json"), "utf8"));
  assert.equal(rows.length, 435);
  for (const card of [{ card: "normalized" }, { card: "kimi-k3-moonshot" }, { rate_card: OPENROUTER }]) {
    const s = priceRows(rows, { ...card, policy: "strict" });
    const l = priceRows(rows, { ...card, policy: "legacy", surface: "chart" });
    // The calculator surface (legacy's default) bills a row without output_tput_per_gpu as
    // all output: the two such fixture rows (isl 1024, osl 8192) differ there, as documented.
    const calc = priceRows(rows, { ...card, policy: "legacy" });
    let allOutput = 0;
    rows.forEach((row, i) => {
      assert.equal(s[i].priced, true);
      assert.equal(s[i].hit_rate, undefined);
      assert.equal(s[i].revenue_per_gpu_hour, l[i].revenue_per_gpu_hour);
      if (row.metrics?.output_tput_per_gpu === undefined && row.output_tput_per_gpu === undefined) {
        allOutput += 1;
        assert.equal(calc[i].input_share, 0);
      } else {
        assert.equal(calc[i].revenue_per_gpu_hour, l[i].revenue_per_gpu_hour);
      }
    });
    assert.equal(allOutput, 2);
  }
});

test("per-segment frontier eligibility", () => {
  const four = (bad) => [[10, 1000, 0.9], [20, 800, 0.8], [30, 500, 0.6], [40, 300, 0.5]].map(([x, t, h], i) => knot(x, t, h, !bad.includes(i)));
  // all eligible: strict equals the all-or-nothing (legacy) result
  for (const x of [12.5, 20, 33.3]) {
    const s = interpolateFrontier(four([]), x);
    const l = interpolateFrontier(four([]), x, { policy: "legacy" });
    assert.equal(s.priced, true);
    assert.equal(s.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
  }
  // middle knot ineligible: named; the far segment stays priced
  const mid = interpolateFrontier(four([1]), 15);
  assert.equal(mid.priced, false);
  assert.equal(mid.reasons[0].code, "cache-ineligible");
  assert.equal(mid.reasons[0].knot, 1);
  assert.equal(interpolateFrontier(four([1]), 35).priced, true);
  // end knot ineligible
  const end = interpolateFrontier(four([3]), 35);
  assert.equal(end.priced, false);
  assert.equal(end.reasons[0].knot, 3);
  assert.equal(interpolateFrontier(four([3]), 15).priced, true);
  // single point: exact x only under strict; clamped pass-through under legacy
  const one = [knot(30, 500, 0.77, true, 0.8)];
  close(interpolateFrontier(one, 30).revenue_per_gpu_hour, 0.0036 * 500 * (1 - 0.9 * 0.77 * 0.8));
  const off = interpolateFrontier(one, 45);
  assert.equal(off.priced, false);
  assert.equal(off.clamped, true);
  assert.equal(off.reasons[0].code, "outside-measured-range");
  const l = interpolateFrontier(one, 45, { policy: "legacy" });
  assert.equal(l.hit_rate, 0.77);
  assert.equal(l.clamped_above, true);

  const fp = priceFrontier(four([1]));
  assert.deepEqual(fp.segments.map((s) => s.priced), [false, false, true]);
  assert.equal(fp.points.length, 4);
});

test("historical trend: no extrapolation, knots exact, synthetic extension", () => {
  const ks = [knot(20, 800, undefined, undefined, 0.5), knot(60, 400, undefined, undefined, 0.5)];
  const groups = [{ date: "2026-08-02", points: ks }, { date: "2026-08-01", points: ks }];
  const line = trendSeries(groups, 40, "2026-09-01", { policy: "legacy", surface: "trend" });
  assert.deepEqual(line.map((p) => [p.date, p.synthetic]), [["2026-08-01", false], ["2026-08-02", false], ["2026-09-01", true]]);
  close(line[0].value.revenue_per_gpu_hour, 0.0036 * line[0].value.throughput_per_gpu);
  assert.equal(trendSeries(groups, 70, undefined, { policy: "legacy" })[0].value.priced, false);
});

test("legacy surfaces: chart, calculator (default), trend (consumer.md c.3b)", () => {
  // isl 1024 / osl 8192, T 1000, no output throughput, in 2 / out 10:
  // chart and trend s = 1/9, R = 3.6 x (2/9 + 80/9) = 32.8; calculator s = 0, R = 36
  const fixed = { row: { benchmark_type: "single_turn", isl: 1024, osl: 8192, metrics: { tput_per_gpu: 1000 } } };
  const or = { rate_card: OPENROUTER, policy: "legacy" };
  close(pricePoint(fixed, { ...or, surface: "chart" }).revenue_per_gpu_hour, 32.8);
  close(pricePoint(fixed, { ...or, surface: "trend" }).revenue_per_gpu_hour, 32.8);
  const calc = pricePoint(fixed, or);
  close(calc.revenue_per_gpu_hour, 36);
  assert.equal(calc.surface, "calculator");
  assert.equal(calc.share_source, "output_defaulted_to_total");
  assert.equal(pricePoint(fixed, { rate_card: OPENROUTER }).surface, undefined);
  // GB300 without a measured rate: the fallback only on the calculator
  const gb = agentic({ tput_per_gpu: 1000, input_tput_per_gpu: 800, output_tput_per_gpu: 200, theoretical_cache_hit_rate: 0.62 }, { hardware: "gb300" });
  close(pricePoint(gb, { policy: "legacy" }).revenue_per_gpu_hour, 1.99296);
  close(pricePoint(gb, { policy: "legacy", surface: "chart" }).revenue_per_gpu_hour, 3.6);
  // two knots: the dashboard's cubic (1.5 s, 0.75 s) on calculator and trend, the secant
  // under strict; the chart computes no value between points
  const two = [knot(26.32, 14847.83, 0.8, true, 0.5), knot(39.68, 11188.68, 0.8, true, 0.5)];
  const t = (31.4 - 26.32) / 13.36;
  const cubic = 14847.83 - 3659.15 * (0.25 * t ** 3 - 0.75 * t ** 2 + 1.5 * t);
  close(interpolateFrontier(two, 31.4, { policy: "legacy", surface: "trend" }).throughput_per_gpu, cubic);
  close(interpolateFrontier(two, 31.4, { policy: "legacy" }).throughput_per_gpu, cubic);
  close(interpolateFrontier(two, 31.4).throughput_per_gpu, 14847.83 - 3659.15 * t);
  assert.equal(interpolateFrontier(two, 31.4, { policy: "legacy", surface: "chart" }).reasons[0].code, "surface-not-interpolated");
  // surface is legacy-only; trendSeries is the trend surface
  expectKvError(() => pricePoint(fixed, { surface: "chart" }), "BAD_OPTIONS");
  expectKvError(() => trendSeries([], 40, undefined, { policy: "legacy", surface: "chart" }), "BAD_OPTIONS");
  expectKvError(() => pricePoint(fixed, { policy: "legacy", surface: "axis" }), "BAD_OPTIONS");
});

test("money metrics, profit, lifecycle", () => {
  const gh = (1000 / 1.71) * 8760;
  const m = moneyMetrics(7.2, 2000, { kw_per_gpu: 1.71, tco_per_gpu_hour: 1.73 });
  close(m.revenue_per_mw_year, 7.2 * gh);
  close(m.profit_per_mw_year, (7.2 - 1.73) * gh);
  assert.deepEqual(moneyMetrics(undefined, 2000, { kw_per_gpu: 1.71 }), {});
  const p = estimateProfit({ revenue_per_gpu_hour: 3.6, kw_per_gpu: 1.71, tco_per_gpu_hour: 1.73 });
  close(p.estimate.revenue, 3.6 * 0.6);
  assert.equal(estimateProfit({ clamped: true, tco_per_gpu_hour: 1.73 }).skip.code, "outside-measured-range");
  assert.equal(estimateProfit({ tco_per_gpu_hour: 1.73 }).skip.code, "no-token-mix");
  assert.equal(billableInputRate(13525, undefined, 0.1), 13525);
  assert.deepEqual(Array.from(splitTokenStreams(1000, undefined, 0.5, 0.1)), [0, 1000]);
  const [i, o] = splitTokenStreams(1000, 0.9, 0.5, 0.1);
  close(i, 495);
  close(o, 100);
});

test("bad calls throw KvledgerError BAD_OPTIONS; refusals never throw", () => {
  expectKvError(() => pricePoint({ row: {} }, { card: "no-such-card" }), "BAD_OPTIONS");
  expectKvError(() => pricePoint({ row: {} }, { rate_card: { ...OPENROUTER, cached_input_per_million: 5 } }), "BAD_OPTIONS");
  expectKvError(() => pricePoint({ nonsense: 1 }), "BAD_OPTIONS");
  expectKvError(() => pricePoint({ row: {} }, { policy: "generous" }), "BAD_OPTIONS");
  const r = pricePoint({ row: { benchmark_type: "agentic_traces", metrics: {} } });
  assert.equal(r.status, "NOT_PRICED");
});
