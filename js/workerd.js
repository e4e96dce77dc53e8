// Cloudflare Workers / workerd entry: the runtime compiles the statically imported .wasm
// (Wrangler's default rule for `*.wasm`; no fetch, no eval), and the module is instantiated
// when this entry loads. `init()` / `initSync()` are harmless no-ops here.
import wasm from "../pkg/web/kvledger_bg.wasm";
import { initSync } from "./public.js";

initSync({ module: wasm });

export * from "./public.js";
export { init as default } from "./public.js";
