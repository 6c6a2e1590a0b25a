"""The portable conformance agent: sessions, resume, sync/async iteration with sleep hooks, stdlib only."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from conformance.agent import (
    Ask, ConformanceAgent, Fail, Idle, NotPaused, Session, Sleep, Step, Text, ToolCall, paced, paced_sync, parse,
    steps, RunContext,
)


def texts(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Text)]


class VirtualTime:
    """A clock that moves only when the agent sleeps, so nothing here waits for real."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


def test_echo_mode_and_plain_reply():
    agent = ConformanceAgent()
    run = agent.run("hello there")
    assert list(run) == [Text("hello there")] and run.outcome == "completed" and run.reply == "hello there"
    run = agent.run("say conformance")
    assert list(run) == [Text("conformance")] and run.outcome == "completed"


def test_tool_step_and_failure_outcomes():
    agent = ConformanceAgent()
    events = list(agent.run('tool lookup {"q":"x"}\nstep plan\nsay done'))
    assert isinstance(events[0], ToolCall) and events[0].result == '{"q":"x"}'
    assert events[1:] == [Step("plan"), Text("done")]
    run = agent.run("say partial\nfail boom")
    assert list(run) == [Text("partial"), Fail("boom")]
    assert (run.outcome, run.error, run.reply) == ("failed", "boom", "partial")


def test_count_is_per_session_and_a_new_key_starts_at_zero():
    agent = ConformanceAgent()
    assert [texts(agent.run("count", session="a")) for _ in range(3)] == [["1"], ["2"], ["3"]]
    assert texts(agent.run("count", session="b")) == ["1"]
    assert texts(agent.run("count")) == ["1"] and texts(agent.run("count")) == ["1"]


def test_ask_pauses_and_resume_continues_the_same_run():
    agent = ConformanceAgent()
    run = agent.run("say hi\nask What is your name?\nsay thanks\ncount", session="s", params={"p": 1})
    events = list(run)
    assert isinstance(events[-1], Ask) and events[-1].question == "What is your name?"
    assert run.outcome == "paused" and agent.session("s").waiting == events[-1]
    resumed = agent.resume("s", {"name": "Ada"})
    assert texts(resumed) == ['answer: {"name":"Ada"}', "thanks", "1"]  # count did not go up
    assert resumed.outcome == "completed" and resumed.whole_reply == 'hi' + resumed.reply
    assert resumed.context.params == {"p": 1}
    with pytest.raises(NotPaused):
        agent.resume("s", "again")
    with pytest.raises(NotPaused):
        agent.resume("never-seen", "x")


def test_a_new_run_abandons_the_question():
    session = Session("k")
    list(session.start("ask Q?"))
    assert session.waiting is not None
    list(session.start("say other"))
    assert session.waiting is None
    with pytest.raises(NotPaused):
        session.resume("late")


def test_params_and_messages_reach_the_agent():
    agent = ConformanceAgent()
    assert texts(agent.run("echo params", params={"b": 1, "a": "é"})) == ['{"a":"é","b":1}']
    assert texts(agent.run("echo messages")) == ["[]"]


def test_a_run_is_iterated_once():
    run = ConformanceAgent().run("say x")
    list(run)
    with pytest.raises(RuntimeError):
        list(run)


def test_sync_sleep_hook_and_idle_markers_in_virtual_time():
    vt = VirtualTime()
    run = ConformanceAgent().run("say a\nsleep 16\nsay awake")
    paced_events = list(paced_sync(steps(parse("say a\nsleep 16\nsay awake"), RunContext({}, [], 1)), 5,
                                   sleep=vt.sleep, clock=vt.clock))
    assert [type(e) for e in paced_events] == [Text, Idle, Idle, Idle, Text]
    assert sum(vt.slept) == pytest.approx(16)
    vt2 = VirtualTime()
    assert texts(run.events(sleep=vt2.sleep, clock=vt2.clock)) == ["a", "awake"] and vt2.slept == [16.0]


def test_sleep_none_hands_the_silence_to_the_caller():
    events = list(ConformanceAgent().run("sleep 2.5\nsay b").events(sleep=None))
    assert events == [Sleep(2.5), Text("b")]


def test_async_iteration_with_a_virtual_sleep_hook():
    vt = VirtualTime()

    async def go():
        run = ConformanceAgent().run("sleep 40\nsay awake")
        direct = [e async for e in paced(steps(parse("sleep 40\nsay b"), RunContext({}, [], 1)), 15,
                                         sleep=vt.asleep, clock=vt.clock)]
        hooked = [e async for e in run.aevents(sleep=vt.asleep, clock=vt.clock)]
        return direct, hooked, run

    direct, hooked, run = asyncio.run(go())
    assert [type(e) for e in direct] == [Idle, Idle, Text]
    assert hooked == [Text("awake")] and run.outcome == "completed"
    assert vt.slept[-1] == 40


def test_async_for_directly_on_a_run():
    async def go():
        return [e async for e in ConformanceAgent().run("chunks 3 abc")]

    assert asyncio.run(go()) == [Text("a"), Text("b"), Text("c")]


def test_the_server_runs_this_very_module():
    import conformance.agent as portable
    import conformance.server.agent as server_agent

    assert server_agent.parse is portable.parse and server_agent.steps is portable.steps
    assert server_agent.Paused is portable.Paused


def test_imports_nothing_outside_the_standard_library():
    code = textwrap.dedent("""
        import sys
        STDLIB = set(sys.stdlib_module_names)

        class Blocker:
            def find_spec(self, name, path=None, target=None):
                top = name.partition(".")[0]
                if top not in STDLIB and top != "conformance":
                    raise ImportError("non-stdlib import: " + name)
                return None

        sys.meta_path.insert(0, Blocker())
        import conformance.agent as agent
        run = agent.ConformanceAgent().run("say ok")
        assert [e.text for e in run] == ["ok"]
        outside = sorted(m for m in sys.modules
                         if m.partition(".")[0] not in STDLIB and m.partition(".")[0] != "conformance"
                         and m not in ("__main__",))
        loaded = sorted(m for m in sys.modules if m.startswith("conformance"))
        assert not outside, outside
        assert loaded == ["conformance"] + sorted(m for m in loaded if m.startswith("conformance.agent")), loaded
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                            env=_env_with_repo_on_path())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def _env_with_repo_on_path() -> dict[str, str]:
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return {**os.environ, "PYTHONPATH": str(root)}
