// The run visualizer (www/) in headless Chromium (playwright-core, Debian's chromium): built in
// `before`, served from www/dist. The default example renders and agrees with the CLI, charts
// draw, faulty and broken runs show their reasons and errors, a sweep keeps going past a broken
// run, the worker keeps the page responsive on a large run and can be cancelled, every control
// is keyboard reachable, axe-core finds no serious violation. Screenshots of each view go to
// test-artifacts/www/. Large-run size: KVLEDGER_WWW_LARGE (default 20MB; scripts/www-bench
// measures 10 MB and 100 MB).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "./lib/util.mjs";
import { serveStatic } from "./lib/serve.mjs";
import { launchChromium } from "./lib/chromium.mjs";
import { ARTIFACTS, DIST, buildApp, cliAccount, dropFiles, ensureArtifacts, openFolder, synth, waitDone } from "./lib/www.mjs";

const LARGE = process.env.KVLEDGER_WWW_LARGE ?? "20MB";
const EXAMPLE = path.join(ROOT, "examples", "synth", "vllm-agg-clean");

let server;
let browser;
let base;
let tmp;

before(async () => {
  buildApp();
  ensureArtifacts();
  tmp = mkdtempSync(path.join(os.tmpdir(), "kvledger-www-"));
  server = await serveStatic(DIST);
  base = server.base;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function openPage(hash = "", scheme = "light") {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: scheme, acceptDownloads: true });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(`${base}/index.html${hash}`);
  return { page, errors };
}

async function view(page, name) {
  await page.click(`#tabs a[data-view="${name}"]`);
  await page.waitForSelector(`#${name}-h`);
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The files of a run folder as loose files (names only), for a drop. */
function looseFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((f) => !f.endsWith("truth.json") && /\.(json|jsonl|csv)$/.test(f))
    .map((f) => ({ name: path.basename(f), text: readFileSync(path.join(dir, f), "utf8") }));
}

test("the default example renders, and its verdict is the CLI's --json", async () => {
  const { page, errors } = await openPage();
  assert.match(await waitDone(page), /^Done: 1 of 1 run accounted/);
  const [env] = cliAccount(EXAMPLE);
  const v = env.result.cache_validity;
  assert.equal(await page.textContent("#verdict-status"), v.status);
  assert.equal(await page.textContent("#verdict-eligible"), v.pricing_eligible ? "pricing eligible" : "not pricing eligible");
  const shown = await page.$$eval("li.reason", (lis) => lis.map((li) => ({ code: li.dataset.code, detail: li.querySelector(".detail").textContent })));
  const expected = v.reasons.map((r) => ({ code: r.code, detail: r.detail }));
  assert.deepEqual(shown.slice().sort((a, b) => a.code.localeCompare(b.code)), expected.slice().sort((a, b) => a.code.localeCompare(b.code)));
  // Every reason links to its row in the docs page shipped beside the app, which has that anchor.
  const hrefs = await page.$$eval("li.reason a", (as) => as.map((a) => a.getAttribute("href")));
  for (const href of hrefs) {
    const [file, anchor] = href.split("#");
    assert.ok(readFileSync(path.join(DIST, file), "utf8").includes(`id="${anchor}"`), `${href} has no anchor`);
  }
  // The export is the CLI's envelope, result for result.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
  const lines = readFileSync(await download.path(), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 1);
  assert.deepEqual(lines[0].result, env.result);
  assert.equal(lines[0].command, "account");
  await shot(page, "verdict");
  assert.deepEqual(errors, []);
  await page.close();
});

test("charts are drawn: non-blank canvases; each view renders and is screenshotted, light and dark", async () => {
  for (const scheme of ["light", "dark"]) {
    const { page, errors } = await openPage("#example=vllm-agg-clean&view=counters", scheme);
    await waitDone(page);
    await page.waitForSelector("figure.chart canvas");
    await page.waitForTimeout(200);
    const canvases = await page.$$eval("figure.chart canvas", (cs) =>
      cs.map((c) => {
        const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        let painted = 0;
        const colors = new Set();
        for (let i = 0; i < d.length; i += 4) {
          if (d[i + 3] > 0) {
            painted++;
            colors.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
          }
        }
        return { painted, colors: colors.size, size: c.width * c.height };
      }),
    );
    assert.ok(canvases.length >= 2, `expected a counters chart and a hit-rate chart, got ${canvases.length}`);
    for (const c of canvases) {
      assert.ok(c.painted > c.size * 0.02, `a canvas is nearly blank: ${JSON.stringify(c)}`);
      assert.ok(c.colors >= 3, `a canvas has ${c.colors} colours`);
    }
    await shot(page, `counters-${scheme}`);
    for (const v of ["verdict", "rates", "scope", "pricing"]) {
      await view(page, v);
      await shot(page, `${v}-${scheme}`);
    }
    assert.match(page.url(), /view=pricing/);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test("the hash holds the example, the run and the view: reloading it shows the same", async () => {
  const { page } = await openPage("#example=vllm-agg-counter-reset&view=rates");
  await waitDone(page);
  await page.waitForSelector("#rates-h");
  const url = page.url();
  assert.match(url, /example=vllm-agg-counter-reset/);
  assert.match(url, /run=vllm-agg-counter-reset/);
  const again = await browser.newPage();
  await again.goto(url);
  await waitDone(again);
  await again.waitForSelector("#rates-h");
  await again.close();
  await page.close();
});

test("pricing: strict refuses an ineligible run with its reason, theoretical and legacy price it", async () => {
  const { page } = await openPage("#example=vllm-agg-counter-reset&view=pricing");
  await waitDone(page);
  await page.waitForSelector("#pricing-results [data-policy=strict]");
  assert.equal(await page.textContent("[data-policy=strict] .status"), "NOT_PRICED");
  assert.ok(await page.$("[data-policy=strict] li[data-code=cache-ineligible]"), "strict names cache-ineligible");
  assert.match(await page.textContent("[data-policy=strict] li[data-code=cache-ineligible]"), /INVALID_COUNTER/);
  assert.equal(await page.textContent("[data-policy=theoretical] .status"), "PRICED");
  // A preset changes the card and the revenue.
  const before = await page.textContent("[data-policy=theoretical]");
  await page.selectOption("#card", "kimi-k3-moonshot");
  assert.notEqual(await page.textContent("[data-policy=theoretical]"), before);
  await page.close();
});

test("dropping a generated faulty run shows its reason", async () => {
  const dir = synth(path.join(tmp, "faulty"), ["--engine", "sglang", "--fault", "counter_reset", "--seed", "5", "--duration", "20"]);
  const { page, errors } = await openPage();
  await waitDone(page);
  await dropFiles(page, looseFiles(dir));
  await waitDone(page);
  const [env] = cliAccount(dir);
  assert.equal(await page.textContent("#verdict-status"), env.result.cache_validity.status);
  assert.ok(await page.$("#failing li[data-code=counter_reset]"), "counter_reset is listed");
  await view(page, "counters");
  await page.waitForSelector("figure.chart canvas");
  await shot(page, "faulty-counters");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a sweep with one broken run shows the others, that run's error, and the frontier", async () => {
  const sweep = path.join(tmp, "sweep");
  // conc1 has a counter reset: ineligible, so the frontier segments next to it are refused.
  for (const c of [1, 4, 8]) {
    const fault = c === 1 ? ["--fault", "counter_reset"] : [];
    synth(path.join(sweep, `conc${c}`), ["--engine", "vllm", "--concurrency", String(c), "--seed", String(c), "--duration", "15", ...fault]);
  }
  synth(path.join(sweep, "conc16"), ["--engine", "vllm", "--concurrency", "16", "--seed", "16", "--duration", "15"]);
  const broken = path.join(sweep, "conc16", "aiperf_artifacts", "server_metrics_export.json");
  writeFileSync(broken, readFileSync(broken, "utf8").replace(/"metrics"\s*:\s*\{/, '"metrics": {,'));
  const cli = cliAccount(sweep);
  const cliError = cli.find((e) => e.error);
  assert.ok(cliError, "the CLI refuses the broken run too");
  const { page, errors } = await openPage();
  await waitDone(page);
  await openFolder(page, sweep);
  const status = await waitDone(page);
  assert.match(status, /^Done: 3 of 4 runs accounted, 1 could not be read/);
  await page.waitForSelector("#sweep-h");
  const rows = await page.$$eval('.table-wrap[aria-label="Runs"] tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(rows.length, 4);
  const bad = rows.find((r) => r[0].includes("conc16"));
  assert.equal(bad[1], cliError.error.code);
  assert.match(bad[6], new RegExp(`line ${cliError.error.line}, column ${cliError.error.column}`));
  for (const r of rows.filter((x) => x !== bad)) {
    const env = cli.find((e) => e.run && r[0].endsWith(e.run));
    assert.ok(env?.result, `the CLI accounted ${r[0]}`);
    assert.equal(r[1], env.result.cache_validity.status);
  }
  // Per-segment eligibility: a segment next to the ineligible conc1 is refused and names it.
  const segments = await page.$$eval('.table-wrap[aria-label="Frontier segments"] tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const refused = segments.filter((r) => r[2] === "refused");
  assert.ok(refused.length >= 1, `segments: ${JSON.stringify(segments)}`);
  for (const r of refused) assert.match(r[3], /cache-ineligible \(knot [^)]*conc1\/[^)]*\)/);
  assert.equal(await page.$$eval('svg.frontier line[data-priced="false"]', (l) => l.length), refused.length);
  await shot(page, "sweep");
  await page.addScriptTag({ content: readFileSync(path.join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8") });
  const violations = await page.evaluate(async () => (await window.axe.run(document)).violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id));
  assert.deepEqual(violations, [], "axe on the sweep view");
  // The broken run's own page shows its error with the position.
  await page.selectOption("#run", { label: `${bad[0]} (error)` });
  await page.click('#tabs a[data-view="verdict"]');
  assert.match(await page.textContent(".run-error .where"), new RegExp(`line ${cliError.error.line}`));
  assert.deepEqual(errors, []);
  await page.close();
});

test("a bad file shows a readable error, and the page still works", async () => {
  const text = '{"schema_version": "1.1",\n  "metrics": {,';
  const dir = path.join(tmp, "bad");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "server_metrics_export.json"), text);
  const [{ error }] = cliAccount(dir);
  assert.equal(error.code, "JSON_SYNTAX");
  const { page, errors } = await openPage();
  await waitDone(page);
  await dropFiles(page, [{ name: "server_metrics_export.json", text }]);
  await waitDone(page);
  await page.waitForSelector(".run-error");
  assert.equal(await page.textContent(".run-error code.code"), error.code);
  assert.equal(await page.textContent(".run-error .where"), `Where: file server_metrics_export.json, line ${error.line}, column ${error.column}, at ${error.json_path}`);
  await shot(page, "bad-file");
  await page.selectOption("#example", "vllm-1p1d-cpu-offload");
  await waitDone(page);
  await page.waitForSelector("#verdict-status");
  assert.deepEqual(errors, []);
  await page.close();
});

test(`the worker keeps the page responsive on a ${LARGE} run; progress advances; cancel works`, async (t) => {
  const dir = synth(path.join(tmp, "large"), ["--engine", "vllm", "--target-bytes", LARGE, "--seed", "9"]);
  const { page, errors } = await openPage();
  await waitDone(page);
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((l) => window.longTasks.push(...l.getEntries().map((e) => e.duration))).observe({ type: "longtask" });
    window.progressSeen = [];
    const p = document.getElementById("progress");
    new MutationObserver(() => window.progressSeen.push(p.value)).observe(p, { attributes: true, attributeFilter: ["aria-valuetext"] });
  });
  await openFolder(page, dir);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Reading"));
  const startedTasks = await page.evaluate(() => window.longTasks.length);
  // While the worker reads, the main thread answers at once.
  const lags = [];
  for (let i = 0; i < 10; i++) {
    lags.push(await page.evaluate(() => new Promise((r) => { const t = performance.now(); setTimeout(() => r(performance.now() - t), 0); })));
  }
  const status = await waitDone(page, 300_000);
  assert.match(status, /^Done: 1 of 1 run accounted/);
  const { tasks, seen } = await page.evaluate(() => ({ tasks: window.longTasks, seen: window.progressSeen }));
  const during = tasks.slice(startedTasks);
  t.diagnostic(`${LARGE}: setTimeout(0) lag while reading ${lags.map(Math.round).join(", ")} ms; long tasks after reading began: ${during.length ? `${during.map(Math.round).join(", ")} ms` : "none"}; progress updates ${seen.length}`);
  assert.ok(Math.max(...lags) < 100, `main thread lag while reading: ${lags}`);
  assert.ok(seen.length >= 3, `progress moved ${seen.length} times`);
  assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]), "progress never goes back");
  // Rendering the result may take one task; reading must not block the page.
  assert.ok(during.filter((d) => d > 200).length <= 1, `long tasks while reading: ${during.map(Math.round)}`);
  const [env] = cliAccount(dir);
  assert.equal(await page.textContent("#verdict-status"), env.result.cache_validity.status);

  // Cancel: open it again and cancel while it reads; the page goes on working. The click comes
  // the moment the button is enabled (a mutation observer's microtask, before any message of the
  // worker can arrive): a click through page.click waited for the button to be stable, and by
  // then the worker had accounted the 20 MB run (flaky once it got faster).
  await page.evaluate(() => {
    const b = document.getElementById("cancel");
    new MutationObserver((_, seen) => {
      if (!b.disabled) {
        seen.disconnect();
        b.click();
      }
    }).observe(b, { attributes: true, attributeFilter: ["disabled"] });
  });
  await openFolder(page, dir);
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("Cancelled"));
  assert.match(await page.textContent("#status"), /^Cancelled: 0 of (0|1) runs accounted/);
  assert.equal(await page.$("#verdict-status"), null, "no verdict of the cancelled run");
  await page.selectOption("#example", "vllm-agg-clean");
  assert.match(await waitDone(page), /^Done: 1 of 1/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("keyboard navigation reaches every control", async () => {
  const { page } = await openPage("#example=vllm-agg-clean&view=pricing");
  await waitDone(page);
  await page.waitForSelector("#pricing-results");
  const controls = await page.$$eval("a[href], button:not([disabled]), select:not([disabled]), input:not([disabled])", (els) =>
    els.map((e, i) => {
      e.dataset.kbd = String(i);
      return e.id || e.getAttribute("name") || e.textContent.trim().slice(0, 30);
    }),
  );
  const reached = new Set();
  await page.focus("body");
  for (let i = 0; i < controls.length * 2 + 10; i++) {
    await page.keyboard.press("Tab");
    const k = await page.evaluate(() => document.activeElement?.dataset?.kbd);
    if (k !== undefined) reached.add(Number(k));
  }
  const missed = controls.filter((_, i) => !reached.has(i));
  assert.deepEqual(missed, [], `not reachable by Tab: ${missed}`);
  // Views are links: Enter on one switches the view.
  await page.focus('#tabs a[data-view="rates"]');
  await page.keyboard.press("Enter");
  await page.waitForSelector("#rates-h");
  await page.close();
});

test("axe-core: no serious or critical violation in any view, light and dark", async () => {
  const axe = readFileSync(path.join(ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
  const report = [];
  for (const scheme of ["light", "dark"]) {
    const { page } = await openPage("#example=vllm-1p1d-cpu-offload", scheme);
    await waitDone(page);
    await page.addScriptTag({ content: axe });
    for (const v of ["verdict", "rates", "counters", "scope", "pricing"]) {
      await view(page, v);
      await page.waitForTimeout(100);
      const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations.map((x) => ({ id: x.id, impact: x.impact, nodes: x.nodes.length, target: x.nodes[0]?.target })));
      report.push({ scheme, view: v, violations });
    }
    await page.close();
  }
  writeFileSync(path.join(ARTIFACTS, "axe.json"), JSON.stringify(report, null, 2));
  const serious = report.flatMap((r) => r.violations.filter((x) => x.impact === "serious" || x.impact === "critical").map((x) => ({ ...x, scheme: r.scheme, view: r.view })));
  assert.deepEqual(serious, []);
});

test("readable at 200 % zoom: no horizontal scrolling of the page", async () => {
  // 200 % zoom of a 1280 px window is a 640 CSS px viewport.
  const page = await browser.newPage({ viewport: { width: 640, height: 800 } });
  await page.goto(`${base}/index.html#example=vllm-agg-clean&view=verdict`);
  await waitDone(page);
  for (const v of ["verdict", "rates", "scope", "pricing"]) {
    await view(page, v);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `${v} scrolls sideways by ${overflow} px at 640 px`);
  }
  await shot(page, "zoom200-pricing");
  await page.close();
});

test("a browser that cannot compile the module (no WebAssembly SIMD) is told so", async () => {
  const page = await browser.newPage();
  // An engine without SIMD rejects the module's compilation; every way the glue may compile it
  // is made to reject the same way.
  await page.addInitScript(() => {
    const refuse = () => Promise.reject(new WebAssembly.CompileError("WebAssembly.instantiate(): invalid simd opcode"));
    for (const name of ["instantiate", "instantiateStreaming", "compile", "compileStreaming"]) WebAssembly[name] = refuse;
  });
  await page.goto(`${base}/index.html`);
  await page.waitForFunction(() => document.getElementById("status")?.textContent?.startsWith("kvledger could not start"));
  const status = await page.textContent("#status");
  assert.match(status, /invalid simd opcode\. Fix: use an engine with the WebAssembly features the module uses \(README, Install: the full module needs SIMD, in Chrome and Edge 91, Firefox 89, Safari 16\.4/);
  await page.close();
});

test("the app is static and offline: only its own folder is fetched", async () => {
  const page = await browser.newPage();
  const foreign = [];
  page.on("request", (r) => !r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:") && foreign.push(r.url()));
  await page.goto(`${base}/index.html`);
  await waitDone(page);
  assert.deepEqual(foreign, []);
  const html = readFileSync(path.join(DIST, "index.html"), "utf8");
  assert.doesNotMatch(html, /(src|href)="\//, "every URL is relative (base './')");
  await page.close();
});

