// The public names of the `kvledger/pricing` entries (types: the package's pkg/pricing.d.ts):
// pricing, rate cards and the versions; no run reading (that is the full entry, `kvledger`).
import { api } from "./pricing-bound.js";

export { KvledgerError, isKvledgerError } from "./error.js";

export const {
  init,
  initSync,
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
