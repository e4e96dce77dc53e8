// The visualizer's build: a static app in www/dist (relative URLs, served from any folder,
// offline). The package is imported from its web entry (js/web.js); the bundled example runs
// are copied from examples/ at build time (not duplicated in git), and the reason codes'
// meanings are read from docs/*.md so the app says what the docs say.
import { defineConfig, type Plugin } from "vite";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Example runs shipped with the app: [id, folder under examples/, label]. The first opens by default. */
const EXAMPLES: [string, string, string][] = [
  ["vllm-agg-clean", "synth/vllm-agg-clean", "vLLM aggregated, clean (generated, eligible)"],
  ["vllm-1p1d-cpu-offload", "synth/vllm-1p1d-cpu-offload", "vLLM 1P1D with CPU offload (generated)"],
  ["vllm-agg-counter-reset", "synth/vllm-agg-counter-reset", "vLLM with a counter reset (generated)"],
  ["sglang-agg-errors-profiling", "synth/sglang-agg-errors-profiling", "SGLang with profiling errors (generated)"],
  ["vllm-mi355x-conc1", "vllm-mi355x-conc1", "vLLM on MI355X, concurrency 1 (real, CSV export only)"],
];

/** Docs the app links to, rendered to HTML beside it (docs/NAME.html). */
const DOCS = ["accounting.md", "pricing.md", "cli.md"];

function walk(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel)).flatMap((name) => {
    const r = rel ? `${rel}/${name}` : name;
    return statSync(path.join(dir, r)).isDirectory() ? walk(dir, r) : [r];
  });
}

/** Example runs: every file except the generator's truth.json, plus a manifest. */
function exampleFiles(): { fileName: string; source: Uint8Array | string }[] {
  const manifest = EXAMPLES.map(([id, folder, label]) => {
    const dir = path.join(ROOT, "examples", folder);
    const files = walk(dir).filter((f) => f !== "truth.json");
    return { id, label, files, dir };
  });
  return [
    { fileName: "examples/index.json", source: JSON.stringify(manifest.map(({ id, label, files }) => ({ id, label, files }))) },
    ...manifest.flatMap(({ id, files, dir }) =>
      files.map((f) => ({ fileName: `examples/${id}/${f}`, source: readFileSync(path.join(dir, f)) })),
    ),
  ];
}

/** `code → meaning` of every reason code in a docs table (`| \`code\` | ... | meaning |`). */
function reasonTable(doc: string, section: string): Record<string, { meaning: string; status?: string }> {
  const text = readFileSync(path.join(ROOT, "docs", doc), "utf8");
  const start = text.indexOf(`## ${section}`);
  if (start < 0) throw new Error(`docs/${doc} has no section "${section}"`);
  const end = text.indexOf("\n## ", start + 3);
  const out: Record<string, { meaning: string; status?: string }> = {};
  for (const line of text.slice(start, end < 0 ? undefined : end).split("\n")) {
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const codes = [...(cells[0] ?? "").matchAll(/`([a-z_-]+)`/g)].map((m) => m[1]);
    if (codes.length === 0 || cells.length < 2) continue;
    const meaning = cells[cells.length - 1].replace(/`/g, "");
    const status = cells.length === 3 ? cells[1].replace(/[()`]/g, "") : undefined;
    for (const code of codes) out[code] = { meaning, status };
  }
  return out;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const inline = (s: string) =>
  escapeHtml(s)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_m, t: string, href: string) => `<a href="${href.replace(/\.md(#|$)/, ".html$1")}">${t}</a>`);
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9 _-]/g, "").trim().replace(/ /g, "-");

/**
 * A docs page as HTML for offline reading, with the anchors the app links to: headings get
 * GitHub's slugs, a table row whose first cell is a code gets `id="code"`. Handles what docs/
 * uses: headings, tables, lists, fenced code, paragraphs.
 */
function docPage(name: string): string {
  const md = readFileSync(path.join(ROOT, "docs", name), "utf8");
  const out: string[] = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const code: string[] = [];
      while (++i < lines.length && !lines[i].startsWith("```")) code.push(lines[i]);
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
    } else if (/^#{1,4} /.test(line)) {
      const level = line.indexOf(" ");
      const text = line.slice(level + 1);
      out.push(`<h${level} id="${slug(text)}">${inline(text)}</h${level}>`);
    } else if (line.startsWith("|")) {
      const rows: string[] = [];
      for (; i < lines.length && lines[i].startsWith("|"); i++) {
        const cells = lines[i].split("|").slice(1, -1).map((c) => c.trim());
        if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
        const code = /^`([a-z_-]+)`/.exec(cells[0] ?? "")?.[1];
        const tag = rows.length === 0 ? "th" : "td";
        rows.push(`<tr${code ? ` id="${code}"` : ""}>${cells.map((c) => `<${tag}>${inline(c)}</${tag}>`).join("")}</tr>`);
      }
      i--;
      out.push(`<table>${rows.join("")}</table>`);
    } else if (/^\s*[-*] /.test(line)) {
      const items: string[] = [];
      for (; i < lines.length && /^\s*([-*] |  \S)/.test(lines[i]); i++) {
        if (/^\s*[-*] /.test(lines[i])) items.push(lines[i].replace(/^\s*[-*] /, ""));
        else items[items.length - 1] += ` ${lines[i].trim()}`;
      }
      i--;
      out.push(`<ul>${items.map((t) => `<li>${inline(t)}</li>`).join("")}</ul>`);
    } else if (line.trim() !== "") {
      const para: string[] = [line];
      while (i + 1 < lines.length && lines[i + 1].trim() !== "" && !/^(#|\||```|\s*[-*] )/.test(lines[i + 1])) para.push(lines[++i]);
      out.push(`<p>${inline(para.join(" "))}</p>`);
    }
  }
  const style = "body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color-scheme:light dark}table{border-collapse:collapse}td,th{border:1px solid #8888;padding:.2rem .5rem;vertical-align:top}tr:target{outline:3px solid #0550ae;background:#0550ae22}pre{overflow:auto;background:#8881;padding:.5rem}";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>kvledger docs/${name}</title><style>${style}</style></head><body><p>A copy of <code>docs/${name}</code> from the kvledger repository, for reading offline.</p>${out.join("\n")}</body></html>`;
}

function kvledgerAssets(): Plugin {
  const docsModule = "virtual:reason-docs";
  return {
    name: "kvledger-assets",
    resolveId: (id) => (id === docsModule ? `\0${docsModule}` : undefined),
    load(id) {
      if (id !== `\0${docsModule}`) return undefined;
      const accounting = reasonTable("accounting.md", "Statuses and reason codes");
      const pricing = { ...reasonTable("pricing.md", "Reason codes") };
      return `export const accounting = ${JSON.stringify(accounting)};\nexport const pricing = ${JSON.stringify(pricing)};`;
    },
    generateBundle() {
      for (const f of exampleFiles()) this.emitFile({ type: "asset", fileName: f.fileName, source: f.source });
      for (const doc of DOCS) this.emitFile({ type: "asset", fileName: `docs/${doc.replace(/\.md$/, ".html")}`, source: docPage(doc) });
    },
    configureServer(server) {
      const files = new Map<string, string | Uint8Array>(exampleFiles().map((f) => [`/${f.fileName}`, f.source]));
      for (const doc of DOCS) files.set(`/docs/${doc.replace(/\.md$/, ".html")}`, docPage(doc));
      server.middlewares.use((req, res, next) => {
        const body = files.get((req.url ?? "").split("?")[0]);
        if (body === undefined) return next();
        res.end(body);
      });
    },
  };
}

export default defineConfig({
  root: path.join(ROOT, "www"),
  base: "./",
  resolve: { alias: { kvledger: path.join(ROOT, "js", "web.js") } },
  plugins: [kvledgerAssets()],
  worker: { format: "es" },
  build: {
    outDir: path.join(ROOT, "www", "dist"),
    emptyOutDir: true,
    target: "es2022",
    reportCompressedSize: false,
  },
  server: { fs: { allow: [ROOT] } },
});
