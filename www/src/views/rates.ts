// Rates: each tier's value with its [lo, hi] interval as a bar (0–100 %), for the priced roles
// and for every endpoint (its own overall rate, telemetry); the canonical counters per role.
import type { Accounting, Bounds, Rate } from "kvledger";
import { count, h, pct, table } from "../dom";

/** A bar over [0, 1]: the interval shaded, the value marked; an open hi is dashed to the end. */
export function rateBar(label: string, r: Rate | undefined): HTMLElement {
  if (!r) return h("div", { class: "note" }, "not measured");
  const lo = r.lo;
  const hi = r.hi ?? 1;
  const iv = h("div", { class: `iv${r.hi === undefined ? " open-hi" : ""}`, style: `left:${lo * 100}%;width:${Math.max(0, hi - lo) * 100}%` });
  const pt = r.value === undefined || r.value === null ? null : h("div", { class: "pt", style: `left:calc(${r.value * 100}% - 1px)` });
  const text = `${label}: ${r.value === undefined || r.value === null ? "no value" : pct(r.value)}, interval [${pct(lo)}, ${r.hi === undefined ? "unbounded" : pct(r.hi)}]`;
  return h("div", { class: "bar", role: "img", "aria-label": text, title: text }, iv, pt);
}

function tierRow(name: string, r: Rate | undefined): (string | HTMLElement)[] {
  return [name, r?.value === undefined || r?.value === null ? "—" : pct(r.value), r ? pct(r.lo) : "—", r ? (r.hi === undefined ? "unbounded" : pct(r.hi)) : "—", rateBar(name, r)];
}

const bounds = (b: Bounds | undefined) => (b ? `${count(b.lo)} – ${b.hi === undefined ? "∞" : count(b.hi)}` : "—");

export function ratesView(a: Accounting): HTMLElement {
  const r = a.rates;
  const tiers: [string, Rate | undefined][] = [
    ["overall", r.overall],
    ["gpu", r.gpu],
    ["cpu", r.cpu],
    ["external", r.external],
  ];
  const roles = Object.entries(a.counters);
  return h(
    "section",
    { "aria-labelledby": "rates-h" },
    h("h2", { id: "rates-h" }, "Rates"),
    h("p", null, `Priced roles (prefill and unified endpoints). Value rule: ${r.value_rule}.`,
      r.tier_aliases.length ? ` Tier aliases: ${r.tier_aliases.map((t) => `${t.tier} = ${t.same_as}`).join(", ")}.` : ""),
    table("Tier rates", ["tier", "value", "lo", "hi", "interval (0–100 %)"], tiers.map(([n, t]) => tierRow(n, t)), [1, 2, 3]),
    h("h3", null, "Per endpoint (own overall rate, telemetry)"),
    table(
      "Per endpoint",
      ["endpoint", "role", "engine", "priced", "overall", "interval"],
      a.sources.map((s) => [s.endpoint_url, s.role ?? "unresolved", s.engine ?? "—", s.priced ? "yes" : "no", pct(s.overall?.value), rateBar(s.endpoint_url, s.overall)]),
    ),
    h("h3", null, "Canonical counters per role (in-window increase, [lo – hi])"),
    roles.length
      ? table(
          "Counters per role",
          ["role", "prompt", "hit_gpu", "hit_cpu", "hit_external", "admissions"],
          roles.map(([role, c]) => [role, bounds(c.prompt), bounds(c.hit_gpu), bounds(c.hit_cpu), bounds(c.hit_external), bounds(c.admissions)]),
          [1, 2, 3, 4, 5],
        )
      : h("p", null, "No counters."),
    h("p", { class: "note" }, `Theoretical hit rate (run summary): ${pct(a.theoretical_hit_rate)}. Token totals: prompt ${count(a.tokens.prompt_total)}, generation ${count(a.tokens.generation_total)} (from ${a.tokens.source?.replace(/_/g, " ") ?? "nowhere"}).`),
  );
}
