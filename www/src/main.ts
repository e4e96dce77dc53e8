// The page: opens runs (drop, pickers, bundled examples), hands their files to the accounting
// worker, shows progress with a cancel button, and renders the chosen run's views. The URL hash
// holds the example, the run and the view.
import "./style.css";
import init, { contractVersion, packageVersion } from "kvledger";
import { h } from "./dom";
import { droppedFiles, exampleFiles, exampleList, pickedFiles, type ExampleInfo } from "./open";
import type { DroppedFile, FromWorker, ToWorker } from "./protocol";
import { readHash, VIEW_NAMES, VIEWS, writeHash, type AppState, type View } from "./state";
import { countersView } from "./views/counters";
import { currentPricing, pricingView } from "./views/pricing";
import { ratesView } from "./views/rates";
import { scopeView } from "./views/scope";
import { sweepView } from "./views/sweep";
import { errorBlock, verdictView } from "./views/verdict";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const statusEl = $("status");
const progressEl = $<HTMLProgressElement>("progress");
const cancelBtn = $<HTMLButtonElement>("cancel");
const exportBtn = $<HTMLButtonElement>("export");
const runSelect = $<HTMLSelectElement>("run");
const exampleSelect = $<HTMLSelectElement>("example");
const main = $("main");
const tabs = $("tabs");

const state: AppState = { source: "dropped", order: [], runs: new Map(), errors: new Map(), view: "verdict" };

/** Timings of the last open, for scripts/www-bench: ms from the user's action to the first verdict shown. */
const timing = { started: 0, verdict_ms: -1, worker_ms: -1, bytes: 0 };
(window as unknown as { kvledgerTiming: typeof timing }).kvledgerTiming = timing;

function setStatus(text: string) {
  statusEl.textContent = text;
}

// ---- the worker -------------------------------------------------------------------------

let worker: Worker | undefined;
let busy = false;

function newWorker(): Worker {
  const w = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  w.onmessage = (ev: MessageEvent<FromWorker>) => onWorker(ev.data);
  w.onerror = (ev) => {
    busy = false;
    cancelBtn.disabled = true;
    setStatus(`The accounting worker failed: ${ev.message || "unknown error"}`);
  };
  return w;
}

function onWorker(m: FromWorker) {
  switch (m.type) {
    case "ready":
      return;
    case "plan":
      timing.bytes = m.total_bytes;
      state.order = m.runs;
      setStatus(m.runs.length === 0 ? "No run found among the files: nothing kvledger reads (see the files below)." : `Reading ${m.runs.length === 1 ? "1 run" : `${m.runs.length} runs`}, ${(m.total_bytes / 1e6).toFixed(1)} MB…`);
      if (m.runs.length === 0) {
        main.replaceChildren(h("div", { class: "card", role: "alert" }, h("p", { class: "err" }, "No run: no server-metrics export, scrape, capture, per-request export or run summary among the files."),
          m.not_in_run.length ? h("ul", null, m.not_in_run.map((f) => h("li", null, h("code", null, f.name), `: ${f.reason}`))) : null));
      }
      progressEl.max = Math.max(1, m.total_bytes);
      return;
    case "progress":
      progressEl.value = m.bytes_read;
      progressEl.setAttribute("aria-valuetext", `${(m.bytes_read / 1e6).toFixed(1)} of ${(m.total_bytes / 1e6).toFixed(1)} MB read`);
      if (m.file) setStatus(`Reading ${m.file}: ${(m.bytes_read / 1e6).toFixed(1)} of ${(m.total_bytes / 1e6).toFixed(1)} MB`);
      return;
    case "run":
      state.runs.set(m.run, { label: m.run, accounting: m.accounting, detail: m.detail, figures: m.figures, bytes: m.bytes, ms: m.ms });
      // Show the first run that arrives, unless the hash asked for another run of this set.
      if (state.run === undefined || !state.order.includes(state.run)) state.run = m.run;
      if (state.run === m.run) render();
      if (timing.verdict_ms < 0 && document.getElementById("verdict-status")) timing.verdict_ms = performance.now() - timing.started;
      return;
    case "run-error":
      state.errors.set(m.run, m.error);
      if (state.run === undefined || !state.order.includes(state.run)) state.run = m.run;
      render();
      return;
    case "done":
      busy = false;
      timing.worker_ms = m.ms;
      cancelBtn.disabled = true;
      progressEl.value = progressEl.max;
      setStatus(`Done: ${state.runs.size} of ${state.order.length} run${state.order.length === 1 ? "" : "s"} accounted${state.errors.size ? `, ${state.errors.size} could not be read` : ""} in ${(m.ms / 1000).toFixed(2)} s.`);
      if (state.order.length > 1 && state.source === "dropped") state.view = "sweep";
      render();
      return;
    case "fatal":
      busy = false;
      cancelBtn.disabled = true;
      setStatus(`Could not account: ${m.error.code}: ${m.error.message}`);
      return;
  }
}

function open(files: DroppedFile[], source: string) {
  if (busy) cancel(false);
  timing.started = performance.now();
  timing.verdict_ms = -1;
  timing.worker_ms = -1;
  Object.assign(state, { source, order: [], runs: new Map(), errors: new Map() });
  const wanted = readHash();
  state.run = source === wanted.example || source === "dropped" ? wanted.run : undefined;
  main.replaceChildren();
  progressEl.value = 0;
  busy = true;
  cancelBtn.disabled = false;
  exportBtn.disabled = true;
  setStatus(`Opening ${files.length} file${files.length === 1 ? "" : "s"}…`);
  worker ??= newWorker();
  worker.postMessage({ type: "open", files } satisfies ToWorker);
}

/** Stops the accounting at once: the worker is terminated (its wasm instance with it) and a fresh one made. */
function cancel(say = true) {
  worker?.terminate();
  worker = newWorker();
  busy = false;
  cancelBtn.disabled = true;
  if (say) {
    setStatus(`Cancelled: ${state.runs.size} of ${state.order.length} runs accounted before the cancel.`);
    render();
  }
}

// ---- rendering --------------------------------------------------------------------------

function viewsFor(): View[] {
  return VIEWS.filter((v) => v !== "sweep" || state.order.length > 1);
}

function renderTabs() {
  tabs.replaceChildren(
    ...viewsFor().map((v) => {
      const a = h("a", { href: `#view=${v}`, "aria-current": v === state.view ? "page" : undefined, "data-view": v }, VIEW_NAMES[v]);
      a.addEventListener("click", (ev) => {
        ev.preventDefault();
        choose({ view: v });
        main.focus();
      });
      return h("li", null, a);
    }),
  );
  runSelect.replaceChildren(...state.order.map((r) => h("option", { value: r, selected: r === state.run }, state.errors.has(r) ? `${r} (error)` : r)));
  runSelect.disabled = state.order.length < 2;
}

function render() {
  if (!viewsFor().includes(state.view)) state.view = "verdict";
  renderTabs();
  writeHash(state);
  exportBtn.disabled = state.runs.size === 0;
  const run = state.run === undefined ? undefined : state.runs.get(state.run);
  const err = state.run === undefined ? undefined : state.errors.get(state.run);
  let body: HTMLElement | HTMLElement[];
  if (state.view === "sweep") body = sweepView(state, currentPricing(), (r) => choose({ run: r, view: "verdict" }));
  else if (err && state.run) body = errorBlock(state.run, err);
  else if (!run) body = h("p", null, busy ? "Accounting…" : "Open a run: drop a folder or files anywhere, or use the buttons above.");
  else if (state.view === "verdict") body = verdictView(run);
  else if (state.view === "rates") body = ratesView(run.accounting);
  else if (state.view === "counters") body = countersView(run.detail.timeline);
  else if (state.view === "scope") body = scopeView(run.accounting);
  else body = pricingView(run);
  const errs = state.view === "sweep" || err ? [] : [...state.errors].map(([r, e]) => errorBlock(r, e));
  main.replaceChildren(h("p", { class: "note" }, state.run && state.view !== "sweep" ? `Run ${state.run}` : ""), ...errs, ...(Array.isArray(body) ? body : [body]));
}

function choose(c: { run?: string; view?: View }) {
  if (c.run !== undefined) state.run = c.run;
  if (c.view !== undefined) state.view = c.view;
  render();
}

// ---- export: the CLI's `account --json` lines --------------------------------------------

function exportJson() {
  const lines = state.order.map((run) => {
    const r = state.runs.get(run);
    if (r) return JSON.stringify({ kvledger: "1", command: "account", run, result: r.accounting });
    return JSON.stringify({ kvledger: "1", command: "account", run, error: state.errors.get(run) });
  });
  const blob = new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" });
  const a = h("a", { href: URL.createObjectURL(blob), download: `kvledger-${state.source}.jsonl` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// ---- wiring -----------------------------------------------------------------------------

let examples: ExampleInfo[] = [];

async function openExample(id: string) {
  const ex = examples.find((e) => e.id === id);
  if (!ex) return setStatus(`No bundled example named ${id}.`);
  exampleSelect.value = id;
  setStatus(`Fetching the example ${ex.label}…`);
  try {
    open(await exampleFiles(ex), id);
  } catch (e) {
    setStatus(`The example could not be fetched: ${(e as Error).message}`);
  }
}

function wire() {
  cancelBtn.addEventListener("click", () => cancel());
  exportBtn.addEventListener("click", exportJson);
  runSelect.addEventListener("change", () => choose({ run: runSelect.value }));
  exampleSelect.addEventListener("change", () => void openExample(exampleSelect.value));
  for (const id of ["pick-folder", "pick-files"]) {
    const input = $<HTMLInputElement>(id);
    input.addEventListener("change", () => {
      if (input.files?.length) {
        timing.started = performance.now();
        open(pickedFiles(input.files), "dropped");
      }
      input.value = "";
    });
  }
  let depth = 0;
  document.addEventListener("dragenter", (e) => {
    e.preventDefault();
    depth++;
    document.body.classList.add("dragging");
  });
  document.addEventListener("dragleave", () => {
    if (--depth <= 0) document.body.classList.remove("dragging");
  });
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", async (e) => {
    e.preventDefault();
    depth = 0;
    document.body.classList.remove("dragging");
    if (!e.dataTransfer) return;
    const t0 = performance.now();
    const files = await droppedFiles(e.dataTransfer);
    open(files, "dropped");
    timing.started = t0;
  });
  window.addEventListener("hashchange", () => {
    const w = readHash();
    if (w.example && w.example !== state.source && examples.some((e) => e.id === w.example)) return void openExample(w.example);
    choose({ run: w.run ?? state.run, view: w.view ?? state.view });
  });
}

async function start() {
  wire();
  try {
    await init();
  } catch (e) {
    return setStatus(`kvledger could not start: ${(e as Error).message}`);
  }
  $("contract").textContent = contractVersion();
  $("version").textContent = packageVersion();
  worker = newWorker();
  const wanted = readHash();
  if (wanted.view) state.view = wanted.view;
  try {
    examples = await exampleList();
  } catch (e) {
    return setStatus(`Ready. (The bundled examples are missing: ${(e as Error).message})`);
  }
  exampleSelect.replaceChildren(...examples.map((e) => h("option", { value: e.id }, e.label)));
  const first = wanted.example && examples.some((e) => e.id === wanted.example) ? wanted.example : examples[0]?.id;
  if (first) await openExample(first);
}

void start();
