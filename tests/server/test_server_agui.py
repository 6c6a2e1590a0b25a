from __future__ import annotations

import json
import time
import uuid

import pytest
from ag_ui._generated import models as m

from conformance.server.testing import error_body_ok, sse_frames

EVENTS = {
    "RUN_STARTED": m.RunStartedEvent, "RUN_FINISHED": m.RunFinishedEvent, "RUN_ERROR": m.RunErrorEvent,
    "TEXT_MESSAGE_START": m.TextMessageStartEvent, "TEXT_MESSAGE_CONTENT": m.TextMessageContentEvent,
    "TEXT_MESSAGE_END": m.TextMessageEndEvent, "TOOL_CALL_START": m.ToolCallStartEvent,
    "TOOL_CALL_ARGS": m.ToolCallArgsEvent, "TOOL_CALL_END": m.ToolCallEndEvent,
    "TOOL_CALL_RESULT": m.ToolCallResultEvent, "STEP_STARTED": m.StepStartedEvent,
    "STEP_FINISHED": m.StepFinishedEvent,
}


def user(text: str, id_: str = "m1") -> dict:
    return {"id": id_, "role": "user", "content": text}


def agui(http, urls, auth, body):
    r = http.post(urls["agui"], json=body, headers=auth)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["x-ratelimit-remaining"].isdigit()
    frames = sse_frames(r.text)
    events = []
    for f in frames:
        if f["data"] is None:
            continue
        assert f["event"] is None  # unnamed data: frames
        ev = f["data"]
        EVENTS[ev["type"]].model_validate(ev)  # valid against the ag_ui 1.0 models
        # camelCase on the wire
        assert all("_" not in k for k in ev), ev
        events.append(ev)
    return events, frames


def check_order(events):
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    assert sum(e["type"] in ("RUN_FINISHED", "RUN_ERROR") for e in events) == 1
    open_ids = set()
    for e in events[1:-1]:
        if e["type"] == "TEXT_MESSAGE_START":
            assert e["role"] == "assistant"
            open_ids.add(e["messageId"])
        elif e["type"] == "TEXT_MESSAGE_CONTENT":
            assert e["messageId"] in open_ids
        elif e["type"] == "TEXT_MESSAGE_END":
            open_ids.remove(e["messageId"])
    assert not open_ids


def test_plain_run_echoes_ids(http, urls, auth):
    events, _ = agui(http, urls, auth, {"threadId": "t-" + uuid.uuid4().hex, "runId": "r1",
                                        "messages": [user("say conformance")]})
    check_order(events)
    assert [e["type"] for e in events] == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                           "TEXT_MESSAGE_END", "RUN_FINISHED"]
    fin = events[-1]
    assert fin["runId"] == "r1" and events[0]["runId"] == "r1" and fin["threadId"] == events[0]["threadId"]
    assert fin["result"] == "conformance" and fin["outcome"] == {"type": "success"}


def test_generated_ids(http, urls, auth):
    events, _ = agui(http, urls, auth, {"messages": [user("hello")]})
    assert events[0]["threadId"] and events[0]["runId"]
    assert events[-1]["result"] == "hello"


def test_chunks_one_message(http, urls, auth):
    events, _ = agui(http, urls, auth, {"messages": [user("chunks 5 hello, conformance")]})
    content = [e for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(content) == 5 and len({e["messageId"] for e in content}) == 1
    assert "".join(e["delta"] for e in content) == "hello, conformance" == events[-1]["result"]


def test_tool_and_step_events(http, urls, auth):
    events, _ = agui(http, urls, auth, {"messages": [user('tool lookup {"q":"x"}\nstep plan\nsay done')]})
    check_order(events)
    types = [e["type"] for e in events]
    assert types[1:5] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]
    assert types[5:7] == ["STEP_STARTED", "STEP_FINISHED"]
    assert events[1]["toolCallName"] == "lookup" and json.loads(events[2]["delta"]) == {"q": "x"}
    assert events[4]["content"] == '{"q":"x"}' and events[5]["stepName"] == "plan"
    assert events[-1]["result"] == "done"


@pytest.mark.parametrize("prompt, result", [("say partial\nfail boom", "partial"), ("fail boom", "")])
def test_failure_run_error(http, urls, auth, prompt, result):
    events, _ = agui(http, urls, auth, {"messages": [user(prompt)]})
    check_order(events)
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["message"] == "boom"
    assert not any(e["type"] == "RUN_FINISHED" for e in events)
    assert "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == result


def test_last_user_message_is_prompt_and_messages_reach_agent(http, urls, auth):
    msgs = [user("say first", "a"), {"id": "b", "role": "assistant", "content": "ok"},
            user("echo messages", "c"), {"id": "d", "role": "system", "content": "sys"}]
    events, _ = agui(http, urls, auth, {"messages": msgs})
    assert json.loads(events[-1]["result"]) == msgs


def test_params_pass_through(http, urls, auth):
    body = {"threadId": "t-" + uuid.uuid4().hex, "runId": "r", "messages": [user("echo params")],
            "tools": [], "state": {"a": 1}, "context": [], "forwardedProps": {"x": "é"}, "custom": None}
    events, _ = agui(http, urls, auth, body)
    assert json.loads(events[-1]["result"]) == {"tools": [], "state": {"a": 1}, "context": [],
                                                "forwardedProps": {"x": "é"}, "custom": None}


def test_ping_while_silent(http, urls, auth, facts):
    assert facts["ping_interval"] == 0.3  # lowered by the session fixture
    t0 = time.monotonic()
    events, frames = agui(http, urls, auth, {"messages": [user("sleep 1\nsay awake")]})
    assert time.monotonic() - t0 >= 1
    pings = [f for f in frames if f["data"] is None]
    assert 2 <= len(pings) <= 4 and all(f["comments"] == ["ping"] for f in pings)
    assert events[-1]["result"] == "awake"


def test_ping_raw_format(facts, urls, auth):
    import httpx, ssl
    with httpx.Client(verify=ssl.create_default_context(cafile=facts["ca_bundle"])) as c:
        raw = c.post(urls["agui"], json={"messages": [user("sleep 0.4\nsay x")]}, headers=auth).text
    assert ": ping\n\n" in raw
    assert all(block.startswith(("data: ", ": ping")) for block in raw.split("\n\n") if block)


def test_question_and_resume(http, urls, auth):
    tid = "t-" + uuid.uuid4().hex
    events, _ = agui(http, urls, auth, {"threadId": tid, "messages": [user("count\nask What is your name?\nsay thanks")]})
    fin = events[-1]
    assert fin["type"] == "RUN_FINISHED" and fin["outcome"]["type"] == "interrupt"
    m.RunFinishedInterruptOutcome.model_validate(fin["outcome"])
    (interrupt,) = fin["outcome"]["interrupts"]
    assert interrupt["message"] == "What is your name?" and fin["result"] == "1"

    # wrong answers are refused and leave the run paused
    bad = http.post(urls["agui"], json={"threadId": tid, "resume": [
        {"interruptId": "int_nope", "status": "resolved", "payload": 1}]}, headers=auth)
    error_body_ok(bad, 400, "validation_failed")
    bad = http.post(urls["agui"], json={"threadId": tid, "resume": [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": 1},
        {"interruptId": interrupt["id"], "status": "resolved", "payload": 2}]}, headers=auth)
    error_body_ok(bad, 400, "validation_failed")

    entry = m.ResumeEntry(interrupt_id=interrupt["id"], status="resolved", payload={"name": "Bob"})
    body = {"threadId": tid, "runId": "r2", "resume": [entry.model_dump(by_alias=True)], "messages": []}
    events, _ = agui(http, urls, auth, body)
    check_order(events)
    assert events[-1]["result"] == 'answer: {"name":"Bob"}thanks'
    assert events[-1]["outcome"] == {"type": "success"} and events[-1]["runId"] == "r2"
    # the run was resumed, not restarted: the instance has started one run
    events, _ = agui(http, urls, auth, {"threadId": tid, "messages": [user("count")]})
    assert events[-1]["result"] == "2"
    # nothing is paused any more
    error_body_ok(http.post(urls["agui"], json={"threadId": tid, "resume": [
        {"interruptId": interrupt["id"], "status": "resolved"}]}, headers=auth), 400, "validation_failed")


def test_resume_without_payload_gets_whole_entry(http, urls, auth):
    tid = "t-" + uuid.uuid4().hex
    events, _ = agui(http, urls, auth, {"threadId": tid, "messages": [user("ask ok?")]})
    iid = events[-1]["outcome"]["interrupts"][0]["id"]
    entry = {"interruptId": iid, "status": "cancelled"}
    events, _ = agui(http, urls, auth, {"threadId": tid, "resume": entry})  # one entry as an object
    assert events[-1]["result"] == "answer: " + json.dumps(entry, sort_keys=True, separators=(",", ":"))


def test_invalid_request_without_user_message_or_resume(http, urls, auth):
    for body in ({}, {"messages": []}, {"messages": [{"id": "a", "role": "assistant", "content": "x"}]},
                 {"messages": [], "resume": []}):
        error_body_ok(http.post(urls["agui"], json=body, headers=auth), 400, "invalid_request")


@pytest.mark.parametrize("body", [
    {"threadId": "", "messages": [user("x")]},
    {"threadId": "x" * 257, "messages": [user("x")]},
    {"threadId": 1, "messages": [user("x")]},
    {"runId": 5, "messages": [user("x")]},
    {"messages": "say x"},
    {"messages": [1]},
    {"messages": [{"id": "a", "content": "x"}]},
    {"messages": [{"id": "a", "role": "user", "content": 5}]},
    {"resume": "x"},
    {"resume": [{"interruptId": 1, "status": "resolved"}]},
    {"resume": [{"interruptId": "a", "status": "maybe"}]},
])
def test_validation(http, urls, auth, body):
    error_body_ok(http.post(urls["agui"], json=body, headers=auth), 400, "validation_failed")


def test_refusals_before_stream(http, urls, auth, facts):
    error_body_ok(http.post(urls["agui"], json={"messages": [user("x")]}), 401, "unauthenticated")
    other = urls["agui"].replace(facts["agent_id"], "agt_unknown")
    error_body_ok(http.post(other, json={"messages": [user("x")]}, headers=auth), 404, "not_found")
    error_body_ok(http.post(urls["agui"], content=b"nope", headers={**auth, "Content-Type": "application/json"}), 400)
    error_body_ok(http.post(urls["agui"], json={"messages": [user("x" * 1_000_001)]}, headers=auth), 413)


def test_content_parts_prompt(http, urls, auth):
    msg = {"id": "a", "role": "user", "content": [{"type": "text", "text": "say "}, {"type": "text", "text": "hi"}]}
    events, _ = agui(http, urls, auth, {"messages": [msg]})
    assert events[-1]["result"] == "hi"


def test_run_agent_input_from_sdk(http, urls, auth):
    inp = m.RunAgentInput(thread_id="t-" + uuid.uuid4().hex, run_id="r", messages=[
        m.UserMessage(id="1", content="say sdk")], tools=[], context=[], state={}, forwarded_props={})
    events, _ = agui(http, urls, auth, inp.model_dump(by_alias=True, mode="json"))
    assert events[-1]["result"] == "sdk"


def test_thread_shares_session_with_invoke(http, urls, auth):
    key = "shared-" + uuid.uuid4().hex
    assert http.post(urls["invoke"], json={"prompt": "count", "sessionId": key}, headers=auth).json()["result"] == "1"
    events, _ = agui(http, urls, auth, {"threadId": key, "messages": [user("count")]})
    assert events[-1]["result"] == "2"


