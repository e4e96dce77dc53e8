// The verdict: status, eligibility, every reason in plain words with its code and docs link;
// roles and window; the files read, ignored, and the run's error with its position.
import type { Accounting, Reason } from "kvledger";
import { h, table, utc } from "../dom";
import { accountingReason } from "../docs";
import type { ErrorInfo } from "../protocol";
import type { RunState } from "../state";

const STATUS_WORDS: Record<string, string> = {
  VALID_COMPLETE: "Every check passed: the hit rate may be priced.",
  NOT_MEASURED: "No engine metrics for any priced role: nothing was measured.",
  ROLES_UNRESOLVED: "The endpoints' roles could not be decided: rates cannot be scoped.",
  COUNTERS_MISSING: "A counter pricing needs is missing.",
  INVALID_COUNTER: "A counter cannot be trusted inside the window.",
  WINDOW_UNRESOLVED: "The evidence does not pin the rate to the profiling window tightly enough.",
  REQUEST_SCOPE_UNRESOLVED: "The requests the server counted cannot be matched to the client's.",
};

function reasonItem(r: Reason): HTMLLIElement {
  const doc = accountingReason(r.code);
  const failing = doc.status !== undefined && doc.status !== "note";
  return h(
    "li",
    { class: "reason", "data-code": r.code },
    h("strong", null, doc.meaning.charAt(0).toUpperCase() + doc.meaning.slice(1)),
    " ",
    h("span", { class: "note" }, failing ? `(fails ${doc.status})` : "(note)"),
    h("br"),
    h("span", { class: "detail" }, r.detail),
    r.endpoint ? h("span", { class: "note" }, ` · endpoint ${r.endpoint}`) : null,
    r.metric ? h("span", { class: "note" }, ` · metric ${r.metric}`) : null,
    h("br"),
    h("a", { href: doc.href, target: "_blank", rel: "noopener" }, h("code", null, r.code)),
    h("span", { class: "note" }, " in docs/accounting.md"),
  );
}

export function errorBlock(run: string, e: ErrorInfo): HTMLElement {
  const where = [
    e.file ? `file ${e.file}` : null,
    e.line !== undefined ? `line ${e.line}` : null,
    e.column !== undefined ? `column ${e.column}` : null,
    e.byte_offset !== undefined ? `byte ${e.byte_offset}` : null,
    e.json_path ? `at ${e.json_path}` : null,
  ].filter(Boolean);
  return h(
    "div",
    { class: "card run-error", role: "alert", "data-run": run },
    h("p", { class: "err" }, h("strong", null, `The run ${run} could not be read: `), h("code", { class: "code" }, e.code)),
    h("p", { class: "message" }, e.message),
    where.length ? h("p", { class: "where" }, `Where: ${where.join(", ")}`) : null,
  );
}

function files(run: RunState): HTMLElement {
  const d = run.detail;
  return h(
    "section",
    { "aria-labelledby": "files-h" },
    h("h2", { id: "files-h" }, "Files"),
    d.files.length ? table("Files read", ["read", "as"], d.files.map((f) => [h("code", null, f.name), f.kind])) : h("p", null, "No file was read."),
    d.ignored.length
      ? table("Files ignored", ["ignored", "why"], d.ignored.map((f) => [h("code", null, f.name), f.reason]))
      : h("p", { class: "note" }, "No file was ignored."),
  );
}

function roles(a: Accounting): HTMLElement {
  const r = a.cache_validity.roles;
  const rows: [string, string[]][] = [
    ["prefill", r.prefill],
    ["decode", r.decode],
    ["unified", r.unified],
    ["frontend", r.frontend],
    ["excluded", r.excluded],
    ["unresolved", r.unresolved],
  ];
  const w = a.cache_validity.window;
  return h(
    "section",
    { "aria-labelledby": "roles-h" },
    h("h2", { id: "roles-h" }, "Roles and window"),
    h("p", null, `Roles decided by: ${r.source}.`),
    table("Roles", ["role", "endpoints"], rows.filter(([, e]) => e.length).map(([k, e]) => [k, e.join(", ")])),
    h(
      "p",
      null,
      `Profiling window: ${utc(w.start_ns)} → ${utc(w.end_ns)} (from ${w.source.replace(/_/g, " ")}); `,
      `weakest evidence: ${w.evidence?.replace(/_/g, " ") ?? "none"}; edge slices ${w.straddles}, gaps ${w.gaps}.`,
    ),
  );
}

export function verdictView(run: RunState): HTMLElement {
  const a = run.accounting;
  const v = a.cache_validity;
  const failing = v.reasons.filter((r) => accountingReason(r.code).status !== "note");
  const notes = v.reasons.filter((r) => accountingReason(r.code).status === "note");
  return h(
    "section",
    { "aria-labelledby": "verdict-h" },
    h("h2", { id: "verdict-h" }, "Verdict"),
    h(
      "div",
      { class: "card" },
      h("p", { class: "status" }, h("span", { id: "verdict-status" }, v.status), " · ",
        h("span", { id: "verdict-eligible", class: v.pricing_eligible ? "eligible" : "ineligible" },
          v.pricing_eligible ? "pricing eligible" : "not pricing eligible")),
      h("p", null, STATUS_WORDS[v.status] ?? ""),
      h("p", { class: "note" }, `Engine: ${a.engine ?? "mixed or unknown"} · CPU component: ${v.cpu_component.replace(/_/g, " ")} · contract ${v.contract_version}`),
    ),
    h("h3", null, `Failed checks (${failing.length})`),
    failing.length ? h("ul", { class: "reasons", id: "failing" }, failing.map(reasonItem)) : h("p", null, "None."),
    h("h3", null, `Notes (${notes.length})`),
    notes.length ? h("ul", { class: "reasons", id: "notes" }, notes.map(reasonItem)) : h("p", null, "None."),
    roles(a),
    files(run),
  );
}
