// Headless Debian Chromium driven by playwright-core (no browser download), and a helper
// that loads a page and waits for its `#status` to leave "loading".
import { chromium } from "playwright-core";

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

export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 30_000 });
}

/** Opens `url`, waits until `#status` is not "loading"; returns {status, page, logs}. */
export async function loadPage(browser, url, ms = 20_000) {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(m.text()));
  page.on("pageerror", (e) => logs.push(String(e)));
  page.on("requestfailed", (r) => logs.push(`request failed: ${r.url()}`));
  await page.goto(url, { timeout: ms });
  await page.waitForFunction(() => document.getElementById("status")?.textContent !== "loading", null, { timeout: ms });
  return { status: await page.textContent("#status"), page, logs };
}
