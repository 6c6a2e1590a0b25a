"""The agent's language-neutral test vectors: shipped in the package, fresh, complete, and kept by the agent."""
from __future__ import annotations

import copy
import fnmatch
import json
import tomllib
from pathlib import Path

import pytest

from conformance.agent import DIRECTIVES, ConformanceAgent, vectors
from tests.agent import make_vectors

ROOT = Path(__file__).resolve().parents[2]
VECTORS = vectors.load()


def test_the_committed_file_is_a_fresh_generation():
    assert make_vectors.TARGET.read_text(encoding="utf-8") == make_vectors.render(make_vectors.build()), \
        "conformance/agent/vectors.json is stale: run `python -m tests.agent.make_vectors`"


@pytest.mark.parametrize("case", VECTORS["agent"], ids=lambda case: case["name"])
def test_the_agent_keeps_each_vector(case):
    assert vectors.problems_of_case(case, VECTORS["id_forms"]) == []


@pytest.mark.parametrize("case", VECTORS["canonical_json"]["cases"], ids=lambda case: case["name"])
def test_canonical_json_of_each_case(case):
    assert vectors.problems_of_canonical(case) == []


def test_the_module_entry_point_plays_everything(capsys):
    assert vectors.main() == 0
    assert capsys.readouterr().out.startswith(f"ok: {len(VECTORS['agent'])} agent cases")


def test_the_vectors_cover_every_directive_and_edge():
    covered = {item.strip() for case in VECTORS["agent"] for item in case["covers"].split(";")}
    wanted = DIRECTIVES | {"resume", "echo params", "echo messages", "bad lines", "echo mode", "blank lines",
                           "whitespace", "unicode", "canonical JSON"}
    assert wanted <= covered, sorted(wanted - covered)
    bad_lines = [case for case in VECTORS["agent"] if "bad lines" in case["covers"]]
    takes_any_text = {"say", "ask", "fail"}
    assert {case["covers"].split(";")[0] for case in bad_lines} >= DIRECTIVES - takes_any_text
    outcomes = {run["outcome"] for case in VECTORS["agent"] for run in case["runs"]}
    assert outcomes == {"completed", "paused", "failed", "not_paused"}
    kinds = {event["type"] for case in VECTORS["agent"] for run in case["runs"] for event in run["events"]}
    assert kinds == {"text", "tool_call", "step", "sleep", "ask", "fail"}


def test_every_bad_script_names_its_line():
    for case in VECTORS["agent"]:
        for run in case["runs"]:
            for event in run["events"]:
                if "bad_line" in event:
                    assert run["events"] == [event] and run["outcome"] == "failed"
                    assert event["message"].startswith(f"bad script line {event['bad_line']}: ")


def test_the_reader_catches_a_wrong_expectation():
    broken = copy.deepcopy(VECTORS)
    say = next(case for case in broken["agent"] if case["name"] == "say")
    say["runs"][0]["events"][0]["text"] = "not what the agent says"
    broken["canonical_json"]["cases"][0]["output"] = '{"b":1,"a":[1,2]}'
    problems = vectors.check(broken)
    assert len(problems) == 2 and problems[0].startswith("say, run 1: events")
    assert problems[1].startswith("canonical keys sorted, no spaces")


def test_the_reader_checks_the_form_of_ids():
    tool = next(case for case in VECTORS["agent"] if case["name"] == "tool then say")
    problems = vectors.problems_of_case(tool, {"tool_call": "id_[0-9]+", "ask": "x"})
    assert len(problems) == 1 and "ids not of the documented form" in problems[0]


def test_the_reader_refuses_an_unknown_format():
    assert vectors.check({**VECTORS, "format": "conformance-agent-vectors/2"})[0].startswith("unknown vectors format")


class JsonTextStore:
    """A store that keeps only JSON text, as a shared database would: nothing but plain JSON survives it."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def get(self, key: str):
        return json.loads(self.texts[key]) if key in self.texts else None

    def __setitem__(self, key: str, state) -> None:
        self.texts[key] = json.dumps(state, ensure_ascii=False, allow_nan=False)


def test_two_workers_sharing_a_store_keep_every_vector():
    """Each case's runs alternate between two agents (two workers) that share one store of JSON text."""
    def two_workers():
        store = JsonTextStore()
        return ConformanceAgent(store), ConformanceAgent(store)

    assert vectors.check(VECTORS, new_workers=two_workers) == []


def test_the_package_data_ships_the_vectors():
    with open(ROOT / "pyproject.toml", "rb") as fh:
        patterns = tomllib.load(fh)["tool"]["setuptools"]["package-data"]["conformance"]
    assert any(fnmatch.fnmatch(f"agent/{vectors.FILE}", pattern) for pattern in patterns)
    assert (ROOT / "conformance" / "agent" / vectors.FILE).is_file()


def test_workers_that_do_not_share_a_store_break_the_session_vectors():
    """The check above can fail: two agents each with a store of its own lose counts and resumes."""
    problems = vectors.check(VECTORS, new_workers=lambda: (ConformanceAgent(), ConformanceAgent()))
    broken = {problem.split(", run")[0] for problem in problems}
    assert {"count across runs and sessions", "ask, then resume with an object"} <= broken


def test_the_doc_states_what_the_vectors_hold(capsys):
    """docs/agent.md quotes the entry point's output, the number of canonical cases and the id forms."""
    doc = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
    vectors.main()
    assert f"`{capsys.readouterr().out.strip()}`" in doc
    assert f"hold {len(VECTORS['canonical_json']['cases'])} cases" in doc
    for kind, form in VECTORS["id_forms"].items():
        assert f"`{kind}`: `{form}`" in doc.replace("\n  ", " ")
    assert f'`"{vectors.FORMAT}"`' in doc
