// The same program as node-app.mjs in CommonJS, bundled by esbuild (CommonJS output).
const { readFileSync, readdirSync } = require("node:fs");
const path = require("node:path");
const { accountRun, KvledgerError } = require("kvledger");

const dir = process.argv[2];
const files = readdirSync(dir).map((name) => ({ name, bytes: readFileSync(path.join(dir, name)) }));
let refused;
try {
  accountRun(null);
} catch (e) {
  refused = e instanceof KvledgerError ? e.code : String(e);
}
console.log(JSON.stringify({ refused, result: accountRun(files) }));
