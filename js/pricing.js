// `kvledger/pricing` for browsers and bundlers: call `await init()` once first. It fetches the
// pricing module (pkg/pricing/kvledger_bg.wasm) from beside the package; `init(url)` or
// `initSync({ module })` take it from elsewhere.
export * from "./pricing-public.js";
export { init as default } from "./pricing-public.js";
