"""Real runs through the CLI (conftest.py): report.json matches its schema, junit.xml is per requirement, report.md
sits beside them, and no report names a directory of the machine that ran the suite. test_html_browser.py loads
their report.html in a real browser."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema

from tests.reports.conftest import REPO
from tests.reports.support import FAILING_MUST, load_json

REPORTS = ("report.html", "report.md", "report.json", "junit.xml")


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
    assert "```sh\ncurl " in doc and load_json(out / "report.json")["reports"]["report.md"] == "report.md"
    for key in ("api_key", "access_token", "revoked_key", "expired_token"):
        assert facts[key] not in doc


def test_junit_has_one_case_per_requirement(failing):
    root = ET.parse(failing[0] / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert [c.get("name").split()[0] for c in cases] == [FAILING_MUST]
    assert cases[0].get("classname").startswith("invoke.") and cases[0].find("failure") is not None
    assert root.get("failures") == "1"


def test_no_report_names_a_directory_of_the_machine(passing, failing):
    """The reports a run wrote, and what it printed, name its files relative to its working directory (`out/…`)
    or by name alone (a report directory elsewhere): never /tmp, a home, site-packages or the checkout."""
    runs = [(passing[0], passing[1]), (failing[0], failing[1])]
    for out, proc in runs:
        forbidden = ["/home", "/root", "/tmp", "site-packages", str(REPO), str(out), str(out.resolve())]
        texts = {name: (out / name).read_text(encoding="utf-8") for name in REPORTS}
        texts["terminal"] = proc.stdout + proc.stderr
        for name, text in texts.items():
            found = [f for f in forbidden if f in text]
            assert not found, f"{name} of {out.name} names {found}: " + "; ".join(
                text[max(0, text.index(f) - 80):text.index(f) + 80] for f in found)
    assert load_json(passing[0] / "report.json")["reports"] == {name: f"out/{name}" for name in
                                                               ("report.json", "report.html", "report.md", "junit.xml")}
    assert load_json(passing[0] / "report.json")["recording"]["file"] == "out/recording.json.gz"
    assert load_json(failing[0] / "report.json")["recording"]["file"] == "recording.json.gz"
    assert "`conformance rejudge out` judges it again" in passing[1].stdout
    assert re.search(r"reports: report\.json report\.html report\.md junit\.xml$", failing[1].stdout.strip())
