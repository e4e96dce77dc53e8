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

/** The integer literal after `"key": ` in the text, as an exact bigint (never through a number). */
export function literal(text, key) {
  const m = new RegExp(`"${key}":\\s*(\\d+)`).exec(text);
  assert.ok(m, `${key} not in fixture`);
  return BigInt(m[1]);
}

/** No `null` anywhere: absent optional values are omitted (undefined). */
export function assertNoNull(value, where = "result") {
  assert.notEqual(value, null, `null at ${where}`);
  if (Array.isArray(value)) value.forEach((v, i) => assertNoNull(v, `${where}[${i}]`));
  else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value)) assertNoNull(v, `${where}.${k}`);
  }
}

/** Calls fn, expects a kvledger error with this name and code; returns it. */
export function expectKvError(fn, name, code) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, `expected ${name}/${code}, nothing was thrown`);
  assert.ok(err instanceof Error, `not an Error: ${err}`);
  assert.equal(err.name, name, `${err.name}: ${err.message}`);
  assert.equal(err.code, code, `${err.code}: ${err.message}`);
  assert.ok(err.message.length > 0);
  return err;
}

/** JSON.stringify replacer: bigints as decimal strings. */
export function bigintReplacer(_key, value) {
  return typeof value === "bigint" ? value.toString() : value;
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
    for (const c of ["JSON_SYNTAX", "NO_ARTIFACTS", "BAD_OPTIONS", "LAUNCH_VALUE", "UNKNOWN_FORMAT"]) {
      assert.ok(codes.includes(c), `${c} missing`);
    }
  });

  await t.test("server-metrics JSON: exact bigint ns, one endpoint, no nulls", () => {
    const text = fixtureText(TIMESLICES);
    const r = k.inspectRun([{ name: TIMESLICES, text }]);
    assert.equal(r.contractVersion, "kvledger/1");
    assert.deepEqual(r.files, [{ name: TIMESLICES, kind: "server_metrics_json" }]);
    assert.equal(r.endpoints.length, 1);
    const ep = r.endpoints[0];
    assert.equal(ep.endpointUrl, "http://localhost:8000/metrics");
    assert.equal(ep.hostPort, "localhost:8000");
    assert.equal(typeof ep.firstFetchNs, "bigint");
    assert.equal(ep.firstFetchNs, literal(text, "first_fetch_ns"));
    // 1765793114960054143 is odd: a trip through a double would change it.
    assert.equal(ep.lastFetchNs, literal(text, "last_fetch_ns"));
    assert.equal(ep.lastFetchNs, 1765793114960054143n);
    assert.equal(r.serverMetrics.length, 1);
    assert.equal(r.serverMetrics[0].format, "json");
    assert.ok(r.families.length > 0);
    for (const key of ["requests", "runSummary", "launch"]) {
      assert.ok(!(key in r), `${key} should be omitted`);
    }
    assert.ok(!("pathRole" in ep));
    assertNoNull(r);
  });

  await t.test("bytes input equals text input", () => {
    const text = fixtureText(TIMESLICES);
    const a = k.inspectRun([{ name: TIMESLICES, bytes: new TextEncoder().encode(text) }]);
    const b = k.inspectRun([{ name: TIMESLICES, text }]);
    assert.equal(JSON.stringify(a, bigintReplacer), JSON.stringify(b, bigintReplacer));
  });

  await t.test("server-metrics CSV + run summary of a real InferenceX run", () => {
    const r = k.inspectRun([fileInput(CSV), fileInput(SUMMARY)]);
    const kinds = Object.fromEntries(r.files.map((f) => [f.name, f.kind]));
    assert.deepEqual(kinds, { [CSV]: "server_metrics_csv", [SUMMARY]: "run_summary" });
    assert.equal(r.endpoints.length, 1);
    assert.equal(r.endpoints[0].hostPort, "localhost:8889");
    assert.ok(r.endpoints[0].engines.includes("vllm"));
    assert.equal(r.serverMetrics[0].format, "csv");
    assert.ok(r.runSummary, "runSummary present");
    assert.equal(r.evidence.runSummary, true);
    assertNoNull(r);
  });

  await t.test("malformed JSON: ReadError JSON_SYNTAX with file and line", () => {
    const err = expectKvError(
      () => k.inspectRun([{ name: "server_metrics_export.json", text: '{\n  "summary": {\n' }]),
      "ReadError",
      "JSON_SYNTAX",
    );
    assert.equal(err.file, "server_metrics_export.json");
    assert.equal(typeof err.position.line, "number");
    assert.ok(err.position.line >= 2);
    assert.ok(k.isKvledgerError(err));
    assertNoNull(err.position, "position");
  });

  await t.test("no known artifact: NO_ARTIFACTS", () => {
    expectKvError(() => k.inspectRun([{ name: "notes.txt", text: "hello\n" }]), "ReadError", "NO_ARTIFACTS");
    expectKvError(() => k.inspectRun([]), "ReadError", "NO_ARTIFACTS");
  });

  await t.test("bad calls: OptionsError BAD_OPTIONS", () => {
    const text = fixtureText(TIMESLICES);
    const good = { name: TIMESLICES, text };
    const bad = (fn) => expectKvError(fn, "OptionsError", "BAD_OPTIONS");
    bad(() => k.inspectRun([{ name: TIMESLICES }]));
    bad(() => k.inspectRun([{ name: TIMESLICES, text, bytes: new Uint8Array([1]) }]));
    bad(() => k.inspectRun([good], { families: "vllm:" }));
    bad(() => k.inspectRun([good], { launchJson: "{}", launchEnv: { FRAMEWORK: "vllm" } }));
  });

  await t.test("unknown option and file keys: OptionsError BAD_OPTIONS", () => {
    const good = fileInput(TIMESLICES);
    const bad = (fn) => expectKvError(fn, "OptionsError", "BAD_OPTIONS");
    bad(() => k.inspectRun([good], { bogusOption: true }));
    bad(() => k.inspectRun([{ ...good, path: "x" }]));
  });

  await t.test("bad launch env: LAUNCH_VALUE", () => {
    expectKvError(
      () => k.inspectRun([fileInput(TIMESLICES)], { launchEnv: { DISAGG: "maybe" } }),
      "ReadError",
      "LAUNCH_VALUE",
    );
  });

  await t.test("isKvledgerError on foreign values", () => {
    assert.equal(k.isKvledgerError(new Error("x")), false);
    assert.equal(k.isKvledgerError({ name: "ReadError", code: "JSON_SYNTAX" }), false);
    assert.equal(k.isKvledgerError(undefined), false);
    const fake = Object.assign(new Error("x"), { name: "ReadError", code: "NOT_A_CODE" });
    assert.equal(k.isKvledgerError(fake), false);
  });

  await t.test("200 bad calls, then a good one", () => {
    for (let i = 0; i < 200; i++) {
      assert.throws(() => k.inspectRun([{ name: "server_metrics_export.json", text: "{ nope" + i }]));
    }
    const r = k.inspectRun([fileInput(TIMESLICES)]);
    assert.equal(r.endpoints[0].lastFetchNs, 1765793114960054143n);
  });
}
