from __future__ import annotations

import json
import time
import uuid

import pytest

from conformance.server.testing import error_body_ok, sse_frames

INVOKE_FIELDS = {"status", "result", "events", "sessionId", "agentId", "versionNumber", "requestId", "durationMs"}
EVENT_TYPES = {"text", "tool_call_start", "tool_result", "step_start", "step_end", "interrupt", "done", "error"}


def sid() -> str:
    return "s-" + uuid.uuid4().hex


def test_plain_reply(http, urls, auth, facts):
    r = http.post(urls["invoke"], json={"prompt": "say conformance"}, headers=auth)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == INVOKE_FIELDS
    assert body["status"] == "completed" and body["result"] == "conformance" and body["events"] == []
    assert body["agentId"] == facts["agent_id"]
    assert isinstance(body["versionNumber"], int) and isinstance(body["durationMs"], int)
    assert body["requestId"].startswith("req_")
    assert 1 <= len(body["sessionId"]) <= 256
    assert r.headers["x-ratelimit-remaining"].isdigit()


def test_echo_mode(http, urls, auth):
    prompt = "Hello there,\r\nhow are you?\n"
    assert http.post(urls["invoke"], json={"prompt": prompt}, headers=auth).json()["result"] == prompt


def test_events_tools_steps_not_text(http, urls, auth):
    body = http.post(urls["invoke"], json={"prompt": 'tool lookup {"q":"x"}\nstep plan\nsay done'},
                     headers=auth).json()
    assert body["result"] == "done"
    types = [e["type"] for e in body["events"]]
    assert types == ["tool_call_start", "tool_result", "step_start", "step_end"]
    assert all(e["v"] == 1 for e in body["events"])
    assert body["events"][0]["name"] == "lookup" and body["events"][1]["result"] == '{"q":"x"}'
    assert body["events"][2]["name"] == "plan"


def test_failure_non_streaming(http, urls, auth):
    body = http.post(urls["invoke"], json={"prompt": "say partial\nfail boom"}, headers=auth).json()
    assert body["status"] == "failed" and body["result"] == "partial"
    assert body["error"]["message"] == "boom" and isinstance(body["error"]["code"], str)
    bad = http.post(urls["invoke"], json={"prompt": "say x\nnonsense"}, headers=auth).json()
    assert bad["status"] == "failed" and "line 2" in bad["error"]["message"]


def test_duration_is_real(http, urls, auth):
    body = http.post(urls["invoke"], json={"prompt": "sleep 0.3\nsay awake"}, headers=auth).json()
    assert body["durationMs"] >= 300 and body["result"] == "awake"


def test_stream_selected_by_flag_and_accept(http, urls, auth):
    r = http.post(urls["invoke"], json={"prompt": "chunks 5 hello, conformance", "stream": True}, headers=auth)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    frames = sse_frames(r.text)
    assert [f["event"] for f in frames] == ["text"] * 5 + ["done"]
    assert all(f["event"] == f["data"]["type"] and f["data"]["v"] == 1 for f in frames)
    assert "".join(f["data"]["delta"] for f in frames[:-1]) == "hello, conformance"
    done = frames[-1]["data"]
    assert done["status"] == "completed" and done["sessionId"]

    r = http.post(urls["invoke"], json={"prompt": "say x"}, headers={**auth, "Accept": "text/event-stream"})
    assert r.headers["content-type"].startswith("text/event-stream")
    r = http.post(urls["invoke"], json={"prompt": "say x", "stream": False},
                  headers={**auth, "Accept": "text/event-stream"})
    assert r.headers["content-type"].startswith("application/json") and r.json()["result"] == "x"


def test_stream_failure_after_output(http, urls, auth):
    r = http.post(urls["invoke"], json={"prompt": "say partial\nfail boom", "stream": True}, headers=auth)
    assert r.status_code == 200
    frames = sse_frames(r.text)
    assert [f["event"] for f in frames] == ["text", "error"]
    assert frames[-1]["data"]["message"] == "boom"


def test_stream_all_event_types(http, urls, auth):
    prompt = 'say a\ntool lookup {"q":"x"}\nstep plan\nask why?'
    frames = sse_frames(http.post(urls["invoke"], json={"prompt": prompt, "stream": True}, headers=auth).text)
    types = [f["event"] for f in frames]
    assert types == ["text", "tool_call_start", "tool_result", "step_start", "step_end", "interrupt", "done"]
    assert set(types) <= EVENT_TYPES
    assert frames[5]["data"]["question"] == "why?"


def test_ask_over_invoke_completes(http, urls, auth):
    body = http.post(urls["invoke"], json={"prompt": "say hi\nask What is your name?\nsay thanks"},
                     headers=auth).json()
    assert body["status"] == "completed" and body["result"] == "hi"
    assert body["events"][0]["type"] == "interrupt" and body["events"][0]["question"] == "What is your name?"


def test_exact_text_round_trip(http, urls, auth):
    text = "a\nb\r\nc\rd\t\"q\" 😀 \u2028 \u0000 é"
    for stream in (False, True):
        r = http.post(urls["invoke"], json={"prompt": "say-json " + json.dumps(text), "stream": stream},
                      headers=auth)
        if stream:
            got = "".join(f["data"]["delta"] for f in sse_frames(r.text) if f["event"] == "text")
        else:
            got = r.json()["result"]
        assert got == text


def test_params_pass_through(http, urls, auth, facts):
    field = facts["extra_data_field"]
    body = {"prompt": "echo params", "sessionId": sid(), "stream": False, "messages": [],
            field: {"k": "é", "n": [1, 2]}, "other": None}
    result = http.post(urls["invoke"], json=body, headers=auth).json()["result"]
    assert json.loads(result) == {field: {"k": "é", "n": [1, 2]}, "other": None}
    assert result == json.dumps(json.loads(result), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_messages_pass_through(http, urls, auth):
    msgs = [{"role": "user", "content": "earlier"}, {"any": ["shape"]}]
    result = http.post(urls["invoke"], json={"prompt": "echo messages", "messages": msgs}, headers=auth).json()
    assert json.loads(result["result"]) == msgs
    assert http.post(urls["invoke"], json={"prompt": "echo messages"}, headers=auth).json()["result"] == "[]"


def test_session_affinity_and_count(http, urls, auth):
    s = sid()
    counts = [http.post(urls["invoke"], json={"prompt": "count", "sessionId": s}, headers=auth).json()["result"]
              for _ in range(3)]
    assert counts == ["1", "2", "3"]
    assert http.post(urls["invoke"], json={"prompt": "count", "sessionId": sid()}, headers=auth).json()["result"] == "1"
    assert http.post(urls["invoke"], json={"prompt": "count"}, headers=auth).json()["result"] == "1"


@pytest.mark.parametrize("body, field", [
    ({}, "prompt"),
    ({"prompt": 1}, "prompt"),
    ({"prompt": None}, "prompt"),
    ({"prompt": "x", "sessionId": ""}, "sessionId"),
    ({"prompt": "x", "sessionId": "x" * 257}, "sessionId"),
    ({"prompt": "x", "sessionId": 5}, "sessionId"),
    ({"prompt": "x", "stream": "true"}, "stream"),
    ({"prompt": "x", "messages": {}}, "messages"),
])
def test_validation_failed(http, urls, auth, body, field):
    err = error_body_ok(http.post(urls["invoke"], json=body, headers=auth), 400, "validation_failed")
    assert isinstance(err["details"], dict)
    assert field in json.dumps(err["details"])


def test_refusal_never_starts_a_run(http, urls, auth):
    s = sid()
    http.post(urls["invoke"], json={"prompt": "count", "sessionId": s}, headers=auth)
    error_body_ok(http.post(urls["invoke"], json={"prompt": "count", "sessionId": s, "stream": 1}, headers=auth), 400)
    error_body_ok(http.post(urls["invoke"], json={"prompt": "count", "sessionId": s, "data": "x" * 5000},
                            headers=auth), 400)
    error_body_ok(http.post(urls["invoke"], json={"prompt": "count", "sessionId": s}), 401)
    assert http.post(urls["invoke"], json={"prompt": "count", "sessionId": s}, headers=auth).json()["result"] == "2"


def test_session_key_bounds(http, urls, auth):
    for key in ("a", "k" * 256, "é" * 256, "a\r\nX-Injected: 1", "\ud800"):
        h = {**auth, "Content-Type": "application/json"}
        body = json.dumps({"prompt": "say-json \"\\ud800\"", "sessionId": key})
        r = http.post(urls["invoke"], content=body, headers=h)
        assert r.status_code == 200 and r.json()["sessionId"] == key and "x-injected" not in r.headers
        assert r.json()["result"] == "\ud800"
        for stream in (True,):
            body = json.dumps({"prompt": "count", "sessionId": key, "stream": stream})
            r = http.post(urls["invoke"], content=body, headers=h)
            assert sse_frames(r.text)[-1]["data"]["sessionId"] == key


def test_extra_data_limit(http, urls, auth, facts):
    field = facts["extra_data_field"]
    ok = {"prompt": "say x", field: "a" * (4096 - 2)}  # 4096 bytes with the quotes
    assert http.post(urls["invoke"], json=ok, headers=auth).status_code == 200
    over = {"prompt": "say x", field: "a" * (4096 - 1)}
    err = error_body_ok(http.post(urls["invoke"], json=over, headers=auth), 400, "validation_failed")
    assert field in json.dumps(err["details"])


def test_body_size_limit(http, urls, auth):
    big = {"prompt": "say x", "other": "a" * 1_000_100}
    error_body_ok(http.post(urls["invoke"], json=big, headers=auth), 413)

    def chunked():
        yield b'{"prompt":"say x","other":"'
        for _ in range(110):
            yield b"a" * 10_000
        yield b'"}'

    r = http.post(urls["invoke"], content=chunked(), headers={**auth, "Content-Type": "application/json"})
    error_body_ok(r, 413)


@pytest.mark.parametrize("content, ctype", [
    (b"{not json", "application/json"),
    (b"[1,2]", "application/json"),
    (b'"str"', "application/json"),
    (b'{"prompt":"x","n":NaN}', "application/json"),
    (b'\xff\xfe{"prompt":"x"}', "application/json"),
    (b'{"prompt":"\xc3"}', "application/json"),
    (b"", "application/json"),
    (b'{"prompt":"say x"}', "text/plain"),
    (b'{"prompt":"say x"}', ""),
])
def test_malformed_bodies(http, urls, auth, content, ctype):
    headers = {**auth}
    if ctype:
        headers["Content-Type"] = ctype
    r = http.post(urls["invoke"], content=content, headers=headers)
    error_body_ok(r)


def test_wrong_method(http, urls, auth):
    error_body_ok(http.get(urls["invoke"], headers=auth), 405)


def test_unknown_path(http, facts, auth):
    error_body_ok(http.post(facts["base_url"] + "/v2/agents/x/invoke", json={}, headers=auth), 404, "not_found")


def wait_idle(server, timeout=3.0):
    deadline = time.monotonic() + timeout
    while server.inflight and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.inflight


@pytest.mark.parametrize("stream", [True, False])
def test_disconnect_cancels_run(server, facts, urls, auth, stream):
    import httpx, ssl
    assert wait_idle(server) == 0
    with httpx.Client(verify=ssl.create_default_context(cafile=facts["ca_bundle"])) as c:
        body = {"prompt": "say a\nsleep 60\nsay b", "stream": stream}
        if stream:
            with c.stream("POST", urls["invoke"], json=body, headers=auth) as r:
                lines = r.iter_lines()
                while not next(lines).startswith("data:"):
                    pass
                time.sleep(0.1)
                assert server.inflight == 1  # the run is sleeping
        else:
            with pytest.raises(httpx.ReadTimeout):
                c.post(urls["invoke"], json=body, headers=auth, timeout=0.3)
    assert wait_idle(server) == 0
