// Shared helpers of the JS tests (not a test file itself).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const FIXTURES = path.join(ROOT, "test-js", "fixtures");

export const TIMESLICES = "vllm-1-endpoint-timeslices.server_metrics_export.json";
export const CSV = "server_metrics_export.csv";
export const SUMMARY = "profile_export_aiperf.json";

export function fixtureText(name) {
  return readFileSync(path.join(FIXTURES, name), "utf8");
}

export function fileInput(name) {
  return { name, text: fixtureText(name) };
}

/** The integer literal after `"key": ` in the text, as its exact decimal digits. */
export function literal(text, key) {
  const m = new RegExp(`"${key}":\\s*(\\d+)`).exec(text);
  assert.ok(m, `${key} not in fixture`);
  return m[1];
}

/** No `null` anywhere: absent optional values are omitted. */
export function assertNoNull(value, where = "result") {
  assert.notEqual(value, null, `null at ${where}`);
  if (Array.isArray(value)) value.forEach((v, i) => assertNoNull(v, `${where}[${i}]`));
  else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value)) assertNoNull(v, `${where}.${k}`);
  }
}

/** Every key of every object in `value` is snake_case (lower case, digits, `_`), except keys of maps named in `mapKeys`. */
export function assertSnakeCase(value, where = "result", mapKeys = new Set()) {
  if (Array.isArray(value)) value.forEach((v, i) => assertSnakeCase(v, `${where}[${i}]`, mapKeys));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const isMap = mapKeys.has(where.replace(/\[\d+\]/g, "[]").split(".").pop());
      if (!isMap) assert.match(k, /^[a-z][a-z0-9_]*$/, `${where}.${k} is not snake_case`);
      assertSnakeCase(v, `${where}.${k}`, mapKeys);
    }
  }
}

/** `JSON.stringify` works and a JSON round trip gives the same value (no bigint, no -0, no NaN). */
export function assertJsonRoundTrip(value, what = "result") {
  const text = JSON.stringify(value);
  assert.equal(typeof text, "string", `${what}: JSON.stringify gave ${text}`);
  assert.deepStrictEqual(JSON.parse(text), value, `${what}: a JSON round trip changed it`);
  return text;
}

/**
 * Calls fn, expects a KvledgerError with this code; returns it. `k` (optional) is the module
 * whose KvledgerError class `instanceof` is checked against.
 */
export function expectKvError(fn, code, k) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, `expected ${code}, nothing was thrown`);
  assert.ok(err instanceof Error, `not an Error: ${err}`);
  assert.equal(err.name, "KvledgerError", `${err.name}: ${err.message}`);
  assert.equal(err.code, code, `${err.code}: ${err.message}`);
  assert.ok(err.message.length > 0);
  if (k) {
    assert.ok(err instanceof k.KvledgerError, "instanceof KvledgerError");
    assert.ok(k.isKvledgerError(err));
  }
  return err;
}

/**
 * The checks every entry point must pass, given the module's namespace (ESM or CJS).
 * Uses node:test's `t` for subtests.
 */
export async function checkApi(t, k) {
  await t.test("versions and error codes", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    assert.equal(k.contractVersion(), "kvledger/1");
    assert.equal(k.packageVersion(), pkg.version);
    const codes = k.errorCodes();
    for (const c of ["JSON_SYNTAX", "NO_ARTIFACTS", "BAD_OPTIONS", "LAUNCH_VALUE", "UNKNOWN_FORMAT", "NOT_INITIALIZED", "INIT_FAILED", "INTERNAL"]) {
      assert.ok(codes.includes(c), `${c} missing`);
    }
    assert.equal(new Set(codes).size, codes.length, "codes repeat");
  });

  await t.test("server-metrics JSON: exact epoch-ns strings, snake_case, no nulls, JSON-safe", () => {
    const text = fixtureText(TIMESLICES);
    const r = k.inspectRun([{ name: TIMESLICES, text }]);
    assert.equal(r.contract_version, "kvledger/1");
    assert.deepEqual(r.files, [{ name: TIMESLICES, kind: "server_metrics_json" }]);
    assert.equal(r.endpoints.length, 1);
    const ep = r.endpoints[0];
    assert.equal(ep.endpoint_url, "http://localhost:8000/metrics");
    assert.equal(ep.host_port, "localhost:8000");
    assert.equal(typeof ep.first_fetch_ns, "string");
    assert.equal(ep.first_fetch_ns, literal(text, "first_fetch_ns"));
    // 1765793114960054143 is odd: a trip through a double would change it.
    assert.equal(ep.last_fetch_ns, "1765793114960054143");
    assert.equal(r.server_metrics.length, 1);
    assert.equal(r.server_metrics[0].format, "json");
    assert.ok(r.families.length > 0);
    for (const key of ["requests", "run_summary", "launch"]) {
      assert.ok(!(key in r), `${key} should be omitted`);
    }
    assert.ok(!("path_role" in ep));
    assertNoNull(r);
    assertSnakeCase(r, "result", new Set(["benchmark_ids"]));
    assertJsonRoundTrip(r);
  });

  await t.test("bytes input equals text input", () => {
    const text = fixtureText(TIMESLICES);
    const a = k.inspectRun([{ name: TIMESLICES, bytes: new TextEncoder().encode(text) }]);
    const b = k.inspectRun([{ name: TIMESLICES, text }]);
    assert.deepStrictEqual(a, b);
  });

  await t.test("server-metrics CSV + run summary of a real InferenceX run", () => {
    const r = k.inspectRun([fileInput(CSV), fileInput(SUMMARY)]);
    const kinds = Object.fromEntries(r.files.map((f) => [f.name, f.kind]));
    assert.deepEqual(kinds, { [CSV]: "server_metrics_csv", [SUMMARY]: "run_summary" });
    assert.equal(r.endpoints.length, 1);
    assert.equal(r.endpoints[0].host_port, "localhost:8889");
    assert.ok(r.endpoints[0].engines.includes("vllm"));
    assert.equal(r.server_metrics[0].format, "csv");
    assert.ok(r.run_summary, "run_summary present");
    assert.equal(r.evidence.run_summary, true);
    assertNoNull(r);
  });

  await t.test("accountStream: files as ReadableStreams give accountRun's result", async () => {
    const files = [fileInput(CSV), fileInput(SUMMARY)];
    const streamed = files.map((f) => ({ name: f.name, stream: new Blob([f.text]).stream() }));
    assert.deepStrictEqual(await k.accountStream(streamed), k.accountRun(files));
    assert.equal(typeof k.AccountStream, "function");
  });

  await t.test("malformed JSON: KvledgerError JSON_SYNTAX with file and line, top-level fields", () => {
    const err = expectKvError(
      () => k.inspectRun([{ name: "server_metrics_export.json", text: '{\n  "summary": {\n' }]),
      "JSON_SYNTAX",
      k,
    );
    assert.equal(err.file, "server_metrics_export.json");
    assert.equal(typeof err.line, "number");
    assert.ok(err.line >= 2);
    assert.equal(typeof err.column, "number");
    assert.ok(!("position" in err));
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(err))).slice(0, 4), ["name", "code", "message", "file"]);
  });

  await t.test("no known artifact: NO_ARTIFACTS", () => {
    expectKvError(() => k.inspectRun([{ name: "notes.txt", text: "hello\n" }]), "NO_ARTIFACTS", k);
    expectKvError(() => k.inspectRun([]), "NO_ARTIFACTS", k);
  });

  await t.test("malformed calls: BAD_OPTIONS naming the fault", () => {
    const text = fixtureText(TIMESLICES);
    const good = { name: TIMESLICES, text };
    const bad = (fn, path) => {
      const e = expectKvError(fn, "BAD_OPTIONS", k);
      assert.equal(e.json_path, path, e.message);
      assert.ok(e.message.includes(path), e.message);
    };
    bad(() => k.inspectRun(null), "files");
    bad(() => k.inspectRun({}), "files");
    bad(() => k.inspectRun(good), "files");
    bad(() => k.inspectRun([{ text }]), "files[0]");
    bad(() => k.inspectRun([{ name: TIMESLICES }]), "files[0]");
    bad(() => k.inspectRun([{ name: TIMESLICES, text, bytes: new Uint8Array([1]) }]), "files[0]");
    bad(() => k.inspectRun([good, { ...good, path: "x" }]), "files[1].path");
    bad(() => k.inspectRun([good], { families: "vllm:" }), "options.families");
    bad(() => k.inspectRun([good], { bogusOption: true }), "options.bogusOption");
    bad(() => k.inspectRun([good], { familyPrefixes: ["vllm:"] }), "options.familyPrefixes");
    bad(() => k.inspectRun([good], { launch_json: "{}", launch_env: { FRAMEWORK: "vllm" } }), "options.launch_json");
    bad(() => k.accountRun([good], { policy: { maxRateWidth: 0.01 } }), "options.policy.maxRateWidth");
  });

  await t.test("bad launch env: LAUNCH_VALUE", () => {
    expectKvError(() => k.inspectRun([fileInput(TIMESLICES)], { launch_env: { DISAGG: "maybe" } }), "LAUNCH_VALUE", k);
  });

  await t.test("isKvledgerError on foreign values", () => {
    assert.equal(k.isKvledgerError(new Error("x")), false);
    assert.equal(k.isKvledgerError({ name: "KvledgerError", code: "JSON_SYNTAX" }), false);
    assert.equal(k.isKvledgerError(undefined), false);
    assert.equal(k.isKvledgerError(null), false);
    const fake = Object.assign(new Error("x"), { name: "KvledgerError", code: "JSON_SYNTAX" });
    assert.equal(k.isKvledgerError(fake), false);
    assert.equal(fake instanceof k.KvledgerError, false);
  });

  await t.test("200 bad calls, then a good one", () => {
    for (let i = 0; i < 200; i++) {
      assert.throws(() => k.inspectRun([{ name: "server_metrics_export.json", text: "{ nope" + i }]), k.KvledgerError);
    }
    const r = k.inspectRun([fileInput(TIMESLICES)]);
    assert.equal(r.endpoints[0].last_fetch_ns, "1765793114960054143");
  });
}

/**
 * The package's Node API, and the size of the linear memory of the module it runs on (set up
 * here before any call; memory tests run it in a process of their own, as linear memory only
 * grows).
 */
export async function apiWithMemory() {
  const api = await import("../../js/node.mjs");
  const glue = await import("../../pkg/web/kvledger.js");
  const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
  return { api, linearMemory: () => wasm.memory.buffer.byteLength };
}
