// Node ES module entry: the web build, initialised synchronously on import from the .wasm
// file, so the API is usable at once. `init()` / `initSync()` are harmless no-ops here.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { api } from "./bound.js";
import { loadWasmBytes } from "./node-wasm.js";

const here = (rel) => fileURLToPath(new URL(rel, import.meta.url));
api.autoInit(() =>
  loadWasmBytes([here("../pkg/web/kvledger_bg.wasm"), here("./kvledger_bg.wasm")], createRequire(import.meta.url).resolve),
);

export * from "./public.js";
export { init as default } from "./public.js";
