// Headless Debian Chromium (driven by playwright-core) loads test-js/browser/index.html,
// which imports the package's browser entry /js/web.js: a call before init is NOT_INITIALIZED,
// then it inits, inspects a real export and throws a KvledgerError for a broken one.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ROOT, TIMESLICES, fixtureText, literal } from "./lib/util.mjs";
import { serveStatic } from "./lib/serve.mjs";
import { launchChromium, loadPage } from "./lib/chromium.mjs";

let server;
let browser;
let base;

before(async () => {
  server = await serveStatic(ROOT);
  base = server.base;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test("browser: web entry inits, inspects a fixture, throws typed errors", async () => {
  const { status, page, logs } = await loadPage(browser, `${base}/test-js/browser/index.html`);
  assert.equal(status, "done", `${status}\n${logs.join("\n")}`);

  const out = JSON.parse(await page.textContent("#result"));
  const text = fixtureText(TIMESLICES);
  assert.equal(out.contractVersion, "kvledger/1");
  assert.equal(out.beforeInit.code, "NOT_INITIALIZED");
  assert.equal(out.beforeInit.instance, true);
  assert.equal(out.result.endpoints.length, 1);
  assert.equal(out.result.endpoints[0].first_fetch_ns, literal(text, "first_fetch_ns"));
  assert.equal(out.result.endpoints[0].last_fetch_ns, literal(text, "last_fetch_ns"));

  const err = JSON.parse(await page.textContent("#error"));
  assert.deepEqual(
    { isError: err.isError, instance: err.instance, isKvledgerError: err.isKvledgerError, name: err.name, code: err.code, file: err.file, line: err.line },
    { isError: true, instance: true, isKvledgerError: true, name: "KvledgerError", code: "JSON_SYNTAX", file: "server_metrics_export.json", line: 2 },
  );
  assert.equal(JSON.parse(err.json).code, "JSON_SYNTAX");
  await page.close();
});
