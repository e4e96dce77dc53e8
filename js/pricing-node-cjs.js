// Source of the pricing entry's CommonJS file (pkg/pricing.cjs, made by scripts/build-pkg with
// esbuild): the pricing module's API, loading pkg/pricing/kvledger_bg.wasm on require.
import path from "node:path";
import { api } from "./pricing-bound.js";
import { loadWasmBytes } from "./node-wasm.js";

/* global __dirname, require */
api.autoInit(() =>
  loadWasmBytes(
    [path.join(__dirname, "pricing", "kvledger_bg.wasm"), path.join(__dirname, "pricing_bg.wasm")],
    require.resolve,
    "kvledger/pricing_bg.wasm",
  ),
);

export * from "./pricing-public.js";
