"""Deadlines that count only the time the suite was listening (`listening_for`).

The suite's own work can hold an event loop for seconds (a first import of a large SDK on a loaded machine took
10 s). Whatever the server sent meanwhile waits in the socket, and a deadline that passes then says nothing about
the server. HTTP/1.1 gets away with it (anyio leaves a task alone whose socket wait has already been answered), but
over HTTP/2 only the stream whose task holds httpcore's read lock of the connection waits on the socket: every
other stream waits on that lock, so when the loop came back all their overdue deadlines cut them before the frames
that had arrived were handed over ("stream idle", "no response headers", false failures of a correct server).

So a deadline cuts only once the loop has been running on time for `RELISTEN` seconds: a stall of the loop that ends
later (seen by a tick that ran late, or by the deadline's own timer running late) moves the cut to `RELISTEN` after
it. A server that stays silent is still cut, at most `RELISTEN` after each stall of the suite's own; nothing else
changes.
"""
from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import Iterator

import anyio

TICK = 0.2        # how often each loop's watch checks that it runs on time
STALL = 0.5       # a tick or a deadline this late: the loop was held, nobody read the sockets meanwhile
RELISTEN = 1.0    # how long the loop must have run on time before a deadline may cut


class _LoopWatch:
    """When an event loop was last held by something other than waiting (its ticks ran late)."""

    _of: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopWatch]" = weakref.WeakKeyDictionary()

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)
        self.stalled_until = float("-inf")
        self._due = loop.time() + TICK
        loop.call_at(self._due, self._tick)

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> "_LoopWatch":
        watch = cls._of.get(loop)
        if watch is None:
            watch = cls._of[loop] = cls(loop)
        return watch

    def _tick(self) -> None:
        loop = self._loop()
        if loop is None or loop.is_closed():
            return
        self.saw(self._due, loop.time())
        self._due = loop.time() + TICK
        loop.call_at(self._due, self._tick)

    def saw(self, due: float, now: float) -> None:
        """A callback due at `due` ran at `now`."""
        if now - due > STALL:
            self.stalled_until = max(self.stalled_until, now)


@contextlib.contextmanager
def listening_for(seconds: float) -> Iterator[anyio.CancelScope]:
    """Like `anyio.move_on_after(seconds)`, but the scope is cancelled only after `seconds` of the loop listening
    (see the module's docstring). Inside an asyncio event loop."""
    loop = asyncio.get_running_loop()
    watch = _LoopWatch.of(loop)
    with anyio.CancelScope() as scope:
        handle: asyncio.TimerHandle

        def expire(due: float) -> None:
            nonlocal handle
            now = loop.time()
            watch.saw(due, now)
            cut_at = watch.stalled_until + RELISTEN
            if now < cut_at:
                handle = loop.call_at(cut_at, expire, cut_at)
            else:
                scope.cancel()

        due = loop.time() + max(0.0, seconds)
        handle = loop.call_at(due, expire, due)
        try:
            yield scope
        finally:
            handle.cancel()
