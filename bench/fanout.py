#!/usr/bin/env python3
"""Fan a synth run out to many endpoints, for the endpoint-scaling benchmark.

`kvledger synth` generates at most 64 endpoints per role (and its generator slows down with
many), so a run of thousands of endpoints is made from a small one: every endpoint
`A.B.C.D:port` becomes FACTOR endpoints `A.k.C.D:port` (k = 0 .. FACTOR-1; k = 0 is the
original), each carrying the original endpoint's series unchanged. The launch facts list
every copy under the original's role, so the fanned-out run is accounted like the original,
with FACTOR times the endpoints and series.

    bench/fanout.py SRC_RUN DST_RUN FACTOR

SRC_RUN is a folder written by `kvledger synth` (aiperf_artifacts/ and launch.json). The
server-metrics exports (CSV, scrape JSONL, JSON) are fanned out; the profile files are copied;
truth.json is not (its truth is the small run's).
"""

import json
import os
import re
import shutil
import sys

# The second octet of an IPv4 endpoint is free in synth runs (they use 10.0.x.y).
HOST = re.compile(r"\b(\d{1,3})\.0\.(\d{1,3})\.(\d{1,3}):(\d+)")


def renamer(k):
    """Rename every endpoint in a string to its k-th copy."""
    if k == 0:
        return lambda s: s
    return lambda s: HOST.sub(lambda m: f"{m[1]}.{k}.{m[2]}.{m[3]}:{m[4]}", s)


def fan_lines(src, dst, factor, header_lines):
    """Repeat each data line once per copy (CSV rows, scrape JSONL lines)."""
    renames = [renamer(k) for k in range(factor)]
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for i, line in enumerate(fin):
            if i < header_lines or not line.strip():
                fout.write(line)
                continue
            for rename in renames:
                fout.write(rename(line))


def csv_header_lines(path):
    """Comment lines and the column header come once."""
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            n += 1
            if not line.startswith("#"):
                return n
    return n


def fan_json(src, dst, factor):
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    renames = [renamer(k) for k in range(factor)]
    for section in ("metrics", "warmup_metrics"):
        for family in (doc.get(section) or {}).values():
            family["series"] = [
                {**s, "endpoint_url": r(s["endpoint_url"])}
                for s in family.get("series", [])
                for r in renames
            ]
    summary = doc.get("summary") or {}
    info = summary.get("endpoint_info")
    if isinstance(info, dict):
        summary["endpoint_info"] = {r(u): v for u, v in info.items() for r in renames}
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def fan_launch(src, dst, factor):
    with open(src, encoding="utf-8") as f:
        launch = json.load(f)
    renames = [renamer(k) for k in range(factor)]
    for key, value in launch.items():
        if key.endswith("_endpoints") and isinstance(value, list):
            launch[key] = [r(e) for e in value for r in renames]
        elif key == "endpoint_roles" and isinstance(value, dict):
            launch[key] = {r(e): role for e, role in value.items() for r in renames}
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(launch, f, indent=2)


def main(argv):
    if len(argv) != 4 or not argv[3].isdigit() or int(argv[3]) < 1 or int(argv[3]) > 255:
        sys.exit("usage: fanout.py SRC_RUN DST_RUN FACTOR (1 to 255)")
    src, dst, factor = argv[1], argv[2], int(argv[3])
    art_src = os.path.join(src, "aiperf_artifacts")
    art_dst = os.path.join(dst, "aiperf_artifacts")
    os.makedirs(art_dst, exist_ok=True)
    for name in sorted(os.listdir(art_src)):
        s, d = os.path.join(art_src, name), os.path.join(art_dst, name)
        if name == "server_metrics_export.csv":
            fan_lines(s, d, factor, csv_header_lines(s))
        elif name == "server_metrics_export.jsonl":
            fan_lines(s, d, factor, 0)
        elif name == "server_metrics_export.json":
            fan_json(s, d, factor)
        else:
            shutil.copyfile(s, d)
    launch = os.path.join(src, "launch.json")
    if os.path.exists(launch):
        fan_launch(launch, os.path.join(dst, "launch.json"), factor)


if __name__ == "__main__":
    main(sys.argv)
