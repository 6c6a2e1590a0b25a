"""The agent's test vectors (``vectors.json`` beside this module): read them and play them against an agent.

The file is the language-neutral contract of the agent (format in ``docs/agent.md``). This module is its
reference reader, written to be mirrored in another language: load the file, and for each case give a fresh
agent the runs in order and compare what comes out, event by event; then check each canonical JSON case.

    python -m conformance.agent.vectors     # plays every vector against this package's agent
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from .events import AgentEvent, Ask, Fail, Sleep, Step, Text, ToolCall
from .script import canonical_json
from .session import ConformanceAgent, NotPaused, Run

FORMAT = "conformance-agent-vectors/1"
FILE = "vectors.json"


def load() -> dict[str, Any]:
    """The vectors shipped in this package."""
    return json.loads(resources.files(__package__).joinpath(FILE).read_text(encoding="utf-8"))


def event_json(event: AgentEvent) -> dict[str, Any]:
    """An event as the vectors write it (ids left out: only their form is part of the contract)."""
    kind = type(event)
    if kind is Text:
        return {"type": "text", "text": event.text}
    if kind is ToolCall:
        return {"type": "tool_call", "name": event.name, "args": event.args, "result": event.result}
    if kind is Step:
        return {"type": "step", "name": event.name}
    if kind is Sleep:
        return {"type": "sleep", "seconds": event.seconds}
    if kind is Ask:
        return {"type": "ask", "question": event.question}
    if kind is Fail:
        return {"type": "fail", "message": event.message}
    raise TypeError(f"not an agent event: {event!r}")


def _start(agent: ConformanceAgent, run: dict[str, Any]) -> Run:
    if "resume" in run:
        return agent.resume(run["session"], run["resume"])
    return agent.run(run["prompt"], session=run.get("session"), params=run.get("params"),
                     messages=run.get("messages"))


def play_run(agent: ConformanceAgent, run: dict[str, Any], id_forms: dict[str, str]) -> dict[str, Any]:
    """What one run of a case gives: ``events``, ``outcome``, ``reply``, ``whole_reply``; ids of the wrong
    form come back under ``bad_ids``."""
    try:
        started = _start(agent, run)
    except NotPaused:
        return {"events": [], "outcome": "not_paused", "reply": "", "whole_reply": ""}
    events = list(started.events(sleep=None))  # silences come out as Sleep events: nothing waits
    played = {"events": [event_json(e) for e in events], "outcome": started.outcome, "reply": started.reply,
              "whole_reply": started.whole_reply}
    bad_ids = [e.id for e in events if isinstance(e, (ToolCall, Ask))
               and not re.fullmatch(id_forms["tool_call" if isinstance(e, ToolCall) else "ask"], e.id)]
    if bad_ids:
        played["bad_ids"] = bad_ids
    return played


EXPECTED = ("events", "outcome", "reply", "whole_reply")


def _expected(run: dict[str, Any], key: str) -> Any:
    """The vector's expectation; a fail event's ``bad_line`` only helps other readers (see docs/agent.md)."""
    if key == "events":
        return [{k: v for k, v in e.items() if k != "bad_line"} for e in run["events"]]
    return run[key]


def problems_of_case(case: dict[str, Any], id_forms: dict[str, str],
                     workers: Sequence[ConformanceAgent] | None = None) -> list[str]:
    """Plays a case's runs in order on a fresh agent, or in turn on ``workers`` (agents that share one store,
    as the workers of one service do), and says where the result differs from the vector."""
    workers = workers or [ConformanceAgent()]
    problems = []
    for index, run in enumerate(case["runs"]):
        got = play_run(workers[index % len(workers)], run, id_forms)
        where = f"{case['name']}, run {index + 1}"
        if "bad_ids" in got:
            problems.append(f"{where}: ids not of the documented form: {got['bad_ids']}")
        for key in EXPECTED:
            if got[key] != _expected(run, key):
                problems.append(f"{where}: {key}\n  want {_expected(run, key)!r}\n  got  {got[key]!r}")
    return problems


def problems_of_canonical(case: dict[str, Any]) -> list[str]:
    got = canonical_json(json.loads(case["input"]))
    return [] if got == case["output"] else [f"canonical {case['name']}: want {case['output']!r}, got {got!r}"]


def check(vectors: dict[str, Any] | None = None,
          new_workers: Callable[[], Sequence[ConformanceAgent]] | None = None) -> list[str]:
    """Every difference between this package's agent and the vectors (empty: the agent keeps the contract).
    ``new_workers`` gives the agents of each case (default: one fresh agent)."""
    vectors = load() if vectors is None else vectors
    if vectors.get("format") != FORMAT:
        return [f"unknown vectors format {vectors.get('format')!r} (this reader knows {FORMAT})"]
    problems = []
    for case in vectors["agent"]:
        problems += problems_of_case(case, vectors["id_forms"], new_workers() if new_workers else None)
    for case in vectors["canonical_json"]["cases"]:
        problems += problems_of_canonical(case)
    return problems


def main() -> int:
    vectors = load()
    problems = check(vectors)
    runs = sum(len(case["runs"]) for case in vectors["agent"])
    print("\n".join(problems) if problems else
          f"ok: {len(vectors['agent'])} agent cases ({runs} runs), "
          f"{len(vectors['canonical_json']['cases'])} canonical JSON cases")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
