#!/usr/bin/env python3
"""Linearity under hostile shapes: each shape generated at n and 4n, accounted by the CLI.

    python3 bench/shapes.py [--cli PATH] [--data DIR] [--scale K] [--only SHAPE,...] [--command inspect]

A shape is a file (or a run's folder of many files) whose size grows along one axis an upload
can push: label sets of one counter, series that appear one per scrape, metric names,
endpoints, timeslices out of order, labels per series, histogram buckets, per-request records,
files of one endpoint each. The baseline is the same shape at n, in the same run: time(4n) /
time(n) near 4 is linear, near 16 quadratic. Each run is the best of three (wall seconds, and
the CLI's peak RSS from GNU time); RSS / input is beside. Benchmarks are not tests: nothing here
fails on a slow machine. --scale multiplies every n (0.25 for a quick look).
"""
import argparse
import json
import os
import random
import subprocess
import tempfile
import time

T0 = 1_781_634_703_000_000_000
S = 10**9


def scrape_line(url, t, metrics):
    row = {"endpoint_url": url, "timestamp_ns": t, "endpoint_latency_ns": 1000, "metrics": metrics}
    return json.dumps(row, separators=(",", ":")) + "\n"


def vllm(v):
    lab = {"engine": "0", "model_name": "m"}
    return {
        "vllm:prefix_cache_queries_total": [{"labels": dict(lab), "value": float(v * 10)}],
        "vllm:prefix_cache_hits_total": [{"labels": dict(lab), "value": float(v * 5)}],
        "vllm:prompt_tokens_total": [{"labels": dict(lab), "value": float(v * 10)}],
    }


def jsonl_label_sets(f, n):
    for s in range(20):
        m = vllm(s)
        m["vllm:prefix_cache_queries_total"] = [
            {"labels": {"engine": str(i), "model_name": "m"}, "value": float(s * 10 + i)} for i in range(n)
        ]
        f.write(scrape_line("http://h:8000/metrics", T0 + s * S, m))


def jsonl_series_per_scrape(f, n):
    for s in range(n):
        m = vllm(s)
        m["vllm:prefix_cache_queries_total"].append({"labels": {"engine": "x%d" % s, "model_name": "m"}, "value": 1.0})
        f.write(scrape_line("http://h:8000/metrics", T0 + s * S, m))


def jsonl_names(f, n):
    for s in range(20):
        m = vllm(s)
        m.update({"x_metric_%d_total" % i: [{"value": float(s)}] for i in range(n)})
        f.write(scrape_line("http://h:8000/metrics", T0 + s * S, m))


def jsonl_endpoints(f, n):
    for s in range(3):
        for e in range(n):
            f.write(scrape_line("http://h%d:8000/metrics" % e, T0 + s * S, vllm(s)))


def jsonl_restarts(f, n):
    for s in range(n):
        f.write(scrape_line("http://h:8000/metrics", T0 + s * S, vllm(s % 2 + s // 100)))


def jsonl_backwards(f, n):
    for s in range(n):
        f.write(scrape_line("http://h:8000/metrics", T0 + (n - s) * S, vllm(n - s)))


def export(f, series_of):
    doc = {
        "schema_version": "1.0",
        "aiperf_version": "0.12.0",
        "benchmark_id": "x",
        "metrics": {name: {"type": "counter", "description": "d", "series": s} for name, s in series_of.items()},
    }
    json.dump(doc, f)


def export_series(url, labels, slices):
    total = float(sum(t for _, _, t in slices))
    return {
        "endpoint_url": url,
        "labels": labels,
        "stats": {"total": total, "rate": 1.0},
        "timeslices": [{"start_ns": a, "end_ns": b, "total": t} for a, b, t in slices],
    }


def export_label_sets(f, n):
    one = [(T0, T0 + S, 1.0)]
    export(f, {"vllm:prefix_cache_queries": [export_series("http://h:8000/metrics", {"engine": str(i)}, one) for i in range(n)]})


def export_slices_reversed(f, n):
    sl = [(T0 + i * S, T0 + (i + 1) * S, 1.0) for i in range(n)][::-1]
    export(f, {k: [export_series("http://h:8000/metrics", {}, sl)] for k in ("vllm:prefix_cache_queries", "vllm:prefix_cache_hits")})


def export_endpoint_grids(f, n):
    series = [
        export_series("http://h%d:8000/metrics" % e, {}, [(T0 + e + i * S, T0 + e + (i + 1) * S, 1.0) for i in range(20)])
        for e in range(n)
    ]
    export(f, {"vllm:prefix_cache_queries": series})


CSV_HEAD = (
    "# AIPerf Server Metrics Export (CSV)\n#\n"
    "Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,Description\n"
)


def csv_row(metric, engine):
    return "10.0.0.1:8000,gauge,%s,,1.0,1.0,1.0,0.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,%s,m,d\n" % (metric, engine)


def csv_label_sets(f, n):
    f.write(CSV_HEAD)
    f.writelines(csv_row("vllm:kv_cache_usage_perc", str(i)) for i in range(n))


def csv_names(f, n):
    f.write(CSV_HEAD)
    f.writelines(csv_row("x_metric_%d" % i, "0") for i in range(n))


def csv_info_keys(f, n):
    f.write(CSV_HEAD)
    f.write(csv_row("vllm:kv_cache_usage_perc", "0"))
    f.write("\nEndpoint,Metric,Key,Value,Description\n")
    f.writelines("10.0.0.1:8000,vllm:cache_config_info,key_%d,%d,d\n" % (i, i) for i in range(n))


def prom_series(f, n):
    f.write("# TYPE vllm:prefix_cache_queries counter\n")
    f.writelines('vllm:prefix_cache_queries_total{engine="%d",model_name="m"} %d.0\n' % (i, i) for i in range(n))


def prom_labels(f, n):
    f.write("# TYPE vllm:prefix_cache_queries counter\n")
    f.write("vllm:prefix_cache_queries_total{" + ",".join('l%d="v"' % i for i in range(n)) + "} 1.0\n")


def prom_buckets(f, n):
    f.write("# TYPE vllm:ttft histogram\n")
    f.writelines('vllm:ttft_bucket{le="%d.0"} %d.0\n' % (i, i) for i in range(n))
    f.write('vllm:ttft_bucket{le="+Inf"} %d.0\nvllm:ttft_count %d.0\nvllm:ttft_sum 1.0\n' % (n, n))


def records(f, n):
    for i in range(n):
        row = {
            "metadata": {"x_request_id": "r%d" % i, "request_start_ns": T0 + i * 1000, "request_end_ns": T0 + i * 1000 + S,
                         "benchmark_phase": "profiling", "was_cancelled": False},
            "metrics": {"input_sequence_length": {"value": 100, "unit": "tokens"},
                        "usage_prompt_tokens": {"value": 100, "unit": "tokens"}},
        }
        f.write(json.dumps(row, separators=(",", ":")) + "\n")


def files_captures(d, n):
    # Each capture is its own endpoint (`capture:<file>`): per-endpoint state must not grow
    # with the files met before (an endpoint's places by file were quadratic in files).
    for i in range(n):
        with open(os.path.join(d, "capture-%06d.prom" % i), "w") as f:
            f.write("# TYPE vllm:prefix_cache_queries counter\n")
            f.write('vllm:prefix_cache_queries_total{engine="0",model_name="m"} %d.0 %d\n' % (i, T0 // 10**6 + i))


def files_scrapes(d, n):
    for i in range(n):
        with open(os.path.join(d, "r%06d.server_metrics_export.jsonl" % i), "w") as f:
            f.writelines(scrape_line("http://h%d:8000/metrics" % i, T0 + s * S, vllm(s)) for s in range(3))


def export_names_shuffled(f, n):
    names = ["x_metric_%d" % i for i in range(n)]
    random.Random(1).shuffle(names)
    export(f, {name: [export_series("http://h:8000/metrics", {"engine": "0"}, [(T0, T0 + S, 1)])] for name in names})


def jsonl_names_shuffled(f, n):
    names = ["x_metric_%d_total" % i for i in range(n)]
    random.Random(1).shuffle(names)
    for s in range(3):
        m = vllm(s)
        m.update({name: [{"value": float(s)}] for name in names})
        f.write(scrape_line("http://h:8000/metrics", T0 + s * S, m))


def launch_endpoints(d, n):
    # A launch file listing n endpoints in shuffled order beside a small run: its roles map was
    # grown in list order (quadratic).
    hosts = ["10.%d.%d.%d:8000" % ((i >> 16) & 255, (i >> 8) & 255, i & 255) for i in range(n)]
    random.Random(1).shuffle(hosts)
    with open(os.path.join(d, "launch.json"), "w") as f:
        json.dump({"prefill_endpoints": hosts[: n // 2], "decode_endpoints": hosts[n // 2 :], "disaggregated": True}, f)
    with open(os.path.join(d, "server_metrics_export.jsonl"), "w") as f:
        f.writelines(scrape_line("http://10.0.0.0:8000/metrics", T0 + s * S, vllm(s)) for s in range(3))


# name: (file name, or None for a writer of many files into the run's folder; writer, n)
SHAPES = {
    "jsonl_label_sets": ("server_metrics_export.jsonl", jsonl_label_sets, 5_000),
    "jsonl_series_per_scrape": ("server_metrics_export.jsonl", jsonl_series_per_scrape, 25_000),
    "jsonl_names": ("server_metrics_export.jsonl", jsonl_names, 5_000),
    "jsonl_endpoints": ("server_metrics_export.jsonl", jsonl_endpoints, 5_000),
    "jsonl_restarts": ("server_metrics_export.jsonl", jsonl_restarts, 25_000),
    "jsonl_backwards": ("server_metrics_export.jsonl", jsonl_backwards, 25_000),
    "export_label_sets": ("server_metrics_export.json", export_label_sets, 20_000),
    "export_slices_reversed": ("server_metrics_export.json", export_slices_reversed, 20_000),
    "export_endpoint_grids": ("server_metrics_export.json", export_endpoint_grids, 2_000),
    "csv_label_sets": ("server_metrics_export.csv", csv_label_sets, 20_000),
    "csv_names": ("server_metrics_export.csv", csv_names, 20_000),
    "csv_info_keys": ("server_metrics_export.csv", csv_info_keys, 25_000),
    "prom_series": ("capture.prom", prom_series, 50_000),
    "prom_labels": ("capture.prom", prom_labels, 5_000),
    "prom_buckets": ("capture.prom", prom_buckets, 50_000),
    "records": ("profile_export.jsonl", records, 100_000),
    "files_captures": (None, files_captures, 2_000),
    "files_scrapes": (None, files_scrapes, 2_000),
    "export_names_shuffled": ("server_metrics_export.json", export_names_shuffled, 20_000),
    "jsonl_names_shuffled": ("server_metrics_export.jsonl", jsonl_names_shuffled, 5_000),
    "launch_endpoints": (None, launch_endpoints, 25_000),
}


def timed(cli, path, command="account"):
    """Best of three: (wall seconds, peak RSS bytes of the CLI process).

    The peak RSS is GNU time's (`/usr/bin/time -f %M`): a child forked from this Python
    process inherits its high-water mark through exec (Linux keeps it across `execve`), so
    `wait4`'s figure cannot go below this script's own RSS (about 13 MB), which is most of a
    small shape's. Without GNU time that is the figure used, and it says so.
    """
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    best = None
    with tempfile.NamedTemporaryFile(prefix="kvledger-shapes-rss-") as rss_file:
        for _ in range(3):
            cmd = [cli, command, "--json", path]
            if gnu_time:
                cmd = [gnu_time, "-f", "%M", "-o", rss_file.name] + cmd
            t = time.perf_counter()
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(p.pid, 0)
            secs = time.perf_counter() - t
            err = p.stderr.read().decode("utf-8", "replace")
            p.stderr.close()
            code = os.waitstatus_to_exitcode(status)
            if code not in (0, 1):
                raise SystemExit("%s: exit %d: %s" % (path, code, err[-500:]))
            if gnu_time:
                with open(rss_file.name) as f:
                    rss = int(f.read().split()[-1]) * 1024
            else:
                rss = usage.ru_maxrss * 1024
            run = (secs, rss)
            best = run if best is None or run[0] < best[0] else best
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--cli", default=os.path.join(root, "target", "release", "kvledger"))
    ap.add_argument("--data", default=None, help="keep the generated files here")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--command", default="account", choices=["account", "inspect"],
                    help="the CLI command timed (inspect reads every family, account only its own)")
    a = ap.parse_args()
    data = a.data or tempfile.mkdtemp(prefix="kvledger-shapes-")
    only = set(a.only.split(",")) if a.only else None
    if not os.access("/usr/bin/time", os.X_OK):
        print("(no /usr/bin/time: peak RSS is wait4's, which includes this Python's own, about 13 MB)")
    print("| shape | n | bytes | s | peak RSS / input | 4n bytes | s | peak RSS / input | time(4n) / time(n) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, (file_name, write, n) in SHAPES.items():
        if only and name not in only:
            continue
        n = max(1, int(n * a.scale))
        cells = []
        for k in (n, 4 * n):
            d = os.path.join(data, "%s-%d" % (name, k))
            os.makedirs(d, exist_ok=True)
            if file_name is None:
                if not os.listdir(d):
                    write(d, k)
                size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
            else:
                path = os.path.join(d, file_name)
                if not os.path.exists(path):
                    with open(path, "w") as f:
                        write(f, k)
                size = os.path.getsize(path)
            secs, rss = timed(a.cli, d, a.command)
            cells.append((size, secs, rss))
        (b1, s1, r1), (b4, s4, r4) = cells
        ratio = s4 / s1 if s1 > 0 else float("nan")
        print("| %s | %d | %d | %.3f | %.2f | %d | %.3f | %.2f | %.1f |" % (name, n, b1, s1, r1 / b1, b4, s4, r4 / b4, ratio))


if __name__ == "__main__":
    main()
