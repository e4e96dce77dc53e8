// The pricing-only pages' work, shared by their bundler variants: load the pricing module
// (each variant says how), price a point, and show the result as JSON.
import { pricePoint, contractVersion, isKvledgerError } from "kvledger/pricing";

export async function runPricing(loadWasm) {
  const status = document.getElementById("status");
  try {
    await loadWasm();
    const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9 } };
    document.getElementById("result").textContent = JSON.stringify({ contract: contractVersion(), priced: pricePoint(point) });
    status.textContent = "done";
  } catch (e) {
    status.textContent = `failed: ${isKvledgerError(e) ? `${e.code} ${e.message}` : (e && e.stack) || e}`;
  }
}
