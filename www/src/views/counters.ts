// Counters over time, per endpoint (with its role): the canonical counters' increase per
// second from the timeslices (or their cumulative values from raw scrapes), and the hit rate
// per slice. Shaded: the profiling window, the warmup phase, gaps in the slice grid; marked:
// edge slices (their mass bounds only the interval's hi) and resets. uPlot draws thousands of
// points on a canvas.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { CounterTimeline, EndpointTimeline, Span, Timeline } from "kvledger";
import { h } from "../dom";

const COLORS: Record<string, string> = {
  prompt: "#0969da",
  hit_gpu: "#1a7f37",
  hit_cpu: "#bf8700",
  hit_external: "#8250df",
  admissions: "#6e7781",
};

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

interface Marks {
  window?: Span;
  warmup?: Span;
  gaps: Span[];
  resets: number[];
}

/** Shade spans and draw reset lines under the series. */
function marksPlugin(m: Marks): uPlot.Plugin {
  const shade = (u: uPlot, s: Span, color: string) => {
    const x0 = u.valToPos(s.start_s, "x", true);
    const x1 = u.valToPos(s.end_s, "x", true);
    u.ctx.fillStyle = color;
    u.ctx.fillRect(x0, u.bbox.top, Math.max(1, x1 - x0), u.bbox.height);
  };
  return {
    hooks: {
      drawClear: [
        (u) => {
          u.ctx.save();
          if (m.warmup) shade(u, m.warmup, css("--warmup"));
          if (m.window) shade(u, m.window, css("--window"));
          for (const g of m.gaps) shade(u, g, css("--gap"));
          u.ctx.strokeStyle = css("--bad");
          u.ctx.lineWidth = 2;
          for (const t of m.resets) {
            const x = u.valToPos(t, "x", true);
            u.ctx.beginPath();
            u.ctx.moveTo(x, u.bbox.top);
            u.ctx.lineTo(x, u.bbox.top + u.bbox.height);
            u.ctx.stroke();
          }
          u.ctx.restore();
        },
      ],
    },
  };
}

function axes(yLabel: string): uPlot.Axis[] {
  const stroke = css("--fg");
  const grid = { stroke: css("--line"), width: 1 };
  return [
    { label: "seconds from the first sample", stroke, grid, ticks: grid },
    { label: yLabel, stroke, grid, ticks: grid, size: 70 },
  ];
}

function chart(title: string, opts: Omit<uPlot.Options, "width" | "height">, data: uPlot.AlignedData, summary: string): HTMLElement {
  const box = h("figure", { class: "chart", "data-chart": title },
    h("figcaption", null, title),
    h("p", { class: "visually-hidden" }, summary));
  const width = Math.max(320, Math.min(1100, (document.getElementById("main")?.clientWidth ?? 900) - 40));
  // uPlot measures its container: render once the figure is in the document.
  queueMicrotask(() => new uPlot({ ...opts, width, height: 240 }, data, box));
  return box;
}

/** When the endpoint's raw scrapes saw a counter go down (a restart), for every chart of it. */
function sampleResets(ep: EndpointTimeline): number[] {
  return [...new Set(ep.counters.flatMap((c) => c.samples.filter((s) => s.reset).map((s) => s.t_s)))];
}

/** Union of slice starts (and the last end) of every counter: the shared x of one endpoint. */
function sliceGrid(counters: CounterTimeline[]): number[] {
  const xs = new Set<number>();
  for (const c of counters) for (const s of c.slices) xs.add(s.start_s);
  // The last slice's end closes the last step.
  const end = Math.max(...counters.flatMap((c) => c.slices.map((s) => s.end_s)));
  if (Number.isFinite(end)) xs.add(end);
  return [...xs].sort((a, b) => a - b);
}

function slicesChart(ep: EndpointTimeline, tl: Timeline): HTMLElement[] {
  const counters = ep.counters.filter((c) => c.slices.length > 0);
  const xs = sliceGrid(counters);
  const at = new Map(xs.map((x, i) => [x, i]));
  const perSecond = counters.map((c) => {
    const ys: (number | null)[] = new Array(xs.length).fill(null);
    for (const s of c.slices) ys[at.get(s.start_s)!] = s.end_s > s.start_s ? s.increase / (s.end_s - s.start_s) : s.increase;
    const last = c.slices[c.slices.length - 1];
    const endAt = last === undefined ? undefined : at.get(last.end_s);
    if (endAt !== undefined && ys[endAt] === null) ys[endAt] = ys[at.get(last.start_s)!];
    return ys;
  });
  const edge: (number | null)[] = new Array(xs.length).fill(null);
  const prompt = counters.findIndex((c) => c.counter === "prompt");
  const ref = prompt >= 0 ? prompt : 0;
  counters[ref]?.slices.forEach((s) => {
    if (s.edge) edge[at.get(s.start_s)!] = perSecond[ref][at.get(s.start_s)!];
  });
  const marks: Marks = {
    window: tl.window,
    warmup: tl.warmup,
    gaps: counters.flatMap((c) => c.gaps),
    resets: sampleResets(ep),
  };
  const series: uPlot.Series[] = [
    {},
    ...counters.map((c) => ({ label: c.counter, stroke: COLORS[c.counter], width: 1.5, paths: uPlot.paths.stepped!({ align: 1 }) })),
    { label: "edge slices", stroke: css("--bad"), width: 0, points: { show: true, size: 9, fill: css("--bad") }, paths: () => null },
  ];
  const merged = Math.max(...counters.map((c) => c.merged));
  const out = [
    chart(
      `${ep.endpoint_url} (${ep.role ?? "unresolved"}): tokens per second per slice`,
      { series, axes: axes("tokens / s"), plugins: [marksPlugin(marks)], scales: { x: { time: false } } },
      [xs, ...perSecond, edge] as uPlot.AlignedData,
      `${counters.length} counters over ${xs.length} slices${merged > 1 ? ` (each point merges ${merged} slices)` : ""}; ${marks.gaps.length} gaps; ${edge.filter((e) => e !== null).length} edge slices.`,
    ),
  ];
  const hits = counters.filter((c) => c.counter.startsWith("hit_"));
  if (prompt >= 0 && hits.length) {
    const hitIdx = counters.map((c, i) => (c.counter.startsWith("hit_") ? i : -1)).filter((i) => i >= 0);
    const rate = xs.map((_, j) => {
      const p = perSecond[prompt][j];
      if (p === null || p <= 0) return null;
      let sum = 0;
      for (const i of hitIdx) {
        const v = perSecond[i][j];
        if (v === null) return null;
        sum += v;
      }
      return Math.min(1, sum / p);
    });
    out.push(
      chart(
        `${ep.endpoint_url} (${ep.role ?? "unresolved"}): hit rate per slice (telemetry, not priced)`,
        {
          series: [{}, { label: "hits / prompt", stroke: css("--accent"), width: 1.5, value: (_u, v) => (v === null ? "—" : `${(v * 100).toFixed(1)} %`) }],
          axes: axes("hit rate"),
          scales: { x: { time: false }, y: { range: [0, 1] } },
          plugins: [marksPlugin(marks)],
        },
        [xs, rate] as uPlot.AlignedData,
        `Hit rate per slice, ${rate.filter((r) => r !== null).length} slices with prompt tokens.`,
      ),
    );
  }
  return out;
}

function samplesChart(ep: EndpointTimeline, tl: Timeline): HTMLElement {
  const counters = ep.counters.filter((c) => c.samples.length > 0);
  const xs = [...new Set(counters.flatMap((c) => c.samples.map((s) => s.t_s)))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const ys = counters.map((c) => {
    const y: (number | null)[] = new Array(xs.length).fill(null);
    for (const s of c.samples) y[at.get(s.t_s)!] = s.value;
    return y;
  });
  const marks: Marks = {
    window: tl.window,
    warmup: tl.warmup,
    gaps: [],
    resets: sampleResets(ep),
  };
  return chart(
    `${ep.endpoint_url} (${ep.role ?? "unresolved"}): cumulative counters from raw scrapes`,
    {
      series: [{}, ...counters.map((c) => ({ label: c.counter, stroke: COLORS[c.counter], width: 1.5, spanGaps: true }))],
      axes: axes("tokens (cumulative)"),
      scales: { x: { time: false } },
      plugins: [marksPlugin(marks)],
    },
    [xs, ...ys] as uPlot.AlignedData,
    `${counters.length} counters, ${xs.length} scrapes, ${marks.resets.length} resets.`,
  );
}

function legend(): HTMLElement {
  const sw = (v: string) => h("span", { class: "legend-swatch", style: `background:var(${v})` });
  return h("p", { class: "note" }, sw("--window"), "profiling window ", sw("--warmup"), "warmup ", sw("--gap"), "gap in the slice grid ",
    h("span", { class: "legend-swatch", style: "background:var(--bad)" }), "edge slice (point) or reset (line)");
}

export function countersView(tl: Timeline): HTMLElement {
  const blocks = tl.endpoints.map((ep) => {
    const hasSlices = ep.counters.some((c) => c.slices.length);
    const hasSamples = ep.counters.some((c) => c.samples.length);
    const flags = [
      ep.restarted ? "the process restarted inside the window (process_start_time_seconds)" : null,
      ep.counters.some((c) => c.slices_exceed_total) ? "slices add up to more than the export's total (a reset AIPerf clamped)" : null,
    ].filter(Boolean);
    return h(
      "section",
      { class: "endpoint", "data-endpoint": ep.endpoint_url },
      h("h3", null, `${ep.endpoint_url} · ${ep.role ?? "unresolved"} · ${ep.engine}`),
      flags.length ? h("p", { class: "err" }, flags.join("; ")) : null,
      hasSlices ? slicesChart(ep, tl) : null,
      hasSamples ? samplesChart(ep, tl) : null,
      !hasSlices && !hasSamples ? h("p", { class: "note" }, "No timeslices or raw scrapes for this endpoint's counters (a CSV export has totals only).") : null,
    );
  });
  return h(
    "section",
    { "aria-labelledby": "counters-h" },
    h("h2", { id: "counters-h" }, "Counters over time"),
    legend(),
    blocks.length ? blocks : h("p", null, "No engine endpoint."),
  );
}
