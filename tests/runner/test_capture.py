"""`conformance judge`: captured traffic judged by every rule that reads an exchange. A capture of a correct server
passes; one of a broken server fails the fault's requirement on the entry that shows it; a capture that is no
capture (cut short, not JSON, no entries, too large) is one clear line and exit 2, never a traceback."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import capture
from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import from_server_facts
from tests.runner.har import har_of
from tests.selftest.zoo import load_zoo

REQUIREMENTS = ["INV-SESS-003", "GEN-ERR-001", "AUTH-MCP-008", "AGUI-ID-001", "MCP-METH-005"]


def captured(tmp_path: Path, config=None) -> tuple[Path, dict]:
    with ReferenceServer(config) if config is not None else ReferenceServer() as srv:
        target = from_server_facts(srv.facts)
        rep = certify(target, requirements=REQUIREMENTS, keep_recording=True)
    secrets = {f: getattr(target, f) for f in ("api_key", "access_token", "revoked_key", "expired_token")
               if getattr(target, f)}
    return har_of(rep["recording"]["document"], secrets, tmp_path / "traffic.har"), secrets


def judge_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance", "judge", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.xdist_group("capture")
def test_a_correct_servers_capture_passes_and_keeps_its_secrets(tmp_path):
    har, secrets = captured(tmp_path)
    proc = judge_cli(str(har), "--report-dir", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert rep["verdict"] == "conformant-partial" and not [r for r in rep["requirements"] if r["status"] == "failed"]
    assert "captured traffic only" in rep["verdict_reason"] and rep["capture"]["judged_requirements"]
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        text = (tmp_path / "out" / name).read_text()
        assert not [f for f, v in secrets.items() if v in text], name
    assert not [v for v in secrets.values() if v in proc.stdout]


@pytest.mark.xdist_group("capture")
def test_a_broken_servers_capture_fails_the_faults_requirement_on_its_entry(tmp_path):
    broken = load_zoo()["INV-SESS-003-result-session-rewritten"]
    har, _ = captured(tmp_path, broken.server_config())
    rep, _ = capture.judge(har)
    row = next(r for r in rep["requirements"] if r["id"] == "INV-SESS-003")
    assert row["status"] == "failed", row["message"]
    assert row["evidence"][0]["label"].startswith("entry-") and row["evidence"][0]["curl"].startswith("curl")
    assert len([r for r in rep["requirements"] if r["status"] == "failed"]) <= 3


@pytest.mark.parametrize("text, says", [
    ('{"log": {"entries": [{"request": ', "JSON breaks"),
    ("\x89PNG\x00\x01", "not"),
    ('{"log": {"pages": []}}', "no `log.entries`"),
    ('{"log": {"entries": []}}', "none of its 0 entries"),
    ('{"log": {"entries": [{"request": {"method": "GET", "url": "https://x.example/other"}, "response": {}}]}}',
     "none of its 1 entries"),
])
def test_a_capture_that_is_none_is_one_clear_line(tmp_path, text, says):
    path = tmp_path / "bad.har"
    path.write_bytes(text.encode("latin-1"))
    proc = judge_cli(str(path), "--report-dir", "out", cwd=tmp_path)
    assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr + proc.stdout, \
        proc.stderr


def test_a_capture_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "big.har"
    path.write_bytes(b" " * 2048)
    monkeypatch.setattr(capture, "MAX_FILE", 1024)
    with pytest.raises(capture.CaptureError, match="over the"):
        capture.read(path)


def test_a_hostile_entry_is_left_out_not_a_crash(tmp_path):
    doc = {"log": {"entries": [
        {"request": {"method": "POST", "url": "https://h.example/v1/agents/agt_x/invoke", "headers": "nope",
                     "postData": {"text": 12}}, "response": {"status": "200", "content": {"text": None}}},
        {"request": None, "response": None},
        {"request": {"method": "POST", "url": "https://h.example/v1/agents/agt_x/mcp",
                     "postData": {"text": "{", "encoding": "base64"}},
         "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                      "content": {"text": "data: {\n\n" * 1000, "mimeType": "text/event-stream"}}},
    ]}}
    got = capture.exchanges(doc)
    assert len(got.exchanges) == 2 and got.skipped


CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "captures"


@pytest.mark.parametrize("har", sorted(CAPTURES.glob("*.har")), ids=lambda p: p.stem)
def test_a_capture_made_with_a_real_tool_is_judged(har):
    """Captures made with real tools, named `<tool>-<the zoo's fault, or correct>.har`: mitmdump 11 in reverse-proxy
    mode (`--set hardump=…`) of curl (invoke, its stream, AG-UI, refusals) and the official `mcp` SDK (auto and the
    2025-11-25 handshake); Chromium driven by Playwright (`record_har_path`) on a page running `@ag-ui/client`'s
    HttpAgent. Each in front of the reference server or of a single-fault server of the zoo; the credentials replaced
    by made-up ones of the same form. The correct server's fails nothing; each broken one fails its fault's
    requirement alone, on an entry of the capture."""
    rep, _ = capture.judge(har)
    failed = [r for r in rep["requirements"] if r["status"] == "failed"]
    fault = har.stem.split("-", 3)[-1] if har.stem.startswith("chromium-") else har.stem.split("-", 1)[1]
    if fault == "correct":
        assert rep["verdict"] == "conformant-partial" and not failed, [r["message"] for r in failed]
    else:
        assert [r["id"] for r in failed] == ["-".join(fault.split("-")[:3])], [r["message"] for r in failed]
        assert failed[0]["evidence"][0]["label"].startswith("entry-")
