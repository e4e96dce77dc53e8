// A TypeScript consumer of the package's published types (ES module: resolved through the
// exports map's `node` + `import` + `types` conditions to pkg/kvledger.d.ts). `tsc --noEmit
// --strict` must accept it; every `@ts-expect-error` line must really be an error, else tsc
// fails ("Unused '@ts-expect-error' directive").
import init, {
  inspectRun,
  accountRun,
  accountRuns,
  accountStream,
  AccountStream,
  warmUp,
  type WarmUpSummary,
  type AccountStreamOptions,
  type StreamProgress,
  pricePoint,
  cacheObservation,
  type Accounting,
  type Status,
  type ReasonCode,
  isKvledgerError,
  KvledgerError,
  errorCodes,
  contractVersion,
  initSync,
  type EpochNs,
  type ErrorCode,
  type KvledgerErrorCode,
  type RunFileInput,
  type RunInspection,
  type RunOutcome,
  type EndpointInspection,
  type InspectOptions,
  type AccountOptions,
  type ArtifactKind,
  type PriceOutcome,
} from "kvledger";

export async function run(text: string, bytes: Uint8Array): Promise<EpochNs | undefined> {
  await init();
  await init(new URL("https://example.invalid/kvledger_bg.wasm"));
  const version: string = contractVersion();
  const codes: KvledgerErrorCode[] = errorCodes();

  const files: RunFileInput[] = [
    { name: "server_metrics_export.json", text },
    { name: "profile_export_aiperf.json", bytes },
  ];
  const options: InspectOptions = {
    families: ["vllm:prefix_cache_hits"],
    family_prefixes: ["vllm:"],
    launch_env: { FRAMEWORK: "vllm", DISAGG: "false" },
    captures: {
      "a.prom": { endpoint_url: "http://h:8000/metrics", timestamp_ns: 1765793061967310848n },
      "b.prom": { endpoint_url: "http://h:8000/metrics", timestamp_ns: "1765793061967310848" },
    },
  };
  const r: RunInspection = inspectRun(files, options);
  inspectRun(files);
  inspectRun(files, null);

  // Epoch ns are exact decimal strings; optional fields may be undefined.
  const ep: EndpointInspection | undefined = r.endpoints[0];
  const first: EpochNs | undefined = ep?.first_fetch_ns;
  const span: bigint = BigInt(ep?.last_fetch_ns ?? "0") - BigInt(ep?.first_fetch_ns ?? "0");
  const kind: ArtifactKind = r.files[0].kind;
  const requests: number | undefined = r.run_summary?.request_count;
  const profilingStart: EpochNs | undefined = r.phases.profiling?.start_ns;
  const windows: bigint[] = r.window_candidates.map((w) => BigInt(w.end_ns) - BigInt(w.start_ns));
  const json: string = JSON.stringify(r);
  void [version, codes, span, kind, requests, profilingStart, windows, json];

  // @ts-expect-error: the camelCase names are gone
  void r.endpoints[0].firstFetchNs;
  // @ts-expect-error: epoch ns are strings, never bigint
  const asBigint: bigint = r.window_candidates[0].start_ns;
  // @ts-expect-error: nor numbers
  const asNumber: number = r.window_candidates[0].start_ns;
  // @ts-expect-error: an optional field may be undefined
  const notOptional: EpochNs = ep.first_fetch_ns;
  // @ts-expect-error: not an ErrorCode
  const badCode: ErrorCode = "JSON_ERROR";
  // @ts-expect-error: not an ArtifactKind
  const badKind: ArtifactKind = "server_metrics_xml";
  // @ts-expect-error: `txt` is not a RunFileInput field
  inspectRun([{ name: "x.json", txt: "{}" }]);
  // @ts-expect-error: options are typed too
  inspectRun(files, { families: "vllm:" });
  // @ts-expect-error: options are snake_case
  inspectRun(files, { familyPrefixes: ["vllm:"] });
  // @ts-expect-error: a capture time is not a JS number (it may exceed 2^53)
  inspectRun(files, { captures: { "a.prom": { timestamp_ns: 1765793061967310848 } } });
  void [asBigint, asNumber, notOptional, badCode, badKind];

  return first;
}

export function classify(e: unknown): string {
  // @ts-expect-error: `unknown` has no `code` before narrowing
  void e.code;
  if (e instanceof KvledgerError) {
    const path: string | undefined = e.json_path;
    const line: number | undefined = e.line;
    void [path, line];
  }
  if (!isKvledgerError(e)) return "not kvledger";
  const err: KvledgerError = e;
  const name: "KvledgerError" = err.name;
  const file: string | undefined = err.file;
  const column: number | undefined = err.column;
  const wire: { code: KvledgerErrorCode; message: string } = err.toJSON();
  void [name, file, column, wire];
  if (err.code === "JSON_SYNTAX") {
    const narrowed: "JSON_SYNTAX" = err.code;
    return narrowed;
  }
  // @ts-expect-error: the comparison can never be true ("JSON_ERROR" is no code)
  if (err.code === "JSON_ERROR") return "never";
  switch (err.code) {
    case "BAD_OPTIONS":
      return "options";
    case "NOT_INITIALIZED":
    case "INIT_FAILED":
      return "load the wasm";
    case "NO_ARTIFACTS":
    case "UNKNOWN_FORMAT":
      return "not a run";
    default: {
      const rest: Exclude<KvledgerErrorCode, "JSON_SYNTAX" | "BAD_OPTIONS" | "NOT_INITIALIZED" | "INIT_FAILED" | "NO_ARTIFACTS" | "UNKNOWN_FORMAT"> = err.code;
      return rest;
    }
  }
}

export function syncInit(wasm: Uint8Array, module: WebAssembly.Module): void {
  initSync({ module: wasm });
  initSync(module);
  // @ts-expect-error: initSync needs the .wasm
  initSync();
}

// accountRun: the contract result, with the verdict's enums and the legacy block's nulls.
export function verdict(files: RunFileInput[]): string {
  const opts: AccountOptions = { launch_json: "{}", policy: { max_rate_width: 0.01 } };
  const a: Accounting = accountRun(files, opts);
  const status: Status = a.cache_validity.status;
  const eligible: boolean = a.cache_validity.pricing_eligible;
  const codes: ReasonCode[] = a.cache_validity.reasons.map((r) => r.code);
  const start: EpochNs | undefined = a.cache_validity.window.start_ns;
  const overall: number | null | undefined = a.rates.overall?.value;
  const legacyExternal: number | null = a.legacy.server_external_cache_hit_rate;
  const promptTotal: number | null = a.legacy.total_prompt_tokens;
  const stored: Accounting = JSON.parse(JSON.stringify(a));
  const priced: PriceOutcome = pricePoint({ observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: cacheObservation(stored) } });
  const sweep: RunOutcome<Accounting>[] = accountRuns(files, opts);
  const sweepStatus: Status | undefined = sweep[0].result?.cache_validity.status;
  void [eligible, codes, start, overall, legacyExternal, promptTotal, priced, sweepStatus];
  // @ts-expect-error: not a status
  const bad: Status = "VALID";
  // @ts-expect-error: reason codes are snake_case strings of the enum only
  const badCode: ReasonCode = "counter-reset";
  // @ts-expect-error: window bounds are EpochNs strings, never numbers
  const n: number | undefined = a.cache_validity.window.start_ns;
  // @ts-expect-error: policy fields are snake_case
  accountRun(files, { policy: { maxRateWidth: 0.01 } });
  void [bad, badCode, n];
  return status === "VALID_COMPLETE" ? "price it" : codes.join(",");
}

// accountStream: files as ReadableStreams (or Blobs, buffers, async iterables), a progress
// callback with the bytes read; the low-level push class.
export async function streamed(stream: ReadableStream<Uint8Array>, blob: Blob, bytes: Uint8Array): Promise<Status> {
  const seen: number[] = [];
  const a: Accounting = await accountStream(
    [
      { name: "server_metrics_export.json", stream },
      { name: "profile_export.jsonl", stream: blob },
      { name: "profile_export_aiperf.json", stream: bytes },
    ],
    { memory_budget: 32 << 20, policy: { max_rate_width: 0.01 } },
    { onProgress: (p: StreamProgress) => seen.push(p.bytes_read) },
  );
  const options: AccountStreamOptions = { family_prefixes: ["vllm:"] };
  const s = new AccountStream(options);
  s.beginFile("server_metrics_export.csv");
  const more: boolean = s.push(bytes);
  s.endFile();
  const read: number = s.bytesRead;
  const b: Accounting = s.finish();
  const code: KvledgerErrorCode = "INPUT_TOO_LARGE";
  void [more, read, b, code];
  // @ts-expect-error: the budget is a number of bytes
  await accountStream([], { memory_budget: "48M" });
  // @ts-expect-error: a file gives its content as `stream`
  await accountStream([{ name: "x.json", text: "{}" }]);
  return a.cache_validity.status;
}

// warmUp: while idle, before a user's files arrive; stopped by a signal.
export async function warmed(): Promise<number> {
  const stop = new AbortController();
  const w: WarmUpSummary = await warmUp({ signal: stop.signal });
  const again: boolean = (await warmUp()).aborted;
  // @ts-expect-error: the only option is `signal`
  await warmUp({ budget: 1 });
  void again;
  return w.runs + w.bytes + w.seconds;
}
