// Where the .wasm is on disk for the Node entries (ESM and CommonJS alike): beside the
// package's own files, else through the package's export (a bundle run inside a project that
// has kvledger installed), else next to the bundle (a bundle shipped with the .wasm copied).
import { existsSync, readFileSync } from "node:fs";

/**
 * @param {string[]} beside absolute paths to try first (the package layout, then the bundle's folder)
 * @param {(id: string) => string} resolve `require.resolve` of the caller
 * @param {string} exported the package export of the .wasm (the full or the pricing module)
 */
export function loadWasmBytes(beside, resolve, exported = "kvledger/kvledger_bg.wasm") {
  const tried = [];
  const candidates = [beside[0], () => resolve(exported), ...beside.slice(1)];
  for (const c of candidates) {
    let file;
    try {
      file = typeof c === "function" ? c() : c;
    } catch {
      tried.push(`${exported} (not resolvable)`);
      continue;
    }
    if (existsSync(file)) return readFileSync(file);
    tried.push(file);
  }
  const name = exported.split("/").pop();
  throw new Error(`${name} not found (tried ${tried.join(", ")}); copy it next to your bundle or call initSync({ module: bytes })`);
}
