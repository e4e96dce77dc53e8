// Helpers of the visualizer's tests and scripts (test-js/www.test.mjs, scripts/www-bench,
// scripts/www-screenshot): build www/, serve www/dist, generate runs with `kvledger synth`,
// open files in the page, wait for the verdict.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./util.mjs";

export const DIST = path.join(ROOT, "www", "dist");
export const ARTIFACTS = path.join(ROOT, "test-artifacts", "www");
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target");

/** Builds www/dist (type check + vite build); pkg/ must exist (scripts/build-pkg). */
export function buildApp() {
  execFileSync(path.join(ROOT, "scripts", "www"), ["build"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
}

/** The native CLI (debug build), built if missing. */
export function cli() {
  const bin = path.join(TARGET, "debug", "kvledger");
  if (!existsSync(bin)) execFileSync("cargo", ["build", "--quiet", "--bin", "kvledger"], { cwd: ROOT, stdio: "inherit" });
  return bin;
}

/** `kvledger synth ARGS --out DIR` (a fresh DIR). */
export function synth(dir, args) {
  execFileSync(cli(), ["synth", ...args, "--force", "--out", dir], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  return dir;
}

/** The CLI's `account --json` envelopes of a directory, one per run. */
export function cliAccount(dir) {
  let out;
  try {
    out = execFileSync(cli(), ["account", "--json", "--quiet", dir], { cwd: ROOT, maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] }).toString();
  } catch (e) {
    out = e.stdout.toString(); // exit 1 when a run could not be read: its envelope is printed anyway
  }
  return out.trim().split("\n").map((l) => JSON.parse(l));
}

export function bytesOf(dir) {
  return readdirSync(dir, { recursive: true }).reduce((n, f) => {
    const s = statSync(path.join(dir, f));
    return s.isFile() ? n + s.size : n;
  }, 0);
}

export function ensureArtifacts() {
  mkdirSync(ARTIFACTS, { recursive: true });
  return ARTIFACTS;
}

/** Opens a folder through the folder picker (webkitdirectory): paths keep the folder's name. */
export async function openFolder(page, dir) {
  await page.setInputFiles("#pick-folder", dir);
}

/** Drops loose files on the page as a user's drag and drop does (a DataTransfer of Files). */
export async function dropFiles(page, files) {
  await page.evaluate(async (list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([f.text], f.name));
    for (const type of ["dragenter", "dragover", "drop"]) {
      document.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, files);
}

/** Waits until the worker says it is done (or cancelled, or failed). */
export async function waitDone(page, ms = 120_000) {
  await page.waitForFunction(() => /^(Done|Cancelled|Could not|No run)/.test(document.getElementById("status")?.textContent ?? ""), null, { timeout: ms });
  return page.textContent("#status");
}
