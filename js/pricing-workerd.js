// `kvledger/pricing` on Cloudflare Workers / workerd: the pricing module imported statically
// (Wrangler's default rule for `*.wasm`) and instantiated when this entry loads, as
// js/workerd.js does for the full module. `init()` / `initSync()` are harmless no-ops here.
import wasm from "../pkg/pricing/kvledger_bg.wasm";
import { initSync } from "./pricing-public.js";

initSync({ module: wasm });

export * from "./pricing-public.js";
export { init as default } from "./pricing-public.js";
