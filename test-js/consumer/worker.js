// A Cloudflare Worker bundled by `wrangler deploy --dry-run`: POST a JSON array of
// {name, text} files, get the accounting result (or the KvledgerError, status 400).
import { accountRun, contractVersion, isKvledgerError, KvledgerError } from "kvledger";

export default {
  async fetch(request) {
    if (request.method !== "POST") return Response.json({ contract: contractVersion() });
    try {
      return Response.json(accountRun(await request.json()));
    } catch (e) {
      if (!isKvledgerError(e)) throw e;
      return Response.json({ error: e, instance: e instanceof KvledgerError }, { status: 400 });
    }
  },
};
