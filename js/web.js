// Browser and generic ES module entry: call `await init()` once before anything else. It
// fetches kvledger_bg.wasm from beside the package (bundlers rewrite that URL to the emitted
// asset); `init(url)` or `initSync({ module })` take the .wasm from elsewhere.
export * from "./public.js";
export { init as default } from "./public.js";
