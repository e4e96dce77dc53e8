// The shipped JSON Schema (schema/kvledger.schema.json, `kvledger/schema.json` in the package)
// checked by a real draft 2020-12 validator (Ajv) against real outputs: every CLI --json
// envelope of every bundled example (account, inspect, errors, price) and the package's own
// results. And the validator can say no: a result with an epoch-ns number, a negative count or
// a missing verdict is refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { accountRun, inspectRun, pricePoint, cacheObservation } from "kvledger";
import { ROOT } from "./lib/util.mjs";

const schema = JSON.parse(readFileSync(path.join(ROOT, "schema", "kvledger.schema.json"), "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
// The integer and float formats schemars writes; their ranges are also in the schema itself
// (minimum, maximum), so the format only says "a number of that kind".
for (const f of ["uint", "uint8", "uint16", "uint32", "uint64", "int", "int32", "int64", "double", "float"]) {
  ajv.addFormat(f, { type: "number", validate: () => true });
}
ajv.addSchema(schema, "kvledger.schema.json");

function check(def, value, what) {
  const validate = ajv.getSchema(`kvledger.schema.json#/$defs/${def}`);
  assert.ok(validate, `no $defs/${def}`);
  const ok = validate(value);
  assert.ok(ok, `${what} is not a valid ${def}: ${ajv.errorsText(validate.errors)}`);
}

function refuses(def, value, what) {
  const validate = ajv.getSchema(`kvledger.schema.json#/$defs/${def}`);
  assert.equal(validate(value), false, `${what} should not be a valid ${def}`);
}

const cli = path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug", "kvledger");
const run = (args) => {
  try {
    return { code: 0, out: execFileSync(cli, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
  } catch (e) {
    return { code: e.status, out: e.stdout };
  }
};
const lines = (out) => out.split("\n").filter(Boolean).map((l) => JSON.parse(l));

const EXAMPLES = path.join(ROOT, "examples");
const exampleRuns = [
  ...readdirSync(path.join(EXAMPLES, "synth")).map((d) => path.join(EXAMPLES, "synth", d)),
  path.join(EXAMPLES, "vllm-mi355x-conc1"),
  path.join(EXAMPLES, "vllm-doc-timeslices"),
].filter((d) => statSync(d).isDirectory());

test("the CLI is built", () => assert.ok(existsSync(cli), `${cli} missing: run cargo test first`));

test("the schema compiles under draft 2020-12 in strict mode", () => {
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.ok(Object.keys(schema.$defs).length > 50);
});

test("every account and inspect envelope of every example is valid", () => {
  let n = 0;
  for (const dir of exampleRuns) {
    for (const command of ["account", "inspect"]) {
      const { code, out } = run([command, "--json", dir]);
      assert.equal(code, 0, `${command} ${dir}`);
      for (const env of lines(out)) {
        check("CliEnvelope", env, `${command} ${dir}`);
        check(command === "account" ? "Accounting" : "RunInspection", env.result, `${command} ${dir} result`);
        n += 1;
      }
    }
  }
  assert.ok(n >= 2 * exampleRuns.length, `${n} envelopes`);
});

test("a sweep with an unreadable run and a usage error give valid error envelopes", () => {
  const sweep = run(["account", "--json", path.join(ROOT, "tests", "fixtures", "sweep")]);
  assert.equal(sweep.code, 1);
  const envs = lines(sweep.out);
  assert.ok(envs.some((e) => e.error) && envs.some((e) => e.result), "results and errors both");
  envs.forEach((e, i) => check("CliEnvelope", e, `sweep line ${i}`));
  envs.filter((e) => e.error).forEach((e) => check("ErrorReport", e.error, "sweep error"));
  const usage = run(["account", "--json", "--bogus", "x"]);
  assert.equal(usage.code, 2);
  lines(usage.out).forEach((e) => check("CliEnvelope", e, "usage error"));
});

test("price --json envelopes are valid under every policy", () => {
  const rows = path.join(ROOT, "tests", "fixtures", "app", "cypress-api-benchmarks.json");
  for (const policy of ["strict", "theoretical", "legacy"]) {
    const { code, out } = run(["price", "--json", "--rows", rows, "--policy", policy]);
    assert.equal(code, 0, policy);
    for (const env of lines(out)) {
      check("CliEnvelope", env, `price ${policy}`);
      check("PriceReport", env.result, `price ${policy} result`);
      assert.ok(env.result.outcomes.length > 0);
    }
  }
});

test("the package's results are valid: accountRun, inspectRun, pricePoint", () => {
  const dir = path.join(EXAMPLES, "synth", "vllm-agg-clean");
  const files = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== "truth.json") files.push({ name: path.relative(dir, p), bytes: readFileSync(p) });
    }
  };
  walk(dir);
  const a = accountRun(files);
  check("Accounting", a, "accountRun");
  check("Accounting", JSON.parse(JSON.stringify(a)), "accountRun after a JSON round trip");
  check("RunInspection", inspectRun(files), "inspectRun");
  const priced = pricePoint({ observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: cacheObservation(a) } });
  check("PriceOutcome", priced, "pricePoint");
});

test("the validator refuses what the contract forbids", () => {
  const dir = path.join(EXAMPLES, "synth", "vllm-agg-clean");
  const env = lines(run(["account", "--json", dir]).out)[0];
  const a = env.result;
  check("Accounting", a, "the original");
  const clone = () => JSON.parse(JSON.stringify(a));
  const asNumber = clone();
  asNumber.cache_validity.window.start_ns = Number(a.cache_validity.window.start_ns);
  refuses("Accounting", asNumber, "an epoch-ns as a JSON number");
  const negative = clone();
  negative.cache_validity.request_scope.profiling_records = -1;
  refuses("Accounting", negative, "a negative count");
  const tooBig = clone();
  tooBig.cache_validity.request_scope.profiling_records = 2 ** 53;
  refuses("Accounting", tooBig, "a count above 2^53 - 1");
  const noVerdict = clone();
  delete noVerdict.cache_validity;
  refuses("Accounting", noVerdict, "a result without its verdict");
  const badStatus = clone();
  badStatus.cache_validity.status = "MAYBE";
  refuses("Accounting", badStatus, "an unknown status");
  refuses("CliEnvelope", { ...env, kvledger: "2" }, "an envelope of another version");
  refuses("CliEnvelope", { ...env, error: { code: "IO", message: "x" } }, "a result and an error at once");
});
