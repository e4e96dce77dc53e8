//! Each malformed class gets its own code, a position, and never a panic: empty and unknown
//! uploads, broken gzip, hostile or broken tar bundles, broken result JSON, unreadable raw
//! artifacts.

mod validate_support;

use validate_support::*;

const RESULT: &[u8] =
    br#"{"server_gpu_cache_hit_rate": 0.5, "cache_validity_status": "WINDOW_UNRESOLVED"}"#;

fn refused(bytes: &[u8], code: &str) -> kvledger::validate::UploadVerdict {
    let v = verdict(bytes);
    assert!(!v.accepted);
    assert_eq!(codes(&v.errors), [code], "{:#?}", v.errors);
    assert!(v.claims.is_empty() || code != "LIMIT_EXCEEDED");
    v
}

#[test]
fn empty_and_unknown_uploads() {
    assert_eq!(outcome(&refused(b"", "EMPTY_UPLOAD")), "malformed");
    assert_eq!(
        outcome(&refused(b"hello, world", "UNKNOWN_FORMAT")),
        "malformed"
    );
    assert_eq!(outcome(&refused(&[0x1f], "UNKNOWN_FORMAT")), "malformed");
    // A gzip of nothing: an empty upload once decompressed.
    refused(&gzip(b""), "EMPTY_UPLOAD");
}

#[test]
fn broken_gzip() {
    let good = gzip(RESULT);
    assert_eq!(outcome(&verdict(&good)), "accepted");
    let v = refused(&good[..good.len() - 3], "BAD_GZIP");
    assert!(v.errors[0].message.contains("cut short"));
    let mut crc = good.clone();
    let n = crc.len();
    crc[n - 8] ^= 0xFF;
    assert!(refused(&crc, "BAD_GZIP").errors[0]
        .message
        .contains("CRC-32"));
    let mut len = good.clone();
    len[n - 1] ^= 0x01;
    refused(&len, "BAD_GZIP");
    let mut method = good.clone();
    method[2] = 7;
    let v = refused(&method, "BAD_GZIP");
    assert_eq!(v.errors[0].byte_offset, Some(0));
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"PK\x03\x04");
    refused(&trailing, "BAD_GZIP");
    let mut corrupt = good;
    for b in &mut corrupt[10..20] {
        *b = 0xFF;
    }
    refused(&corrupt, "BAD_GZIP");
}

fn bundle_with(members: Vec<u8>) -> Vec<u8> {
    let mut out = member("result.json", RESULT, b'0');
    out.extend(members);
    out.extend_from_slice(&[0u8; 1024]);
    out
}

#[test]
fn hostile_tar_names() {
    for name in [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../x",
        "a\\b.json",
        "./",
        "a\u{1}b",
    ] {
        let v = refused(&bundle_with(member(name, b"x", b'0')), "BAD_BUNDLE");
        assert_eq!(v.errors[0].byte_offset, Some(1024), "{name}");
    }
    // `./a//b` is `a/b`: the same member twice.
    let mut twice = member("./x/server_metrics_export.csv", b"", b'0');
    twice.extend(member("x//server_metrics_export.csv", b"", b'0'));
    assert!(refused(&bundle_with(twice), "BAD_BUNDLE").errors[0]
        .message
        .contains("twice"));
    refused(&bundle_with(member("link", b"", b'2')), "BAD_BUNDLE");
    refused(&bundle_with(member("hard", b"", b'1')), "BAD_BUNDLE");
    refused(&bundle_with(member("dev", b"", b'3')), "BAD_BUNDLE");
    refused(&bundle_with(member("sparse", b"", b'S')), "BAD_BUNDLE");
}

#[test]
fn bad_checksums_sizes_and_magic() {
    let mut h = header("x.csv", 1, b'0');
    h[0] = b'y';
    let v = refused(&bundle_with(h.to_vec()), "BAD_BUNDLE");
    assert!(v.errors[0].message.contains("checksum"));
    let mut h = header("x.csv", 1, b'0');
    h[124..136].copy_from_slice(b"00000000z01\0");
    seal(&mut h);
    assert!(refused(&bundle_with(h.to_vec()), "BAD_BUNDLE").errors[0]
        .message
        .contains("size"));
    let mut h = header("x.csv", 1, b'0');
    h[257..263].copy_from_slice(b"ustaR\0");
    seal(&mut h);
    refused(&bundle_with(h.to_vec()), "BAD_BUNDLE");
    // A base-256 size of 2^62 bytes: refused by the limit before a byte of it is read.
    let mut h = header("big.csv", 0, b'0');
    h[124..136].copy_from_slice(&[0x80, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]);
    seal(&mut h);
    let v = refused(&bundle_with(h.to_vec()), "LIMIT_EXCEEDED");
    assert_eq!(
        v.errors[0].limit.as_ref().map(|l| l.name.as_str()),
        Some("decompressed_bytes")
    );
}

#[test]
fn truncated_bundles() {
    let whole = tar(&[("result.json", RESULT), ("a/notes.bin", b"x\n")]);
    assert_eq!(
        outcome(&verdict(&whole)),
        "accepted",
        "{:#?}",
        verdict(&whole).errors
    );
    for cut in [
        700,
        1024 + 100,
        1536,
        whole.len() - 1024,
        whole.len() - 1024 + 100,
    ] {
        let v = refused(&whole[..cut], "BAD_BUNDLE");
        assert!(
            v.errors[0].message.contains("cut short")
                || v.errors[0].message.contains("ends inside"),
            "{cut}: {}",
            v.errors[0].message
        );
    }
    // Data after the end-of-archive marker.
    let mut after = whole.clone();
    after.extend(member("late.csv", b"x", b'0'));
    refused(&after, "BAD_BUNDLE");
}

#[test]
fn pax_and_gnu_long_names() {
    let long = format!("{}/notes.bin", "d".repeat(150));
    let pax = pax_record("path", &long);
    let mut members = member("PaxHeader", pax.as_bytes(), b'x');
    members.extend(member("short", b"", b'0'));
    let mut gnu = member("././@LongLink", format!("{long}2\0").as_bytes(), b'L');
    gnu.extend(member("short2", b"", b'0'));
    members.extend(gnu);
    let v = verdict(&bundle_with(members));
    assert_eq!(outcome(&v), "accepted", "{:#?}", v.errors);
    // A pax record whose length lies.
    let bad = member("PaxHeader", b"99 path=x\n", b'x');
    let mut members = bad;
    members.extend(member("y", b"", b'0'));
    assert!(refused(&bundle_with(members), "BAD_BUNDLE").errors[0]
        .message
        .contains("pax"));
    // A pax size that is not a number.
    let mut members = member("PaxHeader", pax_record("size", "1e3").as_bytes(), b'x');
    members.extend(member("y", b"", b'0'));
    refused(&bundle_with(members), "BAD_BUNDLE");
    // A pax header with no member after it.
    let mut only = member("result.json", RESULT, b'0');
    only.extend(member(
        "PaxHeader",
        pax_record("path", "x").as_bytes(),
        b'x',
    ));
    only.extend_from_slice(&[0u8; 1024]);
    refused(&only, "BAD_BUNDLE");
}

#[test]
fn bundles_without_or_with_two_results() {
    refused(
        &tar(&[("aiperf_artifacts/server_metrics_export.csv", b"x")]),
        "RESULT_MISSING",
    );
    refused(
        &tar(&[("result.json", RESULT), ("run/result.json", RESULT)]),
        "BAD_BUNDLE",
    );
    // Deeper than one folder is an artifact name, not the result.
    refused(&tar(&[("a/b/result.json", RESULT)]), "RESULT_MISSING");
    assert_eq!(
        outcome(&verdict(&tar(&[("conc1/result.json", RESULT)]))),
        "accepted"
    );
}

#[test]
fn broken_result_json() {
    let v = refused(
        b"{\"server_gpu_cache_hit_rate\": 0.5,\n  \"x\": }",
        "MALFORMED_JSON",
    );
    assert_eq!((v.errors[0].line, v.errors[0].column), (Some(2), Some(8)));
    let v = refused(b"{\"a\": 1, \"a\": 2}", "DUPLICATE_KEY");
    let e = &v.errors[0];
    assert_eq!(e.json_path.as_deref(), Some("a"));
    assert_eq!(
        (e.byte_offset, e.line, e.column),
        (Some(9), Some(1), Some(10))
    );
    refused(b"{\"a\": \"\xff\"}", "MALFORMED_JSON");
    refused(b"[{\"server_gpu_cache_hit_rate\": 0.5}]", "SCHEMA");
    refused(b"{} {}", "MALFORMED_JSON");
    refused(b"{\"server_gpu_cache_hit_rate\": NaN}", "MALFORMED_JSON");
    let v = refused(b"{\"server_gpu_cache_hit_rate\": \"0.5\"}", "SCHEMA");
    assert_eq!(v.claims[0].status.as_str(), "invalid");
    let v = refused(b"{\"cache_validity\": {\"status\": \"PRICED\"}}", "SCHEMA");
    assert!(v.errors[0].message.contains("VALID_COMPLETE"));
    let v = refused(
        b"{\"server_metrics\": {\"cache\": {\"gpu_cache_hit_rate\": -0.1}}}",
        "OUT_OF_RANGE",
    );
    assert_eq!(outcome(&v), "claims_refused");
    refused(b"{\"total_prompt_tokens\": -3}", "OUT_OF_RANGE");
    refused(
        b"{\"total_prompt_tokens\": 9007199254740992}",
        "OUT_OF_RANGE",
    );
    refused(b"{\"cache_pricing_eligible\": null}", "SCHEMA");
    // A claim-free result is accepted with a warning.
    let v = verdict(b"{\"hw\": \"mi355x\"}");
    assert_eq!(codes(&v.warnings), ["NO_CLAIMS"]);
}

#[test]
fn an_unreadable_artifact_is_named_with_the_readers_code_and_position() {
    let broken = b"{\"schema_version\": \"1.1\",\n \"metrics\": {,}}";
    let v = refused(
        &tar(&[
            ("result.json", RESULT),
            ("aiperf_artifacts/server_metrics_export.json", broken),
        ]),
        "ARTIFACT_UNREADABLE",
    );
    let e = &v.errors[0];
    assert_eq!(
        e.file.as_deref(),
        Some("aiperf_artifacts/server_metrics_export.json")
    );
    assert_eq!(e.artifact_code.map(|c| c.as_str()), Some("JSON_SYNTAX"));
    assert_eq!((e.line, e.column), (Some(2), Some(14)));
    // The result's claims are still listed (unverified: the artifacts could not be read).
    assert_eq!(v.claims.len(), 2);
}
