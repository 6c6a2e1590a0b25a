"""The agent's test vectors (``vectors.json`` beside this module): read them and play them against an agent.

The file is the language-neutral contract of the agent (format in ``docs/agent.md``). This module is its
reference reader, written to be mirrored in another language: load the file, and for each case give a fresh
agent the runs in order and compare what comes out, event by event; then check each canonical JSON case.

    python -m conformance.agent.vectors                    # plays every vector against this package's agent
    python -m conformance.agent.vectors --agent "./agent"  # ... against an agent in any language, run as a
                                                           # command that answers one JSON line per line
    python -m conformance.agent.vectors --agent "./agent" --without sleep,count
                                                           # ... that leaves those directives out
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from .events import AgentEvent, Ask, Fail, Sleep, Step, Text, ToolCall
from .script import DIRECTIVES, canonical_json, parse, split_lines
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


def _same_events(got: Any, run: dict[str, Any]) -> bool:
    """Another agent's events: the vector's, except that a bad script line's message only has to start with
    `bad script line N: ` (the rest is the Python agent's wording)."""
    want = run["events"]
    if not isinstance(got, list) or len(got) != len(want):
        return False
    return all(g == w if "bad_line" not in w else isinstance(g, dict) and g.get("type") == "fail" and
               str(g.get("message", "")).startswith(f"bad script line {w['bad_line']}: ") for g, w in zip(got, want))


class CommandAgent:
    """An agent in another process, written in any language: the command reads one JSON object a line on its
    standard input and writes one a line on its standard output (docs/agent.md, "The agent in another language").

    A run is the vector's run without what it expects (``prompt``, ``session``, ``params``, ``messages``, or
    ``session`` and ``resume``); the answer is ``{"events", "outcome", "reply", "whole_reply"}``, events as the
    vectors write them (an ``id`` may be added: ids are free). ``{"canonical": TEXT}`` is answered with
    ``{"output": TEXT}``. One process is one agent: each case starts its own."""

    INPUT = ("prompt", "session", "params", "messages", "resume")

    def __init__(self, command: Sequence[str]):
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     encoding="utf-8")

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the agent ended without answering {message!r}")
        try:
            return json.loads(line)
        except ValueError:
            raise RuntimeError(f"the agent answered {line.strip()[:200]!r} to {message!r}: not one JSON object") from None

    def play(self, run: dict[str, Any], id_forms: dict[str, str]) -> dict[str, Any]:
        got = self.ask({k: v for k, v in run.items() if k in self.INPUT})
        return {**got, "events": [{k: v for k, v in e.items() if k != "id"} for e in got.get("events", [])]}

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def problems_of_case(case: dict[str, Any], id_forms: dict[str, str],
                     workers: Sequence[ConformanceAgent] | None = None) -> list[str]:
    """Plays a case's runs in order on a fresh agent, or in turn on ``workers`` (agents that share one store,
    as the workers of one service do, or one CommandAgent), and says where the result differs from the vector."""
    workers = workers or [ConformanceAgent()]
    problems = []
    for index, run in enumerate(case["runs"]):
        worker = workers[index % len(workers)]
        got = worker.play(run, id_forms) if isinstance(worker, CommandAgent) else play_run(worker, run, id_forms)
        where = f"{case['name']}, run {index + 1}"
        if "bad_ids" in got:
            problems.append(f"{where}: ids not of the documented form: {got['bad_ids']}")
        for key in EXPECTED:
            if isinstance(worker, CommandAgent) and key == "events":
                same = _same_events(got.get(key), run)
            else:
                same = got.get(key) == _expected(run, key)
            if not same:
                problems.append(f"{where}: {key}\n  want {_expected(run, key)!r}\n  got  {got.get(key)!r}")
    return problems


def uses(case: dict[str, Any], words: set[str]) -> bool:
    """Whether a case gives an agent a script with a line starting with one of these directive words (an agent
    that leaves them out fails such a line as a bad one, and skips the case)."""
    return any(parse(run["prompt"]).echo is None and any(line.split(" ", 1)[0] in words
                                                         for line in split_lines(run["prompt"]))
               for run in case["runs"] if "prompt" in run)


def problems_of_canonical(case: dict[str, Any], agent: CommandAgent | None = None) -> list[str]:
    got = agent.ask({"canonical": case["input"]}).get("output") if agent else canonical_json(json.loads(case["input"]))
    return [] if got == case["output"] else [f"canonical {case['name']}: want {case['output']!r}, got {got!r}"]


def check(vectors: dict[str, Any] | None = None,
          new_workers: Callable[[], Sequence[ConformanceAgent]] | None = None,
          command: Sequence[str] | None = None, without: set[str] = frozenset()) -> list[str]:
    """Every difference between an agent and the vectors (empty: the agent keeps the contract): this package's
    agent, or the agent a command runs. ``new_workers`` gives the agents of each case (default: one fresh
    agent); the cases that use a directive of ``without`` are skipped."""
    vectors = load() if vectors is None else vectors
    if vectors.get("format") != FORMAT:
        return [f"unknown vectors format {vectors.get('format')!r} (this reader knows {FORMAT})"]
    problems = []
    for case in vectors["agent"]:
        if uses(case, without):
            continue
        agents = [CommandAgent(command)] if command else new_workers() if new_workers else None
        try:
            problems += problems_of_case(case, vectors["id_forms"], agents)
        finally:
            for agent in agents or ():
                if isinstance(agent, CommandAgent):
                    agent.close()
    canonical = CommandAgent(command) if command else None
    try:
        for case in vectors["canonical_json"]["cases"]:
            problems += problems_of_canonical(case, canonical)
    finally:
        if canonical:
            canonical.close()
    return problems


USAGE = "usage: python -m conformance.agent.vectors [--agent COMMAND] [--without DIRECTIVE,…]"


def main(argv: Sequence[str] = ()) -> int:
    options = dict(zip(argv[::2], argv[1::2]))
    without = {w.strip() for w in options.get("--without", "").split(",") if w.strip()}
    if len(argv) % 2 or set(options) - {"--agent", "--without"} or without - DIRECTIVES:
        print(USAGE + (f"; directives: {', '.join(sorted(DIRECTIVES))}" if without - DIRECTIVES else ""),
              file=sys.stderr)
        return 2
    vectors = load()
    try:
        problems = check(vectors, command=shlex.split(options["--agent"]) if "--agent" in options else None,
                         without=without)
    except (OSError, RuntimeError) as exc:
        print(f"the agent could not be played: {exc}", file=sys.stderr)
        return 1
    played = [case for case in vectors["agent"] if not uses(case, without)]
    runs = sum(len(case["runs"]) for case in played)
    skipped = f"; skipped {len(vectors['agent']) - len(played)} that use {', '.join(sorted(without))}" if without else ""
    print("\n".join(problems) if problems else
          f"ok: {len(played)} agent cases ({runs} runs), {len(vectors['canonical_json']['cases'])} canonical JSON "
          f"cases{skipped}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
