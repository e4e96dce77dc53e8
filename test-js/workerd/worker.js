// A Worker that imports kvledger exactly as a consumer would ("kvledger", the workerd entry)
// and answers POSTed artifacts with inspectRun's JSON (bigints as decimal strings).
import { inspectRun, isKvledgerError, contractVersion } from "kvledger";

const replacer = (_key, value) => (typeof value === "bigint" ? value.toString() : value);

export default {
  async fetch(request) {
    if (request.method !== "POST") {
      return Response.json({ contractVersion: contractVersion() });
    }
    const name = new URL(request.url).searchParams.get("name") ?? "upload";
    const bytes = new Uint8Array(await request.arrayBuffer());
    try {
      const result = inspectRun([{ name, bytes }]);
      return new Response(JSON.stringify(result, replacer), {
        headers: { "content-type": "application/json" },
      });
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      const { name: errName, code, message, file, position } = e;
      return Response.json({ error: { name: errName, code, message, file, position } }, { status: 400 });
    }
  },
};
