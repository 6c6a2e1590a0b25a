"""Real runs through the CLI: report.json matches its schema, junit.xml is per requirement, and report.html,
rendered by a real browser (headless Chromium), shows the verdict banner, the target and a failure's details."""
from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from conformance.server import ReferenceServer
from tests.reports.support import FAILING_MUST, load_json, run_cli, server_args, server_env
from tests.selftest.zoo import load_zoo

PASSING_REQUIREMENTS = "META-DOC-001,META-DOC-002"
BROKEN = "INV-RES-005-events-missing"


@pytest.fixture(scope="module")
def passing(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("passing")
    proc = run_cli("run", "--requirements", PASSING_REQUIREMENTS, "--seed", "11", "--report-dir", str(out))
    return out, proc


@pytest.fixture(scope="module")
def failing(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, dict]:
    out = tmp_path_factory.mktemp("failing")
    with ReferenceServer(load_zoo()[BROKEN].server_config()) as srv:
        proc = run_cli("run", *server_args(srv.facts), "--requirements", FAILING_MUST, "--seed", "12",
                       "--report-dir", str(out), env=server_env(srv.facts))
        facts = dict(srv.facts)
    return out, proc, facts


def test_exit_status_and_terminal_of_a_passing_and_a_failing_run(passing, failing):
    out, proc = passing
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("target: https://127.0.0.1:") and lines[0].endswith("embedded reference server")
    assert lines[-1].startswith("✔ CONFORMANT ·") and "2 requirements: 2 passed" in lines[-1]
    out, proc, facts = failing
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == f"target: {facts['base_url']} · agent {facts['agent_id']}"
    assert lines[-1].startswith("✘ NON-CONFORMANT ·")
    assert f"✘ {FAILING_MUST} MUST FAILED" in proc.stdout and "  reproduce: curl " in proc.stdout
    assert "seed: 12" in proc.stdout
    for p in (passing[1], proc):
        assert "Traceback" not in p.stdout + p.stderr and "PASSED" not in p.stdout and "warnings summary" not in p.stdout
    for key in ("api_key", "access_token", "revoked_key", "expired_token"):
        assert facts[key] not in proc.stdout + proc.stderr


def test_report_json_validates_against_the_shipped_schema(passing, failing):
    schema = json.loads(resources.files("conformance.reporting").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for out in (passing[0], failing[0]):
        rep = load_json(out / "report.json")
        jsonschema.Draft202012Validator(schema).validate(rep)
        assert next(iter(rep)) == "target"
    rep = load_json(failing[0] / "report.json")
    assert [r["id"] for r in rep["requirements"]] == [FAILING_MUST] and rep["options"]["seed"] == 12
    assert rep["requirements"][0]["evidence"][0]["curl"].startswith("curl ")


def test_report_md_is_written_beside_the_others(passing, failing):
    assert (passing[0] / "report.md").read_text(encoding="utf-8").startswith("## ✅ CONFORMANT")
    out, _, facts = failing
    doc = (out / "report.md").read_text(encoding="utf-8")
    assert doc.startswith("## ❌ NON-CONFORMANT") and f"#### ❌ {FAILING_MUST} · MUST · failed" in doc
    assert "```sh\ncurl " in doc and load_json(out / "report.json")["reports"]["report.md"] == str(out / "report.md")
    for key in ("api_key", "access_token", "revoked_key", "expired_token"):
        assert facts[key] not in doc


def test_junit_has_one_case_per_requirement(failing):
    root = ET.parse(failing[0] / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert [c.get("name").split()[0] for c in cases] == [FAILING_MUST]
    assert cases[0].get("classname").startswith("invoke.") and cases[0].find("failure") is not None
    assert root.get("failures") == "1"


def chromium_dom(page: Path, tmp_path: Path) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium): the browser check cannot run")
    proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'chromium'}", "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_report_html_in_a_browser_shows_banner_target_and_failure(passing, failing, tmp_path):
    dom = chromium_dom(passing[0] / "report.html", tmp_path)
    assert 'data-verdict="conformant"' in dom and ">CONFORMANT<" in dom
    assert "embedded reference server" in dom and "seed 11" in dom
    assert "test_check[" in dom            # pytest-html's own script ran and filled its table
    assert "Platform" not in dom and "Packages" not in dom     # no Environment table
    out, _, facts = failing
    dom = chromium_dom(out / "report.html", tmp_path)
    assert 'data-verdict="non-conformant"' in dom and ">NON-CONFORMANT<" in dom
    assert f"Target: {facts['base_url']} · agent {facts['agent_id']}" in dom
    failure = dom[dom.index("Failures and warnings"):]
    for part in (FAILING_MUST, "<dt>expected</dt>", "<dt>got</dt>", "Reproduce", "curl -sS", "transcript:"):
        assert part in failure
    for key in ("api_key", "access_token"):
        assert facts[key] not in dom
