// The packed tarball, as a registry would serve it, and a fresh consumer project that installs
// it (offline: the package has no dependencies), for tests that must see what users get.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ROOT } from "./util.mjs";

/** `npm pack` into a temp folder: {tarball, dir, cleanup}. */
export function packTarball() {
  const dir = mkdtempSync(path.join(tmpdir(), "kvledger-pack-"));
  const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  const [info] = JSON.parse(out);
  return { tarball: path.join(dir, info.filename), info, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A consumer project (`"type": "module"`) with the tarball installed: its folder. */
export function consumerProject(tarball, parent) {
  const dir = mkdtempSync(path.join(parent, "consumer-"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  execFileSync("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  return dir;
}
