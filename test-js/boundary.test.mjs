// The JS boundary's promises, on every public function: results are plain JSON data
// (`JSON.stringify` works, a JSON round trip is lossless), options are refused by path when
// JSON would lose or kvledger does not know them, and the caller's objects are never touched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import * as k from "kvledger";
import { ROOT, TIMESLICES, CSV, SUMMARY, fileInput, expectKvError, assertJsonRoundTrip, assertSnakeCase } from "./lib/util.mjs";

const CLEAN = path.join(ROOT, "examples", "synth", "vllm-agg-clean");
const cleanFiles = () =>
  readdirSync(path.join(CLEAN, "aiperf_artifacts"))
    .map((name) => ({ name, text: readFileSync(path.join(CLEAN, "aiperf_artifacts", name), "utf8") }))
    .concat([{ name: "launch.json", text: readFileSync(path.join(CLEAN, "launch.json"), "utf8") }]);
const ROW = { row: { benchmark_type: "agentic_traces", metrics: { tput_per_gpu: 2000, input_tput_per_gpu: 1600, output_tput_per_gpu: 400, server_gpu_cache_hit_rate: 0.8, cache_pricing_eligible: 1, p90_intvty: 30 } } };
const knot = (x, t) => ({ observed: { interactivity: x, throughput_per_gpu: t, input_share: 0.8, cache: { status: "VALID_COMPLETE", pricing_eligible: true, rates: { overall: { value: 0.7 } } } } });

/** Deep-frozen: any write by kvledger would throw (ES modules are strict). */
function frozen(value) {
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value)) {
    Object.values(value).forEach(frozen);
    Object.freeze(value);
  }
  return value;
}

/** An upload through the push class. */
function validated(bytes) {
  const v = new k.UploadValidator();
  v.push(bytes);
  return v.finish();
}

/** The clean run through the push class. */
function pushed(files) {
  const s = new k.AccountStream();
  for (const f of files) {
    s.beginFile(f.name);
    s.push(new TextEncoder().encode(f.text));
    s.endFile();
  }
  return s.finish();
}

test("every function's result survives JSON.stringify and a JSON round trip", async () => {
  const accounting = k.accountRun(cleanFiles());
  const sweep = cleanFiles().map((f) => ({ ...f, name: `conc1/${f.name}` }));
  const results = {
    inspectRun: k.inspectRun([fileInput(CSV), fileInput(SUMMARY)]),
    inspectRuns: k.inspectRuns(sweep),
    accountRun: accountingWithCheck(accounting),
    accountRuns: k.accountRuns(sweep),
    groupRuns: k.groupRuns(sweep.map((f) => f.name)),
    accountStream: await k.accountStream(cleanFiles().map((f) => ({ name: f.name, stream: new Blob([f.text]) }))),
    AccountStream: pushed(cleanFiles()),
    contractVersion: k.contractVersion(),
    packageVersion: k.packageVersion(),
    errorCodes: k.errorCodes(),
    rateCards: k.rateCards(),
    pricingReasonCodes: k.pricingReasonCodes(),
    pricePoint: k.pricePoint(ROW),
    priceRows: k.priceRows([ROW.row, ROW.row]),
    priceFrontier: k.priceFrontier([knot(10, 1000), knot(20, 800), knot(30, 500)]),
    interpolateFrontier: k.interpolateFrontier([knot(10, 1000), knot(20, 800)], 15),
    trendSeries: k.trendSeries([{ date: "2026-08-01", points: [knot(10, 1000), knot(20, 800)] }], 15, "2026-09-01"),
    moneyMetrics: k.moneyMetrics(7.2, 2000, { kw_per_gpu: 1.71, tco_per_gpu_hour: 1.73 }),
    estimateProfit: k.estimateProfit({ revenue_per_gpu_hour: 3.6, kw_per_gpu: 1.71, tco_per_gpu_hour: 1.73 }),
    billableInputRate: k.billableInputRate(13525, 0.5, 0.1),
    splitTokenStreams: k.splitTokenStreams(1000, 0.9, 0.5, 0.1),
    cacheObservation: k.cacheObservation(accounting),
    validateUpload: await k.validateUpload(new TextEncoder().encode(JSON.stringify(accounting))),
    UploadValidator: validated(new TextEncoder().encode(JSON.stringify(accounting))),
    warmUp: await k.warmUp(),
  };
  const exported = Object.keys(k).filter((n) => typeof k[n] === "function" && !["init", "initSync", "default", "isKvledgerError", "KvledgerError"].includes(n));
  assert.deepEqual(Object.keys(results).sort(), exported.sort(), "every exported function is covered");
  for (const [name, r] of Object.entries(results)) {
    assert.notEqual(r, undefined, name);
    assertJsonRoundTrip(r, name);
  }
  assert.equal(results.accountRuns[0].run, "conc1");
  assert.deepStrictEqual(results.accountRuns[0].result, accounting);
  assert.deepStrictEqual(results.accountStream, accounting);
  assert.deepStrictEqual(results.AccountStream, accounting);
  assert.deepStrictEqual(results.UploadValidator, results.validateUpload);
});

function accountingWithCheck(a) {
  assert.equal(a.cache_validity.status, "VALID_COMPLETE");
  assertSnakeCase(a, "accounting", new Set(["methods", "by_role", "roles", "counters"]));
  return a;
}

test("an accounting result read back from JSON prices exactly as the live one", () => {
  const a = k.accountRun(cleanFiles());
  const stored = JSON.parse(JSON.stringify(a));
  assert.deepStrictEqual(k.cacheObservation(stored), k.cacheObservation(a));
  const point = (cache) => ({ observed: { throughput_per_gpu: 2000, input_share: 0.9, cache } });
  assert.deepStrictEqual(k.pricePoint(point(k.cacheObservation(stored))), k.pricePoint(point(k.cacheObservation(a))));
});

test("epoch-ns options: a bigint, a decimal string and a safe number give the same run", () => {
  const bytes = readFileSync(path.join(ROOT, "examples/sglang-minimax-conc16-captures/conc16.after.prom"));
  const url = "http://localhost:30000/metrics";
  const run = (timestamp_ns) =>
    k.inspectRun([{ name: "conc16.after.prom", bytes }], { captures: { "conc16.after.prom": { endpoint_url: url, timestamp_ns } }, family_prefixes: ["sglang:"] });
  const byBigint = run(1781000000000000001n);
  assert.deepStrictEqual(run("1781000000000000001"), byBigint);
  assert.equal(byBigint.endpoints[0].first_scrape_ns, "1781000000000000001");
  assert.equal(run(1781000000).endpoints[0].first_scrape_ns, "1781000000");
  // A number above 2^53 has already lost digits (this literal is 1781000000000000000).
  const e = expectKvError(() => run(1781000000000000001), "BAD_OPTIONS", k);
  assert.equal(e.json_path, 'options.captures["conc16.after.prom"].timestamp_ns');
  expectKvError(() => run("-1"), "BAD_OPTIONS", k);
  expectKvError(() => run("17810000000000000001234"), "BAD_OPTIONS", k);
});

test("what JSON would lose silently is refused by path", () => {
  const good = [fileInput(TIMESLICES)];
  const refused = (options, jsonPath, fn = k.accountRun) => {
    const e = expectKvError(() => fn(good, options), "BAD_OPTIONS", k);
    assert.equal(e.json_path, jsonPath, e.message);
    return e;
  };
  refused({ policy: { max_rate_width: NaN } }, "options.policy.max_rate_width");
  refused({ policy: { max_rate_width: Infinity } }, "options.policy.max_rate_width");
  refused({ policy: { max_rate_width: () => 0.01 } }, "options.policy.max_rate_width");
  refused({ launch_env: new Map([["FRAMEWORK", "vllm"]]) }, "options.launch_env");
  refused({ families: [Symbol("x")] }, "options.families[0]");
  const cyclic = { policy: {} };
  cyclic.policy.self = cyclic;
  refused(cyclic, "options.policy.self");
  // Unknown fields at every depth, named as given.
  refused({ policy: { maxRateWidth: 0.01 } }, "options.policy.maxRateWidth");
  refused({ captures: { "a.prom": { endpointUrl: "http://h/metrics" } } }, 'options.captures["a.prom"].endpointUrl');
  refused({ launchJson: "{}" }, "options.launchJson");
  // Pricing: the path starts at the argument's name.
  const e = expectKvError(() => k.pricePoint(ROW, { rateCard: { name: "x" } }), "BAD_OPTIONS", k);
  assert.equal(e.json_path, "options.rateCard");
  assert.match(e.message, /^pricePoint: options\.rateCard: unknown field `rateCard`/);
  assert.equal(expectKvError(() => k.interpolateFrontier([knot(10, 1000)], NaN), "BAD_OPTIONS", k).json_path, "target");
  const card = { name: "c", as_of: "2026-09-23", input_per_million: 2, output_per_million: 10, usage_convention: "subset" };
  assert.equal(k.pricePoint(ROW, { rate_card: card }).card, "c");
  const typo = expectKvError(() => k.pricePoint(ROW, { rate_card: { ...card, inputPerMillion: 2 } }), "BAD_OPTIONS", k);
  assert.equal(typo.json_path, "options.rate_card.inputPerMillion");
  // `undefined` members are absent, as in JSON; `null` options are no options.
  assert.deepStrictEqual(k.accountRun(good, { policy: undefined, families: undefined }), k.accountRun(good));
  assert.deepStrictEqual(k.accountRun(good, null), k.accountRun(good));
});

test("the caller's files and options are never modified", async () => {
  const files = frozen(cleanFiles().map((f, i) => (i % 2 ? { name: f.name, bytes: new TextEncoder().encode(f.text) } : f)));
  const bytesBefore = files.filter((f) => f.bytes).map((f) => Buffer.from(f.bytes).toString("base64"));
  const options = frozen({ policy: { max_rate_width: 0.01 }, captures: { "x.prom": { timestamp_ns: 5n } }, families: ["vllm:prefix_cache_hits"], family_prefixes: ["vllm:"] });
  const copy = structuredClone(options);
  k.accountRun(files, options);
  k.accountRuns(files.map((f) => f), options);
  k.inspectRun(files, { captures: options.captures });
  const streamed = frozen(files.filter((f) => f.bytes).map((f) => ({ name: f.name, stream: f.bytes })));
  await k.accountStream(streamed, frozen({ ...options, memory_budget: 40 << 20 }));
  assert.deepStrictEqual(options, copy);
  assert.deepEqual(files.filter((f) => f.bytes).map((f) => Buffer.from(f.bytes).toString("base64")), bytesBefore);
  const row = frozen(structuredClone(ROW));
  k.pricePoint(row, frozen({ policy: "strict" }));
  k.priceRows(frozen([row.row]));
  assert.deepStrictEqual(row, ROW);
});
