"""Verdict and requirement statuses: the contract's rules, on synthetic check results."""
import pytest

from conformance import catalog, report
from conformance.engine import CheckResult


def _req(level: str) -> str:
    return next(r.id for r in catalog.load().values() if r.level == level)


def _rows(results, coverage=None, baseline=report.Baseline()):
    coverage = coverage if coverage is not None else {rid: ["x.check"] for rid in catalog.load()}
    return report.requirement_rows(results, coverage, {}, baseline)


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


def test_baselined_failure_does_not_fail_and_passing_entry_is_stale():
    must = [r.id for r in catalog.load().values() if r.level == "MUST"]
    results = [CheckResult("x.check", (rid,), "passed") for rid in must[2:]]
    results += [CheckResult("y.check", (must[0],), "failed", "known gap"), CheckResult("z.check", (must[1],), "passed")]
    base = report.Baseline({must[0], must[1]}, "baseline.txt")
    rows = _rows(results, baseline=base)
    assert report.verdict(rows, ran=len(results))[0] == "conformant"
    built = report.build(target={}, results=results, coverage={rid: ["x.check"] for rid in catalog.load()},
                         not_run={}, baseline=base, stats={}, error=None, options={})
    assert built["baseline"]["stale"] == [must[1]]


def test_exit_codes_follow_the_contract():
    assert report.EXIT == {"conformant": 0, "conformant-partial": 0, "non-conformant": 1, "error": 2}


def test_baseline_file_formats(tmp_path):
    txt = tmp_path / "b.txt"
    txt.write_text("INV-RES-001  # known\n\nAGUI-PING-001\n")
    assert report.Baseline.load(str(txt)).known == {"INV-RES-001", "AGUI-PING-001"}
    js = tmp_path / "b.json"
    js.write_text('{"known_failures": ["MCP-VER-002"]}')
    assert report.Baseline.load(str(js)).known == {"MCP-VER-002"}
