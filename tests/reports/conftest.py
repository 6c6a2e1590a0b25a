"""Two real runs through the CLI, made once for the modules that read their reports (test_reports_e2e.py,
test_html_browser.py): a passing one, its report directory relative to its working directory, and a failing one
against a broken server of the zoo, its report directory outside its working directory."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conformance.server import ReferenceServer
from tests.reports.support import FAILING_MUST, run_cli, server_args, server_env
from tests.selftest.zoo import load_zoo

PASSING_REQUIREMENTS = "AUTH-KEY-001,AUTH-KEY-002"
BROKEN = "INV-RES-005-events-missing"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def passing(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """(report directory, the run): `--report-dir out` from a working directory of its own."""
    cwd = tmp_path_factory.mktemp("passing")
    proc = run_cli("run", "--requirements", PASSING_REQUIREMENTS, "--seed", "11", "--report-dir", "out", cwd=cwd)
    return cwd / "out", proc


@pytest.fixture(scope="session")
def failing(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, dict]:
    """(report directory, the run, the broken server's facts): the report directory an absolute path elsewhere
    than the working directory (the checkout)."""
    out = tmp_path_factory.mktemp("failing")
    with ReferenceServer(load_zoo()[BROKEN].server_config()) as srv:
        proc = run_cli("run", *server_args(srv.facts), "--requirements", FAILING_MUST, "--seed", "12",
                       "--report-dir", str(out), env=server_env(srv.facts), cwd=REPO)
        facts = dict(srv.facts)
    return out, proc, facts
