"""A whole certification run against a rate-limited reference server (issue 12). Prints figures; asserts nothing.

    python bench/bench_ratelimit.py [--rate-limit 20/10] [--protocols invoke,agui,mcp] [-- extra run options]

Starts `conformance serve --json --port 0 --rate-limit N/SECONDS` (a bucket of N requests refilled over
SECONDS, 429 + Retry-After when empty, X-RateLimit-Remaining on every answer), runs `conformance run` against
it (facts from the server's JSON line, secrets through the environment), and prints: requests sent, 429 waits,
requests held back by the pacer, failed requirements (should be 0), wall time, the time the bucket needs for
the requests sent ((requests - N) / (N / SECONDS)), and their ratio (goal <= 1.2).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.wire.pace import parse_rate_limit  # noqa: E402

SECRET_ENV = {"api_key": "CONFORMANCE_API_KEY", "access_token": "CONFORMANCE_ACCESS_TOKEN",
              "revoked_key": "CONFORMANCE_REVOKED_KEY", "expired_token": "CONFORMANCE_EXPIRED_TOKEN"}
FACT_OPTIONS = ("base_url", "agent_id", "other_agent_id", "undeployed_agent_id", "agent_slug", "auth_url",
                "extra_data_field", "ca_bundle")
START_TIMEOUT = 30.0


class RateLimitedServer:
    """`conformance serve --rate-limit …` (and `serve_args`) in a child process; stops when its stdin closes.
    `log`: a file its standard error goes to."""

    def __init__(self, rate_limit: str, *serve_args: str, log=None) -> None:
        self.rate_limit = rate_limit
        self.serve_args = serve_args
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.facts: dict = {}

    def __enter__(self) -> "RateLimitedServer":
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance", "serve", "--json", "--port", "0", "--until-stdin-closes",
             "--rate-limit", self.rate_limit, *self.serve_args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=ROOT)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the reference server did not start")
        self.facts = json.loads(line)
        return self

    def __exit__(self, *exc) -> None:
        assert self.proc is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def certify(facts: dict, report_dir: str, extra: list[str] = ()) -> tuple[int, float, dict]:
    """`conformance run` against the server: (exit code, wall seconds, report.json)."""
    cmd = [sys.executable, "-m", "conformance", "run", "--report-dir", report_dir, *extra]
    for fact in FACT_OPTIONS:
        if facts.get(fact):
            cmd += ["--" + fact.replace("_", "-"), str(facts[fact])]
    env = {**os.environ, **{var: facts[f] for f, var in SECRET_ENV.items() if facts.get(f)}}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    report = json.loads((Path(report_dir) / "report.json").read_text())
    return proc.returncode, wall, report


def failed_requirements(report: dict) -> list[dict]:
    return [r for r in report.get("requirements", []) if r.get("status") == "failed"]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rate-limit", default="20/10", help="the server's bucket, N/SECONDS (default 20/10)")
    p.add_argument("--protocols", default=None, help="passed to conformance run")
    p.add_argument("extra", nargs="*", help="more `conformance run` options (after --)")
    opts = p.parse_args()
    n, seconds = parse_rate_limit(opts.rate_limit)
    extra = list(opts.extra) + (["--protocols", opts.protocols] if opts.protocols else [])
    with RateLimitedServer(opts.rate_limit) as srv, tempfile.TemporaryDirectory() as tmp:
        code, wall, report = certify(srv.facts, tmp, extra)
    cost = report.get("cost", {})
    requests = cost.get("requests", 0)
    allowed = max(0, requests - n) / (n / seconds)
    failed = failed_requirements(report)
    print(f"server bucket           {n} requests / {seconds:g} s (burst {n}, refill {n / seconds:g}/s)")
    print(f"verdict                 {report.get('verdict')} (exit {code}); summary {report.get('summary')}")
    print(f"requests sent           {requests}")
    print(f"429 waits               {cost.get('waits_429')} ({cost.get('waits_429_seconds')} s); still 429 after "
          f"the retry budget: {cost.get('rate_limited')}")
    print(f"held back by the pacer  {cost.get('paced_waits')} requests, {cost.get('paced_seconds')} s in all")
    print(f"transport retries       {cost.get('transport_retries')}")
    print(f"recorded                {cost.get('frames_recorded')} stream frames, "
          f"{cost.get('body_bytes_recorded')} body bytes")
    print(f"failed requirements     {len(failed)}" + "".join(f"\n    {r['id']}: {r.get('message', '')[:300]}"
                                                               for r in failed))
    for status in ("warning", "not_assessed"):
        rows = [r for r in report.get("requirements", []) if r.get("status") == status]
        print(f"{status:<24}{len(rows)}" + "".join(f"\n    {r['id']}: {r.get('message', '')[:200]}" for r in rows))
    print(f"wall time               {wall:.1f} s (run's own: {cost.get('wall_seconds')} s)")
    print(f"bucket time for them    {allowed:.1f} s  (({requests} - {n}) / {n / seconds:g} per s)")
    print(f"ratio                   {wall / allowed:.2f}x (goal <= 1.2x)" if allowed else "ratio                   n/a")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
