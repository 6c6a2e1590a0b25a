from __future__ import annotations

import asyncio
import json

import pytest

from conformance.server.agent import (
    Ask, Fail, Idle, Paused, RunContext, Sleep, Step, Text, ToolCall, canonical_json, parse, paced, resumed_steps,
    split_chunks, steps,
)


def run(prompt: str, params=None, messages=None, n=1):
    ctx = RunContext(params=params or {}, messages=messages or [], run_number=n)
    return list(steps(parse(prompt), ctx))


def reply(events) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


def test_canonical_json():
    assert canonical_json({"b": 1, "a": [1, "é"], "c": {"z": None, "y": True}}) == \
        '{"a":[1,"é"],"b":1,"c":{"y":true,"z":null}}'
    assert canonical_json("😀\u2028") == '"😀\u2028"'


@pytest.mark.parametrize("prompt", ["hello world", "Say hi", " say hi", "sayhi", "", "\n\n", "hello\nsay x",
                                    "\tsay x", "SAY x"])
def test_echo_mode_returns_prompt_unchanged_as_one_piece(prompt):
    events = run(prompt)
    assert events == [Text(prompt)]


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\r"])
def test_line_endings_and_empty_lines(sep):
    prompt = sep.join(["", "say a", "", "say b", "", ""])
    assert reply(run(prompt)) == "ab"


def test_mixed_line_endings():
    assert [e.text for e in run("say a\r\nsay b\rsay c\nsay d")] == ["a", "b", "c", "d"]


def test_say_takes_rest_after_one_space():
    assert run("say  two spaces ") == [Text(" two spaces ")]
    assert run("say") == [Text("")]


def test_say_json_carries_any_character():
    text = "line\nbreak\r\ttab \"quote\" 😀 \u2028 é"
    events = run("say-json " + json.dumps(text))
    assert events == [Text(text)]
    events = run("say-json " + json.dumps(text, ensure_ascii=False))
    assert events == [Text(text)]


@pytest.mark.parametrize("bad", ["say-json hello", "say-json 12", "say-json", "say-json \"unterminated",
                                 "say-json [\"a\"]"])
def test_say_json_bad(bad):
    events = run("say ok\n" + bad)
    assert len(events) == 1 and isinstance(events[0], Fail)
    assert "line 2" in events[0].message and bad[:8] in events[0].message


def test_chunks():
    assert [e.text for e in run("chunks 5 hello, conformance")] == split_chunks("hello, conformance", 5)
    pieces = split_chunks("hello, conformance", 5)
    assert "".join(pieces) == "hello, conformance" and len(pieces) == 5
    assert max(map(len, pieces)) - min(map(len, pieces)) <= 1


def test_chunks_code_points_and_empty_pieces():
    assert split_chunks("😀é", 4) == ["😀", "é", "", ""]
    assert split_chunks("", 3) == ["", "", ""]
    assert [e.text for e in run("chunks 3 ab")] == ["a", "b", ""]
    assert [e.text for e in run("chunks 2")] == ["", ""]
    assert len(run("chunks 1000 x")) == 1000


def test_chunks_json():
    assert reply(run('chunks-json 3 "a\\nb\\u00e9"')) == "a\nbé"
    assert len(run('chunks-json 3 "a\\nb\\u00e9"')) == 3


@pytest.mark.parametrize("bad", ["chunks 0 x", "chunks 1001 x", "chunks -1 x", "chunks x y", "chunks",
                                 "chunks 1.5 x", "chunks-json 2 nope", "chunks-json 2"])
def test_chunks_bad(bad):
    events = run(bad)
    assert len(events) == 1 and isinstance(events[0], Fail) and "line 1" in events[0].message


def test_tool():
    (call,) = run('tool lookup {"q":"x","a":[1,2]}')
    assert isinstance(call, ToolCall)
    assert call.name == "lookup" and call.args == {"q": "x", "a": [1, 2]}
    assert call.result == '{"a":[1,2],"q":"x"}'
    assert run('tool lookup {"q":"x"}\nsay done')[1] == Text("done")


@pytest.mark.parametrize("bad", ["tool", "tool lookup", "tool lookup [1]", "tool lookup {bad", "tool  {}"])
def test_tool_bad(bad):
    assert isinstance(run(bad)[0], Fail)


def test_step():
    assert run("step plan\nsay done") == [Step("plan"), Text("done")]
    assert isinstance(run("step")[0], Fail)


@pytest.mark.parametrize("value, seconds", [("0.3", 0.3), ("16", 16.0), ("120", 120.0), (".5", 0.5), ("1.", 1.0)])
def test_sleep_bounds_ok(value, seconds):
    assert run("sleep " + value) == [Sleep(seconds)]


@pytest.mark.parametrize("value", ["0", "0.0", "120.01", "121", "-1", "nan", "inf", "1e1", "", "x", " 1"])
def test_sleep_bounds_bad(value):
    assert isinstance(run("sleep " + value)[0], Fail)
    assert isinstance(run("sleep")[0], Fail)


def test_ask_pauses_and_resumes():
    events = run("say hi\nask What is your name?\nsay thanks")
    assert events[0] == Text("hi")
    ask = events[1]
    assert isinstance(ask, Ask) and ask.question == "What is your name?" and len(events) == 2
    script = parse("say hi\nask What is your name?\nsay thanks")
    paused = Paused(script=script, context=RunContext({}, [], 1), ask=ask)
    assert [e.text for e in resumed_steps(paused, {"name": "Bob", "age": 3})] == [
        'answer: {"age":3,"name":"Bob"}', "thanks"]


def test_fail_keeps_what_was_sent():
    events = run("say partial\nfail boom\nsay never")
    assert events == [Text("partial"), Fail("boom")]


def test_echo_params_and_messages():
    params = {"b": [1], "a": "é"}
    assert reply(run("echo params", params=params)) == '{"a":"é","b":[1]}'
    assert reply(run("echo messages")) == "[]"
    msgs = [{"role": "user", "content": "x"}]
    assert reply(run("echo messages", messages=msgs)) == '[{"content":"x","role":"user"}]'
    assert isinstance(run("echo something")[0], Fail)
    assert isinstance(run("echo")[0], Fail)


def test_count():
    assert reply(run("count", n=7)) == "7"
    assert isinstance(run("count 2")[0], Fail)


def test_bad_line_fails_naming_the_line_before_any_output():
    events = run("say a\nsay b\nfrobnicate now")
    assert len(events) == 1 and isinstance(events[0], Fail)
    assert "line 3" in events[0].message and "frobnicate now" in events[0].message


def test_first_line_directive_word_means_script_mode():
    # "echo hello" starts with a directive word, so it is a (bad) script, not echo mode.
    assert isinstance(run("echo hello")[0], Fail)
    # a whitespace-only line is not empty: in script mode it is a bad line
    assert isinstance(run("say a\n \nsay b")[0], Fail)


def test_paced_sleeps_and_reports_idle():
    """On virtual time (the sleep and clock hooks), so a busy machine cannot change the count of idle markers."""
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    async def go():
        script = parse("say a\nsleep 0.35\nsay b")
        return [e async for e in paced(steps(script, RunContext({}, [], 1)), idle_interval=0.1, sleep=sleep,
                                       clock=lambda: now[0])]

    out = asyncio.run(go())
    assert now[0] == pytest.approx(0.35)
    assert out[0] == Text("a") and out[-1] == Text("b")
    assert len([e for e in out if isinstance(e, Idle)]) == 3


def test_paced_without_idle_interval_yields_no_idle():
    async def go():
        script = parse("sleep 0.05\nsay b")
        return [e async for e in paced(steps(script, RunContext({}, [], 1)))]

    assert asyncio.run(go()) == [Text("b")]
