// A Worker that imports kvledger exactly as a consumer would ("kvledger", the workerd entry)
// and answers POSTed artifacts with inspectRun's result: plain JSON data, sent as it is.
import { inspectRun, isKvledgerError, KvledgerError, contractVersion } from "kvledger";

export default {
  async fetch(request) {
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
