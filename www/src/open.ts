// Collecting what the user gives: a drop (folders walked through webkitGetAsEntry), a file
// picker (folders with webkitdirectory, or loose files), or a bundled example fetched from the
// app's own folder. Files stay Blobs: they are streamed later, never read here.
import type { DroppedFile } from "./protocol";

function readEntries(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const all: FileSystemEntry[] = [];
  return new Promise((resolve, reject) => {
    // readEntries answers in batches (Chromium: 100 at a time) until an empty one.
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) return resolve(all);
        all.push(...batch);
        next();
      }, reject);
    next();
  });
}

const fileOf = (entry: FileSystemFileEntry) => new Promise<File>((resolve, reject) => entry.file(resolve, reject));

async function walk(entry: FileSystemEntry, out: DroppedFile[]): Promise<void> {
  if (entry.isFile) {
    out.push({ path: entry.fullPath.replace(/^\/+/, ""), blob: await fileOf(entry as FileSystemFileEntry) });
  } else if (entry.isDirectory) {
    for (const child of await readEntries(entry as FileSystemDirectoryEntry)) await walk(child, out);
  }
}

/** Every file of a drop, folders walked, paths relative to the drop (the folder's own name first). */
export async function droppedFiles(dt: DataTransfer): Promise<DroppedFile[]> {
  const entries = [...dt.items].flatMap((item) => {
    const e = item.kind === "file" ? item.webkitGetAsEntry() : null;
    return e ? [e] : [];
  });
  if (entries.length === 0) return [...dt.files].map((f) => ({ path: f.name, blob: f }));
  const out: DroppedFile[] = [];
  for (const e of entries) await walk(e, out);
  return out;
}

/** Files from an <input type=file>: with webkitdirectory their paths are relative to the folder. */
export function pickedFiles(list: FileList): DroppedFile[] {
  return [...list].map((f) => ({ path: f.webkitRelativePath || f.name, blob: f }));
}

export interface ExampleInfo {
  id: string;
  label: string;
  files: string[];
}

export async function exampleList(): Promise<ExampleInfo[]> {
  const r = await fetch(new URL("examples/index.json", document.baseURI));
  if (!r.ok) throw new Error(`examples/index.json: HTTP ${r.status}`);
  return (await r.json()) as ExampleInfo[];
}

/** A bundled example's files, under a folder named after it. */
export async function exampleFiles(ex: ExampleInfo): Promise<DroppedFile[]> {
  return Promise.all(
    ex.files.map(async (f) => {
      const r = await fetch(new URL(`examples/${ex.id}/${f}`, document.baseURI));
      if (!r.ok) throw new Error(`examples/${ex.id}/${f}: HTTP ${r.status}`);
      return { path: `${ex.id}/${f}`, blob: await r.blob() };
    }),
  );
}
