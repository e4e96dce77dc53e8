// The edge worker (examples/edge-worker) built and run for real: `npm run build` in the example
// (wrangler deploy --dry-run into dist/), then the workerd binary serving it with the example's
// config.capnp on a free loopback port, its memory sampled from /proc/<pid>/status.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ROOT } from "./util.mjs";
import { freePort, waitForHttp, stop } from "./proc.mjs";

export const EXAMPLE = path.join(ROOT, "examples", "edge-worker");
const BIN = path.join(ROOT, "node_modules", ".bin");

/**
 * Installs the example's one dependency (kvledger, `file:../..`: a link to this checkout, so
 * offline) unless it is linked already, and bundles the worker with its `npm run build`
 * (wrangler deploy --dry-run, then dist/config.capnp) into a fresh temporary folder, so test
 * files running at once never share one. Returns that folder.
 */
export function buildExample() {
  if (!existsSync(path.join(ROOT, "pkg", "web", "kvledger_bg.wasm"))) {
    throw new Error("pkg/ is not built: run scripts/build-pkg first");
  }
  const dist = mkdtempSync(path.join(tmpdir(), "kvledger-edge-worker-"));
  const env = {
    ...process.env,
    CI: "true",
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_LOG_PATH: path.join(dist, "wrangler-logs"),
    EDGE_WORKER_DIST: dist,
    PATH: `${BIN}${path.delimiter}${process.env.PATH}`,
  };
  const run = (args) => execFileSync("npm", args, { cwd: EXAMPLE, env, stdio: "pipe", timeout: 120_000 });
  if (!existsSync(path.join(EXAMPLE, "node_modules", "kvledger", "package.json"))) {
    run(["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"]);
  }
  run(["run", "--silent", "build"]);
  return dist;
}

/** VmRSS and VmHWM (bytes) of a process, from /proc/<pid>/status. */
export function processMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

/** Samples a process's memory every `ms` until stopped: {samples, stop() -> summary}. */
export function sampleMemory(pid, ms = 50) {
  const samples = [];
  const take = () => {
    try {
      samples.push({ t: performance.now(), ...processMemory(pid) });
    } catch {
      // The process has exited: nothing more to sample.
    }
  };
  take();
  const timer = setInterval(take, ms);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      return summarise(samples);
    },
  };
}

/** Start, peak and end RSS, the kernel's high-water mark, and the growth over the second half. */
export function summarise(samples) {
  const rss = samples.map((s) => s.rss);
  const half = rss.slice(Math.floor(rss.length / 2));
  return {
    samples: samples.length,
    start: rss[0],
    peak: Math.max(...rss),
    end: rss.at(-1),
    hwm: samples.at(-1)?.hwm,
    second_half_min: Math.min(...half),
    second_half_max: Math.max(...half),
  };
}

export const mib = (n) => (n / 2 ** 20).toFixed(1);

/**
 * The workerd binary serving the example's bundle (what `npm run start` runs after its build),
 * from `dist` (buildExample's folder) on a free loopback port. `limits` (optional) overrides validateUpload's limits through the
 * worker's UPLOAD_LIMITS binding. Its V8 inspector listens on another free loopback port, for
 * sampleIsolate. Resolves to {base, pid, inspector (ws URL), output(), stop()}.
 */
export async function startWorkerd(dist, { limits } = {}) {
  let config = "config.capnp";
  if (limits) {
    config = "config-limits.capnp";
    execFileSync(process.execPath, ["scripts/workerd-config.mjs", config], {
      cwd: EXAMPLE,
      env: { ...process.env, EDGE_WORKER_DIST: dist, UPLOAD_LIMITS: JSON.stringify(limits) },
      stdio: "pipe",
    });
  }
  const port = await freePort();
  const inspectorPort = await freePort();
  let output = "";
  const args = ["serve", path.join(dist, config), "--socket-addr", `http=127.0.0.1:${port}`, `--inspector-addr=127.0.0.1:${inspectorPort}`];
  const child = spawn(path.join(BIN, "workerd"), args, {
    cwd: dist,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/`, 20_000, child, () => output);
  return { base, pid: child.pid, child, inspector: `ws://127.0.0.1:${inspectorPort}/main`, output: () => output, stop: () => stop(child) };
}

/** Removes a folder buildExample made. */
export function removeBuild(dist) {
  if (dist) rmSync(dist, { recursive: true, force: true });
}

/**
 * Samples the isolate's own memory through workerd's inspector (test-js/lib/isolate-heap.mjs
 * in a child process): {samples, ready, stop() -> Promise<summary>}. A sample's `isolate` is
 * the JS heap committed plus the ArrayBuffer backing stores (request bodies, the .wasm's
 * memory). `ready` resolves at the first sample: the child takes a few hundred ms to start and
 * connect, a large share of a short run, so a caller measuring a run awaits it first.
 */
export function sampleIsolate(inspectorUrl, ms = 50) {
  const samples = [];
  let firstSample;
  const ready = new Promise((resolve) => (firstSample = resolve));
  const child = spawn(process.execPath, ["--experimental-websocket", "--no-warnings", path.join(ROOT, "test-js", "lib", "isolate-heap.mjs"), inspectorUrl, String(ms)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let rest = "";
  child.stdout.on("data", (d) => {
    const lines = (rest + d).split("\n");
    rest = lines.pop();
    for (const line of lines) {
      const s = JSON.parse(line);
      samples.push({ ...s, isolate: s.total + s.backing });
      firstSample();
    }
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // A sampler that dies before its first sample must not leave the caller waiting.
  exited.then(() => firstSample());
  return {
    samples,
    ready,
    async stop() {
      child.stdin.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      const v = samples.map((s) => s.isolate);
      return {
        samples: samples.length,
        start: v[0],
        peak: Math.max(...v),
        end: v.at(-1),
        heap_used_peak: Math.max(...samples.map((s) => s.used)),
        backing_peak: Math.max(...samples.map((s) => s.backing)),
      };
    },
  };
}
