// Time and memory of upload validation at the default limits, in the WASM build (Node), each
// case in a fresh process so the linear memory high-water is its own. The baseline of a bundle
// is accountStream on the same files in the same process run (the work validation adds to is
// that accounting), printed as a ratio.
//
//   node bench/validate.mjs RUN_DIR...   (e.g. runs from `kvledger synth --target-bytes 30MB`)
//
// Cases: each RUN_DIR as a gzip'd bundle with its own accounting as result.json (validated in
// full); the last RUN_DIR as a plain tar (refused by `bytes` when over 32 MiB); a 100 MB JSON
// body; a gzip bomb (64 x 16 MiB of zeros in a bundle); 30 MiB of `[`.
import { execFileSync } from "node:child_process";
import { createReadStream, readFileSync, readdirSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MiB = 2 ** 20;

function filesOf(dir, rel = "") {
  return readdirSync(path.join(dir, rel)).sort().flatMap((name) => {
    const p = path.join(rel, name);
    if (name === "truth.json") return [];
    return statSync(path.join(dir, p)).isDirectory() ? filesOf(dir, p) : [p];
  });
}

function member(name, size) {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, "utf8");
  h.write("0000644\0", 100);
  h.write("0000000\0", 108);
  h.write("0000000\0", 116);
  h.write(size.toString(8).padStart(11, "0") + "\0", 124);
  h.write("15024614270\0", 136);
  h.write("0", 156);
  h.write("ustar\0" + "00", 257, "binary");
  h.fill(" ", 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return h;
}

function tar(entries) {
  const parts = [];
  for (const [name, data] of entries) {
    parts.push(member(name, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

function streamOf(bytes, size = 64 * 1024) {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(new Uint8Array(bytes.subarray(at, at + size)));
      at += size;
    },
  });
}

/** One case, in this process: prints one JSON line. */
async function runCase(kind, arg) {
  const k = await import("../js/node.mjs");
  const glue = await import("../pkg/web/kvledger.js");
  const wasm = glue.initSync({ module: readFileSync(path.join(ROOT, "pkg/web/kvledger_bg.wasm")) });
  const linear = () => wasm.memory.buffer.byteLength;
  let upload;
  let baseline;
  if (kind === "bundle") {
    const names = filesOf(arg);
    const t0 = performance.now();
    const acc = await k.accountStream(
      names.map((n) => ({ name: n, stream: Readable.toWeb(createReadStream(path.join(arg, n))) })),
    ).catch((e) => e);
    baseline = { seconds: (performance.now() - t0) / 1000, outcome: acc instanceof Error ? acc.code : acc.cache_validity.status };
    const result = acc instanceof Error ? { cache_validity: { status: "VALID_COMPLETE", pricing_eligible: true } } : acc;
    upload = gzipSync(tar([["result.json", Buffer.from(JSON.stringify(result))], ...names.map((n) => [n, readFileSync(path.join(arg, n))])]));
  } else if (kind === "tar") {
    const names = filesOf(arg);
    upload = tar([["result.json", Buffer.from("{}")], ...names.map((n) => [n, readFileSync(path.join(arg, n))])]);
  } else if (kind === "plain100") {
    upload = Buffer.alloc(100 * 10 ** 6, 0x20);
    upload[0] = 0x7b;
  } else if (kind === "bomb") {
    const zeros = gzipSync(Buffer.alloc(16 * MiB));
    const parts = [gzipSync(Buffer.concat([member("result.json", 2), Buffer.from("{}"), Buffer.alloc(510)]))];
    for (let i = 0; i < 64; i++) parts.push(gzipSync(member(`plots/p${i}.png`, 16 * MiB)), zeros);
    upload = Buffer.concat(parts);
  } else if (kind === "deep") {
    upload = Buffer.alloc(30 * MiB, 0x5b);
  }
  const before = linear();
  let high = before;
  const t0 = performance.now();
  const v = await k.validateUpload(streamOf(upload), null, { onProgress: () => (high = Math.max(high, linear())) });
  const seconds = (performance.now() - t0) / 1000;
  high = Math.max(high, linear());
  console.log(JSON.stringify({
    kind, arg, upload_bytes: upload.length, outcome: v.outcome,
    errors: v.errors.map((e) => (e.limit ? `${e.code}(${e.limit.name})` : e.code)),
    recomputed: v.recomputed?.cache_validity.status, seconds, linear_before: before, linear_high: high,
    rss: process.memoryUsage().rss, baseline,
  }));
}

const [flag, kind, arg] = process.argv.slice(2);
if (flag === "--case") {
  await runCase(kind, arg);
} else {
  const dirs = process.argv.slice(2).map((d) => path.resolve(d));
  const cases = [...dirs.map((d) => ["bundle", d]), ...dirs.slice(-1).map((d) => ["tar", d]), ["plain100"], ["bomb"], ["deep"]];
  console.log("| case | upload | outcome | validate s | accountStream s (baseline) | ratio | linear memory high-water | node RSS |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const [kind, arg] of cases) {
    const line = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--case", kind, arg ?? ""], { encoding: "utf8", maxBuffer: 1 << 26 });
    const r = JSON.parse(line.trim().split("\n").pop());
    const name = kind === "bundle" ? `bundle.tgz of ${path.basename(arg)}` : kind === "tar" ? `plain tar of ${path.basename(arg)}` : kind;
    const base = r.baseline ? `${r.baseline.seconds.toFixed(2)} (${r.baseline.outcome})` : "";
    const ratio = r.baseline ? (r.seconds / r.baseline.seconds).toFixed(2) : "";
    console.log(`| ${name} | ${(r.upload_bytes / MiB).toFixed(1)} MiB | ${r.outcome} ${r.errors.join(" ")} | ${r.seconds.toFixed(2)} | ${base} | ${ratio} | ${(r.linear_high / MiB).toFixed(1)} MiB | ${(r.rss / MiB).toFixed(0)} MiB |`);
  }
}
