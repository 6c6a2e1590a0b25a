from __future__ import annotations

import json
import ssl
import uuid

import pytest
from mcp_types import methods as mcp_methods

from conformance.server.testing import jsonrpc_error_ok, sse_frames

V = "2026-07-28"
LEGACY = "2025-11-25"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"


def rpc(method, params=None, id_=1, caps=None, version=V, extra_meta=None):
    params = dict(params or {})
    if version is not None:
        params["_meta"] = {PV: version, CAPS: caps or {}, **(extra_meta or {})}
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def headers(auth, method, version=V, name=None):
    h = {**auth, "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version,
         "Mcp-Method": method}
    if name:
        h["Mcp-Name"] = name
    return h


def call(http, urls, auth, facts, args, caps=None, extra_meta=None, params_extra=None):
    tool = facts["tool_name"]
    body = rpc("tools/call", {"name": tool, "arguments": args, **(params_extra or {})}, caps=caps,
               extra_meta=extra_meta)
    return http.post(urls["mcp"], json=body, headers=headers(auth, "tools/call", name=tool))


def result_of(r, method="tools/call", version=V):
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["jsonrpc"] == "2.0" and "result" in body
    mcp_methods.validate_server_result(method, version, body["result"])
    return body["result"]


def test_discover_and_list(http, urls, auth, facts):
    res = result_of(http.post(urls["mcp"], json=rpc("server/discover"), headers=headers(auth, "server/discover")),
                    "server/discover")
    assert V in res["supportedVersions"] and res["resultType"] == "complete"
    res = result_of(http.post(urls["mcp"], json=rpc("tools/list"), headers=headers(auth, "tools/list")), "tools/list")
    (tool,) = res["tools"]
    assert tool["name"] == "ask_conformance_agent" == facts["tool_name"]
    assert set(tool["inputSchema"]["properties"]) == {"prompt", "session_id", "resume"}


def test_call(http, urls, auth, facts):
    res = result_of(call(http, urls, auth, facts, {"prompt": "say conformance"}))
    assert res["content"] == [{"type": "text", "text": "conformance"}]
    assert res["resultType"] == "complete" and res["isError"] is False and res["structuredContent"]["sessionId"]


def test_call_failure_is_tool_result(http, urls, auth, facts):
    res = result_of(call(http, urls, auth, facts, {"prompt": "say partial\nfail boom"}))
    assert res["isError"] is True and res["content"][0]["text"] == "boom"


def test_session_and_params(http, urls, auth, facts):
    s = "m-" + uuid.uuid4().hex
    for n in ("1", "2"):
        res = result_of(call(http, urls, auth, facts, {"prompt": "count", "session_id": s}))
        assert res["content"][0]["text"] == n and res["structuredContent"]["sessionId"] == s
    res = result_of(call(http, urls, auth, facts, {"prompt": "echo params", "extra": [1]}))
    assert json.loads(res["content"][0]["text"]) == {"extra": [1]}


def test_progress_stream(http, urls, auth, facts):
    r = call(http, urls, auth, facts, {"prompt": "chunks 3 abc\nstep plan"}, extra_meta={"progressToken": "tok"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    frames = sse_frames(r.text)
    assert all(f["event"] == "message" for f in frames)
    notes = [f["data"] for f in frames[:-1]]
    assert [n["method"] for n in notes] == ["notifications/progress"] * 4
    progress = [n["params"]["progress"] for n in notes]
    assert progress == sorted(progress) and len(set(progress)) == 4
    assert all(n["params"]["progressToken"] == "tok" and isinstance(n["params"]["message"], str) for n in notes)
    last = frames[-1]["data"]
    assert last["id"] == 1 and last["result"]["content"][0]["text"] == "abc"


def test_elicitation_flow(http, urls, auth, facts):
    s = "m-" + uuid.uuid4().hex
    caps = {"elicitation": {"form": {}}}
    args = {"prompt": "say before\nask What is your name?\nsay thanks", "session_id": s}
    res = result_of(call(http, urls, auth, facts, args, caps=caps))
    assert res["resultType"] == "input_required"
    (key, req), = res["inputRequests"].items()
    assert req["method"] == "elicitation/create" and req["params"]["message"] == "What is your name?"
    answer = {key: {"action": "accept", "content": {"answer": "Bob"}}}
    res = result_of(call(http, urls, auth, facts, args, caps=caps,
                         params_extra={"inputResponses": answer, "requestState": res["requestState"]}))
    assert res["resultType"] == "complete"
    assert res["content"][0]["text"] == 'beforeanswer: {"answer":"Bob"}thanks'


def test_question_as_text_and_resume(http, urls, auth, facts):
    s = "m-" + uuid.uuid4().hex
    res = result_of(call(http, urls, auth, facts, {"prompt": "ask What is your name?\nsay thanks",
                                                   "session_id": s}))
    assert res["resultType"] == "complete" and "What is your name?" in res["content"][0]["text"]
    res = result_of(call(http, urls, auth, facts, {"session_id": s, "resume": "Bob"}))
    assert res["content"][0]["text"] == 'answer: "Bob"thanks'
    jsonrpc_error_ok(call(http, urls, auth, facts, {"session_id": s, "resume": "again"}), 400, -32602)


def test_legacy_handshake(http, urls, auth, facts):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    r = http.post(urls["mcp"], json=init, headers={**auth, "Accept": "application/json, text/event-stream"})
    assert r.status_code == 200 and r.json()["result"]["protocolVersion"] == LEGACY
    h = {**auth, "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LEGACY}
    r = http.post(urls["mcp"], json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
    assert r.status_code == 202
    r = http.post(urls["mcp"], json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h)
    assert r.json()["result"]["tools"][0]["name"] == facts["tool_name"]
    r = http.post(urls["mcp"], json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": facts["tool_name"], "arguments": {"prompt": "say legacy"}}}, headers=h)
    assert r.json()["result"]["content"][0]["text"] == "legacy"


def test_version_refusals(http, urls, auth):
    data = jsonrpc_error_ok(http.post(urls["mcp"], json=rpc("tools/list", version="1999-01-01"),
                                      headers=headers(auth, "tools/list", version="1999-01-01")), 400, -32022)
    assert V in data["error"]["data"]["supported"] and LEGACY in data["error"]["data"]["supported"]
    assert data["error"]["data"]["requested"] == "1999-01-01"
    # header does not match _meta
    body = rpc("tools/list", version=LEGACY)
    jsonrpc_error_ok(http.post(urls["mcp"], json=body, headers=headers(auth, "tools/list")), 400, -32022)
    # Mcp-Method does not match
    jsonrpc_error_ok(http.post(urls["mcp"], json=rpc("tools/list"), headers=headers(auth, "server/discover")),
                     400, -32022)
    # Mcp-Name does not match
    body = rpc("tools/call", {"name": "ask_conformance_agent", "arguments": {"prompt": "x"}})
    jsonrpc_error_ok(http.post(urls["mcp"], json=body, headers=headers(auth, "tools/call", name="other")),
                     400, -32022)
    # initialize at an unsupported version
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2024-11-05",
                                                                          "capabilities": {}}}
    jsonrpc_error_ok(http.post(urls["mcp"], json=init, headers=auth), 400, -32022)


def test_auth_refusals(http, urls, auth, facts):
    expected = (f'Bearer resource_metadata="{facts["base_url"]}/.well-known/oauth-protected-resource/v1/agents/'
                f'{facts["agent_id"]}/mcp", scope="agent:invoke"')
    h = headers(auth, "tools/list")
    for cred in (None, "ais_live_unknown", facts["revoked_key"], facts["expired_token"]):
        hh = {k: v for k, v in h.items() if k != "Authorization"}
        if cred:
            hh["Authorization"] = f"Bearer {cred}"
        r = http.post(urls["mcp"], json=rpc("tools/list", id_="abc"), headers=hh)
        body = jsonrpc_error_ok(r, 401, -32600)
        assert r.headers["www-authenticate"] == expected and body["id"] == "abc"
    tok = {**h, "Authorization": f"Bearer {facts['access_token']}"}
    assert http.post(urls["mcp"], json=rpc("tools/list"), headers=tok).status_code == 200
    other = urls["mcp"].replace(facts["agent_id"], facts["other_agent_id"])
    jsonrpc_error_ok(http.post(other, json=rpc("tools/list"), headers=tok), 404, -32600)
    assert http.post(other, json=rpc("tools/list"), headers=h).status_code == 200
    for agent in (facts["undeployed_agent_id"], "agt_nope"):
        jsonrpc_error_ok(http.post(urls["mcp"].replace(facts["agent_id"], agent), json=rpc("tools/list"),
                                   headers=h), 404, -32600)


def test_protocol_refusals(http, urls, auth, facts):
    h = headers(auth, "tools/list")
    jsonrpc_error_ok(http.post(urls["mcp"], content=b"{bad", headers={**h, "Content-Type": "application/json"}),
                     400, -32700)
    jsonrpc_error_ok(http.post(urls["mcp"], json=[rpc("tools/list")], headers=h), 400, -32600)
    jsonrpc_error_ok(http.post(urls["mcp"], content=b"{}", headers={**h, "Content-Type": "text/plain"}), 415, -32005)
    jsonrpc_error_ok(http.post(urls["mcp"], json=rpc("nope/nope"), headers=headers(auth, "nope/nope")), 404, -32601)
    body = rpc("tools/call", {"name": "wrong_tool", "arguments": {}})
    jsonrpc_error_ok(http.post(urls["mcp"], json=body, headers=headers(auth, "tools/call")), 400, -32602)
    jsonrpc_error_ok(call(http, urls, auth, facts, {"prompt": 5}), 400, -32602)
    jsonrpc_error_ok(call(http, urls, auth, facts, {}), 400, -32602)
    r = http.get(urls["mcp"], headers=h)
    jsonrpc_error_ok(r, 405, -32600)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_official_sdk_client(facts, mode):
    import anyio
    import httpx2
    import mcp_types as types
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    url = f"{facts['base_url']}/v1/agents/{facts['agent_id']}/mcp"
    seen = []

    async def elicit(ctx, params):
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "Bob"})

    async def main():
        async with httpx2.AsyncClient(verify=ssl.create_default_context(cafile=facts["ca_bundle"]),
                                      headers={"Authorization": f"Bearer {facts['api_key']}"}) as hc:
            client = Client(streamable_http_client(url, http_client=hc), mode="auto" if mode != "legacy" else mode,
                            elicitation_callback=elicit)
            async with client as c:
                tools = await c.list_tools()
                assert [t.name for t in tools.tools] == [facts["tool_name"]]
                r = await c.call_tool(facts["tool_name"], {"prompt": "say hi"})
                assert r.content[0].text == "hi" and not r.is_error
                progress = []

                async def on_progress(p, total, message):
                    progress.append((p, message))

                r = await c.call_tool(facts["tool_name"], {"prompt": "chunks 2 ab"}, progress_callback=on_progress)
                assert r.content[0].text == "ab" and [m for _, m in progress] == ["a", "b"]
                r = await c.call_tool(facts["tool_name"], {"prompt": "ask name?\nsay ok", "session_id": "sdk-" + mode})
                if mode == "legacy":
                    assert r.content[0].text == "name?"
                    r = await c.call_tool(facts["tool_name"], {"session_id": "sdk-" + mode, "resume": "Al"})
                    assert r.content[0].text == 'answer: "Al"ok'
                else:
                    assert seen == ["name?"]
                    assert r.content[0].text == 'answer: {"answer":"Bob"}ok'

    anyio.run(main)
