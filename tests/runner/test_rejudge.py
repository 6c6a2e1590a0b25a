"""`conformance rejudge`: a run's report follows from its recording, judged again without the server; an edited
report is caught, difference by difference; bad input is one line and exit 2, never a traceback."""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import shutil
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from conformance import cli, recording
from conformance.api import certify
from conformance.rejudge import verify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.wire.redact import MASK
from tests.reports.support import run_cli, server_args, server_env
from tests.runner.conftest import DEFAULT_RUN
from tests.selftest.zoo import load_zoo

BROKEN = "INV-RES-005-events-missing"
FAILING_MUST = "INV-RES-005"
#: the checks only --thorough assesses: the ping repeating over two intervals, and the 429 probe's
THOROUGH_CHECKS = ["agui.ping_repeats", "mcp.rate_limited", "mcp.probed_429_has_retry_after"]
SECRETS = ("api_key", "access_token", "revoked_key", "expired_token")
pytestmark = pytest.mark.xdist_group(DEFAULT_RUN)    # one default run (tests/runner/conftest.py) for the group


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory) -> tuple[Path, dict]:
    """A run of a broken server on two requirements (`--requirements`: the report is about them alone)."""
    out = tmp_path_factory.mktemp("failing")
    with ReferenceServer(load_zoo()[BROKEN].server_config()) as srv:
        proc = run_cli("run", *server_args(srv.facts), "--requirements", f"{FAILING_MUST},INV-RES-001",
                       "--report-dir", str(out), env=server_env(srv.facts))
        facts = dict(srv.facts)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out, facts


def rejudge(directory: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["rejudge", str(directory), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def edited(source: Path, tmp_path: Path, edit_report=None, edit_recording=None, *, same_sha: bool = False) -> Path:
    """A copy of a report directory with report.json and/or the recording edited by hand (`same_sha`: and the
    recording's sha256 in report.json updated, as a consistent pair of files would have it)."""
    copy = tmp_path / "edited"
    shutil.copytree(source, copy)
    if edit_recording:
        doc = json.loads(gzip.decompress((copy / recording.FILE).read_bytes()))
        edit_recording(doc)
        (copy / recording.FILE).write_bytes(gzip.compress(json.dumps(doc).encode()))
    if edit_report or same_sha:
        rep = json.loads((copy / "report.json").read_text())
        (edit_report or (lambda rep: None))(rep)
        if same_sha:
            rep["recording"]["sha256"] = hashlib.sha256((copy / recording.FILE).read_bytes()).hexdigest()
        (copy / "report.json").write_text(json.dumps(rep))
    return copy


def row(rep: dict, rid: str) -> dict:
    return next(r for r in rep["requirements"] if r["id"] == rid)


# -- the report follows from the recording ----------------------------------------------------------------
@pytest.mark.xdist_group("rejudge-default")
def test_a_default_run_of_the_embedded_server_is_verified(default_run, capsys):
    code, out, err = rejudge(default_run, capsys)
    assert code == 0, out + err
    assert out.splitlines()[-1].startswith("verified: the same ") and "no server contacted" in out
    code, out, _ = rejudge(default_run, capsys, "--format", "json")
    said = json.loads(out)
    assert code == 0 and said["verified"] is True and said["differences"] == [] and said["checks"] > 400


@pytest.mark.xdist_group("rejudge-default")
def test_the_recording_validates_against_the_shipped_schema(default_run):
    schema = json.loads(resources.files("conformance.reporting").joinpath("recording.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = json.loads(gzip.decompress((default_run / recording.FILE).read_bytes()))
    jsonschema.Draft202012Validator(schema).validate(doc)
    rep = json.loads((default_run / "report.json").read_text())
    assert doc["suite"] == rep["suite"] and doc["run_tag"] == rep["options"]["run_tag"]
    assert rep["recording"]["bytes"] == (default_run / recording.FILE).stat().st_size
    assert doc["target"]["api_key"].endswith(MASK) and doc["preflight"]["recording"]["exchanges"]
    outcomes = {s["outcome"] for s in doc["scenarios"]}
    assert "recorded" in outcomes and "not_assessed" in outcomes      # the thorough-only scenarios say why
    streams = [ex["stream"] for s in doc["scenarios"] for ex in s.get("exchanges", []) if ex["stream"]]
    assert streams and all(item["t"] >= 0 for st in streams for item in st["items"])


@pytest.mark.xdist_group("rejudge-default")
def test_an_edited_status_or_verdict_is_named(default_run, tmp_path, capsys):
    def edit(rep):
        rep["verdict"] = "conformant"
        row(rep, "INV-RES-001")["status"] = "failed"
        rep["checks"][0]["status"] = "not_assessed"
    code, out, _ = rejudge(edited(default_run, tmp_path, edit), capsys)
    assert code == 1 and "NOT VERIFIED: 3 difference(s)" in out, out
    assert "verdict: the report says conformant, the recording judges conformant-partial" in out
    assert "requirement INV-RES-001: the report says failed, the recording judges passed" in out


def test_a_removed_failure_is_named(failing_run, tmp_path, capsys):
    out_dir, facts = failing_run
    assert rejudge(out_dir, capsys)[0] == 0

    def remove(rep):
        rep["requirements"] = [r for r in rep["requirements"] if r["id"] != FAILING_MUST]
        rep["checks"] = [c for c in rep["checks"] if c["status"] != "failed"]
        rep["verdict"] = "conformant"
    code, out, _ = rejudge(edited(out_dir, tmp_path, remove), capsys)
    assert code == 1, out
    assert f"requirement {FAILING_MUST}: missing from the report (the recording judges it failed)" in out
    assert "the recording judges non-conformant" in out and "check invoke." in out


def test_the_recording_holds_no_secret_and_is_what_is_judged(failing_run, tmp_path, capsys):
    out_dir, facts = failing_run
    text = gzip.decompress((out_dir / recording.FILE).read_bytes()).decode()
    for key in SECRETS:
        assert facts[key] not in text, f"{key} is in the recording"

    def server_said_500(doc):   # the traffic edited: the verdict follows the recording, not the report
        for s in doc["scenarios"]:
            for ex in s.get("exchanges", []):
                if ex["status"] == 200:
                    ex["status"] = 500
    code, out, _ = rejudge(edited(out_dir, tmp_path, edit_recording=server_said_500), capsys)
    assert code == 1 and "requirement INV-RES-001: the report says passed, the recording judges failed" in out
    assert "recording.json.gz: its sha256 is" in out


def test_a_suite_of_another_catalog_says_so(failing_run, tmp_path, capsys):
    other = "sha256:" + "0" * 64

    def older(doc):
        doc["suite"]["catalog_digest"] = other
    code, out, _ = rejudge(edited(failing_run[0], tmp_path, older, older, same_sha=True), capsys)
    assert code == 0 and f"catalog {other}" in out and "it judges nothing differently" in out, out
    assert "verified" not in out

    def older_and_passed(rep):
        older(rep)
        row(rep, FAILING_MUST)["status"] = "passed"
    code, out, _ = rejudge(edited(failing_run[0], tmp_path / "2", older_and_passed, older, same_sha=True), capsys)
    assert code == 1 and "what this suite judges differently:" in out
    assert f"requirement {FAILING_MUST}: the report says passed, the recording judges failed" in out


def test_in_memory_recording_of_api_certify_is_verified():
    with ReferenceServer(ServerConfig()) as srv:
        rep = certify(from_server_facts(srv.facts), requirements=["INV-RES-001", "AUTH-KEY-008"],
                      keep_recording=True)
    doc = rep.pop("recording")["document"]
    v = verify(rep, doc)
    assert v.verified and v.checks >= 2, v.differences
    assert doc["target"]["api_key"].startswith(srv.facts["api_key"].split("_live_")[0] + "_live_")


@pytest.mark.xdist_group("rejudge-thorough")
def test_a_thorough_run_is_verified(tmp_path, capsys):
    """The checks only --thorough assesses (the 15 s ping twice, the 429 probe) judge the same from the
    recorded arrival times and answers: about 33 s, once."""
    with ReferenceServer(ServerConfig(rate_limit_burst=20, rate_limit_per_second=0.5)) as srv:
        target = dataclasses.replace(from_server_facts(srv.facts), thorough=True)
        rep = certify(target, check_ids=THOROUGH_CHECKS, report_dir=tmp_path)
    assert {row(rep, r)["status"] for r in ("AGUI-PING-002", "MCP-ERR-003", "GEN-RATE-003")} == {"passed"}, rep
    code, out, err = rejudge(tmp_path, capsys)
    assert code == 0 and "verified" in out, out + err


# -- bad input: one line, exit 2 ------------------------------------------------------------------------
def truncate_file(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


BAD = {
    "no recording": (lambda d: (d / recording.FILE).unlink(), "no recording.json.gz beside report.json"),
    "no report": (lambda d: (d / "report.json").unlink(), "report.json: no such file"),
    "truncated": (lambda d: truncate_file(d / recording.FILE), "the gzip data ends early"),
    "not gzip": (lambda d: (d / recording.FILE).write_bytes(b"{}"), "not a gzip file"),
    "not JSON": (lambda d: (d / recording.FILE).write_bytes(gzip.compress(b"{\"format\": ")), "not JSON"),
    "not a report": (lambda d: (d / "report.json").write_text("[1, 2]"), "not a conformance report"),
}


def hand_edit(key: str, value):
    def edit(doc):
        doc[key] = value
    return edit


def bad_body(doc):
    next(ex for s in doc["scenarios"] for ex in s.get("exchanges", []))["body"] = {"base64": "not base64!"}


def scenario_outcome(doc):
    doc["scenarios"][0]["outcome"] = "maybe"


EDITED = {   # (edit of report.json, edit of the recording, what the one line says)
    "unknown version": (hand_edit("suite", {"version": "99.0", "spec_revision": "x", "catalog_digest": "y"}),
                        None, "newer than this suite"),
    "nonsense version": (hand_edit("suite", {"version": "banana"}), None, "unknown suite version 'banana'"),
    "another run's recording": (lambda rep: rep["options"].update(run_tag="feedbeef"), None,
                                "the recording is not this report's"),
    "unknown format": (None, hand_edit("format", "conformance-recording/9"), "this suite reads"),
    "schema": (None, scenario_outcome, "not a valid recording at $.scenarios[0]"),
    "unreadable body": (None, bad_body, "cannot be rebuilt"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_are_one_line_and_exit_2(case, failing_run, tmp_path, capsys):
    spoil, said = BAD[case]
    directory = edited(failing_run[0], tmp_path)
    spoil(directory)
    code, out, err = rejudge(directory, capsys)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and said in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("case", sorted(EDITED))
def test_hand_edited_input_is_one_line_and_exit_2(case, failing_run, tmp_path, capsys):
    edit_report, edit_recording, said = EDITED[case]
    code, out, err = rejudge(edited(failing_run[0], tmp_path, edit_report, edit_recording), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, out + err
    assert err.startswith("conformance rejudge: ") and "Traceback" not in err


def test_a_missing_directory_is_one_line(tmp_path, capsys):
    code, _, err = rejudge(tmp_path / "nowhere", capsys)
    assert code == 2 and "no such report directory" in err


def test_a_report_that_names_another_agent_than_its_recording_is_a_difference():
    from conformance.rejudge import differences
    rebuilt = {"verdict": "conformant-partial", "requirements": [], "checks": [], "summary": {},
               "agent": {"status": "no-deviation-seen", "deviations": []}}
    edited = {**rebuilt, "agent": {"status": "off-contract", "deviations": [
        {"reading": "`count`", "way": "counts from 0"}]}}
    assert differences(rebuilt, rebuilt) == []
    assert differences(edited, rebuilt) == ["agent: the report says off-contract (`count` counts from 0), the "
                                            "recording no-deviation-seen"]
    assert differences({k: v for k, v in rebuilt.items() if k != "agent"}, rebuilt) == []   # a report of before
