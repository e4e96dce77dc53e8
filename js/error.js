// KvledgerError: every failure the package throws. Plain JS with no wasm, so it can be
// imported, thrown and caught before init, from every entry point. The package ships an ES
// module copy and a CommonJS copy of this class: both stamp the same global symbol on their
// errors, and `instanceof` looks for that symbol, so it holds across the copies.

const BRAND = Symbol.for("kvledger.KvledgerError");

/** Codes thrown by the JS side of the package (the Rust core's codes come from the wasm). */
export const JS_CODES = Object.freeze([
  "NOT_INITIALIZED", // a call before `init()` (browser, bundlers) or after the .wasm could not be loaded
  "INIT_FAILED", // `init()` / `initSync()` could not load or instantiate the .wasm
  "INTERNAL", // the WebAssembly module trapped or a result could not be read: a bug in kvledger
]);

/** Position fields copied from an error report, in this order. */
const FIELDS = ["file", "line", "column", "byte_offset", "json_path"];

export class KvledgerError extends Error {
  /**
   * @param {string} code stable code (`ErrorCode` or one of `JS_CODES`)
   * @param {string} message for people
   * @param {{file?: string, line?: number, column?: number, byte_offset?: number,
   *          json_path?: string, cause?: unknown}} [details]
   */
  constructor(code, message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    Object.defineProperty(this, "name", { value: "KvledgerError", writable: true, configurable: true });
    Object.defineProperty(this, BRAND, { value: true });
    this.code = code;
    for (const key of FIELDS) {
      if (details[key] !== undefined) this[key] = details[key];
    }
  }

  /** True for errors of any copy of the package (ESM or CommonJS). */
  static [Symbol.hasInstance](value) {
    return isKvledgerError(value);
  }

  /** `{name, code, message, file?, line?, column?, byte_offset?, json_path?}`. */
  toJSON() {
    const out = { name: this.name, code: this.code, message: this.message };
    for (const key of FIELDS) {
      if (this[key] !== undefined) out[key] = this[key];
    }
    return out;
  }
}

/** True when `value` is an error thrown by kvledger (any entry point, ESM or CommonJS). */
export function isKvledgerError(value) {
  return typeof value === "object" && value !== null && value[BRAND] === true;
}
