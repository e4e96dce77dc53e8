#!/usr/bin/env python3
"""The Python baseline of the benchmarks: the upstream producer's arithmetic on the same bytes.

    bench/producer.py FORMAT FILE [REPEATS]    prints: FORMAT<TAB>BYTES<TAB>SECONDS (best of REPEATS)

FORMAT is one of:
- json     the producer itself (research/producer.md sections 2-4): `json.load` of
           server_metrics_export.json, then its vLLM backend's sums over `metrics` (sum_stat of
           stats.total over every series of each family, sum_by_label of prompt tokens by source,
           gauge_stat of the usage gauges, the rates) and its per-source breakdown.
- profile  the producer's request pipeline over profile_export.jsonl (section 1.3): `json.loads`
           per line, warmup and error records dropped, token sums (`int()` per value) and the
           latency lists it keeps per record.
- csv      not read by the producer (it reads the JSON); the closest equivalent: the `csv` module
           over server_metrics_export.csv, its rows gathered into the same metrics shape, then
           the same vLLM sums.
- jsonl    not read by the producer; the closest equivalent: `json.loads` per line of
           server_metrics_export.jsonl (one scrape per line), each series' first and last value
           kept, and the vLLM families' increases summed.

The time covers opening the file, parsing and the sums; not the interpreter's start.
"""

import csv
import json
import re
import sys
import time

# ---- the producer's helpers (aggregation_common.py), as research/producer.md section 2 gives them


def metric_series(metrics, names):
    out = []
    for name in names:
        entry = metrics.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("series"), list):
            out.extend(s for s in entry["series"] if isinstance(s, dict))
    return out


def series_stat(series, keys=("total", "sum", "max", "avg")):
    stats = series.get("stats")
    if not isinstance(stats, dict):
        return None
    for k in keys:
        try:
            return float(stats[k])
        except (KeyError, TypeError, ValueError):
            continue
    return None


def sum_stat(metrics, names, keys=("total", "sum", "max", "avg"), series_filter=None):
    total, seen = 0.0, False
    for s in metric_series(metrics, names):
        if series_filter and not series_filter(s):
            continue
        v = series_stat(s, keys)
        if v is not None:
            total += v
            seen = True
    return total if seen else None


def gauge_stat(metrics, names, keys=("max", "avg", "total"), combine="max", series_filter=None):
    vals = []
    for s in metric_series(metrics, names):
        if series_filter and not series_filter(s):
            continue
        v = series_stat(s, keys)
        if v is not None:
            vals.append(v)
    if not vals:
        return None
    if combine == "avg":
        return sum(vals) / len(vals)
    if combine == "sum":
        return sum(vals)
    return max(vals)


def sum_by_label(metrics, names, label_keys, keys=("total", "sum", "max", "avg")):
    out = {}
    for s in metric_series(metrics, names):
        labels = s.get("labels")
        if not isinstance(labels, dict):
            continue
        group = next((str(labels[k]) for k in label_keys if k in labels), None)
        if group is None:
            continue
        v = series_stat(s, keys)
        if v is not None:
            out[group] = out.get(group, 0.0) + v
    return out


def rate(n, d):
    return None if n is None or d is None or d <= 0 else n / d


def normalize_fraction(v):
    return None if v is None else (v / 100 if v > 1.5 else v)


def counter_int(v):
    return None if v is None else int(round(v))


# ---- the vLLM backend (backends/vllm.py), section 4.1


def vllm_populate(metrics):
    p = sum_stat(metrics, ["vllm:prompt_tokens"])
    g = sum_stat(metrics, ["vllm:generation_tokens"])
    h = sum_stat(metrics, ["vllm:prefix_cache_hits"])
    q = sum_stat(metrics, ["vllm:prefix_cache_queries"])
    eh = sum_stat(metrics, ["vllm:external_prefix_cache_hits"])
    eq = sum_stat(metrics, ["vllm:external_prefix_cache_queries"])
    out = {
        "total_prompt_tokens": counter_int(p),
        "total_generation_tokens": counter_int(g),
        "gpu": rate(h, q),
        "cpu": rate(eh, eq),
    }
    by_source = sum_by_label(metrics, ["vllm:prompt_tokens_by_source"], ["source"])
    t = sum(by_source.values())
    if by_source and t > 0:
        local, ext = by_source.get("local_cache_hit"), by_source.get("external_kv_transfer")
        out["overall"] = ((local or 0) + (ext or 0)) / t
    out["gpu_kv_cache_usage_pct"] = normalize_fraction(
        gauge_stat(metrics, ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"])
    )
    for d in ("gpu_to_cpu", "cpu_to_gpu"):
        b = sum_stat(metrics, [f"vllm:kv_offload_bytes_{d}"])
        s = sum_stat(metrics, [f"vllm:kv_offload_time_{d}"])
        out[f"bandwidth_{d}"] = rate(b, s)
    out["sources"] = vllm_sources(metrics)
    return out


SOURCE_FAMILIES = [
    "vllm:prompt_tokens",
    "vllm:generation_tokens",
    "vllm:prefix_cache_hits",
    "vllm:prefix_cache_queries",
    "vllm:kv_cache_usage_perc",
    "vllm:prompt_tokens_by_source",
]


def source_id(s):
    labels = s.get("labels") if isinstance(s.get("labels"), dict) else {}
    comp = labels.get("dynamo_component", labels.get("component"))
    role = {"prefill": "prefill", "backend": "decode", "decode": "decode",
            "frontend": "router", "router": "router"}.get(comp, "combined")
    parts = [role, str(s.get("endpoint_url", ""))]
    for k in ("worker_id", "dp_rank", "engine"):
        if k in labels:
            parts.append(f"{k}={labels[k]}")
    return "|".join(parts)


def vllm_sources(metrics):
    """Per source id: prompt tokens and the prefix-cache hit rate. The producer filters every
    family's series by exact id once per id (quadratic in endpoints); grouping by id in one pass
    gives the same sums, and keeps this baseline from being slowed by an upstream inefficiency."""
    by_id = {}
    for name in ("vllm:prompt_tokens", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries"):
        for s in metric_series(metrics, [name]):
            v = series_stat(s)
            slot = by_id.setdefault(source_id(s), {})
            if v is not None:
                slot[name] = slot.get(name, 0.0) + v
    for s in metric_series(metrics, SOURCE_FAMILIES):
        by_id.setdefault(source_id(s), {})
    return {
        i: {
            "prompt_tokens": sums.get("vllm:prompt_tokens"),
            "hit_rate": rate(sums.get("vllm:prefix_cache_hits"), sums.get("vllm:prefix_cache_queries")),
        }
        for i, sums in sorted(by_id.items())
    }


# ---- the formats


def run_json(path):
    with open(path, "rb") as f:
        export = json.load(f)
    metrics = export.get("metrics") if isinstance(export.get("metrics"), dict) else {}
    return vllm_populate(metrics)


def run_profile(path):
    tokens_in, tokens_out, kept, dropped = 0, 0, 0, 0
    latencies = {"time_to_first_token": [], "request_latency": [], "inter_token_latency": []}
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            meta = rec.get("metadata") or {}
            if meta.get("benchmark_phase", "profiling") != "profiling" or rec.get("error"):
                dropped += 1
                continue
            kept += 1
            m = rec.get("metrics") or {}

            def value(name):
                v = m.get(name)
                return v.get("value") if isinstance(v, dict) else v

            for name, acc in (("input_sequence_length", 0), ("output_sequence_length", 1)):
                try:
                    n = int(value(name))
                except (TypeError, ValueError):
                    continue
                if acc == 0:
                    tokens_in += n
                else:
                    tokens_out += n
            for name, vals in latencies.items():
                v = value(name)
                if isinstance(v, (int, float)):
                    vals.append(v / 1000.0)
    return {"kept": kept, "dropped": dropped, "input": tokens_in, "output": tokens_out}


# InferenceX-app's rule for a stat column of the CSV (producer.md section 1.2).
STAT_COLUMN = re.compile(r"^(avg|min|max|std|total|sum|count|rate|p\d+(_estimate)?|rate_\w+|count_\w+|sum_\w+)$")


def run_csv(path):
    metrics = {}
    header = None
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            if not row or row[0].startswith("#"):
                continue
            if row[0] == "Endpoint":
                header = row
                continue
            if header is None or "Type" not in header:
                continue
            cells = dict(zip(header, row))
            stats, labels = {}, {}
            for k, v in cells.items():
                if k in ("Endpoint", "Type", "Metric", "Unit", "Description", "buckets") or v == "":
                    continue
                if STAT_COLUMN.match(k):
                    stats[k] = v
                else:
                    labels[k] = v
            entry = metrics.setdefault(cells.get("Metric", ""), {"series": []})
            entry["series"].append(
                {"endpoint_url": cells.get("Endpoint", ""), "labels": labels, "stats": stats}
            )
    return vllm_populate(metrics)


def run_jsonl(path):
    first, last = {}, {}
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            scrape = json.loads(line)
            url = scrape.get("endpoint_url")
            for family, samples in (scrape.get("metrics") or {}).items():
                if not family.startswith("vllm:"):
                    continue
                for s in samples:
                    v = s.get("value")
                    if not isinstance(v, (int, float)):
                        continue
                    key = (url, family, tuple(sorted((s.get("labels") or {}).items())))
                    first.setdefault(key, v)
                    last[key] = v
    sums = {}
    for key, v in last.items():
        sums[key[1]] = sums.get(key[1], 0.0) + (v - first[key])
    return sums


RUNNERS = {"json": run_json, "profile": run_profile, "csv": run_csv, "jsonl": run_jsonl}


def main(argv):
    if len(argv) not in (3, 4) or argv[1] not in RUNNERS:
        sys.exit("usage: producer.py json|profile|csv|jsonl FILE [REPEATS]")
    fmt, path = argv[1], argv[2]
    repeats = int(argv[3]) if len(argv) == 4 else 3
    best = float("inf")
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        RUNNERS[fmt](path)
        best = min(best, time.perf_counter() - t)
    with open(path, "rb") as f:
        size = f.seek(0, 2)
    print(f"{fmt}\t{size}\t{best:.6f}")


if __name__ == "__main__":
    main(sys.argv)
