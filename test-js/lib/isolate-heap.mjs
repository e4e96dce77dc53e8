// Samples a workerd isolate's heap through its V8 inspector (Runtime.getHeapUsage: the JS heap
// used and committed, and the ArrayBuffer backing stores, which hold request bodies and the
// .wasm's linear memory), every `ms`, printing one JSON line per sample until stdin closes.
// Run as a child process: `node --experimental-websocket isolate-heap.mjs WS_URL [ms]` (Node
// 20's WebSocket is behind that flag, and the test runner's processes do not have it).
const [url, every = "50"] = process.argv.slice(2);
const ws = new WebSocket(url);
let id = 0;
const pending = new Map();
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  pending.get(m.id)?.(m);
  pending.delete(m.id);
};
ws.onerror = () => process.exit(1);
await new Promise((resolve) => (ws.onopen = resolve));
const call = (method) =>
  new Promise((resolve) => {
    const i = ++id;
    pending.set(i, resolve);
    ws.send(JSON.stringify({ id: i, method }));
  });
let running = true;
process.stdin.on("close", () => (running = false));
process.stdin.resume();
while (running) {
  const { result } = await call("Runtime.getHeapUsage");
  if (result) {
    process.stdout.write(`${JSON.stringify({ t: performance.now(), used: result.usedSize, total: result.totalSize, backing: result.backingStorageSize ?? 0 })}\n`);
  }
  await new Promise((r) => setTimeout(r, Number(every)));
}
ws.close();
