"""report.html on its own: its order, what a failure shows, escaping, the coverage grid, pytest's errors of the suite,
and no directory of the machine; test_html_browser.py loads pages of real runs in a browser."""
import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

from conformance.reporting import STATUS_COLOUR, html, shown_path, strip_paths
from tests.reports.support import CURL, FAILING_MUST, TRANSCRIPT, make_report, should_requirement
from tests.reports.test_terminal import AGENT_OFF


def _row(rep: dict, rid: str) -> dict:
    return next(r for r in rep["requirements"] if r["id"] == rid)


def test_banner_names_verdict_reason_counts_target_seed_and_cost():
    page = html.render(make_report(fail=(FAILING_MUST,)))
    banner = page[page.index("<header class='banner'"):page.index("</header>")]
    assert "data-verdict='non-conformant'" in banner and "NON-CONFORMANT" in banner
    assert f"MUST requirement(s) failed: {FAILING_MUST}" in banner
    assert "1 failed</span>" in banner and "passed</span>" in banner
    assert "https://127.0.0.1:8443 · agent agt_1 · embedded reference server" in banner
    assert "seed 7" in banner and "240 requests" in banner
    assert page.startswith("<!DOCTYPE html>") and "<title>NON-CONFORMANT · https://127.0.0.1:8443" in page


def test_the_page_reads_in_order_verdict_failures_agent_requirements_coverage_suite_errors():
    rep = {**make_report(fail=(FAILING_MUST,), skip=("AGUI-SESS-002",)), "agent": AGENT_OFF,
           "dimensions": {"requirements": {FAILING_MUST: {"judged_on": {"path": ["invoke"]},
                                                          "scope": {"path": ["invoke", "agui"]}}}}}
    page = html.render(rep, [{"where": "conformance/test_suite.py::test_check[x]", "when": "setup", "text": "E boom"}])
    at = [page.index(key) for key in ("id='verdict'", "id='failures'", "id='agent'", "id='requirements'",
                                      "id='coverage'", "id='suite-errors'", "id='run'")]
    assert at == sorted(at)
    assert "Requirements by protocol and section" in page


def test_a_failure_shows_its_requirement_level_spec_message_exchange_and_curl():
    rep = make_report(fail=(FAILING_MUST, should_requirement()))
    page = html.render(rep)
    failures = page[page.index("id='failures'"):page.index("id='requirements'")]
    card = failures[failures.index(f"id='fail-{FAILING_MUST}'"):]
    card = card[:card.index("</article>")]
    row = _row(rep, FAILING_MUST)
    assert f"<span class='id'>{FAILING_MUST}</span>" in card and "<span class='level'>MUST</span>" in card
    assert html.escape(row["quote"]) in card and "`events` is missing from the result" in card
    assert "The exchange: invoke.plain_json / main" in card and html.escape(TRANSCRIPT) in card
    assert html.escape(CURL) in card
    assert f"id='fail-{should_requirement()}'" in failures and "status-warning" in failures
    assert failures.index(f"fail-{FAILING_MUST}'") < failures.index(f"fail-{should_requirement()}'")  # MUST first


def test_difference_and_cause_go_on_lines_of_their_own_the_message_kept_as_it_is():
    message = ("invoke.events_is_array: json-plain_reply: `events` is not an array; difference: expected an array, "
               "got null; cause: the server leaves it out")
    rep = make_report(fail=(FAILING_MUST,))
    _row(rep, FAILING_MUST)["message"] = message
    page = html.render(rep)
    shown = page[page.index("<div class='message'>"):]
    shown = shown[:shown.index("</div>")]
    assert ("`events` is not an array;\n<span class='part'>difference:</span> expected an array, got null;\n"
            "<span class='part'>cause:</span> the server leaves it out") in shown
    plain = re.sub(r"<[^>]+>", "", shown[len("<div class='message'>"):])
    assert plain.replace("\n", " ") == html.escape(message)
    assert "\n" not in re.sub(r"<[^>]+>", "", html.message_html("no parts here; the difference is none"))


def test_a_long_message_folds_its_rest_away_and_keeps_it_whole():
    message = "word " * 1000
    got = html.message_html(message)
    assert "<details class='more'>" in got and re.sub(r"<summary>.*?</summary>|<[^>]+>", "", got) == message


def test_requirements_are_tables_by_section_with_the_message_shortened():
    rep = make_report(fail=(FAILING_MUST,), skip=("INV-SEL-001",))
    _row(rep, "INV-SEL-001")["message"] = "needs --access-token " + "x" * 400
    page = html.render(rep)
    reqs = page[page.index("id='requirements'"):page.index("id='run'")]
    assert reqs.count("<table class='reqs'>") >= 10 and "<h3 id='protocol-invoke'>" in reqs
    sel = reqs[reqs.index("<tr id='req-INV-SEL-001'"):]
    sel = sel[:sel.index("</tr>")]
    assert "not assessed" in sel and "needs --access-token" in sel and "x" * 400 not in sel.split("title=")[0]
    bad = reqs[reqs.index(f"<tr id='req-{FAILING_MUST}'"):]
    assert f"href='#fail-{FAILING_MUST}'" in bad[:bad.index("</tr>")]


def test_the_agent_off_its_contract_is_named_once():
    page = html.render({**make_report(skip=("AGUI-SESS-002",)), "agent": AGENT_OFF})
    agent = page[page.index("id='agent'"):page.index("id='requirements'")]
    assert "off its contract" in agent and "chain-6-agui-run" in agent and page.count("id='agent'") == 1
    assert "id='agent'" not in html.render(make_report())


def test_coverage_grid_colours_the_share_judged_and_outlines_the_status():
    rep = make_report(fail=(FAILING_MUST,))
    rep["dimensions"] = {"requirements": {
        FAILING_MUST: {"judged_on": {"path": ["invoke"], "http": []},
                       "scope": {"path": ["invoke", "agui"], "http": ["HTTP/1.1"]}},
        "INV-SEL-001": {"judged_on": {"path": ["invoke", "agui"], "history": ["fresh"]},
                        "scope": {"path": ["invoke", "agui"], "history": ["fresh"]}}}}
    page = html.render(rep)
    grid = page[page.index("id='coverage'"):page.index("id='run'")]
    assert re.findall(r"<th>(.*?)</th>", re.findall(r"<thead>.*?</thead>", grid)[0]) == ["", "path", "http",
                                                                                           "history"]
    bad = grid[grid.index(f"{FAILING_MUST}</th>"):]
    bad = bad[:bad.index("</tr>")]
    assert re.findall(r"<td class='(\w+)'", bad) == ["partial", "none", "na"]
    assert f"inset 0 0 0 2px {STATUS_COLOUR['failed']}" in bad and ">1/2</td>" in bad and "not on agui" in bad
    good = grid[grid.index("INV-SEL-001</th>"):]
    assert re.findall(r"<td class='(\w+)'", good[:good.index("</tr>")]) == ["full", "na", "full"]
    assert grid.index("Invoke › ") < grid.index(FAILING_MUST)      # grouped by section
    assert "Pairs of values" not in grid
    rep["dimensions"]["pairwise"] = {"invoke": {"covered": 585, "possible": 587, "share": 0.9966}}
    assert "invoke 585/587 (99.7 %)" in html.render(rep) and "Triples of values" not in html.render(rep)
    rep["dimensions"]["triples"] = {"mcp": {"covered": 8048, "possible": 8048, "share": 1.0}}     # --thorough's
    assert "(--thorough) met on one judged exchange: mcp 8048/8048 (100.0 %)" in html.render(rep)
    plain = make_report()
    plain.pop("dimensions", None)
    assert "id='coverage'" not in html.render(plain)      # no `dimensions`: no grid


def test_server_text_is_escaped_and_the_page_loads_nothing():
    rep = make_report(fail=(FAILING_MUST,))
    _row(rep, FAILING_MUST)["message"] = "<script>alert(1)</script><img src=http://evil.example/x>"
    _row(rep, FAILING_MUST)["evidence"][0]["transcript"] = "</pre><script>alert(2)</script>"
    page = html.render(rep)
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;alert(1)" in page
    assert not re.search(r"""<[^>]*\b(?:src|href)=(?!['"]?#)""", page)     # links inside the page only
    assert "Content-Security-Policy" in page


def test_write_redacts_and_names_no_directory_of_the_machine(tmp_path):
    rep = make_report(fail=(FAILING_MUST,))
    _row(rep, FAILING_MUST)["message"] = "the key sk_secret_1 was refused"
    out = html.write(rep, tmp_path / "report.html", lambda s: s.replace("sk_secret_1", "«redacted»"))
    text = out.read_text(encoding="utf-8")
    assert "sk_secret_1" not in text and "«redacted»" in text and str(tmp_path) not in text


def test_pytest_errors_of_the_suite_are_kept_as_text_without_paths_and_verdicts_are_not():
    collector = html.SuiteErrors()
    root = str(Path(html.__file__).resolve().parents[2])
    trace = (f'{root}/conformance/plugin.py:161: in judge\n    result = run.assess(check)\n'
             f'{os.path.expanduser("~")}/.venv/lib/python3.11/site-packages/_pytest/runner.py:341: in from_call\n'
             "E   KeyError: 'x' (see /tmp/pytest-of-me/run/ca.pem)")
    report = lambda **kw: types.SimpleNamespace(**{"failed": True, "when": "call", "user_properties": [],
                                                   "longreprtext": trace, **kw})
    where = "conformance/test_suite.py::test_check[invoke.x]"
    collector.runtest(report(user_properties=[("status", "failed")]), where)   # a check's verdict
    collector.runtest(report(failed=False), where)
    collector.runtest(report(), where)                                          # a check that raised
    collector.runtest(report(when="setup", user_properties=[("status", "failed")]), where)
    collector.pytest_collectreport(types.SimpleNamespace(failed=True, nodeid="", longreprtext="ImportError: x"))
    assert [(e["when"], e["where"]) for e in collector.errors] == [("call", where), ("setup", where),
                                                                   ("collection", "collection")]
    text = collector.errors[0]["text"]
    assert text.startswith("conformance/plugin.py:161: in judge") and "_pytest/runner.py:341" in text
    assert "ca.pem)" in text and not re.search(r"/tmp|/home|/root|site-packages", text) and root not in text
    page = html.render(make_report(), collector.errors)
    assert "Errors of the suite (3)" in page and "conformance/plugin.py:161: in judge" in page


def test_a_check_that_raised_is_an_error_of_the_suite_with_its_traceback(tmp_path):
    """In a pytest session (--tb=no, as a run has it): the item that raised is kept with a short traceback; one that
    failed as a verdict is not."""
    (tmp_path / "test_checks.py").write_text(textwrap.dedent("""\
        import pytest

        def test_raised():
            {}["missing"]

        def test_verdict(record_property):
            record_property("status", "failed")
            pytest.fail("INV-RES-005 failed", pytrace=False)
    """))
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import json
        from conformance.reporting import html

        collector = html.SuiteErrors()

        def pytest_configure(config):
            config.pluginmanager.register(collector)

        def pytest_unconfigure(config):
            open("errors.json", "w").write(json.dumps(collector.errors))
    """))
    subprocess.run([sys.executable, "-m", "pytest", "-q", "--tb=no", "-p", "no:cacheprovider", "-c", os.devnull,
                    "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, capture_output=True, timeout=120)
    errors = json.loads((tmp_path / "errors.json").read_text())
    assert [(e["where"].rsplit("::", 1)[-1], e["when"]) for e in errors] == [("test_raised", "call")]
    assert "test_checks.py:4: in test_raised" in errors[0]["text"] and "KeyError: 'missing'" in errors[0]["text"]
    assert str(tmp_path) not in errors[0]["text"] + errors[0]["where"]


def test_shown_path_is_relative_under_the_working_directory_and_a_name_elsewhere(tmp_path):
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    assert shown_path(work / "out" / "report.json", cwd=work) == "out/report.json"
    assert shown_path(work / "report.json", cwd=work) == "./report.json"
    assert shown_path(tmp_path / "elsewhere" / "report.json", cwd=work) == "report.json"
    assert strip_paths("https://127.0.0.1:8443/v1/agents/a/invoke and a/b") == (
        "https://127.0.0.1:8443/v1/agents/a/invoke and a/b")
