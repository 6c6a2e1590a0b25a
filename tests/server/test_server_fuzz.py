"""Generated bodies and headers against every endpoint: never a 5xx, always a well-formed answer."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.server.testing import error_body_ok

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)

safe_prompt = st.text(max_size=40).filter(lambda s: "sleep" not in s)
invoke_bodies = st.fixed_dictionaries({}, optional={
    "prompt": safe_prompt | json_values, "sessionId": st.text(max_size=300) | json_values,
    "stream": st.booleans() | json_values, "messages": json_values, "data": json_values,
})
agui_bodies = st.fixed_dictionaries({}, optional={
    "threadId": st.text(max_size=300) | json_values, "runId": json_values,
    "messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]) | json_values,
                                                "content": safe_prompt | json_values}), max_size=3) | json_values,
    "resume": json_values,
})
mcp_bodies = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.just("2.0") | json_values, "id": st.integers() | st.text(max_size=5) | json_values,
    "method": st.sampled_from(["tools/call", "tools/list", "server/discover", "initialize", "x"]) | json_values,
    "params": st.fixed_dictionaries({}, optional={
        "name": st.just("ask_conformance_agent") | json_values,
        "arguments": st.fixed_dictionaries({}, optional={"prompt": safe_prompt | json_values,
                                                         "session_id": json_values, "resume": json_values}),
        "_meta": st.fixed_dictionaries({}, optional={
            "io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "2025-11-25", "x"]),
            "io.modelcontextprotocol/clientCapabilities": json_values,
            "progressToken": json_values}),
        "requestState": json_values, "inputResponses": json_values,
    }) | json_values,
})

raw_bodies = st.binary(max_size=200)
content_types = st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", None,
                                 "application/x-www-form-urlencoded"])
versions = st.sampled_from(["2026-07-28", "2025-11-25", "1.0", "", None])
methods_h = st.sampled_from(["tools/call", "tools/list", "server/discover", "", None])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def build_headers(facts, auth_kind, ctype, extra=None):
    h = {}
    if auth_kind == "key":
        h["Authorization"] = f"Bearer {facts['api_key']}"
    elif auth_kind == "token":
        h["Authorization"] = f"Bearer {facts['access_token']}"
    elif auth_kind == "junk":
        h["Authorization"] = "Bearer junk"
    if ctype is not None:
        h["Content-Type"] = ctype
    for k, v in (extra or {}).items():
        if v is not None:
            h[k] = v
    return h


def check_rest(r):
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        error_body_ok(r)
    else:
        assert r.status_code == 200
        ctype = r.headers["content-type"]
        assert ctype.startswith(("application/json", "text/event-stream"))
        if ctype.startswith("application/json"):
            json.loads(r.text)


def check_mcp(r):
    assert r.status_code < 500, r.text
    if r.status_code == 202:
        assert r.content == b""
        return
    if r.headers["content-type"].startswith("text/event-stream"):
        assert r.status_code == 200
        return
    body = r.json()
    assert body["jsonrpc"] == "2.0" and "id" in body
    if r.status_code >= 400:
        assert isinstance(body["error"]["code"], int) and isinstance(body["error"]["message"], str)
    else:
        assert ("result" in body) != ("error" in body)


auth_kinds = st.sampled_from(["key", "key", "key", "token", "junk", None])


@pytest.mark.parametrize("op", ["invoke", "agui"])
@SETTINGS
@given(data=st.data())
def test_rest_endpoints(http, urls, facts, op, data):
    body = data.draw(invoke_bodies if op == "invoke" else agui_bodies)
    raw = data.draw(st.booleans())
    content = data.draw(raw_bodies) if raw else json.dumps(body).encode()
    h = build_headers(facts, data.draw(auth_kinds), data.draw(content_types),
                      {"Accept": data.draw(st.sampled_from([None, "text/event-stream", "*/*", "text/html"]))})
    check_rest(http.post(urls[op], content=content, headers=h, timeout=10))


@SETTINGS
@given(data=st.data())
def test_mcp_endpoint(http, urls, facts, data):
    body = data.draw(mcp_bodies)
    raw = data.draw(st.booleans().filter(lambda b: True))
    content = data.draw(raw_bodies) if raw and data.draw(st.integers(0, 4)) == 0 else json.dumps(body).encode()
    name = data.draw(st.sampled_from([None, "ask_conformance_agent", "other"]))
    h = build_headers(facts, data.draw(auth_kinds), data.draw(content_types), {
        "MCP-Protocol-Version": data.draw(versions), "Mcp-Method": data.draw(methods_h), "Mcp-Name": name,
        "Accept": "application/json, text/event-stream"})
    check_mcp(http.post(urls["mcp"], content=content, headers=h, timeout=10))


@SETTINGS
@given(agent=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789", max_size=20),
       method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE"]))
def test_metadata_and_paths(http, facts, agent, method):
    base = facts["base_url"]
    for path in (f"/.well-known/oauth-protected-resource/v1/agents/{agent}/mcp", f"/v1/agents/{agent}/invoke",
                 f"/v1/agents/{agent}", "/"):
        r = http.request(method, base + path, timeout=10)
        assert r.status_code < 500
        if method != "HEAD" and r.status_code >= 400:
            if path.endswith("/mcp") and path.startswith("/v1"):
                continue
            error_body_ok(r)
