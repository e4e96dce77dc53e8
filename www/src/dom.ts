// Small DOM helpers: elements from a tag, attributes and children; number formatting.

type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** A rate (0..1) as a percentage with two decimals. */
export const pct = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "—" : `${(v * 100).toFixed(2)} %`;

/** A count with thousands separators (no fraction unless it has one). */
export const count = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "—" : v.toLocaleString("en-US", { maximumFractionDigits: 1 });

export const money = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "—" : `$${v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

/** An epoch-ns decimal string as a UTC time (exact digits kept in the title). */
export function utc(ns: string | undefined): string {
  if (ns === undefined) return "—";
  const ms = Number(BigInt(ns) / 1_000_000n);
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

/** A table from a header row and body rows; cells marked numeric are right-aligned. */
export function table(caption: string, head: string[], rows: Child[][], numeric: number[] = []): HTMLElement {
  // A wide table scrolls inside its own box, so the page never scrolls sideways (200 % zoom).
  return h("div", { class: "table-wrap", role: "region", "aria-label": caption, tabindex: 0 }, h(
    "table",
    null,
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", null, h("tr", null, head.map((c, i) => h("th", { scope: "col", class: numeric.includes(i) ? "num" : undefined }, c)))),
    h("tbody", null, rows.map((r) => h("tr", null, r.map((c, i) => h("td", { class: numeric.includes(i) ? "num" : undefined }, c))))),
  ));
}
