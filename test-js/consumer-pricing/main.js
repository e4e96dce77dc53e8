// A pricing-only page built by Vite with no config (copied to pricing-app/ in the consumer
// project): `init()` finds the pricing module through the entry's `new URL(...,
// import.meta.url)`, which Vite rewrites.
import init from "kvledger/pricing";
import { runPricing } from "../pricing-page.js";

runPricing(() => init());
