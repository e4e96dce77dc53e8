// The public API over the raw wasm exports (`pkg/web/kvledger.js`). Each call sends its
// arguments as JSON (bigints as decimal strings; files go as they are, their contents never
// through JSON), and reads back the JSON envelope the core made with serde_json:
// `{"ok": result}` becomes the return value, `{"error": {...}}` a thrown KvledgerError. So a
// result is plain JSON data: `JSON.stringify` works and a round trip is lossless.

import { KvledgerError, isKvledgerError, JS_CODES } from "./error.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `path.key`, or `path["a.prom"]` when the key is not an identifier (as the core prints it). */
function join(path, key) {
  if (IDENTIFIER.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

export function badOptions(path, message) {
  return new KvledgerError("BAD_OPTIONS", path === "" ? message : `${path}: ${message}`, {
    json_path: path === "" ? undefined : path,
  });
}

export function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const name = value.constructor?.name;
    return name && name !== "Object" ? `a ${name}` : "an object";
  }
  return `a ${typeof value}`;
}

/** Objects JSON.stringify would silently flatten to `{}` or mangle. */
function notJsonObject(value) {
  return (
    value instanceof Map ||
    value instanceof Set ||
    value instanceof WeakMap ||
    value instanceof WeakSet ||
    value instanceof Promise ||
    value instanceof RegExp ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value)
  );
}

/**
 * A JSON-ready copy of `value` (the caller's objects are never touched): bigints become
 * decimal strings, `undefined` members are dropped as JSON.stringify drops them, and what
 * JSON would lose silently (NaN, functions, Maps, cycles, an epoch-ns number beyond 2^53) is
 * refused by path, as the core refuses an unknown field.
 */
function toWire(value, path, key, seen) {
  switch (typeof value) {
    case "bigint":
      return value.toString();
    case "number":
      if (!Number.isFinite(value)) throw badOptions(path, `${value} is not a finite number`);
      if (key.endsWith("_ns") && !Number.isSafeInteger(value)) {
        throw badOptions(path, `${value} may have lost digits as a number: give epoch ns as a bigint or a decimal string`);
      }
      return value;
    case "string":
    case "boolean":
    case "undefined":
      return value;
    case "function":
    case "symbol":
      throw badOptions(path, `${describe(value)} is not a JSON value`);
  }
  if (value === null) return null;
  if (typeof value.toJSON === "function") return toWire(value.toJSON(key), path, key, seen);
  if (notJsonObject(value)) throw badOptions(path, `expected JSON data, got ${describe(value)}`);
  if (seen.has(value)) throw badOptions(path, "the value contains itself (a cycle)");
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item, i) => toWire(item, `${path}[${i}]`, "", seen) ?? null);
    }
    const out = {};
    for (const k of Object.keys(value)) {
      let member;
      try {
        member = value[k];
      } catch (e) {
        throw badOptions(join(path, k), `reading the field threw: ${e?.message ?? e}`);
      }
      const wire = toWire(member, join(path, k), k, seen);
      if (wire !== undefined) out[k] = wire;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** The JSON text of `value` for the core (`undefined` stays absent). */
function encode(value, path) {
  try {
    const wire = toWire(value, path, "", new Set());
    return wire === undefined ? undefined : JSON.stringify(wire);
  } catch (e) {
    if (isKvledgerError(e)) throw e;
    // A RangeError from a structure nested beyond the stack, or a throwing toJSON.
    throw badOptions(path, `cannot be read as JSON: ${e?.message ?? e}`);
  }
}

function positiveZero(_key, value) {
  return Object.is(value, -0) ? 0 : value;
}

function isPlainObject(value) {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** What a failed init says: the cause, and the fix when the cause is a known setup. */
function initFailed(how, e, where) {
  const cause = e?.message ?? String(e);
  let hint = "pass the .wasm yourself: `init(url)` with the URL where kvledger_bg.wasm is served, or `initSync({ module: bytes })` (the file ships as `kvledger/kvledger_bg.wasm`)";
  if (/\/\.vite\/deps\//.test(`${cause} ${where ?? ""}`)) {
    hint = "Vite's dev server pre-bundled kvledger into node_modules/.vite/deps/ without its .wasm: add `optimizeDeps: { exclude: [\"kvledger\"] }` to vite.config (README, Bundlers)";
  } else if (typeof WebAssembly !== "undefined" && e instanceof WebAssembly.CompileError) {
    // Fetched but not compiled: an engine without a feature the module uses, or not the file.
    hint = "use an engine with the WebAssembly features the module uses (README, Install: the full module needs SIMD, in Chrome and Edge 91, Firefox 89, Safari 16.4, Node 16.4 and later), and check that the .wasm given is the package's own";
  }
  return new KvledgerError("INIT_FAILED", `${how}: the WebAssembly module could not be loaded${where ? ` from ${where}` : ""}: ${cause}. Fix: ${hint}`, { cause: e });
}

/**
 * The API bound to one wasm-bindgen glue module (web target). `defaultWasm()` says where
 * `init()` fetches the .wasm when given nothing.
 */
export function makeApi(glue, defaultWasm) {
  let ready = false;
  /** Why the .wasm could not be loaded automatically (Node entries), for NOT_INITIALIZED. */
  let loadError;
  /** Set once a call has trapped: the module's memory can no longer be trusted. */
  let broken;

  function usable(fn) {
    if (broken) {
      throw new KvledgerError("INTERNAL", `${fn}: an earlier call trapped inside the WebAssembly module (${broken.message}); kvledger cannot be used again in this page, worker or process: reload or restart it`, { cause: broken });
    }
    if (!ready) {
      const why = loadError
        ? `the .wasm could not be loaded: ${loadError.message}`
        : "call `await init()` once (or `initSync({ module })`) before any other function";
      throw new KvledgerError("NOT_INITIALIZED", `${fn}: kvledger is not initialised: ${why}`, { cause: loadError });
    }
  }

  /** Calls raw export `fn` with the arguments `prepare()` encodes; returns the result. */
  function call(fn, prepare = () => []) {
    usable(fn);
    let args;
    try {
      args = prepare();
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      throw new KvledgerError(e.code, `${fn}: ${e.message}`, { json_path: e.json_path });
    }
    return answer(fn, () => glue[fn](...args));
  }

  /** Runs `raw` (a raw export or method, named `fn` in messages) and reads its envelope. */
  function answer(fn, raw) {
    let text;
    try {
      text = raw();
    } catch (e) {
      // The raw exports answer every failure as data; a throw is a trap (a bug, or memory
      // exhausted), after which the module's state is undefined.
      broken = e instanceof Error ? e : new Error(String(e));
      throw new KvledgerError("INTERNAL", `${fn}: the WebAssembly module trapped (${broken.message}); kvledger cannot be used again in this page, worker or process`, { cause: e });
    }
    let envelope;
    try {
      // JSON.stringify writes -0 as 0: read -0.0 as 0 so a round trip of any result is lossless.
      // serde_json writes a negative zero as `-0.0`, never `-0`; a reviver makes JSON.parse 3x
      // slower, so only a text with that spelling (or a number such as -0.05) takes it; dates
      // (`2026-01-…`) do not.
      envelope = text.includes("-0.0") ? JSON.parse(text, positiveZero) : JSON.parse(text);
    } catch (e) {
      throw new KvledgerError("INTERNAL", `${fn}: the WebAssembly module answered something that is not JSON`, { cause: e });
    }
    if (envelope.error !== undefined) {
      const { code, message, ...details } = envelope.error;
      throw new KvledgerError(code, `${fn}: ${message}`, details);
    }
    return envelope.ok;
  }

  const options = (o) => encode(o, "options");
  const named = (a) => encode(a, "");

  async function init(input) {
    if (ready) return;
    let given = input;
    if (given === undefined) {
      try {
        given = defaultWasm();
      } catch (e) {
        throw initFailed("init", e);
      }
    }
    const arg = isPlainObject(given) && "module_or_path" in given ? given : { module_or_path: given };
    const where = typeof arg.module_or_path === "string" || arg.module_or_path instanceof URL ? String(arg.module_or_path) : undefined;
    try {
      await glue.default(arg);
    } catch (e) {
      throw initFailed("init", e, where);
    }
    ready = true;
    loadError = undefined;
  }

  function initSync(input) {
    if (ready) return;
    const arg = isPlainObject(input) && "module" in input ? input : { module: input };
    if (arg.module === undefined || arg.module === null) {
      throw new KvledgerError("INIT_FAILED", "initSync: give the .wasm as `initSync({ module })`: its bytes or a compiled WebAssembly.Module");
    }
    try {
      glue.initSync(arg);
    } catch (e) {
      throw initFailed("initSync", e);
    }
    ready = true;
    loadError = undefined;
  }

  /** Node entries: load the .wasm at import; a failure is kept for NOT_INITIALIZED. */
  function autoInit(loadBytes) {
    let bytes;
    try {
      bytes = loadBytes();
    } catch (e) {
      loadError = new KvledgerError("INIT_FAILED", e?.message ?? String(e), { cause: e });
      return;
    }
    try {
      initSync({ module: bytes });
    } catch (e) {
      loadError = e;
    }
  }

  const { AccountStream, accountStream } = makeStreaming(glue, usable, answer);
  const { UploadValidator, validateUpload } = makeValidation(glue, usable, answer);

  return {
    init,
    initSync,
    autoInit,
    AccountStream,
    accountStream,
    UploadValidator,
    validateUpload,
    inspectRun: (files, opts) => call("inspectRun", () => [files, options(opts)]),
    inspectRuns: (files, opts) => call("inspectRuns", () => [files, options(opts)]),
    accountRun: (files, opts) => call("accountRun", () => [files, options(opts)]),
    accountRuns: (files, opts) => call("accountRuns", () => [files, options(opts)]),
    groupRuns: (paths) => call("groupRuns", () => [paths]),
    contractVersion: () => call("contractVersion"),
    packageVersion: () => call("packageVersion"),
    errorCodes: () => [...call("errorCodes"), ...JS_CODES],
    rateCards: () => call("rateCards"),
    pricingReasonCodes: () => call("pricingReasonCodes"),
    pricePoint: (point, opts) => call("pricePoint", () => [named({ point, options: opts })]),
    priceRows: (rows, opts) => call("priceRows", () => [named({ rows, options: opts })]),
    priceFrontier: (points, opts) => call("priceFrontier", () => [named({ points, options: opts })]),
    interpolateFrontier: (points, target, opts) =>
      call("interpolateFrontier", () => [named({ points, target, options: opts })]),
    trendSeries: (groups, target, extendTo, opts) =>
      call("trendSeries", () => [named({ groups, target, extend_to: extendTo, options: opts })]),
    moneyMetrics: (revenue, throughput, power) =>
      call("moneyMetrics", () => [
        named({ revenue_per_gpu_hour: revenue, throughput_per_gpu: throughput, power }),
      ]),
    estimateProfit: (input) => call("estimateProfit", () => [named({ input })]),
    billableInputRate: (input, hitRate, ratio) =>
      call("billableInputRate", () => [named({ input, hit_rate: hitRate, ratio })]),
    splitTokenStreams: (total, share, hitRate, ratio) =>
      call("splitTokenStreams", () => [named({ total, share, hit_rate: hitRate, ratio })]),
    cacheObservation: (accounting) => call("cacheObservation", () => [named({ accounting })]),
  };
}

// The streaming API: a run's files read chunk by chunk (never gathered here), pushed into the
// raw `AccountStream` class, then accounted as `accountRun` accounts them.

/** Chunks are pushed in pieces of at most this many bytes (each is copied into wasm memory). */
const PIECE = 1 << 20;

/** A chunk as a Uint8Array view (no copy), or BAD_OPTIONS at `path`. */
function chunkBytes(chunk, path) {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw badOptions(path, `expected a chunk of bytes (Uint8Array, ArrayBuffer or a view), got ${describe(chunk)}`);
}

/** A file's content as the API takes it: bytes, a Blob, a ReadableStream or an (async) iterable of chunks; else BAD_OPTIONS at `path`. */
function checkSource(source, path) {
  const ok =
    source instanceof ArrayBuffer ||
    ArrayBuffer.isView(source) ||
    (typeof Blob !== "undefined" && source instanceof Blob) ||
    (source !== null &&
      typeof source === "object" &&
      (typeof source.getReader === "function" || typeof source[Symbol.asyncIterator] === "function" || typeof source[Symbol.iterator] === "function"));
  if (!ok) {
    throw badOptions(path, `expected a ReadableStream, a Blob, a Uint8Array or an (async) iterable of Uint8Array chunks, got ${describe(source)}`);
  }
}

/**
 * The chunks of a file's content, as they come: a ReadableStream (read with a reader, and
 * cancelled when the rest is not wanted), a Blob (its stream), an async or sync iterable of
 * chunks, or one buffer.
 */
async function* chunksOf(source, path) {
  checkSource(source, path);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    yield chunkBytes(source, path);
    return;
  }
  const stream = typeof Blob !== "undefined" && source instanceof Blob ? source.stream() : source;
  if (stream !== null && typeof stream === "object" && typeof stream.getReader === "function") {
    const reader = stream.getReader();
    let ended = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          return;
        }
        yield chunkBytes(value, `${path} (a chunk)`);
      }
    } finally {
      if (!ended) await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
  for await (const chunk of stream) yield chunkBytes(chunk, `${path} (a chunk)`);
}

/** The raw constructor's arguments: the options' JSON without `memory_budget`, and the budget. */
function streamArgs(opts) {
  if (opts === undefined || opts === null || typeof opts !== "object" || Array.isArray(opts)) {
    return [encode(opts, "options"), undefined];
  }
  const { memory_budget: budget, ...rest } = opts;
  if (budget !== undefined && typeof budget !== "number") {
    throw badOptions("options.memory_budget", `expected a number of bytes, got ${describe(budget)}`);
  }
  return [encode(rest, "options"), budget];
}

function makeStreaming(glue, usable, answer) {
  /** One raw stream; every message starts with `label`. */
  function open(label, opts) {
    usable(label);
    let args;
    try {
      args = streamArgs(opts);
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
    }
    let raw;
    answer(label, () => {
      raw = new glue.AccountStream(...args);
      return raw.start();
    });
    let bytesRead = 0;
    const use = (fn) => {
      usable(label);
      if (raw === undefined) throw new KvledgerError("BAD_OPTIONS", `${label}: the stream has finished or was freed: start a new one`);
      return answer(label, () => fn(raw));
    };
    return {
      beginFile(name) {
        if (typeof name !== "string") {
          throw new KvledgerError("BAD_OPTIONS", `${label}: name: expected a file name (a string), got ${describe(name)}`, { json_path: "name" });
        }
        return use((r) => r.beginFile(name));
      },
      push(chunk, path = "chunk") {
        let bytes;
        try {
          bytes = chunkBytes(chunk, path);
        } catch (e) {
          throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
        }
        let wants = true;
        let at = 0;
        do {
          const out = use((r) => r.push(bytes.subarray(at, at + PIECE)));
          bytesRead = out.bytes_read;
          wants = out.wants_more;
          at += PIECE;
        } while (wants && at < bytes.byteLength);
        return wants;
      },
      endFile() {
        use((r) => r.endFile());
      },
      get bytesRead() {
        return bytesRead;
      },
      finish() {
        try {
          return use((r) => joined(r.finish()));
        } finally {
          this.free();
        }
      },
      finishDetailed() {
        try {
          return use((r) => joined(r.finishDetailed()));
        } finally {
          this.free();
        }
      },
      free() {
        if (raw !== undefined) raw.free();
        raw = undefined;
      },
    };
  }

  /**
   * A stream's reply: the raw class hands it over as it is written, in `Uint8Array`s of its
   * UTF-8 text (a piece may end inside a character), so that a large one is never whole in
   * the module's linear memory. They are copied into one array out here and decoded once:
   * decoded piece by piece, they made a string of pieces that V8 joined again before
   * `JSON.parse` (a 16.5 MB reply: 40-77 ms against 17-38 ms). Each piece is let go once
   * copied.
   */
  function joined(pieces) {
    let length = 0;
    for (const piece of pieces) length += piece.length;
    const whole = new Uint8Array(length);
    let at = 0;
    for (let i = 0; i < pieces.length; i++) {
      whole.set(pieces[i], at);
      at += pieces[i].length;
      pieces[i] = undefined;
    }
    return new TextDecoder().decode(whole);
  }

  /** The low-level push API (see the d.ts). */
  class AccountStream {
    #s;
    constructor(options) {
      this.#s = open("AccountStream", options);
    }
    beginFile(name) {
      return this.#s.beginFile(name);
    }
    push(chunk) {
      return this.#s.push(chunk);
    }
    endFile() {
      this.#s.endFile();
    }
    get bytesRead() {
      return this.#s.bytesRead;
    }
    finish() {
      return this.#s.finish();
    }
    free() {
      this.#s.free();
    }
  }

  async function accountStream(files, options, controls) {
    const label = "accountStream";
    if (!Array.isArray(files)) {
      throw new KvledgerError("BAD_OPTIONS", `${label}: files: expected an array of files {name, stream}, got ${describe(files)}`, { json_path: "files" });
    }
    const onProgress = controls?.onProgress;
    if (onProgress !== undefined && typeof onProgress !== "function") {
      throw new KvledgerError("BAD_OPTIONS", `${label}: onProgress: expected a function, got ${describe(onProgress)}`, { json_path: "onProgress" });
    }
    const onDetail = controls?.onDetail;
    if (onDetail !== undefined && typeof onDetail !== "function") {
      throw new KvledgerError("BAD_OPTIONS", `${label}: onDetail: expected a function, got ${describe(onDetail)}`, { json_path: "onDetail" });
    }
    files.forEach((file, i) => {
      const bad = (path, message) => new KvledgerError("BAD_OPTIONS", `${label}: ${path}: ${message}`, { json_path: path });
      if (file === null || typeof file !== "object") throw bad(`files[${i}]`, `expected a file {name, stream}, got ${describe(file)}`);
      for (const key of Object.keys(file)) {
        if (key !== "name" && key !== "stream") throw bad(`files[${i}].${key}`, `unknown field \`${key}\`, expected \`name\` or \`stream\``);
      }
      if (typeof file.name !== "string") throw bad(`files[${i}].name`, `expected a string, got ${describe(file.name)}`);
      if (file.stream === undefined) throw bad(`files[${i}]`, "missing field `stream`");
    });
    const s = open(label, options);
    try {
      for (const [i, { name, stream }] of files.entries()) {
        const path = `files[${i}].stream`;
        const wanted = s.beginFile(name);
        try {
          if (!wanted) {
            // Not pulled at all (its type still checked): after a refusal, a folder of 20,000
            // captures opened and read a chunk of each file left (25 of 28 s).
            checkSource(stream, path);
            if (typeof stream.cancel === "function" && !stream.locked) await stream.cancel().catch(() => {});
          } else {
            for await (const chunk of chunksOf(stream, path)) {
              const wants = s.push(chunk, path);
              if (onProgress) onProgress({ bytes_read: s.bytesRead, file: name });
              if (!wants) break;
            }
          }
        } catch (e) {
          if (isKvledgerError(e) && !e.message.startsWith(`${label}:`)) {
            throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
          }
          throw e;
        }
        s.endFile();
      }
      if (!onDetail) return s.finish();
      const { accounting, detail } = s.finishDetailed();
      onDetail(detail);
      return accounting;
    } finally {
      s.free();
    }
  }

  return { AccountStream, accountStream };
}

// Upload validation: an upload's bytes, read chunk by chunk (never gathered here), pushed into
// the raw `UploadValidator` class until its verdict is decided; the verdict is data whatever
// the upload (too large, malformed, refused claims), never a rejection.

function makeValidation(glue, usable, answer) {
  /** One raw validator; every message starts with `label`. */
  function open(label, limits) {
    usable(label);
    let json;
    try {
      json = encode(limits, "limits");
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
    }
    let raw;
    answer(label, () => {
      raw = new glue.UploadValidator(json);
      return raw.start();
    });
    let bytesRead = 0;
    const use = (fn) => {
      usable(label);
      if (raw === undefined) throw new KvledgerError("BAD_OPTIONS", `${label}: the validator has finished or was freed: start a new one`);
      return answer(label, () => fn(raw));
    };
    return {
      expectSize(size) {
        return use((r) => r.expectSize(size));
      },
      push(chunk, path = "chunk") {
        let bytes;
        try {
          bytes = chunkBytes(chunk, path);
        } catch (e) {
          throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
        }
        let wants = true;
        let at = 0;
        do {
          const out = use((r) => r.push(bytes.subarray(at, at + PIECE)));
          bytesRead = out.bytes_read;
          wants = out.wants_more;
          at += PIECE;
        } while (wants && at < bytes.byteLength);
        return wants;
      },
      get bytesRead() {
        return bytesRead;
      },
      finish() {
        try {
          return use((r) => r.finish());
        } finally {
          this.free();
        }
      },
      free() {
        if (raw !== undefined) raw.free();
        raw = undefined;
      },
    };
  }

  /** The low-level push API (see the d.ts). */
  class UploadValidator {
    #v;
    constructor(limits) {
      this.#v = open("UploadValidator", limits);
    }
    expectSize(size) {
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
        throw new KvledgerError("BAD_OPTIONS", `UploadValidator: size: expected a whole number of bytes, got ${describe(size)}`, { json_path: "size" });
      }
      return this.#v.expectSize(size);
    }
    push(chunk) {
      return this.#v.push(chunk);
    }
    get bytesRead() {
      return this.#v.bytesRead;
    }
    finish() {
      return this.#v.finish();
    }
    free() {
      this.#v.free();
    }
  }

  async function validateUpload(input, limits, controls) {
    const label = "validateUpload";
    const onProgress = controls?.onProgress;
    if (onProgress !== undefined && typeof onProgress !== "function") {
      throw new KvledgerError("BAD_OPTIONS", `${label}: onProgress: expected a function, got ${describe(onProgress)}`, { json_path: "onProgress" });
    }
    if (input === null || input === undefined || typeof input === "string") {
      throw new KvledgerError("BAD_OPTIONS", `${label}: input: expected bytes (Uint8Array, ArrayBuffer, a view), a Blob, a ReadableStream or an async iterable of Uint8Array chunks, got ${describe(input)}`, { json_path: "input" });
    }
    const declared = controls?.size;
    if (declared !== undefined && declared !== null && (typeof declared !== "number" || !Number.isSafeInteger(declared) || declared < 0)) {
      throw new KvledgerError("BAD_OPTIONS", `${label}: size: expected a whole number of bytes (e.g. Content-Length), got ${describe(declared)}`, { json_path: "size" });
    }
    // The total size when known before reading: past the `bytes` limit nothing is read.
    const size =
      input instanceof ArrayBuffer || ArrayBuffer.isView(input)
        ? input.byteLength
        : typeof Blob !== "undefined" && input instanceof Blob
          ? input.size
          : (declared ?? undefined);
    const v = open(label, limits);
    try {
      if (size !== undefined && !v.expectSize(size)) {
        if (typeof input?.cancel === "function" && !input.locked) await input.cancel().catch(() => {});
        return v.finish();
      }
      try {
        for await (const chunk of chunksOf(input, "input")) {
          const wants = v.push(chunk, "input");
          if (onProgress) onProgress({ bytes_read: v.bytesRead });
          if (!wants) break;
        }
      } catch (e) {
        if (isKvledgerError(e) && !e.message.startsWith(`${label}:`)) {
          throw new KvledgerError(e.code, `${label}: ${e.message}`, { json_path: e.json_path });
        }
        throw e;
      }
      return v.finish();
    } finally {
      v.free();
    }
  }

  return { UploadValidator, validateUpload };
}
