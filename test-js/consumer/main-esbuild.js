// esbuild for the browser: esbuild leaves `new URL(..., import.meta.url)` alone, so the page
// imports the .wasm with the `file` loader (`--loader:.wasm=file`) and hands its URL to init().
import init from "kvledger";
import wasmUrl from "kvledger/kvledger_bg.wasm";
import { run } from "./page.js";

run(() => init(wasmUrl));
