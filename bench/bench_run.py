"""Speed and cost of a certification run (issue 9). Prints figures; asserts nothing.

    python bench/bench_run.py [--runs 3] [--depths 1,2,4] [--concurrency 1,4,12] [--skip-server]

For each configuration it runs `conformance run` against the embedded
reference server (server start included) in a subprocess, and reports wall
time (median), HTTP requests, agent runs, bytes received (from report.json)
and the suite's peak RSS (sampled with psutil, children included).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent


def one_run(extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        proc = psutil.Popen([sys.executable, "-m", "conformance", "run", "--report-dir", tmp, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        peak = 0
        while proc.poll() is None:
            try:
                rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
                peak = max(peak, rss)
            except psutil.Error:
                pass
            time.sleep(0.05)
        wall = time.monotonic() - t0
        rep = json.loads((Path(tmp) / "report.json").read_text())
    cost = rep.get("cost", {})
    return {"wall": wall, "exit": proc.returncode, "verdict": rep["verdict"], "requests": cost.get("requests"),
            "agent_runs": cost.get("agent_runs"), "bytes": cost.get("bytes_received"), "rss_mb": peak / 2**20}


def measure(label: str, extra: list[str], runs: int) -> dict:
    got = [one_run(extra) for _ in range(runs)]
    row = {"config": label, "wall_median_s": statistics.median(r["wall"] for r in got),
           "wall_min_s": min(r["wall"] for r in got), "requests": got[-1]["requests"],
           "agent_runs": got[-1]["agent_runs"], "bytes": got[-1]["bytes"],
           "peak_rss_mb": max(r["rss_mb"] for r in got), "verdict": got[-1]["verdict"]}
    print(f"{row['config']:<24} {row['wall_median_s']:>8.2f} {row['wall_min_s']:>8.2f} {row['requests']:>9} "
          f"{row['agent_runs']:>10} {row['bytes']:>11} {row['peak_rss_mb']:>9.1f}  {row['verdict']}", flush=True)
    return row


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=3, help="runs per configuration (median reported)")
    p.add_argument("--depths", default="1,2,4")
    p.add_argument("--concurrency", default="1,4,12")
    p.add_argument("--skip-server", action="store_true", help="skip the reference server's own bench")
    opts = p.parse_args()
    print(f"{'configuration':<24} {'median s':>8} {'min s':>8} {'requests':>9} {'agent runs':>10} {'bytes':>11} "
          f"{'RSS MB':>9}  verdict")
    rows = [measure("default", [], opts.runs)]
    for d in [int(x) for x in opts.depths.split(",") if x and x != "1"]:
        rows.append(measure(f"--depth {d}", ["--depth", str(d)], max(1, opts.runs // 2)))
    for c in [int(x) for x in opts.concurrency.split(",") if x and x != "12"]:
        rows.append(measure(f"--concurrency {c}", ["--concurrency", str(c)], 1))
    floor = 16.0
    d = rows[0]
    print(f"\ndefault run: {d['wall_median_s']:.2f} s = {d['wall_median_s'] / floor:.2f}x the 16 s ping floor "
          f"(goal <= 1.3x); {d['requests']} requests (goal < 400), {d['agent_runs']} agent runs (goal < 150), "
          f"peak RSS {d['peak_rss_mb']:.0f} MB (goal < 300)")
    if not opts.skip_server and (ROOT / "bench" / "bench_server.py").exists():
        print("\nreference server bench (bench/bench_server.py):", flush=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "bench_server.py")], cwd=ROOT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
