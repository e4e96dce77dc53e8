// The accounting worker (a module worker): groups a dropped tree into runs by name
// (groupRuns), then streams each run's files through accountStream, chunk by chunk from
// Blob.stream(), posting progress as bytes are read. A run's error is that run's; the others go
// on. The page terminates this worker to cancel.
import init, { accountStream, groupRuns, isKvledgerError, warmUp } from "kvledger";
import type { DroppedFile, ErrorInfo, FromWorker, RunFigures, ToWorker } from "./protocol";

const post = (m: FromWorker) => postMessage(m);

/** Progress messages at most this often (ms): the page repaints, it need not hear every chunk. */
const PROGRESS_EVERY_MS = 50;

/**
 * The heap a run's stream may use: a browser tab can give a worker's WebAssembly instance far more
 * than the package's default (48 MiB, sized for edge workers), and a large run's evidence needs it.
 */
const MEMORY_BUDGET = 2 ** 31;

/** A run summary larger than this is not parsed for the frontier's figures (it is still accounted). */
const FIGURES_MAX_BYTES = 32 << 20;

function errorInfo(e: unknown): ErrorInfo {
  if (isKvledgerError(e)) {
    const { name: _name, ...rest } = e.toJSON();
    return rest;
  }
  return { code: "WORKER", message: e instanceof Error ? e.message : String(e) };
}

const avg = (v: unknown): number | undefined => {
  const a = (v as { avg?: unknown } | null)?.avg;
  return typeof a === "number" && Number.isFinite(a) ? a : undefined;
};
/** A summary metric: a bare number, or AIPerf's `{unit, avg}` record. */
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : avg(v));

/**
 * Throughput and interactivity from the run summary. Where AIPerf did not write the metric
 * itself (older or generated summaries), it is derived and said so: total tokens/s from the
 * output tokens/s and the token totals, interactivity as 1000 / the mean inter-token latency (ms).
 */
async function figures(files: DroppedFile[]): Promise<RunFigures> {
  const summary = files.find((f) => /(^|\/)[^/]*_aiperf\.json$/.test(f.path));
  if (!summary || summary.blob.size > FIGURES_MAX_BYTES) return { derived: [] };
  let s: Record<string, unknown>;
  try {
    s = JSON.parse(await summary.blob.text()) as Record<string, unknown>;
  } catch {
    return { derived: [] };
  }
  const f: RunFigures = {
    output_throughput: avg(s.output_token_throughput),
    total_throughput: avg(s.total_token_throughput),
    interactivity: avg(s.output_token_throughput_per_user),
    total_isl: num(s.total_isl),
    total_osl: num(s.total_osl),
    derived: [],
  };
  if (f.total_throughput === undefined && f.output_throughput !== undefined && f.total_isl !== undefined && f.total_osl) {
    f.total_throughput = (f.output_throughput * (f.total_isl + f.total_osl)) / f.total_osl;
    f.derived.push("total tokens/s = output tokens/s × (input + output tokens) / output tokens");
  }
  const itl = s.inter_token_latency as { unit?: string } | undefined;
  const itlMs = avg(itl);
  if (f.interactivity === undefined && itlMs !== undefined && itlMs > 0 && itl?.unit === "ms") {
    f.interactivity = 1000 / itlMs;
    f.derived.push("interactivity = 1000 / mean inter-token latency (ms)");
  }
  return f;
}

/** A run's files by their path relative to the run's root (how accountStream recognises them). */
function relativeTo(root: string, path: string): string {
  return root !== "" && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

async function open(files: DroppedFile[]) {
  const started = performance.now();
  const byPath = new Map(files.map((f) => [f.path.replace(/^\/+/, ""), f]));
  const discovery = groupRuns([...byPath.keys()]);
  const runs = discovery.runs.map((g) => ({
    root: g.root,
    files: g.files.flatMap((p) => (byPath.has(p) ? [byPath.get(p)!] : [])),
    // Files of the run's folder that discovery already set aside (e.g. a second run summary above it).
    ignored: g.ignored,
  }));
  const total = runs.reduce((n, r) => n + r.files.reduce((m, f) => m + f.blob.size, 0), 0);
  post({ type: "plan", runs: runs.map((r) => r.root || "."), total_bytes: total, not_in_run: discovery.ignored });
  let before = 0;
  let lastPost = 0;
  for (const run of runs) {
    const label = run.root || ".";
    const t0 = performance.now();
    const bytes = run.files.reduce((m, f) => m + f.blob.size, 0);
    let detail: import("kvledger").RunDetail | undefined;
    try {
      const accounting = await accountStream(
        run.files.map((f) => ({ name: relativeTo(run.root, f.path), stream: f.blob.stream() })),
        { memory_budget: MEMORY_BUDGET },
        {
          onProgress: ({ bytes_read, file }) => {
            const now = performance.now();
            if (now - lastPost < PROGRESS_EVERY_MS) return;
            lastPost = now;
            post({ type: "progress", bytes_read: before + bytes_read, total_bytes: total, file });
          },
          onDetail: (d) => (detail = d),
        },
      );
      const ms = performance.now() - t0;
      const d = detail!;
      d.ignored = [...d.ignored, ...run.ignored].sort((a, b) => a.name.localeCompare(b.name));
      post({ type: "run", run: label, accounting, detail: d, figures: await figures(run.files), bytes, ms });
    } catch (e) {
      post({ type: "run-error", run: label, error: errorInfo(e) });
    }
    before += bytes;
    post({ type: "progress", bytes_read: before, total_bytes: total, file: "" });
  }
  post({ type: "done", ms: performance.now() - started });
}

/**
 * While the worker waits for files: the module's hot code optimised before the next run, which
 * then takes about a third of the time of a cold one (BENCHMARKS.md, `warmUp`). Stopped when
 * files arrive (the generated run in progress ends first) and started again once they are
 * done, until one warm-up has run whole. A failure only means slower runs: it is not retried,
 * and a run reports any real error itself.
 */
let warmed = false;
let stopWarming = new AbortController();
let warming: Promise<unknown> = Promise.resolve();
function warm() {
  if (warmed) return;
  stopWarming = new AbortController();
  warming = warmUp({ signal: stopWarming.signal }).then(
    (w) => (warmed = !w.aborted),
    () => (warmed = true),
  );
}

const ready = init().then(
  () => {
    post({ type: "ready" });
    warm();
  },
  (e) => post({ type: "fatal", error: errorInfo(e) }),
);

onmessage = async (ev: MessageEvent<ToWorker>) => {
  await ready;
  stopWarming.abort();
  await warming;
  if (ev.data.type === "open") {
    try {
      await open(ev.data.files);
    } catch (e) {
      post({ type: "fatal", error: errorInfo(e) });
    }
  }
  warm();
};
