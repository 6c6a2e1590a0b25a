"""The middleware builders, driven in-process (fake ASGI apps) and once over the reference server."""
from __future__ import annotations

import asyncio
import json
import ssl
import time

import httpx
import pytest

from tests.selftest import asgi_tools as t

pytestmark = pytest.mark.xdist_group("asgi_tools")

INVOKE = "/v1/agents/agt_1/invoke"


def scope_for(path: str, headers=None) -> dict:
    return {"type": "http", "method": "POST", "path": path, "headers": headers or []}


async def call(app, path: str, body: bytes = b"", headers=None):
    """Runs ``app`` once; returns (start message, body bytes, [(time, chunk)])."""
    sent: list[dict] = []
    chunks: list[tuple[float, bytes]] = []
    parts = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        if parts:
            return parts.pop(0)
        await asyncio.sleep(3600)

    async def send(msg):
        sent.append(msg)
        if msg["type"] == "http.response.body":
            chunks.append((time.monotonic(), msg.get("body", b"")))

    await app(scope_for(path, headers), receive, send)
    start = sent[0]
    assert start["type"] == "http.response.start"
    assert sent[-1].get("more_body", False) is False
    return start, b"".join(c for _, c in chunks), chunks


def json_app(obj, status=200, seen=None):
    async def app(scope, receive, send):
        msg = await receive()
        if seen is not None:
            seen.append((scope, msg["body"]))
        body = json.dumps(obj).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        half = len(body) // 2
        await send({"type": "http.response.body", "body": body[:half], "more_body": True})
        await send({"type": "http.response.body", "body": body[half:], "more_body": False})
    return app


def sse_app(pieces: list[bytes], pause: float = 0.0):
    async def app(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8")]})
        for p in pieces:
            await send({"type": "http.response.body", "body": p, "more_body": True})
            if pause:
                await asyncio.sleep(pause)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    return app


def run(coro):
    return asyncio.run(coro)


def test_path_kinds():
    assert t.path_kind("/v1/agents/agt_x/invoke") == "invoke"
    assert t.path_kind("/v1/agents/agt_x/agui") == "agui"
    assert t.path_kind("/v1/agents/agt_x/mcp") == "mcp"
    assert t.path_kind("/.well-known/oauth-protected-resource/v1/agents/agt_x/mcp") == "metadata"
    assert t.path_kind("/v1/agents/agt_x/other") is None
    with pytest.raises(ValueError):
        t.rewrite_headers(json_app({}), lambda h, s, st: h, where="invok")


def test_rewrite_request_json_changes_body_and_length():
    seen = []
    app = t.rewrite_request_json(json_app({}, seen=seen), lambda body, scope: {**body, "x": 1}, where="invoke")
    run(call(app, INVOKE, b'{"prompt":"hi"}', [(b"content-length", b"15")]))
    scope, body = seen[0]
    assert json.loads(body) == {"prompt": "hi", "x": 1}
    assert t.header(scope["headers"], "content-length") == str(len(body)).encode()


def test_rewrite_request_json_leaves_non_json_and_other_paths():
    seen, got = [], []
    app = t.rewrite_request_json(json_app({}, seen=seen), lambda body, scope: got.append(body), where="invoke")
    run(call(app, INVOKE, b"not json"))
    run(call(app, "/v1/agents/agt_1/agui", b'{"a":1}'))
    assert [b for _, b in seen] == [b"not json", b'{"a":1}']
    assert got == [None]


def test_rewrite_json_response_object_and_status():
    def fn(obj, scope, status, headers):
        obj["extra"] = True
        return 201, headers, obj

    start, body, _ = run(call(t.rewrite_json_response(json_app({"a": 1}), fn), INVOKE))
    assert start["status"] == 201 and json.loads(body) == {"a": 1, "extra": True}
    assert t.header(start["headers"], "content-length") == str(len(body)).encode()


def test_rewrite_headers_and_small_helpers():
    app = t.chain(json_app({"a": 1}),
                  lambda a: t.set_header(a, "X-Test", "1"),
                  lambda a: t.drop_header(a, "content-type"),
                  lambda a: t.replace_status(a, 418, where="invoke"))
    start, body, _ = run(call(app, INVOKE))
    assert start["status"] == 418
    assert t.header(start["headers"], "x-test") == b"1" and t.header(start["headers"], "content-type") is None
    start, _, _ = run(call(t.respond(json_app({}), 404, {"error": 1}, where="invoke"), INVOKE))
    assert start["status"] == 404


def test_split_blocks_line_endings():
    blocks, rest = t.split_blocks(b"data: 1\n\n: ping\r\n\r\ndata: 2\r\rdata: 3\n")
    assert blocks == [b"data: 1\n\n", b": ping\r\n\r\n", b"data: 2\r\r"] and rest == b"data: 3\n"
    blocks, rest = t.split_blocks(b"data: 1\r\n\r")  # the last CR may start a CRLF
    assert blocks == [] and rest == b"data: 1\r\n\r"
    assert t.split_blocks(b"data: 1\r\n\r", final=True)[0] == [b"data: 1\r\n\r"]


def test_sse_helpers_round_trip():
    block = t.make_block({"type": "text", "delta": "é"}, "text")
    assert t.sse_json(block) == ("text", {"type": "text", "delta": "é"})
    assert t.sse_json(b": ping\n\n") == (None, None) and t.is_comment(b": ping\n\n")


def test_rewrite_sse_blocks_split_across_chunks_and_end_call():
    pieces = [b"event: text\ndata: {\"a\"", b":1}\n\n: pi", b"ng\n\nevent: done\ndata: {}\n\n"]
    seen = []

    def fn(block, state, scope):
        seen.append(block)
        if block is None:
            return b": bye\n\n"
        if block.startswith(b":"):
            return None
        return [block, block]

    start, body, _ = run(call(t.rewrite_sse(sse_app(pieces), fn), INVOKE))
    assert seen == [b"event: text\ndata: {\"a\":1}\n\n", b": ping\n\n", b"event: done\ndata: {}\n\n", None]
    assert body == (b"event: text\ndata: {\"a\":1}\n\n" * 2 + b"event: done\ndata: {}\n\n" * 2 + b": bye\n\n")


def test_rewrite_sse_preserves_timing():
    pieces = [b"data: 1\n\n", b": ping\n\n", b"data: 2\n\n"]
    _, _, chunks = run(call(t.rewrite_sse(sse_app(pieces, pause=0.3), lambda b, s, sc: b), INVOKE))
    times = [ts for ts, c in chunks if c]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.25 and times[2] - times[1] >= 0.25


def test_rewrite_sse_json_edits_events():
    pieces = [b"event: text\ndata: {\"delta\":\"ab\"}\n\n", b": ping\n\n", b"event: done\ndata: {}\n\n"]

    def fn(event, obj, state, scope):
        if event == "text":
            return [{"delta": "a"}, ("text", {"delta": "b"})]
        return obj

    _, body, _ = run(call(t.rewrite_sse_json(sse_app(pieces), fn), INVOKE))
    assert body == (b'event: text\ndata: {"delta":"a"}\n\nevent: text\ndata: {"delta":"b"}\n\n'
                    b': ping\n\nevent: done\ndata: {}\n\n')


def test_over_the_reference_server():
    """The middleware composes with the real app: request rewrite, JSON rewrite, SSE rewrite."""
    from conformance.server import ReferenceServer, ServerConfig

    def wrap(app, facts):
        app = t.rewrite_request_json(app, lambda b, s: {**b, "prompt": "say rewritten"}, where="invoke")
        app = t.rewrite_json_response(app, lambda o, s, st, h: {**o, "added": 1}, where="invoke")
        return t.rewrite_sse(app, lambda b, st, s: b.replace(b"\n", b"\r\n") if b else None, where="invoke")

    with ReferenceServer(ServerConfig(wrap_app=wrap)) as srv:
        f = srv.facts
        url = f"{f['base_url']}/v1/agents/{f['agent_id']}/invoke"
        auth = {"Authorization": f"Bearer {f['api_key']}"}
        with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
            r = c.post(url, json={"prompt": "say x"}, headers=auth)
            assert r.status_code == 200 and r.json()["result"] == "rewritten" and r.json()["added"] == 1
            r = c.post(url, json={"prompt": "say x", "stream": True}, headers=auth)
            assert r.status_code == 200 and b"\r\n\r\n" in r.content and b"rewritten" in r.content


def test_rewrite_body_raw_bytes_and_sse_untouched():
    app = t.rewrite_body(json_app({"a": 1}), lambda raw, scope, status, headers: (500, headers, raw + b"\xff"))
    start, body, _ = run(call(app, INVOKE))
    assert start["status"] == 500 and body == b'{"a": 1}\xff'
    assert t.header(start["headers"], "content-length") == str(len(body)).encode()
    _, body, _ = run(call(t.rewrite_body(sse_app([b"data: 1\n\n"]), lambda *a: b"x"), INVOKE))
    assert body == b"data: 1\n\n"
