"""The variant server's MCP, sign-in metadata and challenge choices (rows 23-28 of variant.py's table).

Habits of servers built on the official `mcp` SDK (2.3.0, `mcp.server._streamable_http_modern` and
`streamable_http`), and URL spellings RFC 3986 makes equivalent:

* ``inner`` (sees the reference server's own answers, before variant.py restyles them): float ``progress``
  values; ``authorization_servers`` spelled with a trailing ``/`` after an auth URL with an empty path;
  ``resource`` and the 401's ``resource_metadata`` with the scheme in upper case.
* ``outer`` (the bytes as they leave): a standalone ``retry: 3000`` block (no data: it dispatches no event)
  before the first progress frame, as the SDK's priming event does; MCP JSON answers as
  ``application/json; charset=utf-8``; ``X-Accel-Buffering: no`` on MCP streams, as the SDK sends.

* ``own_form`` (row 32): the elicitation form asks for fields of every primitive kind with constraints, and the
  answer's content is validated against it (JSON Schema, formats included); content it does not accept is
  treated as declined, which fails the run.

``CONFIG`` gives the variant an auth URL with an empty path, so that the trailing ``/`` spells the same URL.
"""
from __future__ import annotations

from typing import Any

import jsonschema

from tests.selftest import asgi_tools as t

AUTH_URL = "https://auth.variant.example"
CONFIG = {"auth_url": AUTH_URL}
RETRY_BLOCK = b"retry: 3000\r\n\r\n"


def upper_scheme(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return scheme.upper() + sep + rest if sep else url


# -- inner ------------------------------------------------------------------------------------------------------
def respell_metadata(obj: Any, scope: dict, status: int, headers: t.Headers) -> Any:
    if status == 200 and isinstance(obj, dict):
        if isinstance(obj.get("resource"), str):
            obj["resource"] = upper_scheme(obj["resource"])
        servers = obj.get("authorization_servers")
        if isinstance(servers, list):
            obj["authorization_servers"] = [s + "/" if isinstance(s, str) and s.count("/") == 2 else s
                                            for s in servers]
    return obj


def respell_challenge(headers: t.Headers, scope: dict, status: int) -> t.Headers:
    if status != 401:
        return headers
    return [(k, v.replace(b'resource_metadata="https://', b'resource_metadata="HTTPS://'))
            if k.lower() == b"www-authenticate" else (k, v) for k, v in headers]


def float_progress(event: str | None, obj: Any, state: dict, scope: dict) -> Any:
    params = obj.get("params") if isinstance(obj, dict) and obj.get("method") == "notifications/progress" else None
    if isinstance(params, dict) and isinstance(params.get("progress"), int):
        params["progress"] = params["progress"] - 0.5     # 1, 2, 3 → 0.5, 1.5, 2.5: still increasing
    return event, obj


# -- row 32: an elicitation form of the server's own, validated ----------------------------------------------
OWN_FORM = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "seats": {"type": "integer", "minimum": 5, "maximum": 9},
        "plan": {"type": "string", "oneOf": [{"const": "pro", "title": "Pro"}, {"const": "team", "title": "Team"}]},
        "nickname": {"type": "string", "minLength": 6, "maxLength": 12},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a"}, {"const": "b"}]}, "minItems": 2,
                 "uniqueItems": True},
        "region": {"type": "string", "enum": ["eu", "us"], "default": "us"},
    },
    "required": ["email", "seats", "plan", "nickname", "tags", "region"],
}
VALIDATOR = jsonschema.Draft202012Validator(OWN_FORM, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def ask_own_form(obj: Any, *rest: Any) -> Any:
    result = obj.get("result") if isinstance(obj, dict) else None
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        for request in (result.get("inputRequests") or {}).values():
            if isinstance(request, dict) and isinstance(request.get("params"), dict):
                request["params"]["requestedSchema"] = OWN_FORM
    return obj


def decline_invalid_content(body: Any, scope: dict) -> Any:
    params = body.get("params") if isinstance(body, dict) else None
    responses = params.get("inputResponses") if isinstance(params, dict) else None
    if not isinstance(responses, dict):
        return None
    for response in responses.values():
        if isinstance(response, dict) and response.get("action") == "accept" and \
                not VALIDATOR.is_valid(response.get("content")):
            response["action"] = "decline"
    return body


def own_form(app: t.ASGIApp) -> t.ASGIApp:
    app = t.rewrite_request_json(app, decline_invalid_content, where="mcp")
    app = t.rewrite_json_response(app, ask_own_form, where="mcp")
    return t.rewrite_sse_json(app, lambda event, obj, state, scope: (event, ask_own_form(obj)), where="mcp")


def inner(app: t.ASGIApp) -> t.ASGIApp:
    app = own_form(app)
    app = t.rewrite_json_response(app, respell_metadata, where="metadata")
    app = t.rewrite_headers(app, respell_challenge, where="mcp")
    return t.rewrite_sse_json(app, float_progress, where="mcp")


# -- outer ------------------------------------------------------------------------------------------------------
def prime_stream(block: bytes | None, state: dict, scope: dict) -> Any:
    if block is None or state.get("primed"):
        return block
    _event, obj = t.sse_json(block)
    if isinstance(obj, dict) and obj.get("method") == "notifications/progress":
        state["primed"] = True
        return [RETRY_BLOCK, block]
    return block


def sdk_headers(headers: t.Headers, scope: dict, status: int) -> t.Headers:
    kind = t.media_type(headers)
    if kind == "application/json":
        return t.with_header(headers, b"Content-Type", b"application/json; charset=utf-8")
    if kind == "text/event-stream":
        return t.with_header(headers, b"X-Accel-Buffering", b"no")
    return headers


def outer(app: t.ASGIApp) -> t.ASGIApp:
    app = t.rewrite_sse(app, prime_stream, where="mcp")
    return t.rewrite_headers(app, sdk_headers, where="mcp")
