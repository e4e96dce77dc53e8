// A Node program bundled by esbuild (ES module output): accounts the run in the folder named
// on the command line and prints the result as JSON.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { accountRun, KvledgerError } from "kvledger";

const dir = process.argv[2];
const files = readdirSync(dir).map((name) => ({ name, bytes: readFileSync(path.join(dir, name)) }));
let refused;
try {
  accountRun(null);
} catch (e) {
  refused = e instanceof KvledgerError ? e.code : String(e);
}
console.log(JSON.stringify({ refused, result: accountRun(files) }));
