"""Running a script: the event generator, and its paced forms that perform ``sleep``."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .events import AgentEvent, Ask, Fail, Idle, Sleep, Step, Text, ToolCall
from .script import Script, canonical_json, new_id, parse, split_chunks


@dataclass(slots=True)
class RunContext:
    """What one run of the agent sees."""

    params: dict[str, Any]
    messages: list[Any]
    run_number: int  # runs the session's instance has started, this one included


@dataclass(slots=True)
class Paused:
    """A run paused on an ``ask``, held by the session's instance until resumed.

    :meth:`to_state` / :meth:`from_state` give it as plain JSON (the prompt, not the parsed script: parsing
    is exact and deterministic), so another process can resume it. ``created`` is this process's monotonic
    clock and is not part of the state.
    """

    script: Script
    context: RunContext
    ask: Ask
    reply_so_far: str = ""
    created: float = field(default_factory=time.monotonic)

    def to_state(self) -> dict[str, Any]:
        """``{"prompt", "params", "messages", "run_number", "ask_id", "question", "resume_at", "reply_so_far"}``."""
        if self.script.source is None:
            raise ValueError("a script built by hand has no prompt to store: build it with parse(prompt)")
        return copy.deepcopy({
            "prompt": self.script.source, "params": self.context.params, "messages": self.context.messages,
            "run_number": self.context.run_number, "ask_id": self.ask.id, "question": self.ask.question,
            "resume_at": self.ask.resume_at, "reply_so_far": self.reply_so_far})

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "Paused":
        """The paused run of :meth:`to_state`; ValueError when the prompt does not pause there with that question."""
        state = copy.deepcopy(state)
        script = parse(state["prompt"])
        resume_at = state["resume_at"]
        asked = script.directives[resume_at - 1] if 0 < resume_at <= len(script.directives) else None
        if asked is None or asked.word != "ask" or asked.arg != state["question"]:
            raise ValueError(f"paused state: directive {resume_at} of its prompt is not `ask {state['question']}`")
        context = RunContext(params=state["params"], messages=state["messages"], run_number=state["run_number"])
        ask = Ask(state["ask_id"], state["question"], resume_at)
        return cls(script, context, ask, reply_so_far=state["reply_so_far"])


def steps(script: Script, ctx: RunContext, start: int = 0) -> Iterator[AgentEvent]:
    """Agent events of a script from directive ``start``; ends after an Ask or a Fail.

    ``sleep`` comes out as a :class:`Sleep` event: this generator never waits.
    """
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
    """The rest of a paused run: the piece ``answer: <canonical JSON>``, then the next directives."""
    yield Text("answer: " + canonical_json(answer))
    yield from steps(paused.script, paused.context, paused.ask.resume_at)


def _next_wait(end: float, last: float, now: float, idle_interval: float | None) -> tuple[float, bool]:
    """During a silence ending at ``end``: how long to wait next, and whether an Idle marker follows."""
    if idle_interval is not None and last + idle_interval < end:
        return max(0.0, last + idle_interval - now), True
    return max(0.0, end - now), False


@dataclass(frozen=True)
class _Wait:
    seconds: float


def _schedule(events: Iterable[AgentEvent], idle_interval: float | None,
              clock: Callable[[], float]) -> Iterator[AgentEvent | Idle | _Wait]:
    """The events with each Sleep turned into waits (and Idle markers every `idle_interval` of silence);
    `paced` and `paced_sync` only perform the waits, each with its own kind of sleep."""
    last = clock()
    for event in events:
        if type(event) is not Sleep:
            yield event
            last = clock()
            continue
        end = clock() + event.seconds
        while True:
            wait, idle_follows = _next_wait(end, last, clock(), idle_interval)
            yield _Wait(wait)
            if not idle_follows:
                break
            yield Idle()
            last = clock()


AsyncSleep = Callable[[float], Awaitable[Any]]
SyncSleep = Callable[[float], Any]


async def paced(
    events: Iterable[AgentEvent],
    idle_interval: float | None = None,
    *,
    sleep: AsyncSleep | None = None,
    clock: Callable[[], float] | None = None,
) -> AsyncIterator[AgentEvent | Idle]:
    """Async form of an event iterator: performs Sleep events (they are not yielded).

    With ``idle_interval``, an :class:`Idle` marker is yielded whenever the agent
    has been silent that long since the last thing this iterator yielded.
    ``sleep`` (default ``asyncio.sleep``) and ``clock`` (default the running
    loop's clock) are hooks, e.g. for a test with virtual time.
    """
    sleep = sleep or asyncio.sleep
    for item in _schedule(events, idle_interval, clock or asyncio.get_running_loop().time):
        if type(item) is _Wait:
            await sleep(item.seconds)
        else:
            yield item


def paced_sync(
    events: Iterable[AgentEvent],
    idle_interval: float | None = None,
    *,
    sleep: SyncSleep = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[AgentEvent | Idle]:
    """Synchronous twin of :func:`paced` (same rules, blocking ``sleep`` hook)."""
    for item in _schedule(events, idle_interval, clock):
        if type(item) is _Wait:
            sleep(item.seconds)
        else:
            yield item


async def run_events(
    script: Script, ctx: RunContext, start: int = 0, idle_interval: float | None = None
) -> AsyncIterator[AgentEvent | Idle]:
    async for event in paced(steps(script, ctx, start), idle_interval):
        yield event
