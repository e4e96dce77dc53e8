// Vite (dev server and build), no config: `init()` finds the .wasm through the package's
// `new URL(..., import.meta.url)`, which Vite rewrites.
import init from "kvledger";
import { run } from "./page.js";

run(() => init());
