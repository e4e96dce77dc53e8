// Browser / generic ESM entry (wasm-pack --target web).
// Call `await init()` once before anything else; it fetches kvledger_bg.wasm next to
// pkg/web/kvledger.js. `initSync({ module })` takes bytes or a WebAssembly.Module instead.
export * from "../pkg/web/kvledger.js";
export { default, default as init } from "../pkg/web/kvledger.js";
