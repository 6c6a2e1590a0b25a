"""A default `conformance run` of the embedded reference server, made once for the tests that read it (their module
marks it with `xdist_group(DEFAULT_RUN)`, so the run is made once under pytest-xdist too)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conformance import recording
from tests.reports.support import run_cli

DEFAULT_RUN = "default-run"


@pytest.fixture(scope="session")
def default_run(tmp_path_factory) -> Path:
    """The report directory of a default `conformance run` of the embedded reference server (the plugin's path)."""
    out = tmp_path_factory.mktemp("default")
    proc = run_cli("run", "--report-dir", str(out))
    assert proc.returncode == 0 and (out / recording.FILE).is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"recording: {recording.FILE} (" in proc.stdout
    return out
