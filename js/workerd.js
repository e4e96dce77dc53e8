// Cloudflare workerd / Workers entry: the runtime compiles the statically imported .wasm
// module (no fetch, no eval), and initSync instantiates it when this module is loaded.
import wasm from "../pkg/web/kvledger_bg.wasm";
import { initSync } from "../pkg/web/kvledger.js";

initSync({ module: wasm });

export * from "../pkg/web/kvledger.js";
export { default, default as init } from "../pkg/web/kvledger.js";
