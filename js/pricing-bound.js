// The API bound to the pricing module's glue (pkg/pricing: the crate built without the run
// exports, a quarter of the full module's size), with a module state of its own. The entry
// `kvledger/pricing` is for pages that only price points; the same Rust pricing code and
// eligibility guard as the full module.
import * as glue from "../pkg/pricing/kvledger.js";
import { makeApi } from "./api.js";

// A literal `new URL(..., import.meta.url)`, as in js/bound.js: bundlers emit the .wasm.
export const api = makeApi(glue, () => new URL("../pkg/pricing/kvledger_bg.wasm", import.meta.url));
