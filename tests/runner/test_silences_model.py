"""The silence model (conformance/vocab/silences.py): its table holds what it says (each script makes the conformance
agent fall silent at its position for its length, then say its reply), each silence is judged under exactly the
requirements it names, its lengths sit outside the edge of the ping interval and inside the default run's floor, and
the reports say per requirement which silences it was judged on (report.json rows, `conformance list`)."""
from __future__ import annotations

import json
from types import SimpleNamespace

from conformance import catalog, registry
from conformance.agent import ConformanceAgent, Sleep, Text
from conformance.checks.agui._common import PING_INTERVAL
from conformance.judging import CheckResult
from conformance.profile import AGENT_SCENARIOS, Timeouts
from conformance.report import requirement_rows
from conformance.vocab import silences

REQS = catalog.load()


def checks_over(scenario: str) -> list[registry.Check]:
    return [c for c in registry.load_all().values() if scenario in c.scenarios]


def played(s: silences.Silence) -> list:
    """The events of the silence's run (for a silence after a resume, of the resumed run), sleeps as events."""
    agent = ConformanceAgent()
    run = agent.run(s.prompt, session="k")
    events = list(run.events(sleep=None))
    if s.resumed:
        events = list(agent.resume("k", silences.ANSWER).events(sleep=None))
    return events


def test_each_script_falls_silent_at_its_position_then_says_its_reply():
    for s in silences.SILENCES.values():
        events = played(s)
        quiet = next(i for i, e in enumerate(events) if isinstance(e, Sleep))
        assert events[quiet].seconds == s.seconds, s.name
        before = events[:quiet]
        assert {"start": before == [], "after-text": [type(e) for e in before] == [Text],
                "after-tool": [type(e).__name__ for e in before] == ["ToolCall"],
                "after-step": [type(e).__name__ for e in before] == ["Step"],
                "after-resume": [type(e) for e in before] == [Text]}[s.position], s.name
        assert "".join(e.text for e in events if isinstance(e, Text)) == s.reply, s.name
        assert s.name == f"{s.stream}:{s.position}:{s.seconds:g}s" and s.position in silences.POSITIONS


def test_lengths_sit_outside_the_ping_edge_and_inside_the_default_runs_floor():
    """AG-UI: one whole second past the 15 s interval, read by order (the module's decision); every silence at most
    the floor, agui.silence's 16 s, so the run lasts no longer."""
    floor = silences.FLOOR
    for s in silences.SILENCES.values():
        assert s.seconds <= floor, s.name
        if s.stream == "agui":
            assert s.seconds >= PING_INTERVAL + 1.0, s.name
        assert s.seconds > 12.0, s.name     # longer than any idle cut of zoo_silences.py, well inside the floor


def test_the_agui_start_silence_is_agui_silence_default_prompt():
    start = silences.SILENCES["agui:start:16s"]
    assert start.scenario == "agui.silence"
    assert start.prompt == AGENT_SCENARIOS["silence"]["prompt"] and start.reply == AGENT_SCENARIOS["silence"]["reply"]


def test_each_silence_is_judged_under_exactly_the_requirements_it_names():
    """Every requirement an entry names has a check over the entry's scenario; every check over a silence scenario
    judges only requirements the entries it reads name; the requirements exist and are testable."""
    for s in silences.SILENCES.values():
        covered = {r for c in checks_over(s.scenario) for r in c.requirements}
        for rid in s.judged:
            assert rid in REQS and REQS[rid].testable, (s.name, rid)
            assert rid in covered, f"{s.name}: no check over {s.scenario} judges {rid}"
    for scenario in {s.scenario for s in silences.SILENCES.values()} - {"agui.silence"}:
        named = {r for s in silences.SILENCES.values() if s.scenario == scenario for r in s.judged}
        for c in checks_over(scenario):
            assert set(c.requirements) <= named, (c.id, set(c.requirements) - named)
            assert c.supplementary, f"{c.id}: a silence is extra evidence (the conformance agent's `sleep`)"


def test_what_the_model_leaves_out_says_why_and_names_real_requirements():
    assert silences.LEFT_OUT
    for lo in silences.LEFT_OUT:
        assert len(lo.why) > 60 and lo.what, lo
        assert all(rid in REQS for rid in lo.concerns), lo
        assert lo.what not in silences.SILENCES
    assert {"silence": "invoke:after-resume", "why": silences.LEFT_OUT[0].why} in silences.left_out_for("INV-TERM-001")


def test_the_requests_a_default_run_adds_stay_within_fourteen():
    sent = [s for s in silences.SILENCES.values() if s.scenario != "agui.silence"]
    assert len(sent) + sum(1 for s in sent if s.resumed) <= 14     # a resume needs its paused run first


def test_room_for_a_silence_outlasts_it():
    ctx = SimpleNamespace(target=SimpleNamespace(profile=SimpleNamespace(timeouts=Timeouts())))
    limits = silences.limits(ctx, 16.0)
    assert limits.idle > 16.0 and limits.headers > 16.0 and limits.total > 16.0


# -- what the reports say ------------------------------------------------------------------------------------------
def test_a_check_is_judged_on_the_silences_its_recordings_held_that_it_judges():
    rec = SimpleNamespace(facts={"silences": {"silent-after-text": "agui:after-text:16s",
                                              "silent-after-resume": "agui:after-resume:16s"}})
    assert silences.judged_on(["AGUI-ORDER-006"], [rec]) == ("agui:after-text:16s",)
    assert silences.judged_on(["AGUI-PING-001"], [rec, SimpleNamespace(facts={})]) == \
        ("agui:after-resume:16s", "agui:after-text:16s")
    results = [CheckResult("agui.x", ("AGUI-ORDER-006", "AGUI-INT-002"), "passed",
                           silences=("agui:after-resume:16s", "agui:after-text:16s"))]
    rows = {r["id"]: r for r in requirement_rows(results, {"AGUI-ORDER-006": ["agui.x"],
                                                           "AGUI-INT-002": ["agui.x"]}, {})}
    assert rows["AGUI-ORDER-006"]["silences"] == ["agui:after-text:16s"]
    assert rows["AGUI-INT-002"]["silences"] == ["agui:after-resume:16s"]
    assert rows["AGUI-ORDER-006"]["silences_left_out"] == silences.left_out_for("AGUI-ORDER-006")
    assert "silences" not in rows["AGUI-ORDER-001"]


def test_conformance_list_names_the_silences_of_each_requirement(capsys):
    from conformance.cli import list_catalog
    list_catalog(["--format", "json"])
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["requirements"]}
    assert rows["AGUI-PING-001"]["silences"] == silences.applies_to("AGUI-PING-001")
    assert "agui:after-tool:16s" in rows["AGUI-PING-001"]["silences"]
    assert rows["AGUI-PING-002"]["silences"] == [] and rows["AGUI-PING-002"]["silences_left_out"]
    list_catalog([])
    assert "[silences: " in capsys.readouterr().out


POSITION_WORDS = {"start": "before the first output", "after-text": "after text", "after-tool": "after a tool call",
                  "after-step": "after a step", "after-resume": "after a resume"}


def silence_table() -> str:
    """The model as docs/writing-checks.md shows it: position × stream, each cell the length (and the scenario when
    it is not the stream's own), or `left out`."""
    cells = {(s.position, s.stream): s for s in silences.SILENCES.values()}
    rows = ["| position | invoke (`invoke.silences`) | AG-UI (`agui.silences`) | MCP (`mcp.silences`) |",
            "|---|---|---|---|"]
    for position in silences.POSITIONS:
        row = []
        for stream in silences.STREAMS:
            s = cells.get((position, stream))
            row.append("left out" if s is None else f"{s.seconds:g} s" + (
                f" (`{s.scenario}`)" if s.scenario != f"{stream}.silences" else ""))
        rows.append(f"| {POSITION_WORDS[position]} | " + " | ".join(row) + " |")
    return "\n".join(rows)


def test_the_silence_table_of_writing_checks_is_the_model():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "writing-checks.md").read_text(encoding="utf-8")
    shown = text.split("<!-- model:silences -->\n", 1)[1].split("\n<!-- /model:silences -->", 1)[0]
    assert shown == silence_table(), f"docs/writing-checks.md's silence table drifted from the model:\n{silence_table()}"
    assert {lo.what for lo in silences.LEFT_OUT} >= {f"{s}:{p}" for p in POSITION_WORDS for s in silences.STREAMS
                                                     if not any(x.position == p and x.stream == s
                                                                for x in silences.SILENCES.values())}
