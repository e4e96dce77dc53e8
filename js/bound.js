// The API bound to the web build's glue: one module state (initialised or not) shared by the
// browser, Node ESM, workerd and bundler entries; each entry only decides how the .wasm loads.
import * as glue from "../pkg/web/kvledger.js";
import { makeApi } from "./api.js";

// A literal `new URL(..., import.meta.url)`: bundlers that understand it (Vite, webpack,
// Parcel) emit the .wasm as an asset and rewrite this URL to it. Evaluated only when `init()`
// needs it: workerd has no `import.meta.url`.
export const api = makeApi(glue, () => new URL("../pkg/web/kvledger_bg.wasm", import.meta.url));
