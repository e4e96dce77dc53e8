// The packed tarball installed in a fresh consumer project, then bundled and run for real:
// esbuild for Node (ESM and CommonJS) and for the browser, Vite's dev server (no config) and
// Vite build, and `wrangler deploy --dry-run` whose output runs in workerd; and the pricing
// entry alone by esbuild, Vite build and wrangler. Each variant accounts the same example run
// (the pricing ones price a point) and must give exactly the result Node gives here.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { accountRun, pricePoint } from "kvledger";
import { ROOT } from "./lib/util.mjs";
import { packTarball, consumerProject } from "./lib/pack.mjs";
import { serveStatic } from "./lib/serve.mjs";
import { launchChromium, loadPage } from "./lib/chromium.mjs";
import { freePort, waitForHttp, stop } from "./lib/proc.mjs";

const BIN = path.join(ROOT, "node_modules", ".bin");
const EXAMPLE = path.join(ROOT, "examples", "synth", "vllm-agg-clean");
const STEP_MS = 60_000;

let work;
let packed;
let consumer;
let runDir;
let expected;
let browser;

/** The example run flattened into one folder (the browser fetches it file by file). */
function exampleRun(dest) {
  mkdirSync(dest, { recursive: true });
  const names = readdirSync(path.join(EXAMPLE, "aiperf_artifacts"));
  for (const n of names) cpSync(path.join(EXAMPLE, "aiperf_artifacts", n), path.join(dest, n));
  cpSync(path.join(EXAMPLE, "launch.json"), path.join(dest, "launch.json"));
  names.push("launch.json");
  writeFileSync(path.join(dest, "files.json"), JSON.stringify(names));
  return names;
}

function run(bin, args, opts = {}) {
  return execFileSync(path.join(BIN, bin), args, { cwd: consumer, encoding: "utf8", timeout: STEP_MS, ...opts });
}

function esbuild(...args) {
  return run("esbuild", [...args, "--bundle", "--log-level=warning"]);
}

/** Loads a page that runs test-js/consumer/page.js and checks what it shows. */
async function checkPage(url) {
  const { status, page, logs } = await loadPage(browser, url);
  assert.equal(status, "done", `${status}\n${logs.join("\n")}`);
  const out = JSON.parse(await page.textContent("#result"));
  await page.close();
  assert.equal(out.contract, "kvledger/1");
  assert.equal(out.beforeInit, "NOT_INITIALIZED");
  assert.equal(out.refused.code, "BAD_OPTIONS");
  assert.equal(out.refused.json_path, "options.policy.maxRateWidth");
  assert.deepStrictEqual(out.result, expected);
}

/** Serves `dist`, a page of the pricing entry, and checks its price against Node's. */
async function checkPricingPage(dist) {
  const server = await serveStatic(dist);
  try {
    const { status, page, logs } = await loadPage(browser, `${server.base}/`);
    assert.equal(status, "done", `${status}\n${logs.join("\n")}`);
    const out = JSON.parse(await page.textContent("#result"));
    await page.close();
    assert.equal(out.contract, "kvledger/1");
    assert.deepStrictEqual(out.priced, pricePoint({ observed: { throughput_per_gpu: 2000, input_share: 0.9 } }));
  } finally {
    await server.close();
  }
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), "kvledger-bundlers-"));
  packed = packTarball();
  consumer = consumerProject(packed.tarball, work);
  for (const f of readdirSync(path.join(ROOT, "test-js", "consumer"))) {
    cpSync(path.join(ROOT, "test-js", "consumer", f), path.join(consumer, f));
  }
  runDir = path.join(consumer, "public", "run");
  const names = exampleRun(runDir);
  expected = accountRun(names.filter((n) => n !== "files.json").map((name) => ({ name, bytes: readFileSync(path.join(runDir, name)) })));
  assert.equal(expected.cache_validity.status, "VALID_COMPLETE");
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  packed?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("esbuild, Node ES module bundle: runs, same result", () => {
  esbuild("node-app.mjs", "--platform=node", "--format=esm", "--outfile=dist-node/app.mjs");
  const out = JSON.parse(execFileSync(process.execPath, ["dist-node/app.mjs", runDir], { cwd: consumer, encoding: "utf8", timeout: STEP_MS }));
  assert.equal(out.refused, "BAD_OPTIONS");
  assert.deepStrictEqual(out.result, expected);
});

test("esbuild, Node CommonJS bundle: runs, same result", () => {
  esbuild("node-app.cjs", "--platform=node", "--format=cjs", "--outfile=dist-node/app.cjs");
  const out = JSON.parse(execFileSync(process.execPath, ["dist-node/app.cjs", runDir], { cwd: consumer, encoding: "utf8", timeout: STEP_MS }));
  assert.equal(out.refused, "BAD_OPTIONS");
  assert.deepStrictEqual(out.result, expected);
});

test("esbuild, Node bundle moved away with the .wasm beside it: runs; without it: NOT_INITIALIZED naming the fix", () => {
  const alone = path.join(work, "alone");
  mkdirSync(alone);
  cpSync(path.join(consumer, "dist-node", "app.mjs"), path.join(alone, "app.mjs"));
  const missing = (() => {
    try {
      execFileSync(process.execPath, [path.join(alone, "app.mjs"), runDir], { cwd: alone, encoding: "utf8", stdio: "pipe", timeout: STEP_MS });
    } catch (e) {
      return e.stderr;
    }
    return "";
  })();
  assert.match(missing, /NOT_INITIALIZED[\s\S]*kvledger_bg\.wasm not found[\s\S]*copy it next to your bundle/);
  cpSync(path.join(consumer, "node_modules", "kvledger", "pkg", "web", "kvledger_bg.wasm"), path.join(alone, "kvledger_bg.wasm"));
  const out = JSON.parse(execFileSync(process.execPath, [path.join(alone, "app.mjs"), runDir], { cwd: alone, encoding: "utf8", timeout: STEP_MS }));
  assert.deepStrictEqual(out.result, expected);
});

test("esbuild, browser bundle in Chromium: same result", async () => {
  const dist = path.join(consumer, "dist-esbuild");
  esbuild("main-esbuild.js", "--platform=browser", "--format=esm", "--loader:.wasm=file", `--outfile=${path.join(dist, "main.js")}`);
  cpSync(path.join(consumer, "index.html"), path.join(dist, "index.html"));
  cpSync(runDir, path.join(dist, "run"), { recursive: true });
  const wasm = readdirSync(dist).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `${wasm}`);
  const server = await serveStatic(dist);
  try {
    await checkPage(`${server.base}/`);
  } finally {
    await server.close();
  }
});

test("esbuild, a pricing-only page (kvledger/pricing) in Chromium: the pricing module alone, same prices", async () => {
  const dist = path.join(consumer, "dist-pricing");
  esbuild("dashboard-esbuild.js", "--platform=browser", "--format=esm", "--loader:.wasm=file", `--outfile=${path.join(dist, "main.js")}`);
  cpSync(path.join(consumer, "index.html"), path.join(dist, "index.html"));
  const wasm = readdirSync(dist).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `${wasm}`);
  assert.ok(readFileSync(path.join(dist, wasm[0])).equals(readFileSync(path.join(ROOT, "pkg", "pricing", "kvledger_bg.wasm"))), "the bundle's .wasm is not the pricing module");
  await checkPricingPage(dist);
});

test("Vite build of a pricing-only page (kvledger/pricing), no config: the pricing module alone, same prices", async () => {
  const app = path.join(consumer, "pricing-app");
  cpSync(path.join(ROOT, "test-js", "consumer-pricing"), app, { recursive: true });
  run("vite", ["build", app, "--logLevel", "warn"]);
  const dist = path.join(app, "dist");
  const wasm = readdirSync(path.join(dist, "assets")).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `${wasm}`);
  assert.ok(readFileSync(path.join(dist, "assets", wasm[0])).equals(readFileSync(path.join(ROOT, "pkg", "pricing", "kvledger_bg.wasm"))), "the page's .wasm is not the pricing module");
  await checkPricingPage(dist);
});

test("Vite dev server, no config: the page loads the .wasm and accounts the run", async () => {
  assert.deepEqual(readdirSync(consumer).filter((f) => f.startsWith("vite.config")), []);
  const port = await freePort();
  let output = "";
  const child = spawn(path.join(BIN, "vite"), ["--port", String(port), "--strictPort", "--host", "127.0.0.1", "--clearScreen", "false"], {
    cwd: consumer,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  try {
    await waitForHttp(`http://127.0.0.1:${port}/`, 30_000, child, () => output);
    await checkPage(`http://127.0.0.1:${port}/`);
  } finally {
    await stop(child);
  }
});

test("Vite build, served statically: one .wasm asset, same result", async () => {
  run("vite", ["build", "--logLevel", "warn"]);
  const dist = path.join(consumer, "dist");
  const wasm = readdirSync(path.join(dist, "assets")).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `${wasm}`);
  const server = await serveStatic(dist);
  try {
    await checkPage(`${server.base}/`);
  } finally {
    await server.close();
  }
});

/**
 * `wrangler deploy --dry-run` of `script` (the consumer's wrangler.toml otherwise) into
 * `outName`, its output served by workerd; returns the served URL, its .wasm files and a
 * reader of workerd's output.
 */
async function wranglerWorker(t, script, outName) {
  const out = path.join(consumer, outName);
  run("wrangler", ["deploy", script, "--dry-run", "--outdir", out], {
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: path.join(work, "wrangler-logs") },
  });
  const wasm = readdirSync(out).filter((f) => f.endsWith(".wasm"));
  // Wrangler's output: worker.js imports the .wasm as "./<hash>-kvledger_bg.wasm".
  const modules = [`(name = "${script}", esModule = embed "${script}")`, ...wasm.map((w) => `(name = "./${w}", wasm = embed "${w}")`)];
  writeFileSync(
    path.join(out, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const w :Workerd.Worker = (modules = [ ${modules.join(", ")} ], compatibilityDate = "2025-09-01");
`,
  );
  const port = await freePort();
  let output = "";
  const child = spawn(path.join(BIN, "workerd"), ["serve", path.join(out, "config.capnp"), "--socket-addr", `http=127.0.0.1:${port}`], {
    cwd: out,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  t.after(() => stop(child));
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`, 20_000, child, () => output);
  return { base, out, wasm, output: () => output };
}

test("wrangler deploy --dry-run, run in workerd: same result over HTTP", async (t) => {
  const { base, wasm, output } = await wranglerWorker(t, "worker.js", "dist-worker");
  assert.equal(wasm.length, 1, `${wasm}`);
  assert.deepEqual(await (await fetch(`${base}/`, { signal: AbortSignal.timeout(10_000) })).json(), { contract: "kvledger/1" });
  const names = JSON.parse(readFileSync(path.join(runDir, "files.json"), "utf8"));
  const files = names.map((name) => ({ name, text: readFileSync(path.join(runDir, name), "utf8") }));
  const res = await fetch(`${base}/`, { method: "POST", body: JSON.stringify(files), signal: AbortSignal.timeout(20_000) });
  assert.equal(res.status, 200, output());
  assert.deepStrictEqual(await res.json(), expected);
  const bad = await fetch(`${base}/`, { method: "POST", body: JSON.stringify([{ name: "server_metrics_export.json", text: "{ oops" }]), signal: AbortSignal.timeout(10_000) });
  assert.equal(bad.status, 400);
  const { error, instance } = await bad.json();
  assert.equal(instance, true);
  assert.deepEqual([error.name, error.code, error.file, error.line], ["KvledgerError", "JSON_SYNTAX", "server_metrics_export.json", 1]);
});

test("wrangler deploy --dry-run of a pricing-only worker (kvledger/pricing), run in workerd: the pricing module alone, same prices", async (t) => {
  const { base, out, wasm, output } = await wranglerWorker(t, "worker-pricing.js", "dist-worker-pricing");
  assert.equal(wasm.length, 1, `${wasm}`);
  assert.ok(readFileSync(path.join(out, wasm[0])).equals(readFileSync(path.join(ROOT, "pkg", "pricing", "kvledger_bg.wasm"))), "the worker's .wasm is not the pricing module");
  const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: { status: "VALID_COMPLETE", pricing_eligible: true, rates: { overall: { value: 0.7 } } } } };
  const res = await fetch(`${base}/`, { method: "POST", body: JSON.stringify(point), signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, output());
  assert.deepStrictEqual(await res.json(), pricePoint(point));
});
