// A pricing-only page bundled by esbuild for the browser: `kvledger/pricing` (the pricing
// module, a quarter of the full one's size), its .wasm imported with the `file` loader.
import init, { pricePoint, contractVersion, isKvledgerError } from "kvledger/pricing";
import wasmUrl from "kvledger/pricing_bg.wasm";

const status = document.getElementById("status");
try {
  await init(wasmUrl);
  const point = { observed: { throughput_per_gpu: 2000, input_share: 0.9 } };
  document.getElementById("result").textContent = JSON.stringify({ contract: contractVersion(), priced: pricePoint(point) });
  status.textContent = "done";
} catch (e) {
  status.textContent = `failed: ${isKvledgerError(e) ? `${e.code} ${e.message}` : (e && e.stack) || e}`;
}
