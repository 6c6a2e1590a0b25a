"""Sessions and runs: the part of the agent a server embeds.

A :class:`ConformanceAgent` holds one :class:`Session` (a running instance)
per session key. A session starts runs (``count`` reports how many) and holds
the run paused on an ``ask`` until it is resumed with an answer. A
:class:`Run` is iterated once, synchronously or asynchronously; the sleep hook
is explicit, so an adapter decides how the agent's silence is spent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .events import AgentEvent, Ask, Fail, Idle, Sleep, Text
from .interpreter import AsyncSleep, Paused, RunContext, SyncSleep, paced, paced_sync, resumed_steps, steps
from .script import parse


class NotPaused(LookupError):
    """``resume`` on a session with no run waiting for an answer."""


class Run:
    """One run of the agent. Iterate it once: ``for event in run`` or ``async for event in run``.

    While iterating, the run records ``reply`` (the text of this run), and when
    it ends ``outcome`` becomes ``"completed"``, ``"paused"`` (an :class:`Ask`
    ended it; the session holds it) or ``"failed"`` (a :class:`Fail` ended it;
    ``error`` holds the message).
    """

    def __init__(self, session: "Session", events: Iterator[AgentEvent], context: RunContext, script,
                 resumed_from: Paused | None = None) -> None:
        self.session = session
        self.context = context
        self.resumed_from = resumed_from  # the paused run this one continues, if any
        self.reply = ""
        self.outcome: str | None = None  # None while running
        self.error: str | None = None
        self.question: Ask | None = None
        self._script = script
        self._events = events
        self._started = False

    @property
    def run_number(self) -> int:
        return self.context.run_number

    @property
    def whole_reply(self) -> str:
        """The reply including text sent before the question, for a resumed run."""
        before = self.resumed_from.reply_so_far if self.resumed_from else ""
        return before + self.reply

    def _take(self) -> Iterator[AgentEvent]:
        if self._started:
            raise RuntimeError("a run is iterated once")
        self._started = True
        return self._events

    def _record(self, event: AgentEvent | Idle) -> None:
        kind = type(event)
        if kind is Text:
            self.reply += event.text
        elif kind is Ask:
            self.outcome, self.question = "paused", event
            self.session.paused = Paused(self._script, self.context, event, reply_so_far=self.whole_reply)
        elif kind is Fail:
            self.outcome, self.error = "failed", event.message

    def _finish(self) -> None:
        if self.outcome is None:
            self.outcome = "completed"

    def events(self, *, sleep: SyncSleep | None = time.sleep, idle_interval: float | None = None,
               clock: Callable[[], float] = time.monotonic) -> Iterator[AgentEvent | Idle]:
        """Synchronous events. ``sleep`` performs the agent's silences (default ``time.sleep``);
        ``sleep=None`` yields :class:`Sleep` events instead, for the caller to spend.
        With ``idle_interval``, :class:`Idle` markers come during long silences (measured on ``clock``)."""
        source = self._take()
        stream = source if sleep is None else paced_sync(source, idle_interval, sleep=sleep, clock=clock)
        for event in stream:
            self._record(event)
            yield event
        self._finish()

    def __iter__(self) -> Iterator[AgentEvent | Idle]:
        return self.events()

    async def aevents(self, *, sleep: AsyncSleep | None = None, idle_interval: float | None = None,
                      clock: Callable[[], float] | None = None) -> AsyncIterator[AgentEvent | Idle]:
        """Asynchronous events; ``sleep`` is an async hook (default ``asyncio.sleep``), ``clock``
        defaults to the running loop's clock."""
        async for event in paced(self._take(), idle_interval, sleep=sleep or asyncio.sleep, clock=clock):
            self._record(event)
            yield event
        self._finish()

    def __aiter__(self) -> AsyncIterator[AgentEvent | Idle]:
        return self.aevents()


class Session:
    """One running instance: what one session key reaches."""

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.runs = 0  # runs started, what ``count`` reports
        self.paused: Paused | None = None

    def start_run(self) -> int:
        self.runs += 1
        return self.runs

    def start(self, prompt: str, params: dict[str, Any] | None = None, messages: list[Any] | None = None) -> Run:
        """A new run of ``prompt``; a question this session was waiting on is abandoned."""
        self.paused = None
        context = RunContext(params=dict(params or {}), messages=list(messages or []), run_number=self.start_run())
        script = parse(prompt)
        return Run(self, steps(script, context), context, script)

    def resume(self, answer: Any) -> Run:
        """The paused run continues with ``answer`` (same run: ``count`` does not go up)."""
        paused = self.paused
        if paused is None:
            raise NotPaused(f"session {self.key!r} has no run waiting for an answer")
        self.paused = None
        return Run(self, resumed_steps(paused, answer), paused.context, paused.script, resumed_from=paused)

    @property
    def waiting(self) -> Ask | None:
        """The question the session waits on, if any."""
        return self.paused.ask if self.paused else None


class ConformanceAgent:
    """The agent: one :class:`Session` per session key (a new key starts a new instance at 0 runs)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}

    def session(self, key: str) -> Session:
        if key not in self.sessions:
            self.sessions[key] = Session(key)
        return self.sessions[key]

    def run(self, prompt: str, *, session: str | None = None, params: dict[str, Any] | None = None,
            messages: list[Any] | None = None) -> Run:
        """Start a run; without a session key the run gets a fresh instance of its own."""
        owner = self.session(session) if session is not None else Session()
        return owner.start(prompt, params, messages)

    def resume(self, session: str, answer: Any) -> Run:
        if session not in self.sessions:
            raise NotPaused(f"unknown session {session!r}")
        return self.sessions[session].resume(answer)
