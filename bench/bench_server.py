"""Benchmark of the reference server (prints figures; not a test).

* non-streaming invoke (``say hi``) over HTTPS keep-alive at concurrency 16, from a
  separate load process (``wrk`` when installed, else ``bench/loadgen.py``):
  requests/s and p50/p99 latency;
* AG-UI first-event latency (time to the first ``data:`` frame), concurrency 1.

    python bench/bench_server.py [--duration 10] [--concurrency 16] [--loadgen python|wrk]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from conformance.server import ReferenceServer, ServerConfig  # noqa: E402

LOADGEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loadgen.py")


def run_python_loadgen(url, headers, body, concurrency, duration, first_byte=None, max_requests=None, cafile=None):
    cmd = [sys.executable, LOADGEN, url, "--body", body, "--concurrency", str(concurrency),
           "--duration", str(duration)]
    for h in headers:
        cmd += ["--header", h]
    if first_byte:
        cmd += ["--first-byte", first_byte]
    if max_requests:
        cmd += ["--max-requests", str(max_requests)]
    if cafile:
        cmd += ["--cafile", cafile]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(url, headers, body, concurrency, duration):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write('wrk.method = "POST"\n')
        fh.write(f"wrk.body = {json.dumps(body)}\n")
        fh.write('wrk.headers["Content-Type"] = "application/json"\n')
        for h in headers:
            k, v = h.split(":", 1)
            fh.write(f"wrk.headers[{json.dumps(k.strip())}] = {json.dumps(v.strip())}\n")
        script = fh.name
    try:
        out = subprocess.run(["wrk", "-t2", f"-c{concurrency}", f"-d{int(duration)}s", "--latency", "-s", script, url],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = {p: _ms(v, u) for p, v, u in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)", out, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))
    return {"requests": total, "errors": int(non2xx.group(1)) if non2xx else 0, "rps": rps,
            "p50_ms": lat.get("50"), "p90_ms": lat.get("90"), "p99_ms": lat.get("99")}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--loadgen", choices=["auto", "wrk", "python"], default="auto")
    args = p.parse_args()
    use_wrk = args.loadgen == "wrk" or (args.loadgen == "auto" and shutil.which("wrk"))

    cfg = ServerConfig(rate_limit_burst=10**9, rate_limit_per_second=1e9)
    with ReferenceServer(cfg) as srv:
        f = srv.facts
        base = f"{f['base_url']}/v1/agents/{f['agent_id']}"
        headers = [f"Authorization: Bearer {f['api_key']}"]
        body = json.dumps({"prompt": "say hi"})
        # warm-up
        run_python_loadgen(base + "/invoke", headers, body, 4, 1.0)
        if use_wrk:
            inv = run_wrk(base + "/invoke", headers, body, args.concurrency, args.duration)
            tool = "wrk"
        else:
            inv = run_python_loadgen(base + "/invoke", headers, body, args.concurrency, args.duration)
            tool = "bench/loadgen.py"
        print(f"invoke (non-streaming, 'say hi'), HTTPS keep-alive, concurrency {args.concurrency}, "
              f"{args.duration:g} s, load from {tool}:")
        print(f"  {inv['rps']:.0f} requests/s   p50 {inv['p50_ms']:.2f} ms   p90 {inv['p90_ms']:.2f} ms   "
              f"p99 {inv['p99_ms']:.2f} ms   ({inv['requests']} requests, {inv['errors']} errors)")

        agui_body = json.dumps({"messages": [{"id": "1", "role": "user", "content": "say hi"}]})
        ag = run_python_loadgen(base + "/agui", headers, agui_body, 1, 5.0, first_byte="data:", max_requests=500,
                                cafile=f["ca_bundle"])
        print("AG-UI first-event latency (time to the first data: frame), concurrency 1:")
        print(f"  p50 {ag['p50_ms']:.2f} ms   p90 {ag['p90_ms']:.2f} ms   p99 {ag['p99_ms']:.2f} ms   "
              f"({ag['requests']} runs, {ag['errors']} errors)")
        ag16 = run_python_loadgen(base + "/agui", headers, agui_body, args.concurrency, 5.0, first_byte="data:")
        print(f"AG-UI streamed runs at concurrency {args.concurrency}: {ag16['rps']:.0f} runs/s, first event "
              f"p50 {ag16['p50_ms']:.2f} ms, p99 {ag16['p99_ms']:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
