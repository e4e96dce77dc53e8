// Node ESM entry: the web build, initialised synchronously from the .wasm file on import,
// so callers can use the API at once. `init()` / `initSync()` are harmless no-ops here.
import { readFileSync } from "node:fs";
import { initSync } from "../pkg/web/kvledger.js";

initSync({ module: readFileSync(new URL("../pkg/web/kvledger_bg.wasm", import.meta.url)) });

export * from "../pkg/web/kvledger.js";
export { default, default as init } from "../pkg/web/kvledger.js";
