"""One option table (conformance.options) behind both front ends, and the seed a run uses when given none."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import conformance
from conformance import cli, options
from conformance.target import DEFAULT_SEED, FACTS, SECRET_FACTS, Target, suite_seed
from tests.reports.support import run_cli

ROOT = Path(__file__).resolve().parents[2]
RUN_OWN = {"-h", "--help", "-v", "--verbose", "-q", "--quiet", "--pytest-args", "--version"}


def cli_actions() -> dict[str, object]:
    return {s: a for a in cli.run_parser()._actions for s in a.option_strings if s not in RUN_OWN}


def pytest_arguments(config: pytest.Config) -> dict[str, object]:
    """The options the conformance plugin registered in this very pytest session."""
    group = config._parser.getgroup("conformance")
    return {name: arg for arg in group.options for name in arg.names()}


def test_conformance_run_exposes_exactly_the_table():
    actions = cli_actions()
    assert set(actions) == {o.flag for o in options.OPTIONS}
    for o in options.OPTIONS:
        action = actions[o.flag]
        assert (action.dest, action.help, action.default) == (o.name, o.help_text, o.unset), o.flag
        assert action.metavar == o.metavar and action.choices == o.choices, o.flag


def test_the_pytest_plugin_exposes_exactly_the_table(pytestconfig):
    args = pytest_arguments(pytestconfig)
    assert set(args) == {o.flag for o in options.PYTEST_OPTIONS}
    assert {o.name for o in options.OPTIONS} - {o.name for o in options.PYTEST_OPTIONS} == {"last_failed"}, \
        "only pytest's own --last-failed (cacheprovider) may keep an option out of the plugin"
    for o in options.PYTEST_OPTIONS:
        attrs = args[o.flag].attrs()
        assert attrs["dest"] == o.pytest_dest and attrs["help"] == o.help_text and attrs["default"] == o.unset, o.flag


def test_facts_and_their_variables_come_from_the_table():
    assert FACTS == {o.name: (o.flag, o.env) for o in options.OPTIONS if o.env}
    assert set(SECRET_FACTS) == {"api_key", "access_token", "revoked_key", "expired_token"}
    assert all(env == f"CONFORMANCE_{name.upper()}" for name, (_, env) in FACTS.items())


def test_docs_cli_md_shows_every_option_and_its_variable():
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for o in options.OPTIONS:
        row = re.search(rf"^\| `{re.escape(o.flag)}[ `].*$", doc, re.M)
        if row is None or (o.env and f"`{o.env}`" not in row.group(0)):
            missing.append(o.flag)
    assert not missing, f"docs/cli.md has no row (or not the variable) for {missing}"


def test_values_the_run_parsed_reach_the_plugin_as_they_are():
    opts, _ = cli.parse_run(["--seed", "random", "--depth", "3", "--insecure", "--report-dir", "out"])
    handed = cli.OptionHandover(opts).values
    assert handed == {"conf_seed": "random", "conf_depth": 3, "conf_insecure": True, "conf_report_dir": "out"}


# -- the seed --------------------------------------------------------------------------------------
def test_no_seed_means_the_suite_versions_fixed_seed():
    assert DEFAULT_SEED == suite_seed(conformance.__version__) and suite_seed("0.1.0") != suite_seed("0.1.1")
    target = Target(base_url="https://x")
    assert (target.seed, target.seed_source) == (DEFAULT_SEED, "default")
    assert (Target(base_url="https://x", seed=7).seed, Target(base_url="https://x", seed=7).seed_source) == (7, "given")
    explore = Target(base_url="https://x", seed="random")
    assert isinstance(explore.seed, int) and explore.seed_source == "random"
    again = replace(explore, depth=2)
    assert (again.seed, again.seed_source) == (explore.seed, "random")


def test_a_bad_seed_is_one_line_and_exit_2(capsys):
    assert cli.main(["run", "--seed", "often"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--seed" in err and "'random'" in err
    assert options.seed_value("RANDOM") == "random" and options.seed_value("-3") == -3


DRAW = ("from conformance import generate; from conformance.target import Target; import json; "
        "print(json.dumps(generate.texts(6, Target(base_url='https://x').seed)))")


def test_two_fresh_processes_draw_the_same_inputs_by_default():
    fresh = {**os.environ, "CONFORMANCE_CACHE_DIR": ""}      # both really draw: no draw kept from the other
    drawn = [subprocess.run([sys.executable, "-c", DRAW], capture_output=True, text=True, timeout=120, cwd=ROOT,
                            check=True, env=fresh).stdout for _ in range(2)]
    assert drawn[0] == drawn[1] and len(json.loads(drawn[0])) == 6


@pytest.mark.parametrize("args, source", [((), "default"), (("--seed", "random"), "random"), (("--seed", "5"), "given")])
def test_the_report_and_the_terminal_say_which_seed_and_how_to_repeat_it(tmp_path, args, source):
    proc = run_cli("run", "--requirements", "META-DOC-001", "--report-dir", str(tmp_path), *args)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rep = json.loads((tmp_path / "report.json").read_text())
    seed = rep["options"]["seed"]
    assert rep["options"]["seed_source"] == source and isinstance(seed, int)
    assert seed == {"default": DEFAULT_SEED, "given": 5}.get(source, seed)
    assert f"seed {seed} ({source})" in proc.stdout
    assert f"--seed {seed}" in proc.stdout or "--seed random explores" in proc.stdout


# -- the run's cap and the output's format -----------------------------------------------------------
def test_the_runs_cap_comes_from_its_option_or_its_variable(monkeypatch):
    from conformance import engine
    from conformance.certification import Certification

    assert options.BY_NAME["max_run_time"].env == "CONFORMANCE_MAX_RUN_TIME"
    given = {"base_url": "https://agents.example.com", "agent_id": "agt_1"}
    monkeypatch.delenv("CONFORMANCE_MAX_RUN_TIME", raising=False)
    assert engine.Session(Certification(lambda n: given.get(n))._target(), []).max_run_time == 1800.0
    monkeypatch.setenv("CONFORMANCE_MAX_RUN_TIME", "20m")
    assert engine.Session(Certification(lambda n: given.get(n))._target(), []).max_run_time == 1200.0
    session = engine.Session(Certification(lambda n: {**given, "max_run_time": "1h"}.get(n))._target(), [])
    assert session.max_run_time == 3600.0 and session.deadline.cap_at == session.started_at + 3600.0
    opts, _ = cli.parse_run(["--max-run-time", "45m", "--format", "json"])
    assert cli.OptionHandover(opts).values == {"conf_max_run_time": "45m", "conf_format": "json"}


@pytest.mark.parametrize("args, said", [(["--max-run-time", "soon"], "--max-run-time 'soon': expected a duration"),
                                        (["--format", "yaml"], "--format")])
def test_a_bad_cap_or_format_is_one_line_and_exit_2(capsys, args, said):
    assert cli.main(["run", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and said in err


def test_a_bad_cap_in_the_environment_is_named_by_its_variable(monkeypatch):
    monkeypatch.setenv("CONFORMANCE_MAX_RUN_TIME", "0")
    assert options.problem(lambda name: None) == ("CONFORMANCE_MAX_RUN_TIME '0': expected a duration such as 30m, 1h "
                                                  "or 900 (seconds)")
