// Headless Debian Chromium (driven by playwright-core) loads test-js/browser/index.html,
// which imports the package's browser entry /js/web.js, inits and runs inspectRun.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { chromium } from "playwright-core";
import { ROOT, TIMESLICES, fixtureText, literal } from "./lib/util.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--no-sandbox",
  "--disable-dev-shm-usage",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".json": "application/json", ".csv": "text/csv" };

let server;
let browser;
let base;

before(async () => {
  server = createServer(async (req, res) => {
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = path.join(ROOT, path.normalize(rel));
    if (!file.startsWith(ROOT)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30_000 });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r()));
});

test("browser: web entry inits, inspects a fixture, throws typed errors", async () => {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(m.text()));
  page.on("pageerror", (e) => logs.push(String(e)));
  await page.goto(`${base}/test-js/browser/index.html`, { timeout: 20_000 });
  await page.waitForFunction(() => document.getElementById("status").textContent !== "loading", null, {
    timeout: 20_000,
  });
  const status = await page.textContent("#status");
  assert.equal(status, "done", `${status}\n${logs.join("\n")}`);

  const out = JSON.parse(await page.textContent("#result"));
  const text = fixtureText(TIMESLICES);
  assert.equal(out.contractVersion, "kvledger/1");
  assert.equal(out.firstFetchType, "bigint");
  assert.equal(out.result.endpoints.length, 1);
  assert.equal(out.result.endpoints[0].firstFetchNs, `${literal(text, "first_fetch_ns")}n`);
  assert.equal(out.result.endpoints[0].lastFetchNs, `${literal(text, "last_fetch_ns")}n`);

  const err = JSON.parse(await page.textContent("#error"));
  assert.deepEqual(
    { isError: err.isError, isKvledgerError: err.isKvledgerError, name: err.name, code: err.code, file: err.file },
    { isError: true, isKvledgerError: true, name: "ReadError", code: "JSON_SYNTAX", file: "server_metrics_export.json" },
  );
  assert.equal(err.position.line, 2);
  await page.close();
});
