// A TypeScript consumer of the package's published types (resolved through the exports map's
// `types` condition). `tsc --noEmit --strict` must accept it; every `@ts-expect-error` line
// must really be an error, else tsc fails ("Unused '@ts-expect-error' directive").
import init, {
  inspectRun,
  accountRun,
  type Accounting,
  type Status,
  type ReasonCode,
  isKvledgerError,
  errorCodes,
  contractVersion,
  initSync,
  type ErrorCode,
  type KvledgerError,
  type RunFileInput,
  type RunInspection,
  type EndpointInspection,
  type InspectOptions,
  type Position,
  type ArtifactKind,
} from "kvledger";

export async function run(text: string, bytes: Uint8Array): Promise<bigint | undefined> {
  await init();
  const version: string = contractVersion();
  const codes: ErrorCode[] = errorCodes();

  const files: RunFileInput[] = [
    { name: "server_metrics_export.json", text },
    { name: "profile_export_aiperf.json", bytes },
  ];
  const options: InspectOptions = {
    families: ["vllm:prefix_cache_hits"],
    familyPrefixes: ["vllm:"],
    launchEnv: { FRAMEWORK: "vllm", DISAGG: "false" },
    captures: { "scrape.prom": { endpointUrl: "http://h:8000/metrics", timestampNs: 1765793061967310848n } },
  };
  const r: RunInspection = inspectRun(files, options);
  inspectRun(files);

  // 64-bit values are bigint; optional fields may be undefined.
  const ep: EndpointInspection | undefined = r.endpoints[0];
  const first: bigint | undefined = ep?.firstFetchNs;
  const span: bigint = (ep?.lastFetchNs ?? 0n) - (ep?.firstFetchNs ?? 0n);
  const kind: ArtifactKind = r.files[0].kind;
  const requests: number | undefined = r.runSummary?.requestCount;
  const profilingStart: bigint | undefined = r.phases.profiling?.startNs;
  const windows: bigint[] = r.windowCandidates.map((w) => w.endNs - w.startNs);
  void [version, codes, span, kind, requests, profilingStart, windows];

  // @ts-expect-error: a wrong field name
  void r.endpoints[0].firstFetchNS;
  // @ts-expect-error: a bigint is not a number
  const asNumber: number = r.windowCandidates[0].startNs;
  // @ts-expect-error: an optional field may be undefined
  const notOptional: bigint = ep.firstFetchNs;
  // @ts-expect-error: not an ErrorCode
  const badCode: ErrorCode = "JSON_ERROR";
  // @ts-expect-error: not an ArtifactKind
  const badKind: ArtifactKind = "server_metrics_xml";
  // @ts-expect-error: `txt` is not a RunFileInput field
  inspectRun([{ name: "x.json", txt: "{}" }]);
  // @ts-expect-error: options are typed too
  inspectRun(files, { families: "vllm:" });
  void [asNumber, notOptional, badCode, badKind];

  return first;
}

export function classify(e: unknown): string {
  // @ts-expect-error: `unknown` has no `code` before narrowing
  void e.code;
  if (!isKvledgerError(e)) return "not kvledger";
  const err: KvledgerError = e;
  const name: "ReadError" | "OptionsError" = err.name;
  const pos: Position | undefined = err.position;
  const line: number | undefined = pos?.line;
  const file: string | undefined = err.file;
  void [name, line, file];
  if (err.code === "JSON_SYNTAX") {
    const narrowed: "JSON_SYNTAX" = err.code;
    return narrowed;
  }
  // @ts-expect-error: the comparison can never be true ("JSON_ERROR" is no ErrorCode)
  if (err.code === "JSON_ERROR") return "never";
  switch (err.code) {
    case "BAD_OPTIONS":
      return "options";
    case "NO_ARTIFACTS":
    case "UNKNOWN_FORMAT":
      return "not a run";
    default: {
      const rest: Exclude<ErrorCode, "JSON_SYNTAX" | "BAD_OPTIONS" | "NO_ARTIFACTS" | "UNKNOWN_FORMAT"> = err.code;
      return rest;
    }
  }
}

export function syncInit(wasm: Uint8Array): void {
  initSync({ module: wasm });
}

// accountRun: the contract result, with the verdict's enums and the legacy block's nulls.
export function verdict(files: RunFileInput[]): string {
  const a: Accounting = accountRun(files, { launchJson: "{}", policy: { max_rate_width: 0.01 } });
  const status: Status = a.cache_validity.status;
  const eligible: boolean = a.cache_validity.pricing_eligible;
  const codes: ReasonCode[] = a.cache_validity.reasons.map((r) => r.code);
  const start: bigint | undefined = a.cache_validity.window.start_ns;
  const overall: number | null | undefined = a.rates.overall?.value;
  const legacyExternal: number | null = a.legacy.server_external_cache_hit_rate;
  const promptTotal: bigint | null = a.legacy.total_prompt_tokens;
  void [eligible, codes, start, overall, legacyExternal, promptTotal];
  // @ts-expect-error: not a status
  const bad: Status = "VALID";
  // @ts-expect-error: reason codes are snake_case strings of the enum only
  const badCode: ReasonCode = "counter-reset";
  // @ts-expect-error: window bounds are bigint, never number
  const n: number | undefined = a.cache_validity.window.start_ns;
  void [bad, badCode, n];
  return status === "VALID_COMPLETE" ? "price it" : codes.join(",");
}
