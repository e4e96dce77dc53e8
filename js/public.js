// The public names of every ES module entry (types: the package's kvledger.d.ts).
import { api } from "./bound.js";
import { makeWarmUp } from "./warm.js";

export { KvledgerError, isKvledgerError } from "./error.js";

export const {
  init,
  initSync,
  inspectRun,
  inspectRuns,
  accountRun,
  accountRuns,
  groupRuns,
  accountStream,
  AccountStream,
  validateUpload,
  UploadValidator,
  contractVersion,
  packageVersion,
  errorCodes,
  rateCards,
  pricingReasonCodes,
  pricePoint,
  priceRows,
  priceFrontier,
  interpolateFrontier,
  trendSeries,
  moneyMetrics,
  estimateProfit,
  billableInputRate,
  splitTokenStreams,
  cacheObservation,
} = api;

/**
 * Not in the pricing entries (js/pricing-public.js); marked pure, so a bundle that does not
 * call it leaves out its generators (js/warm.js) too.
 */
export const warmUp = /* @__PURE__ */ makeWarmUp(api);
