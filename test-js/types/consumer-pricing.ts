// A TypeScript consumer of `kvledger/pricing` (resolved through the exports map to
// pkg/pricing.d.ts): the pricing functions and the package's types are there; the run
// functions are not values of this entry.
import init, {
  pricePoint,
  priceRows,
  cacheObservation,
  rateCards,
  isKvledgerError,
  type Accounting,
  type PriceOutcome,
  type RateCard,
  accountRun,
} from "kvledger/pricing";

export async function dashboard(accounting: Accounting): Promise<number | null> {
  await init();
  const cards: RateCard[] = rateCards();
  const observation = cacheObservation(accounting);
  const outcome: PriceOutcome = pricePoint({ observed: { throughput_per_gpu: 2000, input_share: 0.9, cache: observation } });
  const rows: PriceOutcome[] = priceRows([]);
  try {
    // @ts-expect-error the pricing entry has no run functions (a type-only re-export).
    accountRun([]);
  } catch (e) {
    if (isKvledgerError(e)) return null;
  }
  return cards.length + rows.length + (outcome.reasons?.length ?? 0);
}
