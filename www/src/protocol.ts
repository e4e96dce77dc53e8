// Messages between the page and the accounting worker (src/worker.ts).
import type { Accounting, RunDetail, KvledgerErrorCode } from "kvledger";

/** A file of a dropped folder: its path relative to the folder, and its content (never read whole). */
export interface DroppedFile {
  path: string;
  blob: Blob;
}

/** What the frontier needs of a run, read from its run summary (`profile_export_aiperf.json`). */
export interface RunFigures {
  /** Output tokens/s of the whole run (`output_token_throughput.avg`). */
  output_throughput?: number;
  /** Input and output tokens/s of the whole run (`total_token_throughput.avg`). */
  total_throughput?: number;
  /** Output tokens/s per user (`output_token_throughput_per_user.avg`): the interactivity axis. */
  interactivity?: number;
  /** `total_isl` and `total_osl`: the input share of the tokens. */
  total_isl?: number;
  total_osl?: number;
  /** How figures the summary does not state were derived (shown beside them). */
  derived: string[];
}

/** A KvledgerError as data (its toJSON()), or another failure as `INTERNAL`-like text. */
export interface ErrorInfo {
  code: KvledgerErrorCode | "WORKER";
  message: string;
  file?: string;
  line?: number;
  column?: number;
  byte_offset?: number;
  json_path?: string;
}

export type ToWorker = { type: "open"; files: DroppedFile[] };

export type FromWorker =
  | { type: "ready" }
  | { type: "plan"; runs: string[]; total_bytes: number; not_in_run: { name: string; reason: string }[] }
  | { type: "progress"; bytes_read: number; total_bytes: number; file: string }
  | { type: "run"; run: string; accounting: Accounting; detail: RunDetail; figures: RunFigures; bytes: number; ms: number }
  | { type: "run-error"; run: string; error: ErrorInfo }
  | { type: "done"; ms: number }
  | { type: "fatal"; error: ErrorInfo };
