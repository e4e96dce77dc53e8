// Request scope (contract section 5): client vs server prompt tokens, errors and cancellations
// by phase (profiling from the records; warmup errors only as the verdict notes them).
import type { Accounting } from "kvledger";
import { count, h, table } from "../dom";
import { accountingReason } from "../docs";

export function scopeView(a: Accounting): HTMLElement {
  const s = a.cache_validity.request_scope;
  const server = s.server_prompt;
  const inside = server && s.client_prompt_tokens !== undefined && s.client_prompt_tokens >= server.lo && (server.hi === undefined || s.client_prompt_tokens <= server.hi);
  const warmup = a.cache_validity.reasons.filter((r) => r.code === "warmup_errors_ignored");
  const scopeReasons = a.cache_validity.reasons.filter((r) => accountingReason(r.code).status === "REQUEST_SCOPE_UNRESOLVED");
  return h(
    "section",
    { "aria-labelledby": "scope-h" },
    h("h2", { id: "scope-h" }, "Request scope"),
    h("p", { class: "status" }, s.conserved ? h("span", { class: "eligible" }, "Conserved") : h("span", { class: "ineligible" }, "Not conserved")),
    table(
      "Prompt tokens",
      ["prompt tokens", "value"],
      [
        ["client (successful profiling records)", count(s.client_prompt_tokens)],
        ["server, priced roles (lo)", count(server?.lo)],
        ["server, priced roles (hi)", server ? (server.hi === undefined ? "unbounded" : count(server.hi)) : "—"],
        ["client inside the server's interval", server ? (inside ? "yes" : "no") : "—"],
        ["tolerance (policy)", count(a.policy.conservation_tolerance)],
      ],
      [1],
    ),
    table(
      "Requests by phase",
      ["phase", "records", "errors", "cancelled"],
      [
        ["profiling", count(s.profiling_records), count(s.errors), count(s.cancelled)],
        ["warmup", "—", warmup.length ? warmup.map((r) => r.detail).join("; ") : "none reported", "—"],
      ],
      [1, 2, 3],
    ),
    s.admissions ? h("p", null, `Admissions (ATOM): ${count(s.admissions.lo)} – ${s.admissions.hi === undefined ? "∞" : count(s.admissions.hi)}.`) : null,
    scopeReasons.length ? h("ul", null, scopeReasons.map((r) => h("li", null, h("code", null, r.code), ": ", r.detail))) : null,
  );
}
