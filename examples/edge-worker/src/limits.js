// The limits the worker validates under: validateUpload's defaults, overridden by the
// UPLOAD_LIMITS variable (wrangler.toml [vars], or the workerd binding) when it is set.
import { UploadValidator } from "kvledger";

let cached = { source: undefined, limits: undefined };

/**
 * The effective limits for this environment: every limit with its value, as validateUpload
 * echoes them in a verdict. Parsed once per distinct UPLOAD_LIMITS value; a malformed value
 * throws (the worker answers 500 INTERNAL naming it: a deployment mistake, not the client's).
 */
export function limitsFor(env) {
  const source = env?.UPLOAD_LIMITS ?? "";
  if (cached.source !== source) {
    let overrides = null;
    if (source.trim() !== "") {
      try {
        overrides = JSON.parse(source);
      } catch (e) {
        throw new Error(`UPLOAD_LIMITS is not JSON: ${e.message}`);
      }
    }
    // The validator checks the overrides (unknown names, zero or absurd values refused with
    // BAD_OPTIONS) and merges them with its defaults; an empty upload's verdict echoes the
    // merged limits.
    cached = { source, limits: new UploadValidator(overrides).finish().limits };
  }
  return cached.limits;
}

/**
 * The verdict for an upload whose Content-Length is over the `bytes` limit: the shape and
 * code validateUpload gives when it meets the same limit while reading, decided from the
 * header alone (no byte of the body read).
 */
export function contentLengthVerdict(limits, declared) {
  return {
    accepted: false,
    outcome: "limit_exceeded",
    errors: [
      {
        code: "LIMIT_EXCEEDED",
        message: `the upload is larger than ${limits.bytes} bytes (Content-Length ${declared}); its body was not read`,
        limit: { name: "bytes", value: limits.bytes, observed: declared },
      },
    ],
    warnings: [],
    claims: [],
    limits,
  };
}
