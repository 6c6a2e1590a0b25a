"""`conformance run | list | explain`: options, one-line errors with exit 2, interruption, selection."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from conformance import cli
from tests.reports.support import run_cli

CONTRACT_OPTIONS = ("--base-url", "--agent-id", "--api-key", "--access-token", "--other-agent-id", "--revoked-key",
                    "--expired-token", "--undeployed-agent-id", "--agent-slug", "--auth-url", "--extra-data-field",
                    "--ca-bundle", "--profile", "--protocols", "--level", "--report-dir", "--thorough",
                    "--require-complete", "--baseline", "--insecure", "--depth", "--seed", "--concurrency",
                    "--rate-limit", "--requirements", "--last-failed")


@pytest.fixture
def clean_env(monkeypatch):
    for key in list(os.environ):
        if key.startswith("CONFORMANCE_"):
            monkeypatch.delenv(key)


def one_line_error(capsys, argv, *, expect_in: tuple[str, ...]) -> None:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    for part in expect_in:
        assert part in err, (part, err)


@pytest.mark.parametrize("argv, expect_in", [
    (["--protocols", "nope"], ("--protocols", "'nope'", "invoke,agui,mcp,metadata")),
    (["--bse-url", "https://x"], ("--bse-url", "did you mean --base-url?")),
    (["--level", "often"], ("--level", "must", "should", "may")),
    (["--depth", "deep"], ("--depth", "invalid int")),
    (["--rate-limit", "5"], ("--rate-limit", "N/SECONDS")),
    (["--requirements", "NOPE-XX-001"], ("--requirements", "NOPE-XX-001")),
    (["--ca-bundle", "/nonexistent/ca.pem"], ("--ca-bundle", "no such file")),
    (["--profile", "/nonexistent/p.toml"], ("--profile", "no such file")),
    (["--baseline", "/nonexistent/b.txt"], ("--baseline", "no such file")),
    (["--base-url", ""], ("--base-url is empty", "embedded reference server")),
    (["--base-url", "https://127.0.0.1:9"], ("--agent-id", "required")),
    (["--pytest-args", "'unclosed"], ("--pytest-args",)),
])
def test_bad_options_are_one_line_and_exit_2(capsys, clean_env, argv, expect_in):
    one_line_error(capsys, ["run", *argv], expect_in=expect_in)


def test_unwritable_report_dir_and_bad_files_are_one_line(capsys, clean_env, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    one_line_error(capsys, ["run", "--report-dir", str(a_file / "sub")], expect_in=("--report-dir", "cannot write"))
    bad_ca = tmp_path / "ca.pem"
    bad_ca.write_text("not a certificate")
    one_line_error(capsys, ["run", "--ca-bundle", str(bad_ca)], expect_in=("--ca-bundle", "PEM"))
    bad_profile = tmp_path / "p.toml"
    bad_profile.write_text('agent = "robot"\n')
    one_line_error(capsys, ["run", "--profile", str(bad_profile)], expect_in=("--profile", "agent"))


def test_an_empty_base_url_in_the_environment_never_certifies_the_embedded_server(capsys, clean_env, monkeypatch):
    monkeypatch.setenv("CONFORMANCE_BASE_URL", "")
    monkeypatch.setenv("CONFORMANCE_AGENT_ID", "agt_123")
    one_line_error(capsys, ["run"], expect_in=("CONFORMANCE_BASE_URL is empty",))


def test_a_mistyped_pytest_option_after_the_separator_is_an_error_not_a_verdict(clean_env, tmp_path):
    proc = run_cli("run", "--report-dir", str(tmp_path), "--", "--no-such-pytest-option")
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr


def test_run_help_groups_every_option_with_its_environment_variable(capsys):
    assert cli.main(["run", "--help"]) == 0
    text = capsys.readouterr().out
    for group in ("target", "credentials", "selection", "generation", "cost", "reports"):
        assert f"\n{group}" in text
    for opt in CONTRACT_OPTIONS:
        assert opt in text, opt
    flat = " ".join(text.split())
    assert "[env CONFORMANCE_API_KEY]" in flat and "[env CONFORMANCE_BASE_URL]" in flat
    assert "exit status" in text and "--pytest-args" in text
    assert len(text.splitlines()) < 150


def test_list_has_a_header_and_whole_sections(capsys):
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "LEVEL", "SECTION", "CHECKS"]
    row = next(ln for ln in lines if ln.startswith("AGUI-FRAME-002 "))
    assert "Endpoints › POST /v1/agents/{agentId}/agui › Rules 3" in row
    assert "requirements:" in lines[-1]


def test_list_uncovered_says_so_in_a_sentence_when_none(capsys):
    assert cli.main(["list", "--uncovered"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("every testable requirement is covered") or "not covered by any check" in out


def test_list_into_a_closed_pipe_ends_quietly():
    proc = subprocess.run(f"{sys.executable} -m conformance list 2>&1 | head -1", shell=True, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.startswith("ID ") and "Traceback" not in proc.stdout and "BrokenPipe" not in proc.stdout


def test_explain_prints_sentence_level_section_expectation_checks_and_a_command(capsys):
    assert cli.main(["explain", "inv-sel-001"]) == 0
    out = capsys.readouterr().out
    for part in ("INV-SEL-001 · MUST · invoke", "section:", "Rules 1", "spec:", "Streaming is selected by",
                 "expected:", "checks:", "invoke.stream_true_selects_sse", "conformance run --requirements INV-SEL-001"):
        assert part in out, part
    one_line_error(capsys, ["explain", "INV-SEL-01"], expect_in=("INV-SEL-001",))


def test_explain_and_list_show_the_words_a_should_rests_on(capsys):
    assert cli.main(["explain", "MCP-METH-009"]) == 0
    out = capsys.readouterr().out
    assert "MCP-METH-009 · SHOULD · mcp" in out and "source:" in out, out
    assert "MCP 2025-11-25 › Server › Tools › Error Handling" in out and "Input validation errors" in out, out
    assert cli.main(["list", "--format", "json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["requirements"]}
    assert rows["MCP-METH-009"]["source"][0].startswith("spec › "), rows["MCP-METH-009"]
    assert "source" not in rows["INV-SEL-001"]    # a MUST fails on the spec's own sentence: its `quote`


def wait_for_line(proc: subprocess.Popen, prefix: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(prefix):
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"the run never printed {prefix!r}")


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_is_an_error_with_partial_reports_that_say_so(tmp_path, sig, code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--report-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for_line(proc, "target: ")       # the embedded server is up and the recorders are running
        time.sleep(1.0)
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, (out[-2000:], err[-2000:])
    assert "Traceback" not in out + err
    name = signal.Signals(sig).name
    assert out.splitlines()[-1].startswith("‼ ERROR")
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["verdict"] == "error" and "interrupted after" in rep["verdict_reason"] and name in rep["verdict_reason"]
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert int(junit.get("errors")) >= 1
    assert "interrupted after" in (tmp_path / "report.html").read_text()


def test_what_a_driven_library_logs_during_a_run_stays_off_the_terminal():
    # the official MCP client logs a traceback when a Ctrl-C closes the stream it was reading (seen once in CI)
    code = ("import logging, sys\n"
            "from conformance import cli\n"
            "def dispatch(argv):\n"
            "    try:\n"
            "        raise RuntimeError('the stream was closed')\n"
            "    except RuntimeError:\n"
            "        logging.getLogger('mcp.client.streamable_http').exception('Error parsing SSE message')\n"
            "    return 0\n"
            "cli._dispatch = dispatch\n"
            "sys.exit(cli.main(['run']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "SSE" not in proc.stderr, proc.stderr


def test_last_failed_reruns_only_what_failed_and_reports_on_it(clean_env, tmp_path):
    (tmp_path / "report.json").write_text(json.dumps({"requirements": [
        {"id": "META-DOC-001", "status": "failed"}, {"id": "INV-SEL-001", "status": "passed"}]}))
    proc = run_cli("run", "--last-failed", "--report-dir", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("\n") == 1 and "CONFORMANT" in proc.stdout
    rep = json.loads((tmp_path / "report.json").read_text())
    assert [r["id"] for r in rep["requirements"]] == ["META-DOC-001"]
    assert {c["id"] for c in rep["checks"]} and all("META-DOC-001" in c["requirements"] for c in rep["checks"])


def test_require_complete_exits_3_on_a_partial_verdict(clean_env, tmp_path):
    proc = run_cli("run", "--protocols", "metadata", "--require-complete", "--report-dir", str(tmp_path), "-q")
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["verdict"] == "conformant-partial" and proc.returncode == 3


def test_pytest_pyargs_still_runs_the_suite(clean_env, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.test_suite", "-p", "no:cacheprovider",
                           "--requirements", "META-DOC-001", "--report-dir", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "r" / "report.json").read_text())["verdict"] == "conformant"
