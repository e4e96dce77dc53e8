// The classes of upload the edge worker is tested with: each builds its request (a buffered
// body, a chunked stream, a body trickled over time, a body the client aborts) and checks the
// answer: HTTP status, verdict outcome, first error code and limit name.
import {
  tar, gzip, runEntries, runFiles, producerResult, jsonBytes, deepJson, bundleBomb, CLEAN_RUN, NOT_ELIGIBLE_RUN,
} from "./uploads.mjs";

const enc = new TextEncoder();
const STATUS = { accepted: 200, limit_exceeded: 413, malformed: 400, claims_refused: 422 };

/** A body streamed in `chunk`-byte pieces, `delayMs` apart (0: as fast as the socket takes them). */
export function streamOf(bytes, { chunk = 64 << 10, delayMs = 0 } = {}) {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (at >= bytes.length) return controller.close();
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

/**
 * The request as a careful HTTP client sends a large body (curl does for any body over 1 MiB):
 * headers with `Expect: 100-continue`, the body only after the server's 100 Continue. A
 * server refusing from the headers answers at once and the body is never sent. (Sent without
 * it, a body the server does not read may still be in flight when the server closes the
 * connection after its early answer, and the client can see EPIPE instead of the answer.)
 */
const expecting = (bytes, type) => () => ({ expect100: true, init: { body: bytes, headers: { "content-type": type } } });

const buffered = (bytes, type) => () => ({ init: { body: bytes, headers: type ? { "content-type": type } : {} } });

const streamed = (bytes, type, opts) => () => ({
  init: { body: streamOf(bytes, opts), duplex: "half", headers: type ? { "content-type": type } : {} },
});

/** Sends the first half of `bytes`, then the client aborts the request. */
const abortedHalfway = (bytes) => () => {
  const ac = new AbortController();
  let done = false;
  const half = bytes.subarray(0, bytes.length >> 1);
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(half.slice());
      setTimeout(() => {
        done = true;
        ac.abort(new Error("client gave up"));
      }, 30);
    },
  });
  return { init: { body, duplex: "half", signal: ac.signal, headers: { "content-type": "application/x-tar" } }, aborted: () => done };
};

/** A check of the answer: status, JSON verdict with `outcome`, first error `code`, `limit` name. */
function expectVerdict({ outcome, code, limit, warning }) {
  return (status, text) => {
    if (status !== STATUS[outcome]) return `status ${status}, expected ${STATUS[outcome]}: ${text.slice(0, 300)}`;
    let v;
    try {
      v = JSON.parse(text);
    } catch {
      return `not JSON: ${text.slice(0, 200)}`;
    }
    if (v.outcome !== outcome) return `outcome ${v.outcome}, expected ${outcome}`;
    if (v.accepted !== (outcome === "accepted")) return `accepted ${v.accepted} with outcome ${outcome}`;
    if (code && v.errors[0]?.code !== code) return `first error ${v.errors[0]?.code}, expected ${code}: ${v.errors[0]?.message}`;
    if (limit && v.errors[0]?.limit?.name !== limit) return `limit ${v.errors[0]?.limit?.name}, expected ${limit}: ${v.errors[0]?.message}`;
    if (warning && !v.warnings.some((w) => w.code === warning)) return `no ${warning} warning: ${JSON.stringify(v.warnings.map((w) => w.code))}`;
    return undefined;
  };
}

function expectProblem(status, code) {
  return (got, text) => {
    if (got !== status) return `status ${got}, expected ${status}: ${text.slice(0, 300)}`;
    const body = JSON.parse(text);
    return body.error?.code === code ? undefined : `error ${body.error?.code}, expected ${code}`;
  };
}

/**
 * The upload bodies, built once: `k` is the kvledger module (accountRun gives the honest claims).
 * `bytesLimit` is the worker's `bytes` limit (oversize bodies are one byte and one MiB over it).
 */
export function buildBodies(k, { bytesLimit }) {
  const clean = runEntries(CLEAN_RUN);
  const cleanAcc = k.accountRun(runFiles(clean));
  const notEligible = runEntries(NOT_ELIGIBLE_RUN);
  const notEligibleAcc = k.accountRun(runFiles(notEligible));
  if (cleanAcc.legacy.cache_pricing_eligible !== true) throw new Error("the clean example run should be eligible");
  if (notEligibleAcc.legacy.cache_pricing_eligible !== false) throw new Error("the straddle example run should not be eligible");

  const honest = producerResult(cleanAcc);
  const resultOnly = jsonBytes(honest);
  const bundle = tar([{ name: "result.json", bytes: resultOnly }, ...clean]);
  const lyingRate = producerResult(cleanAcc);
  lyingRate.server_metrics.cache.gpu_cache_hit_rate = Math.max(0, cleanAcc.legacy.server_gpu_cache_hit_rate - 0.3);
  const lyingEligible = producerResult(notEligibleAcc);
  lyingEligible.server_metrics.cache_validity = { status: "VALID_COMPLETE", pricing_eligible: true };
  const outOfRange = producerResult(cleanAcc);
  outOfRange.server_metrics.cache.gpu_cache_hit_rate = 1.7;
  const malformedJson = enc.encode('{"server_metrics": {"cache": {"gpu_cache_hit_rate": 0.5,}');
  const duplicateKey = enc.encode('{"server_metrics": {"cache": {"gpu_cache_hit_rate": 0.9}}, "server_metrics": {"cache": {"gpu_cache_hit_rate": 0.1}}}');
  const schema = jsonBytes({ ...honest, server_metrics: { ...honest.server_metrics, cache: { gpu_cache_hit_rate: "high" } } });
  const gz = gzip(bundle);
  // A bomb inside the bundle: one member of zeros, so the format is right and only the
  // inflated size gives it away.
  const bomb = bundleBomb(resultOnly, 256 << 20);
  return {
    clean, cleanAcc, notEligibleAcc, honest,
    resultOnly,
    resultGz: gzip(resultOnly),
    bundle,
    bundleGz: gz,
    resultAndLaunchOnly: tar([{ name: "result.json", bytes: resultOnly }]),
    empty: new Uint8Array(0),
    unknownFormat: enc.encode("hello, this is not an upload\n"),
    badGzip: gz.slice(0, gz.length >> 1),
    badTarChecksum: tar([{ name: "result.json", bytes: resultOnly, breakChecksum: true }, ...clean]),
    badTarTraversal: tar([{ name: "../result.json", bytes: resultOnly }, ...clean]),
    badTarSymlink: tar([{ name: "result.json", bytes: resultOnly }, { name: "aiperf_artifacts/x.json", type: "2", link: "/etc/passwd" }, ...clean]),
    badTarTruncated: bundle.slice(0, 512 * 3 + 100),
    resultMissing: tar(clean),
    malformedJson,
    duplicateKey,
    schema,
    deepNesting: deepJson(100_000),
    lyingRate: tar([{ name: "result.json", bytes: jsonBytes(lyingRate) }, ...clean]),
    lyingEligible: tar([{ name: "result.json", bytes: jsonBytes(lyingEligible) }, ...notEligible]),
    outOfRange: jsonBytes(outOfRange),
    oversize: oversizeBundle(resultOnly, bytesLimit + (1 << 20)),
    bomb,
  };
}


/**
 * A well-formed bundle of `total` bytes: result.json and one member of filler, so only its size
 * is wrong (a body of zeros would be refused as an unknown format from its first bytes).
 */
function oversizeBundle(resultBytes, total) {
  const fixed = tar([{ name: "result.json", bytes: resultBytes }, { name: "aiperf_artifacts/filler.bin", bytes: new Uint8Array(0) }]).length;
  return tar([{ name: "result.json", bytes: resultBytes }, { name: "aiperf_artifacts/filler.bin", bytes: new Uint8Array(total - fixed) }]);
}

/** The classes of the load test (and of the single-request tests), with their weights. */
export function uploadClasses(b) {
  const v = expectVerdict;
  return [
    { name: "valid_result_json", weight: 8, request: buffered(b.resultOnly, "application/json"), check: v({ outcome: "accepted", warning: "CLAIM_UNVERIFIED" }) },
    { name: "valid_result_gzip", weight: 4, request: buffered(b.resultGz, "application/gzip"), check: v({ outcome: "accepted" }) },
    { name: "valid_bundle", weight: 8, request: buffered(b.bundle, "application/x-tar"), check: v({ outcome: "accepted" }) },
    { name: "valid_bundle_gzip", weight: 8, request: buffered(b.bundleGz, "application/gzip"), check: v({ outcome: "accepted" }) },
    { name: "valid_bundle_chunked", weight: 4, request: streamed(b.bundleGz, "application/gzip"), check: v({ outcome: "accepted" }) },
    { name: "slow_body", weight: 3, request: streamed(b.bundleGz, "application/gzip", { chunk: 4096, delayMs: 15 }), check: v({ outcome: "accepted" }) },
    { name: "aborted_body", weight: 3, request: abortedHalfway(b.bundle), check: () => undefined },
    { name: "empty", weight: 2, request: buffered(b.empty), check: v({ outcome: "malformed", code: "EMPTY_UPLOAD" }) },
    { name: "unknown_format", weight: 2, request: buffered(b.unknownFormat, "application/octet-stream"), check: v({ outcome: "malformed", code: "UNKNOWN_FORMAT" }) },
    { name: "bad_gzip", weight: 2, request: buffered(b.badGzip, "application/gzip"), check: v({ outcome: "malformed", code: "BAD_GZIP" }) },
    { name: "bad_tar_checksum", weight: 2, request: buffered(b.badTarChecksum, "application/x-tar"), check: v({ outcome: "malformed", code: "BAD_BUNDLE" }) },
    { name: "bad_tar_traversal", weight: 2, request: buffered(b.badTarTraversal, "application/x-tar"), check: v({ outcome: "malformed", code: "BAD_BUNDLE" }) },
    { name: "bad_tar_symlink", weight: 2, request: buffered(b.badTarSymlink, "application/x-tar"), check: v({ outcome: "malformed", code: "BAD_BUNDLE" }) },
    { name: "bad_tar_truncated", weight: 2, request: buffered(b.badTarTruncated, "application/x-tar"), check: v({ outcome: "malformed", code: "BAD_BUNDLE" }) },
    { name: "result_missing", weight: 2, request: buffered(b.resultMissing, "application/x-tar"), check: v({ outcome: "malformed", code: "RESULT_MISSING" }) },
    { name: "malformed_json", weight: 2, request: buffered(b.malformedJson, "application/json"), check: v({ outcome: "malformed", code: "MALFORMED_JSON" }) },
    { name: "duplicate_key", weight: 2, request: buffered(b.duplicateKey, "application/json"), check: v({ outcome: "malformed", code: "DUPLICATE_KEY" }) },
    { name: "schema", weight: 2, request: buffered(b.schema, "application/json"), check: v({ outcome: "malformed", code: "SCHEMA" }) },
    { name: "deep_nesting", weight: 2, request: buffered(b.deepNesting, "application/json"), check: v({ outcome: "limit_exceeded", limit: "nesting_depth" }) },
    { name: "gzip_bomb", weight: 2, request: buffered(b.bomb, "application/gzip"), check: v({ outcome: "limit_exceeded", limit: "decompressed_bytes" }) },
    { name: "oversize_declared", weight: 1, request: expecting(b.oversize, "application/octet-stream"), check: v({ outcome: "limit_exceeded", limit: "bytes" }) },
    { name: "oversize_chunked", weight: 1, request: streamed(b.oversize, "application/octet-stream", { chunk: 1 << 20 }), check: v({ outcome: "limit_exceeded", limit: "bytes" }) },
    { name: "lying_rate", weight: 3, request: buffered(b.lyingRate, "application/x-tar"), check: v({ outcome: "claims_refused", code: "CLAIM_CONTRADICTED" }) },
    { name: "lying_eligibility", weight: 3, request: buffered(b.lyingEligible, "application/x-tar"), check: v({ outcome: "claims_refused" }) },
    { name: "out_of_range", weight: 2, request: buffered(b.outOfRange, "application/json"), check: v({ outcome: "claims_refused", code: "OUT_OF_RANGE" }) },
    { name: "unsupported_media_type", weight: 1, request: buffered(b.resultOnly, "multipart/form-data; boundary=x"), check: expectProblem(415, "UNSUPPORTED_MEDIA_TYPE") },
  ];
}
