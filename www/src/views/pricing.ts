// Pricing: a rate card (the shipped lab list prices as presets, editable), the run's point
// priced under strict, theoretical and legacy side by side, with the reasons when refused.
import { cacheObservation, pricePoint, rateCards, type PriceOutcome, type PricingPolicy, type RateCard } from "kvledger";
import { h, money, pct } from "../dom";
import { pricingReason } from "../docs";
import type { RunState } from "../state";

const POLICIES: PricingPolicy[] = ["strict", "theoretical", "legacy"];

export interface PricingInputs {
  card: string;
  input: number;
  cached: number;
  output: number;
  gpus: number;
  hardware: string;
}

let remembered: PricingInputs | undefined;

/** The rate card and run facts the user chose (shared by the pricing and sweep views). */
export function currentPricing(): PricingInputs {
  return (remembered ??= defaults());
}

function defaults(): PricingInputs {
  const c = rateCards()[0];
  return { card: c.name, input: c.input_per_million, cached: cachedOf(c), output: c.output_per_million, gpus: 1, hardware: "" };
}

function cachedOf(c: RateCard): number {
  if (c.cached_input_per_million !== undefined) return c.cached_input_per_million;
  return c.input_per_million * (c.cached_input_ratio ?? 0.1);
}

/** The run as a pricing point: throughput per GPU and the token mix from its summary, the cache from its verdict. */
export function pointOf(run: RunState, gpus: number, hardware: string) {
  const f = run.figures;
  return {
    observed: {
      label: run.label,
      hardware: hardware || undefined,
      throughput_per_gpu: f.total_throughput === undefined ? undefined : f.total_throughput / gpus,
      isl: f.total_isl,
      osl: f.total_osl,
      interactivity: f.interactivity,
      cache: cacheObservation(run.accounting),
    },
  };
}

/** The preset with the prices shown in the form (renamed when they differ from the preset's). */
export function cardOf(p: PricingInputs): RateCard {
  const preset = rateCards().find((c) => c.name === p.card) ?? rateCards()[0];
  const { cached_input_ratio: _ratio, ...rest } = preset;
  const same = preset.input_per_million === p.input && cachedOf(preset) === p.cached && preset.output_per_million === p.output;
  return { ...rest, name: same ? preset.name : `${preset.name}-edited`, input_per_million: p.input, cached_input_per_million: p.cached, output_per_million: p.output };
}

function outcomeCard(policy: PricingPolicy, o: PriceOutcome | Error): HTMLElement {
  if (o instanceof Error) return h("div", { class: "card", "data-policy": policy }, h("h3", null, policy), h("p", { class: "err" }, o.message));
  return h(
    "div",
    { class: "card", "data-policy": policy },
    h("h3", null, policy),
    h("p", { class: "status" }, h("span", { class: o.priced ? "eligible" : "ineligible" }, o.status)),
    o.priced
      ? h("p", null, `${money(o.revenue_per_gpu_hour)} per GPU-hour`, o.revenue_bounds ? ` (${money(o.revenue_bounds.lo)} – ${money(o.revenue_bounds.hi)})` : "")
      : null,
    h("p", { class: "note" }, `hit rate ${pct(o.hit_rate)} (${o.hit_rate_source.replace(/_/g, " ")}), input share ${pct(o.input_share)} (${o.share_source.replace(/_/g, " ")})`),
    o.reasons.length
      ? h("ul", { class: "reasons" }, o.reasons.map((r) => {
          const doc = pricingReason(r.code);
          return h("li", { "data-code": r.code }, h("strong", null, doc.meaning), h("br"), r.detail,
            r.verdict_status ? ` (verdict ${r.verdict_status}: ${(r.verdict_reasons ?? []).join(", ")})` : "",
            h("br"), h("a", { href: doc.href, target: "_blank", rel: "noopener" }, h("code", null, r.code)), h("span", { class: "note" }, " in docs/pricing.md"));
        }))
      : null,
  );
}

function field(label: string, name: keyof PricingInputs, value: number | string, attrs: Record<string, string> = {}): HTMLElement {
  return h("label", null, label, h("input", { name, value: String(value), type: typeof value === "number" ? "number" : "text", step: "any", min: "0", ...attrs }));
}

export function pricingView(run: RunState): HTMLElement {
  const p = currentPricing();
  const cards = rateCards();
  const results = h("div", { class: "grid", id: "pricing-results" });
  const select = h("select", { name: "card", id: "card" }, cards.map((c) => h("option", { value: c.name, selected: c.name === p.card }, `${c.label ?? c.name} (${c.as_of})`)));
  const form = h("form", { class: "rate-card", "aria-label": "Rate card" },
    h("label", null, "Preset (lab list prices)", select),
    field("Input $/M tokens", "input", p.input),
    field("Cached input $/M tokens", "cached", p.cached),
    field("Output $/M tokens", "output", p.output),
    field("GPUs in the run", "gpus", p.gpus, { min: "1", step: "1" }),
    field("Hardware key (legacy fallback, e.g. gb300)", "hardware", p.hardware),
  );
  const render = () => {
    const point = pointOf(run, p.gpus > 0 ? p.gpus : 1, p.hardware);
    const card = cardOf(p);
    results.replaceChildren(...POLICIES.map((policy) => {
      try {
        return outcomeCard(policy, pricePoint(point, { policy, rate_card: card }));
      } catch (e) {
        return outcomeCard(policy, e as Error);
      }
    }));
  };
  select.addEventListener("change", () => {
    const c = cards.find((x) => x.name === select.value)!;
    Object.assign(p, { card: c.name, input: c.input_per_million, cached: cachedOf(c), output: c.output_per_million });
    for (const k of ["input", "cached", "output"] as const) (form.elements.namedItem(k) as HTMLInputElement).value = String(p[k]);
    render();
  });
  form.addEventListener("input", (ev) => {
    const t = ev.target as HTMLInputElement;
    if (t.name === "card") return;
    if (t.name === "hardware") p.hardware = t.value.trim();
    else if (t.value !== "" && Number.isFinite(Number(t.value))) (p as unknown as Record<string, number>)[t.name] = Number(t.value);
    render();
  });
  form.addEventListener("submit", (e) => e.preventDefault());
  render();
  const f = run.figures;
  return h(
    "section",
    { "aria-labelledby": "pricing-h" },
    h("h2", { id: "pricing-h" }, "Pricing"),
    h("p", null, `The run as one point: ${f.total_throughput === undefined ? "no throughput in its summary" : `${f.total_throughput.toFixed(1)} tokens/s in total`}, input share from its token totals, and the cache verdict above. Policies side by side (contract section 8).`),
    f.derived.length ? h("p", { class: "note" }, `Derived from the run summary: ${f.derived.join("; ")}.`) : null,
    form,
    results,
  );
}
