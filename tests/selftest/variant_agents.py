"""Correct services whose deployed agent is off its contract (docs/agent.md), one way for each reading the suite
takes of the agent: the service carries everything as the spec says, only the agent replies otherwise. None of
them may fail a service requirement (registered in variant_servers.py); what the agent's deviation hides is
`not assessed`, and the report names the agent once (`report.json` `agent`).

Each is the reference server with another agent plugged in (`Service.interpreter`; the session store's instances
for `count`):

* ``counts-resumes``: `count` counts a resumed run as a new one ("A resumed run is the same run: it does not count
  again");
* ``counts-from-zero``: `count` reports the runs before this one (a new instance's first run says 0);
* ``json-other-form``: every JSON it writes (`echo params`, `echo messages`, the `answer: ` of a resume, a tool
  result) with its keys in the order received, spaces after `,` and `:`, and `\\u` escapes for non-ASCII;
* ``messages-indented``: `echo messages` pretty-printed over several lines;
* ``chunks-shorter-first``: `chunks N TEXT` in N pieces of near-equal length, the shorter ones first;
* ``answer-other-prefix``: a resumed run starts with `Answer: ` and the answer in JSON with spaces.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any, Callable, Iterator

from conformance.agent import Ask, Directive, Fail, Paused, RunContext, Script, Text, ToolCall
from conformance.server import ServerConfig
from conformance.server.agent import Interpreter
from conformance.server.org import Instance
from tests.selftest.session_tools import Store, with_store


# -- the agents ------------------------------------------------------------------------------------------------
class Rewriting(Interpreter):
    """The conformance agent with some directives played otherwise: `directive(d, ctx)` gives the events of one
    directive (by default the contract's)."""

    def steps(self, script: Script, ctx: RunContext, start: int = 0) -> Iterator[Any]:
        if script.error is not None or script.echo is not None:
            yield from super().steps(script, ctx, start)
            return
        for index in range(start, len(script.directives)):
            for event in self.directive(script.directives[index], ctx):
                if isinstance(event, Ask):
                    event = dataclasses.replace(event, resume_at=index + 1)   # the resume goes on after it
                yield event
                if isinstance(event, (Ask, Fail)):
                    return

    def directive(self, d: Directive, ctx: RunContext) -> Iterator[Any]:
        return Interpreter.steps(self, Script(directives=(d,)), ctx)


def _spaced(value: Any) -> str:
    """JSON as most libraries write it by default: keys as received, `, ` and `: `, non-ASCII escaped."""
    return json.dumps(value, ensure_ascii=True)


class JsonWriter(Rewriting):
    """Writes every JSON value it emits (`echo`, a tool result, the answer of a resume) with `write`."""

    def __init__(self, write: Callable[[Any], str]) -> None:
        self.write = write

    def directive(self, d: Directive, ctx: RunContext) -> Iterator[Any]:
        if d.word == "echo":
            yield Text(self.write(ctx.params if d.arg == "params" else ctx.messages))
        else:
            for event in super().directive(d, ctx):
                yield dataclasses.replace(event, result=self.write(event.args)) if isinstance(event, ToolCall) \
                    else event

    def resumed_steps(self, paused: Paused, answer: Any) -> Iterator[Any]:
        yield Text("answer: " + self.write(answer))
        yield from self.steps(paused.script, paused.context, paused.ask.resume_at)


class MessagesIndented(Rewriting):
    def directive(self, d: Directive, ctx: RunContext) -> Iterator[Any]:
        if d.word == "echo" and d.arg == "messages":
            return iter([Text(json.dumps(ctx.messages, indent=2, ensure_ascii=False))])
        return super().directive(d, ctx)


class ChunksShorterFirst(Rewriting):
    def directive(self, d: Directive, ctx: RunContext) -> Iterator[Any]:
        if d.word != "chunks":
            return super().directive(d, ctx)
        size, extra = divmod(len(d.arg), d.count)
        bounds = [0, *itertools.accumulate(size + (i >= d.count - extra) for i in range(d.count))]
        return iter([Text(d.arg[a:b]) for a, b in zip(bounds, bounds[1:])])


class AnswerOtherPrefix(Interpreter):
    def resumed_steps(self, paused: Paused, answer: Any) -> Iterator[Any]:
        yield Text("Answer: " + json.dumps(answer, ensure_ascii=False))
        yield from self.steps(paused.script, paused.context, paused.ask.resume_at)


# -- `count` ---------------------------------------------------------------------------------------------------
class FromZero(Instance):
    """Reports the runs started before this one."""

    def start_run(self) -> int:
        return super().start_run() - 1


class CountsResumes(Interpreter):
    """Counts a resumed run as a run of its own: the session's instance goes one up on every resume."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def resumed_steps(self, paused: Paused, answer: Any) -> Iterator[Any]:
        for instance in list(self.store._items.values()):
            if getattr(instance, "taken", None) is paused:
                instance.taken = None
                instance.runs += 1
                paused = dataclasses.replace(paused, context=dataclasses.replace(paused.context,
                                                                                 run_number=instance.runs))
        return super().resumed_steps(paused, answer)


class Remembering(Instance):
    """Remembers the paused run a resume took from it, so the agent knows whose run it continues."""

    taken: Paused | None = None

    @property   # type: ignore[override]
    def paused(self) -> Paused | None:
        return getattr(self, "_paused", None)

    @paused.setter
    def paused(self, value: Paused | None) -> None:
        old = getattr(self, "_paused", None)
        self.taken = old if value is None and old is not None else None
        self._paused = value


# -- the servers -----------------------------------------------------------------------------------------------
def agent_config(interpreter: Callable[[Any], Interpreter] | None = None, kind: type[Instance] | None = None
                 ) -> ServerConfig:
    """The reference server whose agent is `interpreter(app)` and whose instances are `kind`."""
    def wrap(app, facts):
        if kind is not None:
            with_store(app, Store(kind))
        if interpreter is not None:
            app.interpreter = interpreter(app)
        return app
    return ServerConfig(wrap_app=wrap)


AGENTS: dict[str, Callable[[], ServerConfig]] = {
    "counts-resumes": lambda: agent_config(lambda app: CountsResumes(app.org.sessions), Remembering),
    "counts-from-zero": lambda: agent_config(kind=FromZero),
    "json-other-form": lambda: agent_config(lambda app: JsonWriter(_spaced)),
    "messages-indented": lambda: agent_config(lambda app: MessagesIndented()),
    "chunks-shorter-first": lambda: agent_config(lambda app: ChunksShorterFirst()),
    "answer-other-prefix": lambda: agent_config(lambda app: AnswerOtherPrefix()),
}
