"""`conformance run` against hostile servers ends in time, with a verdict, clear messages and whole reports.

A module fixture runs the cases PARALLEL at a time (each its own server and `conformance run`
subprocess; the module is one xdist group, so the fixture runs once). Per case: wall time ≤ RUN_BOUND, verdict ``non-conformant`` or ``error``,
exit code 1 or 2 matching it, no Python traceback in stdout/stderr, peak RSS of the
subprocess below RSS_BOUND_MB, report.json / report.html / junit.xml present and parseable,
and every failed check carrying a message. Figures go to ``reports/selftest-hostile.md``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from tests.selftest.tables import record_result
from tests.selftest.hostile import BEHAVIOURS, HostileServer, describe

pytestmark = [pytest.mark.xdist_group("hostile"),
              pytest.mark.skipif(os.environ.get("CONFORMANCE_SELFTEST_SKIP_HOSTILE") == "1",
                                 reason="CONFORMANCE_SELFTEST_SKIP_HOSTILE=1 (the module costs about 3 minutes)")]

RUN_DEADLINE = 40.0        # the profile's [timeouts] run: the recording phase is cut off then, whatever the server does
RUN_BOUND = RUN_DEADLINE + 120.0  # seconds for one whole `conformance run` (start, judging, reports; a loaded box)
RSS_BOUND_MB = 1024.0      # peak resident memory of the subprocess
PARALLEL = 3               # subprocesses at once (each run needs ~15-30 s of CPU; CI has 2 cores and 5 test workers)
PROFILE = f"""\
[timeouts]
connect = 3.0
headers = 4.0
idle = 4.0
request = 8.0
run = {RUN_DEADLINE:g}
"""
EXIT_FOR = {"non-conformant": 1, "error": 2}
FAKE_KEY = "svc_live_hostileHostileHostile01"


def run_case(name: str, workdir: Path) -> dict:
    """Starts the hostile server and `conformance run` against it; returns what happened."""
    workdir.mkdir(parents=True, exist_ok=True)
    profile = workdir / "profile.toml"
    profile.write_text(PROFILE)
    reports = workdir / "reports"
    with HostileServer(name) as srv:
        cmd = [sys.executable, "-m", "conformance", "run", "--base-url", srv.base_url, "--agent-id", "agt_x",
               "--ca-bundle", srv.ca_path, "--profile", str(profile), "--report-dir", str(reports)]
        env = {**os.environ, "CONFORMANCE_API_KEY": FAKE_KEY, "PYTHONUNBUFFERED": "1"}
        env.pop("PYTEST_XDIST_WORKER", None)
        env.pop("PYTEST_ADDOPTS", None)
        t0 = time.monotonic()
        with open(workdir / "stdout", "wb") as out, open(workdir / "stderr", "wb") as err:
            proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=out, stderr=err)
            peak, killed = watch(proc, RUN_BOUND)
        seconds = time.monotonic() - t0
    return {"name": name, "exit": proc.returncode, "seconds": seconds, "peak_rss_mb": peak / 2**20,
            "killed": killed, "stdout": (workdir / "stdout").read_text("utf-8", "replace"),
            "stderr": (workdir / "stderr").read_text("utf-8", "replace"), "reports": reports}


def watch(proc: subprocess.Popen, bound: float) -> tuple[int, bool]:
    """Peak RSS (process and children) until it exits; killed after ``bound`` seconds."""
    peak, start = 0, time.monotonic()
    ps = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            rss = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        if time.monotonic() - start > bound:
            proc.kill()
            proc.wait()
            return peak, True
        time.sleep(0.1)
    return peak, False


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")  # pytest keeps the last runs' folders for inspection
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = {name: pool.submit(run_case, name, base / name) for name in BEHAVIOURS}
        yield {name: f.result() for name, f in futures.items()}


def problems_of(run: dict) -> tuple[list[str], str | None]:
    """Every broken promise of the runner for one case, and the verdict."""
    problems = []
    if run["killed"]:
        problems.append(f"still running after {RUN_BOUND:g} s (killed)")
    for stream in ("stdout", "stderr"):
        if "Traceback (most recent call last)" in run[stream]:
            problems.append(f"a Python traceback on {stream}: ...{run[stream][run[stream].find('Traceback'):][:400]}")
    if run["peak_rss_mb"] > RSS_BOUND_MB:
        problems.append(f"peak RSS {run['peak_rss_mb']:.0f} MB over {RSS_BOUND_MB:g} MB")
    reports: Path = run["reports"]
    verdict = None
    try:
        report = json.loads((reports / "report.json").read_text())
        verdict = report.get("verdict")
    except (OSError, ValueError) as exc:
        problems.append(f"report.json missing or not JSON ({exc})")
        report = {}
    if verdict not in EXIT_FOR:
        problems.append(f"verdict {verdict!r}, expected non-conformant or error")
    elif run["exit"] != EXIT_FOR[verdict]:
        problems.append(f"exit code {run['exit']} does not match verdict {verdict} ({EXIT_FOR[verdict]})")
    for c in report.get("checks", []):
        if c.get("status") in ("failed", "error") and len(str(c.get("message", "")).strip()) < 10:
            problems.append(f"check {c.get('id')} {c.get('status')} without a clear message: {c.get('message')!r}")
        if "Traceback" in str(c.get("message", "")):
            problems.append(f"check {c.get('id')} message holds a traceback")
    html = reports / "report.html"
    if not html.is_file() or "<html" not in html.read_text("utf-8", "replace").lower():
        problems.append("report.html missing or not HTML")
    try:
        ET.parse(reports / "junit.xml")
    except (OSError, ET.ParseError) as exc:
        problems.append(f"junit.xml missing or not XML ({exc})")
    return problems, verdict


@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_runner_survives_hostile_server(name: str, hostile_runs) -> None:
    run = hostile_runs[name]
    problems, verdict = problems_of(run)
    record_result("hostile", name, {"doc": describe(name), "seconds": run["seconds"], "exit": run["exit"],
                                    "verdict": verdict, "peak_rss_mb": run["peak_rss_mb"],
                                    "reports": "ok" if not any("report" in p or "junit" in p for p in problems) else "BROKEN",
                                    "problems": "; ".join(problems)})
    assert not problems, f"hostile server {name} ({describe(name)}):\n  " + "\n  ".join(problems) + (
        f"\n--- stderr (tail) ---\n{run['stderr'][-1500:]}")
