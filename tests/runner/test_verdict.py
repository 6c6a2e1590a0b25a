"""Verdict and requirement statuses: the contract's rules, on synthetic check results."""
import pytest

from conformance import catalog, report
from conformance.judging import CheckResult


def _req(level: str) -> str:
    return next(r.id for r in catalog.load().values() if r.level == level)


def _coverage(results):
    """Each requirement covered by exactly the checks that produced these results (or one that did not run)."""
    cov = {rid: [] for rid in catalog.load()}
    for r in results:
        for rid in r.requirements:
            cov[rid].append(r.check)
    return {rid: checks or ["x.check"] for rid, checks in cov.items()}


def _rows(results, coverage=None, baseline=report.Baseline()):
    return report.requirement_rows(results, coverage if coverage is not None else _coverage(results), {}, baseline)


def _row(rows, rid):
    return next(r for r in rows if r["id"] == rid)


@pytest.mark.parametrize("level,expected", [("MUST", "failed"), ("SHOULD", "warning"), ("MAY", "info")])
def test_a_failed_check_maps_to_the_level(level, expected):
    rid = _req(level)
    rows = _rows([CheckResult("x.check", (rid,), "failed", "boom")])
    assert _row(rows, rid)["status"] == expected


def test_not_assessed_is_never_passed():
    rid = _req("MUST")
    rows = _rows([CheckResult("x.check", (rid,), "not_assessed", "needs --access-token")])
    row = _row(rows, rid)
    assert row["status"] == "not_assessed" and "--access-token" in row["message"]


def test_uncovered_requirement_is_reported_as_such():
    rid = _req("MUST")
    rows = _rows([], coverage={})
    assert _row(rows, rid)["status"] == "not_assessed"
    assert "uncovered" in _row(rows, rid)["message"]


def test_verdicts():
    must = [r.id for r in catalog.load().values() if r.level == "MUST"]
    passed = [CheckResult("x.check", (rid,), "passed") for rid in must]
    assert report.verdict(_rows(passed), ran=len(passed))[0] == "conformant"
    partial = passed[1:] + [CheckResult("y.check", (must[0],), "not_assessed", "no prompt")]
    assert report.verdict(_rows(partial), ran=len(partial))[0] == "conformant-partial"
    failing = passed[1:] + [CheckResult("y.check", (must[0],), "failed", "bad")]
    assert report.verdict(_rows(failing), ran=len(failing))[0] == "non-conformant"
    assert report.verdict(_rows([]), ran=0)[0] == "error"
    assert report.verdict(_rows(passed), ran=3, error="target unreachable")[0] == "error"


def test_a_baseline_waives_the_exit_status_never_the_verdict():
    must = [r.id for r in catalog.load().values() if r.level == "MUST"]
    results = [CheckResult("x.check", (rid,), "passed") for rid in must[2:]]
    results += [CheckResult("y.check", (must[0],), "failed", "known gap"), CheckResult("z.check", (must[1],), "passed")]
    base = report.Baseline({must[0], must[1]}, "baseline.txt")
    built = report.build(target={}, results=results, coverage=_coverage(results),
                         not_run={}, baseline=base, stats={}, error=None, options={})
    assert built["verdict"] == "non-conformant"
    assert must[0] in built["verdict_reason"] and "waived" in built["verdict_reason"]
    assert built["waived"] == [must[0]]
    assert report.exit_code(built) == 0
    assert built["baseline"]["stale"] == [must[1]]


def test_an_unwaived_failure_beside_a_waived_one_still_exits_1():
    must = [r.id for r in catalog.load().values() if r.level == "MUST"]
    results = [CheckResult("x.check", (rid,), "passed") for rid in must[2:]]
    results += [CheckResult("y.check", (must[0],), "failed", "known"), CheckResult("z.check", (must[1],), "failed", "new")]
    built = report.build(target={}, results=results, coverage=_coverage(results),
                         not_run={}, baseline=report.Baseline({must[0]}, "b.txt"), stats={}, error=None, options={})
    assert report.exit_code(built) == 1


def test_one_passing_check_does_not_pass_a_requirement_whose_other_check_was_not_assessed():
    rid = _req("MUST")
    rows = _rows([CheckResult("a.check", (rid,), "passed"), CheckResult("b.check", (rid,), "not_assessed", "no POST")],
                 coverage={rid: ["a.check", "b.check"]})
    row = _row(rows, rid)
    assert row["status"] == "not_assessed"
    assert "partly assessed" in row["message"] and "no POST" in row["message"]


def test_a_check_that_did_not_run_keeps_the_requirement_not_assessed():
    rid = _req("MUST")
    rows = report.requirement_rows([CheckResult("a.check", (rid,), "passed")], {rid: ["a.check", "b.check"]},
                                   {"b.check": "protocol excluded by --protocols"})
    assert _row(rows, rid)["status"] == "not_assessed"
    assert "--protocols" in _row(rows, rid)["message"]


def test_info_never_satisfies_a_must():
    rid = _req("MUST")
    rows = _rows([CheckResult("a.check", (rid,), "info", "saw 404")])
    assert _row(rows, rid)["status"] == "not_assessed"
    rows = _rows([CheckResult("a.check", (rid,), "passed"), CheckResult("b.check", (rid,), "info", "saw 404")])
    assert _row(rows, rid)["status"] == "not_assessed"


def test_info_on_a_should_is_reported_as_info():
    rid = _req("SHOULD")
    assert _row(_rows([CheckResult("a.check", (rid,), "info", "saw")]), rid)["status"] == "info"


def test_a_suite_fault_on_a_must_makes_the_verdict_error_not_non_conformant():
    must = [r.id for r in catalog.load().values() if r.level == "MUST"]
    results = [CheckResult("x.check", (rid,), "passed") for rid in must[1:]]
    results.append(CheckResult("y.check", (must[0],), "error", "suite fault in check y.check: KeyError"))
    rows = _rows(results)
    assert _row(rows, must[0])["status"] == "error"
    v, why = report.verdict(rows, ran=len(results))
    assert v == "error" and must[0] in why and "suite" in why


def test_the_seed_is_recorded():
    built = report.build(target={"seed": 1234}, results=[], coverage={}, not_run={}, baseline=report.Baseline(),
                         stats={}, error=None, options={})
    assert built["seed"] == 1234 and built["options"]["seed"] == 1234


def test_exit_codes_follow_the_contract():
    assert report.EXIT == {"conformant": 0, "conformant-partial": 0, "non-conformant": 1, "error": 2}
    partial = {"verdict": "conformant-partial", "requirements": [], "waived": []}
    assert report.exit_code(partial) == 0 and report.exit_code(partial, require_complete=True) == 3


def test_baseline_file_formats(tmp_path):
    txt = tmp_path / "b.txt"
    txt.write_text("INV-RES-001  # known\n\nAGUI-PING-001\n")
    assert report.Baseline.load(str(txt)).known == {"INV-RES-001", "AGUI-PING-001"}
    js = tmp_path / "b.json"
    js.write_text('{"known_failures": ["MCP-VER-002"]}')
    assert report.Baseline.load(str(js)).known == {"MCP-VER-002"}


def test_report_json_stays_json_whatever_the_redactor_masks(tmp_path):
    """Redaction happens on each string, before serialising: a masked `authorization: …` inside a quoted curl
    line cannot eat the JSON escape of its closing quote."""
    import json

    from conformance.wire.redact import Redactor
    secret = "ais_live_s3cr3t_value_for_the_test"
    curl = f'curl -H "authorization: Bearer {secret}" -H "x: y" https://example.invalid'
    path = report.write_json({"checks": [{"evidence": [{"curl": curl}]}], "note": secret}, tmp_path,
                             Redactor([secret]).redact)
    text = path.read_text()
    data = json.loads(text)
    assert secret not in text and data["checks"][0]["evidence"][0]["curl"].startswith("curl -H")
