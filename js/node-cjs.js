// Source of the CommonJS entry (pkg/kvledger.cjs, made by scripts/build-pkg with esbuild):
// the same API and glue as the ES module entries, in one CommonJS file that loads the one
// shared .wasm (pkg/web/kvledger_bg.wasm) on require. Not shipped itself.
import path from "node:path";
import { api } from "./bound.js";
import { loadWasmBytes } from "./node-wasm.js";

/* global __dirname, require */
api.autoInit(() =>
  loadWasmBytes([path.join(__dirname, "web", "kvledger_bg.wasm"), path.join(__dirname, "kvledger_bg.wasm")], require.resolve),
);

export * from "./public.js";
