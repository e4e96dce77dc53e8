// A sweep: every run in a table (a broken run shows its error in its row), and the
// throughput–interactivity frontier priced under strict with per-segment eligibility (contract
// section 8): a segment between two eligible knots is priced, one next to an ineligible knot is
// not, and says which knot.
import { priceFrontier, type FrontierPricing } from "kvledger";
import { count, h, pct, table } from "../dom";
import { pricingReason } from "../docs";
import type { AppState } from "../state";
import { cardOf, pointOf, type PricingInputs } from "./pricing";

const SVG = "http://www.w3.org/2000/svg";

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A short name for a run in the chart: its folder without the common prefix and `aiperf_artifacts`. */
export function shortLabels(labels: string[]): string[] {
  const parts = labels.map((l) => l.split("/").filter((p) => p !== "aiperf_artifacts" && !/^run_\d+$/.test(p)));
  let common = 0;
  while (parts.length > 1 && parts.every((p) => p.length > common + 1 && p[common] === parts[0][common])) common++;
  return parts.map((p, i) => p.slice(common).join("/") || labels[i]);
}

/** Round tick values covering [lo, hi]. */
function ticks(lo: number, hi: number, n = 5): number[] {
  const step = 10 ** Math.floor(Math.log10((hi - lo) / n || 1));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= n) ?? step * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / nice) * nice; v <= hi; v += nice) out.push(v);
  return out;
}

function frontierChart(fp: FrontierPricing, xs: (number | undefined)[], ts: (number | undefined)[], labels: string[]): SVGSVGElement {
  const W = 720;
  const H = 340;
  const pad = { l: 80, r: 90, t: 16, b: 56 };
  const pts = xs.map((x, i) => ({ x, t: ts[i], i })).filter((p): p is { x: number; t: number; i: number } => p.x !== undefined && p.t !== undefined);
  const range = (v: number[]) => {
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    const m = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 1;
    return [Math.max(0, lo - m), hi + m];
  };
  const [x0, x1] = range(pts.map((p) => p.x));
  const [t0, t1] = range(pts.map((p) => p.t));
  const X = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const Y = (t: number) => H - pad.b - ((t - t0) / (t1 - t0)) * (H - pad.t - pad.b);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "frontier-title", class: "frontier" });
  root.append(svg("title", { id: "frontier-title" }, `Throughput per GPU against interactivity: ${fp.segments.filter((s) => s.priced).length} of ${fp.segments.length} frontier segments priced`));
  root.append(svg("line", { x1: pad.l, y1: H - pad.b, x2: W - pad.r, y2: H - pad.b, stroke: "currentColor" }));
  root.append(svg("line", { x1: pad.l, y1: pad.t, x2: pad.l, y2: H - pad.b, stroke: "currentColor" }));
  for (const v of ticks(x0, x1)) root.append(svg("text", { x: X(v), y: H - pad.b + 18, "text-anchor": "middle", fill: "currentColor", "font-size": 12 }, String(v)));
  for (const v of ticks(t0, t1)) root.append(svg("text", { x: pad.l - 6, y: Y(v) + 4, "text-anchor": "end", fill: "currentColor", "font-size": 12 }, v.toLocaleString("en-US")));
  root.append(svg("text", { x: (W + pad.l - pad.r) / 2, y: H - 12, "text-anchor": "middle", fill: "currentColor", "font-size": 13 }, "interactivity (output tokens/s per user)"));
  root.append(svg("text", { x: 16, y: (H - pad.b) / 2, transform: `rotate(-90 16 ${(H - pad.b) / 2})`, "text-anchor": "middle", fill: "currentColor", "font-size": 13 }, "tokens/s per GPU"));
  for (const s of fp.segments) {
    root.append(svg("line", {
      x1: X(s.from.x), y1: Y(s.from.throughput_per_gpu), x2: X(s.to.x), y2: Y(s.to.throughput_per_gpu),
      stroke: s.priced ? "var(--ok)" : "var(--bad)", "stroke-width": 3, "stroke-dasharray": s.priced ? "" : "7 5",
      "data-priced": String(s.priced),
    }));
  }
  const onFront = new Set(fp.frontier.map((k) => k.index));
  for (const p of pts) {
    const priced = fp.points[p.i]?.priced;
    const c = svg("circle", { cx: X(p.x), cy: Y(p.t), r: onFront.has(p.i) ? 6 : 4, fill: priced ? "var(--ok)" : "var(--bad)", stroke: "var(--fg)", "fill-opacity": onFront.has(p.i) ? 1 : 0.4 });
    c.append(svg("title", {}, `${labels[p.i]}: ${p.x.toFixed(1)} tok/s/user, ${p.t.toFixed(1)} tok/s/GPU, ${priced ? "priced" : "not priced"}`));
    root.append(c);
    root.append(svg("text", { x: X(p.x) + 9, y: Y(p.t) + 4, fill: "currentColor", "font-size": 12 }, labels[p.i]));
  }
  return root;
}

export function sweepView(s: AppState, pricing: PricingInputs, select: (run: string) => void): HTMLElement {
  const ok = s.order.filter((r) => s.runs.has(r));
  const runs = ok.map((r) => s.runs.get(r)!);
  const rows = s.order.map((label) => {
    const r = s.runs.get(label);
    const e = s.errors.get(label);
    const link = h("a", { href: `#run=${encodeURIComponent(label)}&view=verdict` }, label);
    link.addEventListener("click", (ev) => {
      ev.preventDefault();
      select(label);
    });
    if (!r) {
      const where = [e?.file, e?.line !== undefined ? `line ${e.line}` : null, e?.column !== undefined ? `column ${e.column}` : null, e?.json_path].filter(Boolean).join(", ");
      return [label, h("span", { class: "err" }, e?.code ?? "error"), "—", "—", "—", "—", h("span", { class: "err run-error-text" }, `${e?.message ?? ""}${where ? ` (${where})` : ""}`)];
    }
    const v = r.accounting.cache_validity;
    return [link, v.status, v.pricing_eligible ? "yes" : "no", pct(r.accounting.rates.overall?.value), count(r.figures.interactivity), count(r.figures.total_throughput), [...new Set(v.reasons.filter((x) => x.code !== "decode_excluded").map((x) => x.code))].join(", ")];
  });
  const out = h(
    "section",
    { "aria-labelledby": "sweep-h" },
    h("h2", { id: "sweep-h" }, `Sweep: ${s.order.length} runs (${s.errors.size} could not be read)`),
    table("Runs", ["run", "status", "eligible", "overall rate", "interactivity", "tokens/s", "reasons / error"], rows, [3, 4, 5]),
  );
  if (runs.length === 0) return out;
  const derived = [...new Set(runs.flatMap((r) => r.figures.derived))];
  if (derived.length) out.append(h("p", { class: "note" }, `Derived from run summaries: ${derived.join("; ")}.`));
  const points = runs.map((r) => pointOf(r, pricing.gpus > 0 ? pricing.gpus : 1, pricing.hardware));
  try {
    const fp = priceFrontier(points, { policy: "strict", rate_card: cardOf(pricing) });
    out.append(
      h("h3", null, "Frontier (strict, per-segment eligibility)"),
      h("p", { class: "note" }, "Green: a segment (or point) that may be priced; red, dashed: refused, next to an ineligible run. Pale points are off the frontier."),
      h("div", { class: "chart" }, frontierChart(fp, points.map((p) => p.observed.interactivity), points.map((p) => p.observed.throughput_per_gpu), shortLabels(runs.map((r) => r.label)))),
      fp.segments.length
        ? table(
            "Frontier segments",
            ["from", "to", "priced", "why not"],
            fp.segments.map((g) => [
              runs[g.from.index]?.label ?? String(g.from.index),
              runs[g.to.index]?.label ?? String(g.to.index),
              g.priced ? "priced" : "refused",
              g.reasons.map((r) => `${r.code}${r.knot !== undefined ? ` (knot ${runs[r.knot]?.label ?? r.knot})` : ""}: ${pricingReason(r.code).meaning}`).join("; "),
            ]),
          )
        : h("p", { class: "note" }, "Fewer than two runs are on the frontier: no segment."),
      fp.off_frontier.length ? h("p", { class: "note" }, `Off the frontier (dominated or without figures): ${fp.off_frontier.map((i) => runs[i]?.label).join(", ")}.`) : "",
    );
  } catch (e) {
    out.append(h("p", { class: "err" }, `The frontier could not be priced: ${(e as Error).message}`));
  }
  return out;
}
