// The public functions and the error class (hand-written; scripts/build-types.mjs appends
// this to the types generated from the Rust core by tsify, making the package's one d.ts).
// Every result is plain JSON data: snake_case fields, epoch ns as decimal strings (EpochNs),
// counts as numbers; `JSON.stringify` works on it and a JSON round trip is lossless.

/** Codes thrown by the JS side of the package. */
export type JsErrorCode =
    /** A call before `init()` (browser, bundlers), or after the .wasm could not be loaded. */
    | "NOT_INITIALIZED"
    /** `init()` / `initSync()` could not load or instantiate the .wasm. */
    | "INIT_FAILED"
    /** The WebAssembly module trapped (later calls throw it too) or answered garbage: a bug. */
    | "INTERNAL";

/** Every code a KvledgerError can carry. */
export type KvledgerErrorCode = ErrorCode | JsErrorCode;

/**
 * Every failure the package throws. Plain JS: usable (`instanceof`, `code`) before init and
 * from every entry point; `instanceof` holds across the ES module and CommonJS copies.
 * Switch on `code`; `message` is for people.
 */
export declare class KvledgerError extends Error {
    constructor(code: KvledgerErrorCode, message: string, details?: {
        file?: string; line?: number; column?: number; byte_offset?: number; json_path?: string; cause?: unknown;
    });
    readonly name: "KvledgerError";
    code: KvledgerErrorCode;
    /** The input file concerned (errors reading an input). */
    file?: string;
    /** 1-based line in `file`. */
    line?: number;
    /** 1-based column in `file`. */
    column?: number;
    /** Byte offset in `file`, where known. */
    byte_offset?: number;
    /**
     * JSON path of the fault: inside `file` for an input (`metrics.vllm:prompt_tokens.series[2]`),
     * or inside the call's arguments for a malformed call (`options.policy.maxRateWidth`,
     * `files[1].name`, `point.row.isl`).
     */
    json_path?: string;
    /** `{name, code, message, file?, line?, column?, byte_offset?, json_path?}`. */
    toJSON(): {
        name: "KvledgerError"; code: KvledgerErrorCode; message: string;
        file?: string; line?: number; column?: number; byte_offset?: number; json_path?: string;
    };
}

/** True when `value` was thrown by kvledger (any entry point). Plain JS: works before init. */
export declare function isKvledgerError(value: unknown): value is KvledgerError;

/** Where the .wasm is: its URL (fetched), a fetch `Response`, its bytes or a compiled module. */
export type WasmSource = string | URL | Request | Response | BufferSource | WebAssembly.Module;

/**
 * Loads the WebAssembly module; call once, before any other function (browser and bundlers).
 * Without an argument it fetches kvledger_bg.wasm from beside the package (bundlers rewrite that
 * URL to the asset they emit). Later calls resolve at once. In Node and workerd the module is
 * loaded on import and `init()` is a no-op. Rejects with a KvledgerError `INIT_FAILED`.
 */
export declare function init(input?: WasmSource | Promise<WasmSource> | { module_or_path: WasmSource | Promise<WasmSource> }): Promise<void>;

/** `init()` from bytes or a compiled module, synchronously. Throws a KvledgerError `INIT_FAILED`. */
export declare function initSync(input: BufferSource | WebAssembly.Module | { module: BufferSource | WebAssembly.Module }): void;

/**
 * Reads one run's artifacts and describes what they contain: endpoints (families and series
 * per endpoint), phases and window candidates, schema versions, and which evidence exists.
 * Throws a KvledgerError: a read error (`code`, `file`, `line`/`column`/`json_path`) when a
 * file cannot be read, `BAD_OPTIONS` (with `json_path`) when the call itself is malformed.
 */
export declare function inspectRun(files: RunFileInput[], options?: InspectOptions | null): RunInspection;

/**
 * `inspectRun` for every run among `files` (a dropped folder: each `name` is the file's path
 * relative to it). One `{run, result}` or `{run, error}` per run, sorted by the run's folder
 * (`"."` for the top): an unreadable run never stops the others. Throws only for a malformed
 * call (`BAD_OPTIONS`, e.g. the same path twice).
 */
export declare function inspectRuns(files: RunFileInput[], options?: InspectOptions | null): RunOutcome<RunInspection>[];

/**
 * Accounts one run (CONTRACT sections 2–7): the verdict (`cache_validity`), tier rates with
 * bounds, per-role counters, per-endpoint sources, token totals, KV cache, offload, the
 * theoretical hit rate and the dashboard's `legacy` keys: the JSON of `kvledger account --json`.
 * A verdict is data: an ineligible run is returned, not thrown. Each file's content is read
 * from JavaScript a chunk at a time, so the module's memory grows with what accounting keeps,
 * not with the files' size.
 */
export declare function accountRun(files: RunFileInput[], options?: AccountOptions | null): Accounting;

/** `accountRun` for every run among `files`, grouped as `inspectRuns` groups them. */
export declare function accountRuns(files: RunFileInput[], options?: AccountOptions | null): RunOutcome<Accounting>[];

/**
 * The runs a tree of relative paths holds (a dropped folder's `webkitRelativePath`s), decided
 * from the names alone as `accountRuns` groups them: each run's root (`""` for the top), the
 * paths to read (relative to the top, its `launch.json` included) and the files it does not
 * read; beside them the files of no run. Reads no content, so each run can then be given to
 * `accountStream` on its own. Throws `BAD_OPTIONS` when `paths` is not an array of strings.
 */
export declare function groupRuns(paths: string[]): Discovery;

/** A run's file for `accountStream`: its name (recognised as `accountRun` recognises it) and its content, read chunk by chunk. */
export interface StreamFile {
    name: string;
    stream: ReadableStream<Uint8Array> | Blob | AsyncIterable<Uint8Array> | Iterable<Uint8Array> | Uint8Array | ArrayBuffer | ArrayBufferView;
}

/**
 * `accountRun`'s options, plus the memory the stream may use: `memory_budget`, bytes of the
 * module's heap in use while reading (default 50331648, 48 MiB: linear memory stays within
 * 64 MiB). Past it the file being read fails with `INPUT_TOO_LARGE`, never a trap; so does
 * the accounting after the last byte (`file` `"accounting"`) when a table of the run's series
 * would pass it, before the table is made.
 */
export type AccountStreamOptions = AccountOptions & { memory_budget?: number };

/** Told after each chunk pushed: the run's bytes read so far, and the file the chunk was of. */
export interface StreamProgress {
    bytes_read: number;
    file: string;
}

/**
 * `accountRun` over files read chunk by chunk (a `ReadableStream` each, or a Blob, an async
 * iterable of chunks, a buffer), never gathered whole: the same result as `accountRun` on the
 * same files, whatever the chunks. A file's remaining chunks are not read (its stream is
 * cancelled) once they cannot change the result (the file is ignored, or a file failed).
 * Rejects with a KvledgerError: as `accountRun`, plus `INPUT_TOO_LARGE` past the memory budget;
 * an error of a stream itself is passed on as it is.
 */
export declare function accountStream(
    files: StreamFile[],
    options?: AccountStreamOptions | null,
    controls?: {
        onProgress?: (progress: StreamProgress) => void;
        /**
         * Called once, before the promise resolves, with what a person inspecting the run sees
         * beside the result (the files read and ignored, the canonical counters over time).
         * Display only: it never changes the result.
         */
        onDetail?: (detail: RunDetail) => void;
    },
): Promise<Accounting>;

/**
 * The push API under `accountStream`: for each file `beginFile`, `push` its chunks (split
 * anywhere), `endFile`; then `finish`. Files may come in any order. Throws a KvledgerError
 * (`BAD_OPTIONS` for malformed options, from the constructor). Call `free()` when abandoning
 * a stream before `finish()` (which frees it).
 */
export declare class AccountStream {
    constructor(options?: AccountStreamOptions | null);
    /**
     * Begins the next file; `false` when none of its bytes are wanted (its name says it is not
     * read, or it can no longer change the outcome after a refusal): push nothing, `endFile`.
     */
    beginFile(name: string): boolean;
    /** Pushes the next bytes of the file begun; `false` when its remaining bytes are not needed. */
    push(chunk: Uint8Array | ArrayBuffer | ArrayBufferView): boolean;
    endFile(): void;
    /** Bytes pushed so far, every file together. */
    readonly bytesRead: number;
    /** The accounting of the run, as `accountRun` gives it. The stream is freed. */
    finish(): Accounting;
    free(): void;
}

/** What `warmUp` did: the generated runs accounted, their bytes, how long it took. */
export interface WarmUpSummary {
    runs: number;
    bytes: number;
    seconds: number;
    /** The signal stopped it before every run was accounted. */
    aborted: boolean;
}

/**
 * Makes the module's hot code ready before a user's first run: accounts four small generated
 * runs (a CSV export, a JSON export, a scrape JSONL with its request records, two Prometheus
 * captures; 3.6 MB in all) as `accountStream` would, and discards the results. A WebAssembly
 * engine runs a function first in baseline code and optimises it in the background once it has
 * run enough, so the first call on a run is otherwise several times slower than later ones; call
 * this when the page or worker is idle (after `init`), and a first call that comes a moment
 * later runs at nearly the speed of later ones (BENCHMARKS.md). The event loop turns between
 * runs; `signal` stops the rest (for instance when a user's files arrive). Rejects with
 * `BAD_OPTIONS` for malformed options, or as `accountStream` when the module is not usable.
 */
export declare function warmUp(options?: { signal?: AbortSignal } | null): Promise<WarmUpSummary>;

/** An upload for `validateUpload`: its bytes whole, or as they arrive. */
export type UploadInput = Uint8Array | ArrayBuffer | ArrayBufferView | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** Told after each chunk pushed: the upload's bytes read so far (as sent). */
export interface UploadProgress {
    bytes_read: number;
}

/**
 * Validates a result upload (docs/validate.md): the point's result JSON as the producer
 * writes it, alone or in a tar bundle (`result.json` beside the run's raw artifacts), plain or
 * gzip'd. Checks the limits before work and while streaming (a stream is read chunk by chunk,
 * never gathered, and cancelled as soon as the verdict is decided), every cache field's type
 * and range, and the claims against the accounting of the raw artifacts when they come with
 * it. Resolves with the verdict for every upload: a too-large, malformed or refused upload is
 * a verdict (`outcome`), not a rejection. Rejects only for a malformed call (a KvledgerError
 * `BAD_OPTIONS` with `json_path`, e.g. `limits.byte` for an unknown limit) or an error of the
 * stream itself (passed on as it is). The caller's buffer is never modified.
 */
export declare function validateUpload(
    input: UploadInput,
    limits?: Partial<UploadLimits> | null,
    controls?: {
        onProgress?: (progress: UploadProgress) => void;
        /**
         * The upload's total size when known before reading (a request's `Content-Length`):
         * past the `bytes` limit the verdict is given at once and the stream cancelled unread.
         * A buffer's or a Blob's own size is used without it.
         */
        size?: number;
    },
): Promise<UploadVerdict>;

/**
 * The push API under `validateUpload`: `push` each chunk (split anywhere) while it returns
 * `true`, then `finish` for the verdict. Throws a KvledgerError `BAD_OPTIONS` from the
 * constructor for limits that are refused. Call `free()` when abandoning it before `finish()`
 * (which frees it).
 */
export declare class UploadValidator {
    constructor(limits?: Partial<UploadLimits> | null);
    /** The total size when known before reading: `false` (decided, send nothing) past `bytes`. */
    expectSize(size: number): boolean;
    /** Pushes the next bytes; `false` once the verdict is decided (send no more). */
    push(chunk: Uint8Array | ArrayBuffer | ArrayBufferView): boolean;
    /** Bytes pushed so far, as sent. */
    readonly bytesRead: number;
    /** The verdict. The validator is freed. */
    finish(): UploadVerdict;
    free(): void;
}

/** The accounting contract this build implements (`"kvledger/1"`). */
export declare function contractVersion(): string;

/** The package version (the crate's version). */
export declare function packageVersion(): string;

/** Every code a KvledgerError can carry, in a stable order (the core's, then the JS side's). */
export declare function errorCodes(): KvledgerErrorCode[];

/** The shipped rate cards (normalized first), dated. */
export declare function rateCards(): RateCard[];

/** Every pricing reason code, in a stable order. */
export declare function pricingReasonCodes(): PricingCode[];

/** Prices one point: `{ row: BenchmarkRow }` or `{ observed: ObservedPoint }`. */
export declare function pricePoint(point: PointInput, options?: PriceOptions | null): PriceOutcome;

/** Prices dashboard rows, one outcome per row. */
export declare function priceRows(rows: BenchmarkRow[], options?: PriceOptions | null): PriceOutcome[];

/** Prices every point of a frontier and tells which segments may be priced. */
export declare function priceFrontier(points: PointInput[], options?: PriceOptions | null): FrontierPricing;

/** Interpolates along the frontier at `target` (interactivity) and prices, with per-segment eligibility. */
export declare function interpolateFrontier(points: PointInput[], target: number, options?: PriceOptions | null): FrontierInterpolation;

/**
 * Historical-trend pricing: one value per date (no extrapolation), plus a synthetic copy of the
 * last value at `extend_to` (a date) when later. Under `legacy` this is the trend surface.
 */
export declare function trendSeries(groups: TrendGroupInput[], target: number, extend_to?: string | null, options?: PriceOptions | null): TrendPoint[];

/** Money metrics of a revenue ($/GPU-hour; absent = not priced: every field absent). */
export declare function moneyMetrics(revenue_per_gpu_hour?: number | null, throughput_per_gpu?: number | null, power?: PowerCost | null): MoneyMetrics;

/** The profit estimator's result, or its skip reason. */
export declare function estimateProfit(input: ProfitInput): ProfitResult;

/** Fleet lifecycle: billable input tokens/s (`hit_rate` absent = input unchanged). */
export declare function billableInputRate(input: number, hit_rate: number | null | undefined, ratio: number): number;

/** Fleet lifecycle: `[billable_input, output]` tokens/s of a total. */
export declare function splitTokenStreams(total: number, share: number | null | undefined, hit_rate: number | null | undefined, ratio: number): [number, number];

/**
 * What pricing reads of an `accountRun` result (the verdict, tier rates, theoretical rate and
 * token totals), for `pricePoint({ observed: { cache } })`. Takes the result as returned, or
 * after a JSON round trip (e.g. read back from storage).
 */
export declare function cacheObservation(accounting: Accounting): CacheObservation;
