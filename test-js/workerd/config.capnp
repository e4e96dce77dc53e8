# workerd config of test-js/workerd.test.mjs: no bundler, the package's files as modules.
# The test overrides the socket address: --socket-addr http=127.0.0.1:<free port>.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .kvledgerWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const kvledgerWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    # What `import ... from "kvledger"` resolves to under the `workerd` condition.
    (name = "kvledger", esModule = "export * from \"js/workerd.js\"; export { default } from \"js/workerd.js\";"),
    (name = "js/workerd.js", esModule = embed "../../js/workerd.js"),
    (name = "js/public.js", esModule = embed "../../js/public.js"),
    (name = "js/bound.js", esModule = embed "../../js/bound.js"),
    (name = "js/api.js", esModule = embed "../../js/api.js"),
    (name = "js/error.js", esModule = embed "../../js/error.js"),
    (name = "js/warm.js", esModule = embed "../../js/warm.js"),
    (name = "pkg/web/kvledger.js", esModule = embed "../../pkg/web/kvledger.js"),
    (name = "pkg/web/kvledger_bg.wasm", wasm = embed "../../pkg/web/kvledger_bg.wasm"),
    # `kvledger/pricing` under the `workerd` condition: the pricing module's own files.
    (name = "kvledger/pricing", esModule = "export * from \"../js/pricing-workerd.js\"; export { default } from \"../js/pricing-workerd.js\";"),
    (name = "js/pricing-workerd.js", esModule = embed "../../js/pricing-workerd.js"),
    (name = "js/pricing-public.js", esModule = embed "../../js/pricing-public.js"),
    (name = "js/pricing-bound.js", esModule = embed "../../js/pricing-bound.js"),
    (name = "pkg/pricing/kvledger.js", esModule = embed "../../pkg/pricing/kvledger.js"),
    (name = "pkg/pricing/kvledger_bg.wasm", wasm = embed "../../pkg/pricing/kvledger_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
);
