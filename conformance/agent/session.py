"""Sessions and runs: the part of the agent a server embeds.

A :class:`ConformanceAgent` reaches one :class:`Session` (a running instance)
per session key. A session starts runs (``count`` reports how many) and holds
the run paused on an ``ask`` until it is resumed with an answer. A
:class:`Run` is iterated once, synchronously or asynchronously; the sleep hook
is explicit, so an adapter decides how the agent's silence is spent.

A session's state is plain JSON (:meth:`Session.to_state`) kept in a store
(:class:`SessionStore`: a dict by default), so agents of several worker
processes that share one store continue each other's sessions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

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
            self.session.pause(Paused(self._script, self.context, event, reply_so_far=self.whole_reply))
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


class SessionStore(Protocol):
    """Where sessions' states live, by session key: a plain ``dict`` is one; so is a thin wrapper over a
    shared database. ``get`` returns what was last stored under the key (None for a key never stored)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def __setitem__(self, key: str, state: dict[str, Any]) -> None: ...


class Session:
    """One running instance: what one session key reaches.

    Its state is ``runs`` (what ``count`` reports) and ``paused`` (the run waiting for an answer, if any);
    :meth:`to_state` gives it as plain JSON. A session with a ``store`` reads its state from the store
    before each change (start, pause, resume) and writes it back after, so another worker's session on the
    same key and store sees it.
    """

    def __init__(self, key: str | None = None, store: SessionStore | None = None) -> None:
        self.key = key
        self.runs = 0  # runs started, what ``count`` reports
        self.paused: Paused | None = None
        self._store = store if key is not None else None
        self._load()

    def to_state(self) -> dict[str, Any]:
        """``{"runs": int, "paused": None or Paused.to_state()}``: plain JSON."""
        return {"runs": self.runs, "paused": self.paused.to_state() if self.paused else None}

    @classmethod
    def from_state(cls, state: dict[str, Any] | None, key: str | None = None) -> "Session":
        """A session holding ``state`` (None: a new instance at 0 runs); not tied to any store."""
        session = cls(key)
        session._set_state(state)
        return session

    def _set_state(self, state: dict[str, Any] | None) -> None:
        state = state or {"runs": 0, "paused": None}
        self.runs = state["runs"]
        self.paused = Paused.from_state(state["paused"]) if state["paused"] is not None else None

    def _load(self) -> None:
        if self._store is not None:
            self._set_state(self._store.get(self.key))

    def _save(self) -> None:
        if self._store is not None:
            self._store[self.key] = self.to_state()

    def start_run(self) -> int:
        self._load()
        self.runs += 1
        self._save()
        return self.runs

    def start(self, prompt: str, params: dict[str, Any] | None = None, messages: list[Any] | None = None) -> Run:
        """A new run of ``prompt``; a question this session was waiting on is abandoned."""
        self._load()
        self.paused = None
        self.runs += 1
        self._save()
        context = RunContext(params=dict(params or {}), messages=list(messages or []), run_number=self.runs)
        script = parse(prompt)
        return Run(self, steps(script, context), context, script)

    def pause(self, paused: Paused) -> None:
        """Hold ``paused`` until :meth:`resume` (a run does this when it reaches an ``ask``)."""
        self._load()
        self.paused = paused
        self._save()

    def resume(self, answer: Any) -> Run:
        """The paused run continues with ``answer`` (same run: ``count`` does not go up)."""
        self._load()
        paused = self.paused
        if paused is None:
            raise NotPaused(f"session {self.key!r} has no run waiting for an answer")
        self.paused = None
        self._save()
        return Run(self, resumed_steps(paused, answer), paused.context, paused.script, resumed_from=paused)

    @property
    def waiting(self) -> Ask | None:
        """The question the session waits on, if any (as of its last start, pause or resume)."""
        return self.paused.ask if self.paused else None


class ConformanceAgent:
    """The agent: one :class:`Session` per session key (a new key starts a new instance at 0 runs).

    ``store`` holds each session's state by key (default: a new dict, this object's own). Agents that
    share one store, in one process or several, reach the same sessions.
    """

    def __init__(self, store: SessionStore | None = None) -> None:
        self.store: SessionStore = {} if store is None else store

    def session(self, key: str) -> Session:
        return Session(key, self.store)

    def run(self, prompt: str, *, session: str | None = None, params: dict[str, Any] | None = None,
            messages: list[Any] | None = None) -> Run:
        """Start a run; without a session key the run gets a fresh instance of its own."""
        owner = self.session(session) if session is not None else Session()
        return owner.start(prompt, params, messages)

    def resume(self, session: str, answer: Any) -> Run:
        return self.session(session).resume(answer)
