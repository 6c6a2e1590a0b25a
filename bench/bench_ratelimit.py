"""A whole certification run against a rate-limited reference server (issues 12, 32). Prints figures; asserts nothing.

    python bench/bench_ratelimit.py [--rate-limit 60/60] [--rtt-ms 300] [--report-dir DIR] [-- more run options]
    python bench/bench_ratelimit.py --embedded [--runs 3]       # a default run of the embedded server, timed

Starts `conformance serve --json --port 0 --rate-limit N/SECONDS` (a bucket of N requests refilled over SECONDS, 429
+ Retry-After when empty, X-RateLimit-Remaining on every answer; `--rate-limit none`: a bucket no run empties), runs
`conformance run` against it with every fact the server states (secrets through the environment, as .ci/run does),
and prints: the plan the run printed at its start and the pace it learnt, against the run's real length; requests
and 429s; what the run waited and what was cut; the requirements not assessed or failed; and the goal of issue 32,
1.1 x (requests - N) + 10 s. `--rtt-ms` puts a round trip between the suite and the server (bench/latency.py: a
network namespace, root only). `--embedded` times `conformance run` of the embedded server under /usr/bin/time
(whole process: wall, user + system CPU), the median of `--runs`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
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
UNLIMITED = "1000000/1"
NAMESPACE = "conformance-bench-rtt"


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


def run_command(facts: dict, report_dir: str, extra: list[str]) -> tuple[list[str], dict]:
    cmd = [sys.executable, "-m", "conformance", "run", "--report-dir", report_dir, *extra]
    for fact in FACT_OPTIONS:
        if facts.get(fact):
            cmd += ["--" + fact.replace("_", "-"), str(facts[fact])]
    env = {**os.environ, **{var: facts[f] for f, var in SECRET_ENV.items() if facts.get(f)}}
    for var in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS", "CI", "GITHUB_ACTIONS"):
        env.pop(var, None)
    return cmd, env


def certify(facts: dict, report_dir: str, extra: list[str], wrap=lambda cmd: cmd) -> tuple[int, float, str, dict]:
    """`conformance run` against the server: (exit code, wall seconds, its output, report.json)."""
    cmd, env = run_command(facts, report_dir, extra)
    t0 = time.monotonic()
    proc = subprocess.run(wrap(cmd), env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    report = json.loads((Path(report_dir) / "report.json").read_text())
    return proc.returncode, wall, proc.stdout, report


def said(output: str, word: str) -> str | None:
    """The line the run printed starting with `word:` (the plan, the pace)."""
    found = re.search(rf"^{word}: .*$", output, re.M)
    return found.group(0) if found else None


def rows(report: dict, status: str) -> list[dict]:
    return [r for r in report.get("requirements", []) if r.get("status") == status]


def show(rate_limit: str, code: int, wall: float, output: str, report: dict) -> None:
    cost = report.get("cost", {})
    requests = cost.get("requests", 0)
    n, seconds = parse_rate_limit(rate_limit)
    print(f"server bucket           {'none (' + rate_limit + ')' if rate_limit == UNLIMITED else rate_limit}"
          f" (burst {n}, refill {n / seconds:g}/s)")
    print(f"verdict                 {report.get('verdict')} (exit {code}); summary {report.get('summary')}")
    print(f"at the start            {said(output, 'plan')}")
    print(f"once learnt             {said(output, 'pace') or '(no pace line: nothing to learn)'}")
    print(f"estimate vs real        {cost.get('estimated_seconds')} s estimated ({cost.get('estimate_basis')}); "
          f"{cost.get('wall_seconds')} s recording, {wall:.1f} s the whole command")
    print(f"requests                {requests} sent, {cost.get('planned_requests')} planned; "
          f"{cost.get('waits_429')} answered 429 and resent ({cost.get('waits_429_seconds')} s of Retry-After), "
          f"{cost.get('rate_limited')} still 429 when they could be resent no more")
    print(f"waited for the bucket   {cost.get('rate_limit_wait_seconds')} s of the run; {cost.get('paced_waits')} "
          f"requests held back ({cost.get('paced_seconds')} s summed over them)")
    print(f"cut                     {cost.get('cut_by_run_deadline')} scenarios, "
          f"{cost.get('exchanges_cut_by_run_deadline')} exchanges" + (f" ({report['run_cut']})" if report.get("run_cut") else ""))
    for status in ("failed", "warning", "not_assessed"):
        found = rows(report, status)
        print(f"{status:<24}{len(found)}" + "".join(f"\n    {r['id']} {r['level']}: {r.get('message', '')[:200]}"
                                                     for r in found))
    if rate_limit != UNLIMITED:
        goal = 1.1 * max(0, requests - n) + 10
        print(f"issue 32's goal         at most 1.1 x ({requests} - {n}) + 10 = {goal:.1f} s; the recording took "
              f"{cost.get('wall_seconds')} s ({'met' if cost.get('wall_seconds', 1e9) <= goal else 'NOT met'})")


def rate_limited(opts: argparse.Namespace) -> int:
    rate_limit = UNLIMITED if opts.rate_limit == "none" else opts.rate_limit
    extra = list(opts.extra)
    with RateLimitedServer(rate_limit) as srv, tempfile.TemporaryDirectory() as tmp:
        report_dir = opts.report_dir or tmp
        if opts.rtt_ms:
            from bench.latency import Forwarder, Namespace
            host, port = srv.facts["base_url"].split("//", 1)[1].rsplit(":", 1)
            forward = Forwarder(host, int(port))
            with Namespace(NAMESPACE, f"{host}:{port}", forward.path, opts.rtt_ms) as ns:
                code, wall, output, report = certify(srv.facts, report_dir, extra, wrap=ns.command)
            print(f"round trip              {opts.rtt_ms:g} ms (a delay line in network namespace {NAMESPACE})")
        else:
            code, wall, output, report = certify(srv.facts, report_dir, extra)
    show(rate_limit, code, wall, output, report)
    return 0


def embedded(opts: argparse.Namespace) -> int:
    """`conformance run` of the embedded server, whole process under /usr/bin/time -v: wall and CPU, median of runs."""
    walls, cpus, reqs, rec = [], [], [], []
    for _ in range(opts.runs):
        with tempfile.TemporaryDirectory() as tmp:
            timing = Path(tmp) / "time.txt"
            env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
            subprocess.run(["/usr/bin/time", "-v", "-o", str(timing), sys.executable, "-m", "conformance", "run",
                            "--report-dir", tmp, *opts.extra], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            text = timing.read_text()
            user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
            system = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
            elapsed = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text).group(1)
            parts = [float(x) for x in elapsed.split(":")]
            walls.append(sum(x * 60 ** i for i, x in enumerate(reversed(parts))))
            cpus.append(user + system)
            report = json.loads((Path(tmp) / "report.json").read_text())
            reqs.append(report["cost"]["requests"])
            rec.append(report["cost"]["wall_seconds"])
    print(f"runs                    {opts.runs} (`conformance run` of the embedded server, whole process)")
    print(f"wall                    median {statistics.median(walls):.1f} s ({', '.join(f'{w:.1f}' for w in walls)})")
    print(f"CPU (user + system)     median {statistics.median(cpus):.2f} s ({', '.join(f'{c:.2f}' for c in cpus)})")
    print(f"recording (cost)        median {statistics.median(rec):.1f} s; requests {sorted(set(reqs))}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rate-limit", default="60/60", help="the server's bucket, N/SECONDS, or none (default 60/60)")
    p.add_argument("--rtt-ms", type=float, default=0.0, help="a round trip between suite and server (root)")
    p.add_argument("--report-dir", default=None, help="keep the run's reports there")
    p.add_argument("--embedded", action="store_true", help="time default runs of the embedded server instead")
    p.add_argument("--runs", type=int, default=3, help="with --embedded: how many (the median is shown)")
    p.add_argument("extra", nargs="*", help="more `conformance run` options (after --)")
    opts = p.parse_args()
    return embedded(opts) if opts.embedded else rate_limited(opts)


if __name__ == "__main__":
    raise SystemExit(main())
