"""`conformance compare OLD NEW`: requirement by requirement, regressions (a MUST one exits 1), fixes, newly
(not) assessed; text, Markdown and JSON; bad input one line, exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import cli
from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from tests.reports.support import make_report, should_requirement
from tests.selftest.zoo import load_zoo

BROKEN = "INV-RES-005-events-missing"
#: the invoke result's requirements: the broken server breaks one of them
REQUIREMENTS = ["INV-RES-001", "INV-RES-002", "INV-RES-003", "INV-RES-004", "INV-RES-005", "INV-RES-006"]


def run(config: ServerConfig, out: Path) -> dict:
    with ReferenceServer(config) as srv:
        return certify(from_server_facts(srv.facts, seed=3), requirements=REQUIREMENTS, report_dir=out)


@pytest.fixture(scope="module")
def correct_and_broken(tmp_path_factory) -> tuple[Path, Path, dict]:
    correct, broken = tmp_path_factory.mktemp("correct"), tmp_path_factory.mktemp("broken")
    run(ServerConfig(), correct)
    rep = run(load_zoo()[BROKEN].server_config(), broken)
    return correct, broken, rep


def compare(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["compare", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def write(rep: dict, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.json").write_text(json.dumps(rep))
    return directory


def test_a_broken_server_against_the_correct_one_lists_exactly_what_it_fails(correct_and_broken, capsys):
    correct, broken, rep = correct_and_broken
    failing = sorted(r["id"] for r in rep["requirements"] if r["status"] in ("failed", "warning"))
    assert "INV-RES-005" in failing
    code, out, err = compare(capsys, str(correct), str(broken), "--format", "json")
    assert code == 1, out + err
    got = json.loads(out)
    assert sorted(c["id"] for c in got["regressions"]) == failing
    levels = {r["id"]: r["level"] for r in rep["requirements"]}
    assert sorted(got["must_regressions"]) == [r for r in failing if levels[r] == "MUST"]
    assert not got["fixed"] and not got["newly_not_assessed"]


def test_the_other_way_round_they_are_fixed_and_nothing_regressed(correct_and_broken, capsys):
    correct, broken, rep = correct_and_broken
    code, out, _ = compare(capsys, str(broken / "report.json"), str(correct))
    assert code == 0 and "no MUST regressed" in out.splitlines()[-1]
    assert "fixed: " in out and "INV-RES-005" in out and "failed → passed" in out


def test_terminal_and_markdown_say_the_same(correct_and_broken, capsys):
    correct, broken, _ = correct_and_broken
    code, text, _ = compare(capsys, str(correct), str(broken))
    assert code == 1 and text.splitlines()[-1].startswith("REGRESSED: ") and "INV-RES-005" in text
    assert "newly failed (regressions): " in text and "passed → failed" in text
    code, md, _ = compare(capsys, str(correct), str(broken), "--format", "markdown")
    assert code == 1 and md.startswith("## Conformance: NEW against OLD")
    assert "| INV-RES-005 | MUST | passed | failed |" in md and "**REGRESSED: " in md


def test_every_class_of_change(tmp_path, capsys):
    should = should_requirement()
    old = make_report(fail=("INV-RES-002",), skip=("INV-RES-003",))
    new = make_report(fail=(should,), skip=("INV-RES-004",))
    code, out, _ = compare(capsys, str(write(old, tmp_path / "old")), str(write(new, tmp_path / "new")),
                           "--format", "json")
    got = json.loads(out)
    ids = {k: [c["id"] for c in got[k]] for k in ("regressions", "fixed", "newly_assessed", "newly_not_assessed")}
    assert ids == {"regressions": [should], "fixed": ["INV-RES-002"], "newly_assessed": ["INV-RES-003"],
                   "newly_not_assessed": ["INV-RES-004"]}
    assert code == 0 and got["must_regressions"] == []      # a SHOULD that regressed warns, it does not fail


def test_a_requirement_missing_from_the_new_report_is_named(tmp_path, capsys):
    old = make_report()
    new = make_report()
    new["requirements"] = new["requirements"][1:]
    code, out, _ = compare(capsys, str(write(old, tmp_path / "old")), str(write(new, tmp_path / "new")))
    assert code == 0 and f"not in NEW's report (1): {old['requirements'][0]['id']}" in out


@pytest.mark.parametrize("spoil, said", [
    (lambda d: None, "no such report directory or report.json"),
    (lambda d: write(make_report(), d) and (d / "report.json").write_text("{not json"), "not JSON"),
    (lambda d: write(make_report(), d) and (d / "report.json").write_text('{"verdict": 1}'),
     "not a conformance report"),
])
def test_bad_input_is_one_line_and_exit_2(spoil, said, tmp_path, capsys):
    good = write(make_report(), tmp_path / "good")
    bad = tmp_path / "bad"
    spoil(bad)
    for args in ([str(good), str(bad)], [str(bad), str(good)]):
        code, out, err = compare(capsys, *args)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and said in err, err
