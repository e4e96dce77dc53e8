// The edge worker: a POSTed result upload (the producer's result JSON, gzip'd or not, or a tar /
// tar.gz bundle of it with the run's raw artifacts) is streamed into kvledger's validateUpload
// and its verdict answered as JSON. The package is imported by its `workerd` export condition:
// the .wasm is a statically imported module, instantiated when this module loads.
import { validateUpload, isKvledgerError, contractVersion, packageVersion } from "kvledger";
import { limitsFor, contentLengthVerdict } from "./limits.js";

/** The HTTP status of each verdict outcome. */
const STATUS = { accepted: 200, limit_exceeded: 413, malformed: 400, claims_refused: 422 };

/**
 * Media types an upload may be sent as (no Content-Type is fine too: the validator reads the
 * format from the bytes). Anything else, a form post above all, is refused with 415 before
 * its body is read.
 */
const MEDIA_TYPES = new Set([
  "application/json",
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/x-gtar",
  "application/octet-stream",
]);

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

function json(body, status, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** An answer that is not a verdict: `{error: {code, message}}`, the codes documented in the README. */
function problem(status, code, message, headers) {
  return json({ error: { code, message } }, status, headers);
}

function usage(limits) {
  return {
    service: "kvledger edge worker",
    contract_version: contractVersion(),
    package_version: packageVersion(),
    usage: "POST a result upload: the result JSON (optionally gzip'd) or a tar / tar.gz bundle of result.json with the run's raw artifacts",
    statuses: { 200: "accepted", 400: "malformed", 413: "limit_exceeded", 415: "unsupported media type", 422: "claims_refused" },
    media_types: [...MEDIA_TYPES],
    limits,
  };
}

/** The media type without parameters, lower case; "" when absent. */
function mediaType(request) {
  return (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/** The Content-Length as a number when the client sent a valid one, else undefined (chunked). */
function contentLength(request) {
  const value = request.headers.get("content-length");
  return value !== null && /^\d{1,16}$/.test(value) ? Number(value) : undefined;
}

async function validate(request, limits) {
  const type = mediaType(request);
  if (type !== "" && !MEDIA_TYPES.has(type)) {
    return problem(415, "UNSUPPORTED_MEDIA_TYPE", `Content-Type ${type} is not an upload; send one of ${[...MEDIA_TYPES].join(", ")} (or none)`);
  }
  // Refused from the header alone: not one byte of the body is read.
  const declared = contentLength(request);
  if (declared !== undefined && declared > limits.bytes) {
    return json(contentLengthVerdict(limits, declared), 413);
  }
  const body = request.body ?? new Uint8Array(0);
  let verdict;
  try {
    verdict = await validateUpload(body, limits);
  } catch (e) {
    // validateUpload rejects only a malformed call, or when the body itself fails (the client
    // aborted or the connection broke mid-upload): neither is the upload's verdict.
    if (isKvledgerError(e)) throw e;
    return problem(400, "BODY_INCOMPLETE", `the upload's body could not be read to its end: ${e?.message ?? e}`);
  }
  return json(verdict, STATUS[verdict.outcome] ?? 500);
}

async function handle(request, env) {
  const limits = limitsFor(env);
  if (request.method === "GET" || request.method === "HEAD") {
    if (new URL(request.url).pathname !== "/") return problem(404, "NOT_FOUND", "only / exists: GET it for usage, POST an upload to it");
    return json(usage(limits), 200);
  }
  if (request.method !== "POST") {
    return problem(405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed: POST an upload, GET / for usage`, { allow: "GET, HEAD, POST" });
  }
  return validate(request, limits);
}

export default {
  async fetch(request, env) {
    try {
      return await handle(request, env);
    } catch (e) {
      // Never an unhandled error: a stable code, the message (a KvledgerError's code beside
      // it: BAD_OPTIONS for a malformed UPLOAD_LIMITS), nothing of the stack.
      const cause = isKvledgerError(e) ? { cause_code: e.code } : {};
      console.error(`edge-worker: INTERNAL: ${e?.message ?? e}`);
      return json({ error: { code: "INTERNAL", message: `the worker failed: ${e?.message ?? e}`, ...cause } }, 500);
    }
  },
};
