// Where the .wasm is on disk for the Node entries (ESM and CommonJS alike): beside the
// package's own files, else through the package's export (a bundle run inside a project that
// has kvledger installed), else next to the bundle (a bundle shipped with the .wasm copied).
import { existsSync, readFileSync } from "node:fs";

/**
 * @param {string[]} beside absolute paths to try first (the package layout, then the bundle's folder)
 * @param {(id: string) => string} resolve `require.resolve` of the caller
 */
export function loadWasmBytes(beside, resolve) {
  const tried = [];
  const candidates = [beside[0], () => resolve("kvledger/kvledger_bg.wasm"), ...beside.slice(1)];
  for (const c of candidates) {
    let file;
    try {
      file = typeof c === "function" ? c() : c;
    } catch {
      tried.push("kvledger/kvledger_bg.wasm (not resolvable)");
      continue;
    }
    if (existsSync(file)) return readFileSync(file);
    tried.push(file);
  }
  throw new Error(`kvledger_bg.wasm not found (tried ${tried.join(", ")}); copy it next to your bundle or call initSync({ module: bytes })`);
}
