// A Worker that imports kvledger exactly as a consumer would ("kvledger", the workerd entry)
// and answers POSTed artifacts with inspectRun's result: plain JSON data, sent as it is; and
// POSTed points at /price with the pricing entry's ("kvledger/pricing") pricePoint; /warm-up
// runs warmUp() (its generated runs through accountStream, setTimeout between them).
import { inspectRun, isKvledgerError, KvledgerError, contractVersion, warmUp } from "kvledger";
import * as pricing from "kvledger/pricing";

export default {
  async fetch(request) {
    // `POST /price` with a point: the pricing entry's module prices it (a dashboard's worker).
    if (new URL(request.url).pathname === "/price") {
      try {
        return Response.json(pricing.pricePoint(await request.json()));
      } catch (e) {
        if (!pricing.isKvledgerError(e)) throw e;
        return Response.json({ error: e, instance: e instanceof pricing.KvledgerError }, { status: 400 });
      }
    }
    if (new URL(request.url).pathname === "/warm-up") {
      return Response.json(await warmUp());
    }
    if (request.method !== "POST") {
      return Response.json({ contract_version: contractVersion() });
    }
    const name = new URL(request.url).searchParams.get("name") ?? "upload";
    const bytes = new Uint8Array(await request.arrayBuffer());
    try {
      return Response.json(inspectRun([{ name, bytes }]));
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      return Response.json({ error: e, instance: e instanceof KvledgerError }, { status: 400 });
    }
  },
};
