// The one ratio table of scripts/bench, from the TSVs its steps wrote into DATA:
//   node bench/table.mjs [--markdown] DATA
// native.tsv (benches/formats.rs; for the CSV also the csv crate's time), python.tsv (bench/producer.py), rss.tsv (/usr/bin/time -v
// of the CLI), wasm.tsv (bench/wasm.mjs), endpoints.tsv (the endpoint-scaling runs). Rows are
// joined on (format, byte size): every ratio of a row is over the same bytes.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
const markdown = args.includes("--markdown");
const data = args.find((a) => !a.startsWith("--"));
if (!data) {
  console.error("usage: node bench/table.mjs [--markdown] DATA");
  process.exit(2);
}

/** A TSV as objects; rows without a header are given `names`. */
function tsv(name, names) {
  const p = path.join(data, name);
  if (!existsSync(p)) return [];
  const lines = readFileSync(p, "utf8").split("\n").filter((l) => l.trim());
  const head = names ?? lines.shift().split("\t");
  return lines.map((l) => Object.fromEntries(l.split("\t").map((v, i) => [head[i], v])));
}

const key = (format, bytes) => `${format}:${bytes}`;
const native = tsv("native.tsv");
const python = new Map(tsv("python.tsv", ["format", "bytes", "s"]).map((r) => [key(r.format, r.bytes), Number(r.s)]));
const rss = new Map(tsv("rss.tsv", ["format", "bytes", "rss"]).map((r) => [key(r.format, r.bytes), Number(r.rss)]));
// bench/wasm.mjs names files; scripts/bench lays them out as <size>mb/<format>/<file>.
const wasm = new Map(tsv("wasm.tsv").map((r) => [key(path.basename(path.dirname(r.file)), r.bytes), r]));
const endpoints = tsv("endpoints.tsv", ["endpoints", "bytes", "wall", "cpu", "rss"]);

const fmt = (v, digits = 2) => (v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(digits));
const rows = native.map((n) => {
  const k = key(n.format, n.bytes);
  const bytes = Number(n.bytes);
  const account = Number(n.account_s);
  const w = wasm.get(k);
  return [
    n.format,
    fmt(bytes / 1e6, 1),
    fmt(bytes / 1e6 / account, 1),
    fmt(Number(n.read_vs_ignored_any), 3),
    fmt(Number(n.account_vs_ignored_any), 3),
    fmt(python.has(k) ? python.get(k) / account : undefined),
    fmt(w ? Number(w.wasm_vs_native) : undefined),
    fmt(w ? Number(w.wasm_first_vs_native) : undefined),
    fmt(w ? Number(w.wasm_warmed_first_vs_native) : undefined),
    fmt(rss.has(k) ? rss.get(k) / bytes : undefined),
    fmt(w ? Number(w.wasm_memory_vs_input) : undefined),
  ];
});
const head = [
  "format",
  "input MB",
  "account MB/s",
  "read ÷ IgnoredAny",
  "account ÷ IgnoredAny",
  "account ÷ Python",
  "WASM ÷ native",
  "WASM 1st call ÷ native",
  "WASM 1st call after warmUp ÷ native",
  "peak RSS ÷ input",
  "WASM memory ÷ input",
];
const epHead = ["endpoints", "input MB", "account wall s", "account CPU s", "CPU ms per 1k endpoints", "peak RSS MB"];
const epRows = endpoints.map((e) => [
  e.endpoints,
  fmt(Number(e.bytes) / 1e6, 1),
  fmt(Number(e.wall)),
  fmt(Number(e.cpu)),
  fmt((Number(e.cpu) * 1000) / (Number(e.endpoints) / 1000), 0),
  fmt(Number(e.rss) / 1e6, 0),
]);

function rustc() {
  try {
    return execFileSync("rustc", ["-V"], { encoding: "utf8" }).trim();
  } catch {
    return "rustc unknown";
  }
}
const cpus = os.cpus();
const machine = `${cpus[0]?.model ?? "cpu"} × ${cpus.length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, ${rustc()}, node ${process.version}`;

function print(head, rows) {
  if (markdown) {
    console.log(`| ${head.join(" | ")} |`);
    console.log(`| ${head.map((h, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`);
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  } else {
    const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ");
    console.log(line(head));
    for (const r of rows) console.log(line(r));
  }
}

// The CSV's second baseline (benches/formats.rs): the csv crate splitting the same bytes into
// records and fields, against which a CSV reader is better judged than against a JSON scan.
const csvRows = native
  .filter((n) => Number.isFinite(Number(n.csv_crate_s)))
  .map((n) => {
    const bytes = Number(n.bytes);
    const crate = Number(n.csv_crate_s);
    return [
      n.format,
      fmt(bytes / 1e6, 1),
      fmt(bytes / 1e6 / crate, 1),
      fmt(crate / Number(n.read_s), 3),
      fmt(crate / Number(n.account_s), 3),
    ];
  });
const csvHead = ["format", "input MB", "csv crate MB/s", "read ÷ csv crate", "account ÷ csv crate"];

console.log(markdown ? `Machine: ${machine}\n` : `machine: ${machine}\n`);
print(head, rows);
if (csvRows.length) {
  console.log("");
  print(csvHead, csvRows);
}
if (epRows.length) {
  console.log("");
  print(epHead, epRows);
}
console.log(
  `\n${markdown ? "" : "ratios: "}Ratios above 1 mean kvledger is faster (throughput ÷ throughput on the same bytes); ` +
    "memory ratios are bytes ÷ input bytes (lower is better).",
);
