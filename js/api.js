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

function badOptions(path, message) {
  return new KvledgerError("BAD_OPTIONS", path === "" ? message : `${path}: ${message}`, {
    json_path: path === "" ? undefined : path,
  });
}

function describe(value) {
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
    let text;
    try {
      text = glue[fn](...args);
    } catch (e) {
      // The raw exports answer every failure as data; a throw is a trap (a bug, or memory
      // exhausted), after which the module's state is undefined.
      broken = e instanceof Error ? e : new Error(String(e));
      throw new KvledgerError("INTERNAL", `${fn}: the WebAssembly module trapped (${broken.message}); kvledger cannot be used again in this page, worker or process`, { cause: e });
    }
    let envelope;
    try {
      // JSON.stringify writes -0 as 0: read -0.0 as 0 so a round trip of any result is lossless.
      envelope = text.includes("-0") ? JSON.parse(text, positiveZero) : JSON.parse(text);
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

  return {
    init,
    initSync,
    autoInit,
    inspectRun: (files, opts) => call("inspectRun", () => [files, options(opts)]),
    inspectRuns: (files, opts) => call("inspectRuns", () => [files, options(opts)]),
    accountRun: (files, opts) => call("accountRun", () => [files, options(opts)]),
    accountRuns: (files, opts) => call("accountRuns", () => [files, options(opts)]),
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
