// A pricing-only Cloudflare Worker (a dashboard's server side) bundled by `wrangler deploy
// --dry-run`: POST a point, get its price (or the KvledgerError, status 400).
import { pricePoint, contractVersion, isKvledgerError } from "kvledger/pricing";

export default {
  async fetch(request) {
    if (request.method !== "POST") return Response.json({ contract: contractVersion() });
    try {
      return Response.json(pricePoint(await request.json()));
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      return Response.json({ error: e }, { status: 400 });
    }
  },
};
