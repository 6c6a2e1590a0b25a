"""Broken servers that go wrong on what the spec leaves free in a request, on requests whose scenario does not care
about it: an AG-UI client's passed fields, an invoke field the service does not interpret, a client that can elicit
on a run that never pauses, a string JSON-RPC id, the access token on the tool's description, a refusal given on one
MCP method only. The run varies these over the requests it sends anyway (`vocab.forms.shape`), so the rules over
every exchange meet them wherever they show.
"""
from __future__ import annotations

import json

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken

NOTED = "conformance.zoo.bodies.noted"
CAPS = "io.modelcontextprotocol/clientCapabilities"
VERSION = "io.modelcontextprotocol/protocolVersion"


def _params(body) -> dict:
    params = body.get("params") if isinstance(body, dict) else None
    return params if isinstance(params, dict) else {}


def _when(condition, where):
    """A wrap that notes on the scope the requests of `where` whose JSON body meets `condition(body, facts)`."""
    def note(app, facts):
        def read(body, scope):
            if condition(body, facts):
                scope[NOTED] = True
            return None
        return t.rewrite_request_json(app, read, where=where)
    return note


def _json_error(status: int, body: dict, extra: list | None = None):
    raw = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()), *(extra or [])]
    return status, headers, raw


async def _answer(send, status, headers, raw) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw, "more_body": False})


@broken("AGUI-FRAME-001", name="AGUI-FRAME-001-refuses-a-run-with-context")
def refuses_context(app, facts):
    """An AG-UI request whose `context` holds entries is refused 400 `validation_failed` (a validator written for an
    older input shape): right on every request with no context or an empty one."""
    async def middleware(scope, receive, send):
        if t.matches(scope, "agui"):
            raw, pending = await t._read_all(receive)
            ok, body = t._loads(raw)
            if ok and isinstance(body, dict) and body.get("context"):
                return await _answer(send, *_json_error(400, {"error": {
                    "code": "validation_failed", "message": "context: unexpected", "requestId": "req_zoo",
                    "details": {"context": "unexpected"}}}))
            return await app(scope, t._replay(raw, pending, receive), send)
        return await app(scope, receive, send)
    return middleware


@broken("INV-RES-003", name="INV-RES-003-result-quoted-when-an-unread-field-is-sent")
def quoted_with_other_field(app, facts):
    """A JSON invoke result of a request carrying a field the service does not interpret has its `result` in quotes
    (the field taken for an output format): right on every request without one."""
    known = {"prompt", "stream", "sessionId", "messages", facts.get("extra_data_field")}

    def quote(obj, scope, status, headers):
        if scope.get(NOTED) and isinstance(obj, dict) and isinstance(obj.get("result"), str):
            obj["result"] = json.dumps(obj["result"])
        return obj
    note = _when(lambda body, f: isinstance(body, dict) and set(body) - known, "invoke")
    return note(t.rewrite_json_response(app, quote, where="invoke"), facts)


@broken("MCP-TOOL-002", name="MCP-TOOL-002-text-trimmed-for-a-client-that-can-elicit")
def trimmed_for_eliciting_clients(app, facts):
    """The text block of a tools/call from a client that declares the elicitation capability loses its last
    character (a form renderer's template): right for every other client."""
    def trim(obj, scope, status, headers):
        result = obj.get("result") if scope.get(NOTED) and isinstance(obj, dict) else None
        for block in (result or {}).get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("text"), str) and block["text"]:
                block["text"] = block["text"][:-1]
        return obj
    note = _when(lambda body, f: isinstance(_params(body).get("_meta", {}).get(CAPS), dict)
                 and "elicitation" in _params(body)["_meta"][CAPS], "mcp")
    return note(t.rewrite_json_response(app, trim, where="mcp"), facts)


@broken("MCP-METH-005", name="MCP-METH-005-string-ids-answered-as-numbers")
def string_ids_as_numbers(app, facts):
    """A JSON-RPC response to a request with a string id carries the digits of that id as a number (an id column
    typed as integer): right for every integer id."""
    def renumber(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("id"), str) and "result" in obj:
            digits = "".join(c for c in obj["id"] if c in "0123456789")
            obj["id"] = int(digits) if digits else 0
        return obj
    return t.rewrite_json_response(app, renumber, where="mcp")


@broken("AUTH-MCP-001", name="AUTH-MCP-001-access-token-refused-on-the-tool-description")
def token_refused_on_description(app, facts):
    """`server/discover` and `tools/list` with the access token are answered 401 (the description served by a
    handler that knows API keys only): tools/call accepts the token."""
    token = (facts.get("access_token") or "").encode()

    async def middleware(scope, receive, send):
        auth = t.header(list(scope.get("headers") or []), b"authorization") or b""
        if token and t.matches(scope, "mcp") and auth.partition(b" ")[2].strip() == token:
            raw, pending = await t._read_all(receive)
            ok, body = t._loads(raw)
            if ok and isinstance(body, dict) and body.get("method") in ("server/discover", "tools/list"):
                challenge = (f'Bearer resource_metadata="{facts.get("base_url", "")}/.well-known/oauth-protected-'
                             f'resource/v1/agents/{facts.get("agent_id")}/mcp", scope="agent:invoke"').encode()
                return await _answer(send, *_json_error(401, {"jsonrpc": "2.0", "id": body.get("id"), "error": {
                    "code": -32600, "message": "unauthenticated"}}, [(b"www-authenticate", challenge)]))
            return await app(scope, t._replay(raw, pending, receive), send)
        return await app(scope, receive, send)
    return middleware


@broken("MCP-VER-002", name="MCP-VER-002-unknown-version-served-on-the-description")
def unknown_version_on_description(app, facts):
    """A `server/discover` or `tools/list` declaring a version the server does not speak is answered as a 2026-07-28
    one (the version checked by the tools/call handler only)."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, "mcp"):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        headers = list(scope.get("headers") or [])
        version = (t.header(headers, b"mcp-protocol-version") or b"").decode("latin-1").strip()
        if ok and isinstance(body, dict) and body.get("method") in ("server/discover", "tools/list") \
                and version and version not in ("2026-07-28", "2025-11-25"):
            meta = _params(body).get("_meta")
            if isinstance(meta, dict) and VERSION in meta:
                meta[VERSION] = "2026-07-28"
            raw = t._dumps(body)
            headers = t.with_header(t.with_header(headers, b"mcp-protocol-version", b"2026-07-28"),
                                    b"content-length", str(len(raw)).encode())
            return await app(dict(scope, headers=headers), t._replay(raw, None, receive), send)
        return await app(scope, t._replay(raw, pending, receive), send)
    return middleware


@broken("MCP-VER-001", name="MCP-VER-001-method-header-looked-up-in-the-raw-body")
def method_header_in_raw_body(app, facts):
    """A 2026-07-28 `tools/call` whose raw body does not hold its `Mcp-Method` value as written (`"tools/call"`) is
    refused 400 -32020 as a header mismatch (the header matched against the bytes, not the JSON value): right for
    every body that writes the method unescaped, wrong for `"tools\\/call"`, the same string (RFC 8259 §7)."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, "mcp"):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        method = t.header(list(scope.get("headers") or []), b"mcp-method")
        if ok and isinstance(body, dict) and body.get("method") == "tools/call" and method == b"tools/call" \
                and b'"tools/call"' not in raw:
            return await _answer(send, *_json_error(400, {"jsonrpc": "2.0", "id": body.get("id"), "error": {
                "code": -32020, "message": "Mcp-Method does not match the body"}}))
        return await app(scope, t._replay(raw, pending, receive), send)
    return middleware
