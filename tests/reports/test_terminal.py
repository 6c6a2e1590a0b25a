"""The terminal report: target first, requirements by section, failures that explain themselves, verdict last."""
import json

from conformance.reporting.terminal import Style, render
from tests.reports.support import CURL, FAILING_MUST, make_report, should_requirement


def test_target_comes_first_and_the_verdict_last():
    lines = render(make_report(), Style(colour=False))
    assert lines[0].startswith("target: https://127.0.0.1:8443") and "embedded reference server" in lines[0]
    assert lines[-1].startswith("✔ CONFORMANT")
    assert "223 requirements" in lines[-1] or "requirements:" in lines[-1]
    assert "240 requests" in lines[-1] and "reports/report.json" in lines[-1]


def test_requirements_are_grouped_by_protocol_and_section_one_line_each():
    lines = render(make_report(), Style(colour=False))
    text = "\n".join(lines)
    assert "\nInvoke\n" in text and "\nAG-UI\n" in text and "\nMCP\n" in text
    assert "  Endpoints › POST /v1/agents/{agentId}/invoke › Rules 1" in lines
    assert any(ln.startswith("    ✔ INV-SEL-001 ") for ln in lines)
    assert all(len(ln) <= 100 for ln in lines if ln.startswith("    "))


def test_a_failure_shows_spec_expected_got_curl_and_the_seed():
    lines = render(make_report(fail=(FAILING_MUST, should_requirement())), Style(colour=False))
    text = "\n".join(lines)
    assert lines[-1].startswith("✘ NON-CONFORMANT") and "1 failed" in lines[-1] and "1 warning" in lines[-1]
    block = text[text.index(f"✘ {FAILING_MUST} MUST FAILED"):]
    assert "spec:" in block and "expected:" in block and "got:" in block
    assert f"reproduce: {CURL}" in block
    assert "seed: 7" in text
    assert "WARNING" in text


def test_quiet_prints_the_verdict_line_only():
    lines = render(make_report(fail=(FAILING_MUST,)), Style(colour=False), quiet=True)
    assert len(lines) == 1 and "NON-CONFORMANT" in lines[0]


def test_ascii_fallback_has_no_character_outside_ascii_except_quoted_spec_text():
    lines = render(make_report(skip=("INV-SEL-001",)), Style(unicode=False, colour=False))
    marks = [ln for ln in lines if ln.startswith("    ")]
    assert all(ln[4] in "+x!-iE" for ln in marks)
    assert any(ln.startswith("    - INV-SEL-001") and "not assessed: " in ln for ln in marks)
    assert lines[-1].isascii()


def test_colour_only_when_asked():
    plain = render(make_report(), Style(colour=False))
    coloured = render(make_report(), Style(colour=True))
    assert "\033[" not in "\n".join(plain)
    assert coloured[-1].startswith("\033[1;32m")


def _terminal_run(report: dict, *, started: bool, session=None, fmt: str = "text", ticks: int = 0):
    """What the Terminal plugin object writes for a run: at its start (unless it stopped before), on `ticks` waits
    for a recording a minute apart, and at its end. `session`: what the run's plan reads (None: no plan)."""
    import io
    from types import SimpleNamespace
    from unittest import mock

    from conformance import registry
    from conformance.reporting import progress
    from conformance.reporting.terminal import Terminal

    opts = {"conf_protocols": None, "conf_level": "may", "conf_requirements": None, "conf_format": fmt}
    config = SimpleNamespace(option=SimpleNamespace(verbose=0), getoption=lambda name, default=None: opts.get(name),
                             pluginmanager=SimpleNamespace(getplugin=lambda name: None))
    target = SimpleNamespace(public=lambda: report["target"], seed=7, seed_source="given")
    run = SimpleNamespace(checks=list(registry.load_all().values())[:3], target=target, report=report,
                          redact=lambda line: line, error=None, session=session)
    config._conformance_run = run
    out = type("Utf8", (io.StringIO,), {"encoding": "utf-8"})()
    clock = [1000.0]
    with mock.patch.object(progress.time, "monotonic", lambda: clock[0]):
        terminal = Terminal(config, out)
        if started:
            terminal.started(run)
        for _ in range(ticks):
            clock[0] += 61
            session.on_wait()
    terminal.pytest_unconfigure(config)
    return out.getvalue().splitlines()


def _paced_session(*, limited: bool = True):
    """A session whose plan is a 60-a-minute bucket's, its pace learnt."""
    from types import SimpleNamespace

    from conformance.plan import Estimate
    est = Estimate(298, 120, 100.0, 110.0 if limited else 5.0, limited, 1.0, True, 2.0)
    return SimpleNamespace(estimate=lambda: est, max_run_time=1800.0, on_wait=None)


def test_the_header_is_printed_once():
    """The target and the suite's identity head the output once: when the run starts, not again with the
    report."""
    lines = _terminal_run(make_report(fail=(FAILING_MUST,)), started=True)
    targets = [ln for ln in lines if ln.startswith("target: ")]
    suites = [ln for ln in lines if ln.startswith("conformance ") and " · catalog " in ln]
    assert len(targets) == 1 and len(suites) == 1, lines[:8]
    assert lines[0].startswith("target: https://127.0.0.1:8443") and lines[1] == suites[0]
    assert "3 checks · seed 7 (given) · protocols all · level may" in suites[0]
    assert lines[-1].startswith("✘ NON-CONFORMANT")


def test_a_run_that_stopped_before_it_started_prints_the_header_with_its_report():
    lines = _terminal_run(make_report(error="could not start: the embedded server did not start"), started=False)
    assert sum(ln.startswith("target: ") for ln in lines) == 1 and lines[0].startswith("target: ")
    assert lines[-1].startswith("‼ ERROR") or "ERROR" in lines[-1]


AGENT_OFF = {"status": "off-contract", "deviations": [{
    "reading": "`count`", "way": "counts a resumed run again", "hides": True, "readings": 5,
    "contract": "A resumed run is the same run: it does not count again and it keeps the params and messages it "
                "started with.", "vector": "count in a paused and resumed run", "not_assessed": ["AGUI-SESS-002"],
    "example": {"scenario": "agui.chain", "label": "chain-6-agui-run", "expected": "4", "got": "6"}}]}


def test_an_agent_off_its_contract_is_named_once_before_the_requirements():
    report = {**make_report(skip=("AGUI-SESS-002",)), "agent": AGENT_OFF}
    lines = render(report, Style(colour=False))
    at = [i for i, ln in enumerate(lines) if ln.startswith("agent: ")]
    assert len(at) == 1 and at[0] < next(i for i, ln in enumerate(lines) if ln == "Invoke")
    text = " ".join(" ".join(lines).split())
    assert "off its contract" in text and "AGUI-SESS-002" in text and "chain-6-agui-run" in text
    assert "“A resumed run is the same run" in text and "count in a paused and resumed run" in text
    assert all(ln.isascii() for ln in render(report, Style(unicode=False, colour=False)) if ln.startswith(("agent",
                                                                                                         "  - ")))


def test_an_agent_that_kept_its_contract_is_not_mentioned():
    for agent in (None, {"status": "no-deviation-seen", "deviations": []}):
        report = make_report() if agent is None else {**make_report(), "agent": agent}
        assert not any(ln.startswith("agent: ") for ln in render(report, Style(colour=False)))


def test_the_plan_follows_the_header_and_a_log_gets_progress_now_and_then(monkeypatch):
    """Without a terminal (a CI log) a rate-limited run says its plan once, then a line a minute at most."""
    monkeypatch.delenv("CI", raising=False)
    lines = _terminal_run(make_report(), started=True, session=_paced_session(), ticks=3)
    assert lines[2].startswith("plan: 298 requests, about 3 min 30 s (2 left in the server's bucket, refill 1 "
                               "request/s learnt from X-RateLimit-Remaining) · cap 30 min (--max-run-time)")
    assert [ln.strip() for ln in lines if "requests 120/298" in ln] == ["requests 120/298 · 1 min 50 s left"] * 3


def test_a_run_the_bucket_does_not_slow_prints_its_plan_and_no_progress():
    lines = _terminal_run(make_report(), started=True, session=_paced_session(limited=False), ticks=3)
    assert sum(ln.startswith("plan: ") for ln in lines) == 1 and not any("requests 120/298" in ln for ln in lines)


def test_a_run_cut_by_its_cap_says_which_option_finishes_it():
    report = make_report()
    report["run_cut"] = ("41 scenarios cut off at the run's cap of 5 min (--max-run-time 5m); the server's rate limit "
                         "needs about 7 min for this run: --max-run-time 10m finishes it")
    lines = _terminal_run(report, started=True)
    cut = [ln for ln in lines if ln.startswith("  cut:")]
    assert cut and "--max-run-time 10m finishes it" in " ".join(lines[lines.index(cut[0]):])


def test_format_json_prints_events_only():
    lines = _terminal_run(make_report(fail=(FAILING_MUST,)), started=True, session=_paced_session(), fmt="json",
                          ticks=2)
    events = [json.loads(ln) for ln in lines]
    assert [e["event"] for e in events] == ["start", "plan", "progress", "progress", "verdict"]
    assert events[1]["requests_planned"] == 298 and events[1]["max_run_time_seconds"] == 1800.0
    assert events[-1]["verdict"] == "non-conformant" and "cost" in events[-1]


def test_the_recording_line_names_no_directory_of_the_machine():
    """A report directory under the working directory is named relative to it; one elsewhere is not named."""
    from conformance.reporting.terminal import recording_line
    rep = {"recording": {"file": "out/recording.json.gz", "bytes": 1000, "json_bytes": 5000}}
    assert recording_line(rep).startswith("recording: out/recording.json.gz (1.0 kB, 5.0 kB as JSON)")
    assert "`conformance rejudge out` judges it again" in recording_line(rep)
    rep["recording"]["file"] = "./recording.json.gz"
    assert "`conformance rejudge .` judges it again" in recording_line(rep)
    rep["recording"]["file"] = "recording.json.gz"
    assert "`conformance rejudge` on the --report-dir judges it again" in recording_line(rep)
