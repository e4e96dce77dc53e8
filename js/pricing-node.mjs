// `kvledger/pricing` in Node: the pricing module initialised synchronously on import.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { api } from "./pricing-bound.js";
import { loadWasmBytes } from "./node-wasm.js";

const here = (rel) => fileURLToPath(new URL(rel, import.meta.url));
api.autoInit(() =>
  loadWasmBytes(
    [here("../pkg/pricing/kvledger_bg.wasm"), here("./pricing_bg.wasm")],
    createRequire(import.meta.url).resolve,
    "kvledger/pricing_bg.wasm",
  ),
);

export * from "./pricing-public.js";
export { init as default } from "./pricing-public.js";
