"""A scenario's deadline counts the server's time, not the suite's: a draw that a busy machine makes slow (the
drawing process starting, other scenarios' draws ahead of it) does not make the scenario time out, which the
report would blame on the server. Waiting on the server still times out."""
from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from conformance import generate
from conformance.engine import Session
from conformance.wire.exchange import ACTIVITY, Activity

DEADLINE = 0.3


def within_deadline(fn) -> None:
    async def main():
        activity = Activity()
        ACTIVITY.set(activity)
        await Session._within_deadline(SimpleNamespace(fn=fn, deadline=DEADLINE, name="s"), None, activity)
    asyncio.run(main())


def test_a_slow_draw_is_not_the_scenarios_time(monkeypatch):
    monkeypatch.setattr(generate._DRAWER, "call", lambda name, args: time.sleep(3 * DEADLINE) or "drawn")

    async def scenario(ctx):
        assert await asyncio.to_thread(generate.drawn, test_a_slow_draw_is_not_the_scenarios_time) == "drawn"
        await asyncio.sleep(DEADLINE / 3)          # the server's time after it: within the deadline

    within_deadline(scenario)


def test_waiting_on_the_server_still_times_out():
    async def scenario(ctx):
        await asyncio.sleep(3 * DEADLINE)

    with pytest.raises(asyncio.TimeoutError):
        within_deadline(scenario)
