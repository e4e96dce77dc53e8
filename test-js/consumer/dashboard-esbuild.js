// A pricing-only page bundled by esbuild for the browser: `kvledger/pricing` (the pricing
// module, a quarter of the full one's size), its .wasm imported with the `file` loader.
import init from "kvledger/pricing";
import wasmUrl from "kvledger/pricing_bg.wasm";
import { runPricing } from "./pricing-page.js";

runPricing(() => init(wasmUrl));
