// The consumer page's work, shared by its bundler variants: load the wasm (each variant says
// how), fetch an example run's files, account it, and show the result as JSON.
import { accountRun, contractVersion, isKvledgerError, KvledgerError } from "kvledger";

async function runFiles() {
  const names = await (await fetch("run/files.json")).json();
  return Promise.all(
    names.map(async (name) => ({ name, bytes: new Uint8Array(await (await fetch(`run/${name}`)).arrayBuffer()) })),
  );
}

export async function run(loadWasm) {
  const status = document.getElementById("status");
  let beforeInit;
  try {
    contractVersion();
  } catch (e) {
    beforeInit = e instanceof KvledgerError ? e.code : `not a KvledgerError: ${e}`;
  }
  try {
    await loadWasm();
    const result = accountRun(await runFiles());
    let refused;
    try {
      accountRun([], { policy: { maxRateWidth: 0.01 } });
    } catch (e) {
      refused = isKvledgerError(e) ? e.toJSON() : String(e);
    }
    document.getElementById("result").textContent = JSON.stringify({ contract: contractVersion(), beforeInit, refused, result });
    status.textContent = "done";
  } catch (e) {
    status.textContent = `failed: ${isKvledgerError(e) ? `${e.code} ${e.message}` : (e && e.stack) || e}`;
  }
}
