// A CommonJS TypeScript consumer: `require("kvledger")` resolves through the `node` +
// `require` + `types` conditions to pkg/kvledger.d.cts (no default export, same types).
import kvledger = require("kvledger");

export function version(): string {
  const codes: kvledger.KvledgerErrorCode[] = kvledger.errorCodes();
  const a: kvledger.Accounting = kvledger.accountRun([{ name: "x.json", text: "{}" }], { policy: { max_rate_width: 0.01 } });
  const ns: kvledger.EpochNs | undefined = a.cache_validity.window.start_ns;
  const s = new kvledger.AccountStream({ memory_budget: 1 << 20 });
  s.free();
  void [codes, ns, kvledger.accountStream];
  try {
    kvledger.inspectRun([]);
  } catch (e) {
    if (e instanceof kvledger.KvledgerError) return e.code;
  }
  // @ts-expect-error: the CommonJS entry has no default export
  void kvledger.default;
  return kvledger.contractVersion();
}
