// Every README example marked ```js test (ES module) or ```cjs test (CommonJS) is run with
// node from a temp file inside the repo, so that `kvledger` resolves to this package.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT } from "./lib/util.mjs";

/** Fenced blocks whose info string is exactly `js test` or `cjs test`, with their line. */
export function extractBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 1;
    const close = new RegExp(`^\\s*${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    while (j < lines.length && !close.test(lines[j])) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
      j++;
    }
    const kind = info.trim();
    if (kind === "js test" || kind === "cjs test") {
      blocks.push({ kind, line: i + 1, code: body.join("\n") + "\n" });
    }
    i = j;
  }
  return blocks;
}

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const blocks = extractBlocks(readme);

test("README has runnable examples", () => {
  assert.ok(blocks.length > 0, "no ```js test or ```cjs test block in README.md");
});

test("the extractor only takes exact info strings", () => {
  const md = "```js\nskip\n```\n```js test\na\n```\n````cjs test\nb\n```\n````\n```js test extra\nc\n```\n";
  assert.deepEqual(
    extractBlocks(md).map((b) => [b.kind, b.code]),
    [["js test", "a\n"], ["cjs test", "b\n```\n"]],
  );
});

for (const block of blocks) {
  test(`README.md:${block.line} (${block.kind}) runs`, (t) => {
    const dir = mkdtempSync(path.join(ROOT, "test-js", ".readme-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, `example-${block.line}.${block.kind === "cjs test" ? "cjs" : "mjs"}`);
    writeFileSync(file, block.code);
    const r = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    assert.equal(r.status, 0, `README.md:${block.line} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  });
}
