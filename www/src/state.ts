// What the page holds: the runs opened (results or errors, in the order the worker found them),
// the chosen run and view. The URL hash mirrors the choice (#run=…&view=…&example=…).
import type { Accounting, RunDetail } from "kvledger";
import type { ErrorInfo, RunFigures } from "./protocol";

export interface RunState {
  label: string;
  accounting: Accounting;
  detail: RunDetail;
  figures: RunFigures;
  bytes: number;
  ms: number;
}

export const VIEWS = ["verdict", "rates", "counters", "scope", "pricing", "sweep"] as const;
export type View = (typeof VIEWS)[number];

export const VIEW_NAMES: Record<View, string> = {
  verdict: "Verdict",
  rates: "Rates",
  counters: "Counters over time",
  scope: "Request scope",
  pricing: "Pricing",
  sweep: "Sweep",
};

export interface AppState {
  /** What was opened: an example's id or "dropped". */
  source: string;
  order: string[];
  runs: Map<string, RunState>;
  errors: Map<string, ErrorInfo>;
  run?: string;
  view: View;
}

export function readHash(): { run?: string; view?: View; example?: string } {
  const p = new URLSearchParams(location.hash.slice(1));
  const view = p.get("view");
  return {
    run: p.get("run") ?? undefined,
    view: (VIEWS as readonly string[]).includes(view ?? "") ? (view as View) : undefined,
    example: p.get("example") ?? undefined,
  };
}

export function writeHash(s: AppState): void {
  const p = new URLSearchParams();
  if (s.source !== "dropped") p.set("example", s.source);
  if (s.run) p.set("run", s.run);
  p.set("view", s.view);
  const hash = `#${p.toString()}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
