"""The conformance agent: a pure interpreter of the prompt script.

Contract: ``shared/design/conformance-agent.md``. This module knows nothing
about HTTP or about any protocol; each protocol module maps the agent events
below to its own wire shape.

A run is driven in two layers:

* :func:`parse` turns the prompt into a :class:`Script` (echo mode, or a list
  of directives). The whole script is checked before anything runs, so a bad
  line fails the run before any output, with a message naming the line.
* :func:`steps` is a synchronous generator of agent events for a script from
  a given position; :func:`run_events` is its async form, which performs the
  ``sleep`` directives itself and, when asked, yields :class:`Idle` markers
  while the agent is silent (for keep-alive pings).

Agent events: :class:`Text`, :class:`ToolCall` (call and its result),
:class:`Step` (starts and finishes), :class:`Sleep`, :class:`Ask` (the run
pauses), :class:`Fail` (the run fails). A run that yields none of the last two
completes normally.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

DIRECTIVES = frozenset(
    {"say", "say-json", "chunks", "chunks-json", "tool", "step", "sleep", "ask", "fail", "echo", "count"}
)
MAX_CHUNKS = 1000
MAX_SLEEP = 120.0

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_INTEGER = re.compile(r"[0-9]+\Z")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(8)


# --- agent events -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]
    result: str  # canonical JSON of args, what the tool returned


@dataclass(frozen=True, slots=True)
class Step:
    name: str


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class Ask:
    id: str
    question: str
    resume_at: int  # index of the directive after the ask


@dataclass(frozen=True, slots=True)
class Fail:
    message: str


@dataclass(frozen=True, slots=True)
class Idle:
    """Not an agent event: the agent has been silent for the idle interval."""


AgentEvent = Text | ToolCall | Step | Sleep | Ask | Fail


# --- script -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Directive:
    word: str
    arg: Any = None
    count: int = 0  # for chunks


@dataclass(frozen=True, slots=True)
class Script:
    echo: str | None = None  # echo mode: the reply
    directives: tuple[Directive, ...] = ()
    error: str | None = None  # a bad line: the run fails with this message

    @property
    def sleeps(self) -> bool:
        return any(d.word == "sleep" for d in self.directives)


class BadLine(ValueError):
    pass


def split_lines(prompt: str) -> list[str]:
    return [line for line in _LINE_BREAK.split(prompt) if line != ""]


def _word(line: str) -> str:
    return line.split(" ", 1)[0]


def _rest(line: str, word: str) -> str | None:
    """The text after the word and one space; None when there is nothing after the word."""
    if len(line) == len(word):
        return None
    return line[len(word) + 1 :]


def _json_string(text: str | None) -> str:
    if text is None:
        raise BadLine("a JSON string literal is missing")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise BadLine(f"not a JSON string literal ({exc.msg})") from None
    if not isinstance(value, str):
        raise BadLine("not a JSON string literal")
    return value


def _chunks_args(rest: str | None, as_json: bool) -> Directive:
    if rest is None:
        raise BadLine("N is missing")
    n_text, sep, text = rest.partition(" ")
    if not _INTEGER.match(n_text):
        raise BadLine(f"N must be an integer from 1 to {MAX_CHUNKS}")
    n = int(n_text)
    if not 1 <= n <= MAX_CHUNKS:
        raise BadLine(f"N must be an integer from 1 to {MAX_CHUNKS}")
    if as_json:
        value = _json_string(text if sep else None)
    else:
        value = text
    return Directive("chunks", value, n)


def parse_line(line: str) -> Directive:
    word = _word(line)
    rest = _rest(line, word)
    if word == "say":
        return Directive("say", rest or "")
    if word == "say-json":
        return Directive("say", _json_string(rest))
    if word == "chunks":
        return _chunks_args(rest, as_json=False)
    if word == "chunks-json":
        return _chunks_args(rest, as_json=True)
    if word == "tool":
        if not rest:
            raise BadLine("tool NAME ARGS: NAME is missing")
        name, sep, args_text = rest.partition(" ")
        if not name:
            raise BadLine("tool NAME ARGS: NAME is missing")
        if not sep:
            raise BadLine("tool NAME ARGS: ARGS (a JSON object) is missing")
        try:
            args = json.loads(args_text)
        except ValueError as exc:
            raise BadLine(f"tool ARGS is not JSON ({exc.msg})") from None
        if not isinstance(args, dict):
            raise BadLine("tool ARGS must be a JSON object")
        return Directive("tool", (name, args))
    if word == "step":
        if not rest:
            raise BadLine("step NAME: NAME is missing")
        return Directive("step", rest)
    if word == "sleep":
        if rest is None or not _DECIMAL.match(rest):
            raise BadLine(f"sleep SECONDS: SECONDS must be a decimal, 0 < s <= {MAX_SLEEP:g}")
        seconds = float(rest)
        if not 0 < seconds <= MAX_SLEEP:
            raise BadLine(f"sleep SECONDS: SECONDS must be a decimal, 0 < s <= {MAX_SLEEP:g}")
        return Directive("sleep", seconds)
    if word == "ask":
        return Directive("ask", rest or "")
    if word == "fail":
        return Directive("fail", rest or "")
    if word == "echo":
        if rest not in ("params", "messages"):
            raise BadLine("expected 'echo params' or 'echo messages'")
        return Directive("echo", rest)
    if word == "count":
        if rest is not None:
            raise BadLine("'count' takes no argument")
        return Directive("count")
    raise BadLine("not a directive")


def parse(prompt: str) -> Script:
    lines = split_lines(prompt)
    if not lines or _word(lines[0]) not in DIRECTIVES:
        return Script(echo=prompt)
    directives = []
    for number, line in enumerate(lines, 1):
        try:
            directives.append(parse_line(line))
        except BadLine as exc:
            shown = line if len(line) <= 200 else line[:200] + "…"
            return Script(error=f"bad script line {number}: {shown!r}: {exc}")
    return Script(directives=tuple(directives))


def split_chunks(text: str, n: int) -> list[str]:
    """N pieces of near-equal length in code points; the longer pieces come first."""
    size, extra = divmod(len(text), n)
    pieces = []
    start = 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


# --- running ----------------------------------------------------------------


@dataclass(slots=True)
class RunContext:
    """What one run of the agent sees."""

    params: dict[str, Any]
    messages: list[Any]
    run_number: int  # runs the session's instance has started, this one included


@dataclass(slots=True)
class Paused:
    """A run paused on an ``ask``, held by the session's instance until resumed."""

    script: Script
    context: RunContext
    ask: Ask
    reply_so_far: str = ""
    created: float = field(default_factory=time.monotonic)


def steps(script: Script, ctx: RunContext, start: int = 0) -> Iterator[AgentEvent]:
    """Agent events of a script from directive ``start``; ends after an Ask or a Fail."""
    if script.error is not None:
        yield Fail(script.error)
        return
    if script.echo is not None:
        yield Text(script.echo)
        return
    directives = script.directives
    for index in range(start, len(directives)):
        d = directives[index]
        word = d.word
        if word == "say":
            yield Text(d.arg)
        elif word == "chunks":
            for piece in split_chunks(d.arg, d.count):
                yield Text(piece)
        elif word == "tool":
            name, args = d.arg
            yield ToolCall(new_id("call_"), name, args, canonical_json(args))
        elif word == "step":
            yield Step(d.arg)
        elif word == "sleep":
            yield Sleep(d.arg)
        elif word == "ask":
            yield Ask(new_id("int_"), d.arg, index + 1)
            return
        elif word == "fail":
            yield Fail(d.arg)
            return
        elif word == "echo":
            yield Text(canonical_json(ctx.params if d.arg == "params" else ctx.messages))
        elif word == "count":
            yield Text(str(ctx.run_number))


def resumed_steps(paused: Paused, answer: Any) -> Iterator[AgentEvent]:
    yield Text("answer: " + canonical_json(answer))
    yield from steps(paused.script, paused.context, paused.ask.resume_at)


async def paced(events: Iterator[AgentEvent], idle_interval: float | None = None) -> AsyncIterator[AgentEvent | Idle]:
    """Async form of an event iterator: performs Sleep events (they are not yielded).

    With ``idle_interval``, an :class:`Idle` marker is yielded whenever the agent
    has been silent that long since the last thing this iterator yielded.
    """
    loop = asyncio.get_running_loop()
    last = loop.time()
    for event in events:
        if type(event) is Sleep:
            end = loop.time() + event.seconds
            while True:
                now = loop.time()
                if idle_interval is not None and last + idle_interval < end:
                    await asyncio.sleep(max(0.0, last + idle_interval - now))
                    yield Idle()
                    last = loop.time()
                    continue
                await asyncio.sleep(max(0.0, end - now))
                break
            continue
        yield event
        last = loop.time()


async def run_events(
    script: Script, ctx: RunContext, start: int = 0, idle_interval: float | None = None
) -> AsyncIterator[AgentEvent | Idle]:
    async for event in paced(steps(script, ctx, start), idle_interval):
        yield event
