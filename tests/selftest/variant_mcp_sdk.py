"""Correct MCP servers that answer the way the official SDKs do where the spec is silent: one server per choice.

Each is the reference server with one middleware, and each must pass every MUST and SHOULD under every seed
(``test_variant_mcp_sdk.py``, ``bench/bench_false_failures.py``): where one trips a check, the check asserts an answer
MCP leaves open (a suite bug). The choices come from the audit of every SHOULD and MAY against MCP (the catalog's
``source``):

=======================  ==========================================  ============================================
 server                  the choice (reference → this one)           the words that leave it open
=======================  ==========================================  ============================================
 mcp-input-errors-as-    a call of the agent's tool with arguments   MCP 2025-11-25 Tools › Error Handling (SEP-1303):
 results                 it cannot take (no prompt, a prompt that    "Tool Execution Errors: Reported in tool results
                         is no string, a bad ``session_id``, a       with `isError: true`: … Input validation errors";
                         ``resume`` with nothing paused): 400/-32602  the TypeScript, Go, C# and Python SDKs answer so.
                         → 200 with a tool result ``isError: true``  An unknown tool stays -32602 ("Protocol Errors:
                         holding the message                          … Unknown tools"): MCP-METH-007, MCP-METH-009
 mcp-streams-every-      every JSON-RPC answer to a request whose    MCP Streamable HTTP: "the server MUST return
 answer                  ``Accept`` lists ``text/event-stream``:     either `Content-Type: application/json` … or
                         one JSON body → one ``event: message``      `Content-Type: text/event-stream` … The client
                         frame (results, and the -32602 errors the   MUST support both." (the TypeScript SDK's
                         spec gives no status, in band under 200)    default, enableJsonResponse false): MCP-PROG-011,
                                                                     MCP-METH-006/007/009
 mcp-missing-header-     a request missing ``Mcp-Method``, or a      MCP 2026-07-28 Streamable HTTP › Server
 code-32020              2026-07-28 one missing                      Validation: -32020 HeaderMismatch, "or required
                         ``MCP-Protocol-Version``: 400/-32022 →      headers are missing/malformed" (the Python SDK's
                         400/-32020 (a mismatch stays -32022, as     answer); the spec's -32022 names only headers
                         the spec says)                              "that do not match the body": MCP-HDR-006
=======================  ==========================================  ============================================
"""
from __future__ import annotations

from typing import Any

from conformance.server import ServerConfig
from conformance.vocab import protocols as p
from conformance.vocab.constants import HEADER_MISMATCH, INVALID_PARAMS, UNSUPPORTED_VERSION
from tests.selftest import asgi_tools as t

REQUEST = "mcp_sdk.request"   # scope key: the JSON-RPC request as sent (the answer's rewrite reads it)


def error_code(obj: Any) -> Any:
    error = obj.get("error") if isinstance(obj, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def keep_request(app: t.ASGIApp) -> t.ASGIApp:
    """Notes the parsed JSON-RPC request in the scope, for a rewrite of the answer around it."""
    def note(body: Any, scope: dict) -> None:
        scope[REQUEST] = body if isinstance(body, dict) else {}
    return t.rewrite_request_json(app, note, where="mcp")


def answers_request(app: t.ASGIApp, fn) -> t.ASGIApp:
    """``fn(obj, request, status, headers)`` on every MCP JSON answer, with the request it answers."""
    return t.rewrite_json_response(keep_request(app), lambda obj, scope, status, headers:
                                   fn(obj, scope.get(REQUEST) or {}, status, headers), where="mcp")


# -- input validation errors as tool results (SEP-1303) ---------------------------------------------------------
def input_error_as_result(facts: dict):
    tool = p.slug_tool_name(facts["agent_slug"])

    def rewrite(obj: Any, request: dict, status: int, headers: t.Headers) -> Any:
        params = request.get("params") if isinstance(request.get("params"), dict) else {}
        ours = request.get("method") == "tools/call" and params.get("name") == tool
        if not (ours and isinstance(params.get("arguments"), dict) and error_code(obj) == INVALID_PARAMS):
            return obj       # an unknown tool, or params the call itself cannot carry: a protocol error
        if isinstance(params.get("_meta"), dict) and "progressToken" in params["_meta"] and \
                not isinstance(params["_meta"]["progressToken"], (str, int)):
            return obj
        message = obj["error"].get("message") or "invalid arguments"
        result = {"content": [{"type": "text", "text": f"Input validation error: {message}"}], "isError": True,
                  "resultType": "complete"}
        return 200, headers, {"jsonrpc": "2.0", "id": obj.get("id", request.get("id")), "result": result}
    return rewrite


def input_errors_as_results_config(**overrides: Any) -> ServerConfig:
    def wrap(app, facts):
        return answers_request(app, input_error_as_result(facts))
    return ServerConfig(**{"wrap_app": wrap, **overrides})


# -- every answer as an event stream (the TypeScript SDK's default) -----------------------------------------------
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"),
               (b"x-accel-buffering", b"no")]


def accepts_stream(scope: dict) -> bool:
    accept = (t.header(scope.get("headers") or [], b"accept") or b"").decode("latin-1").lower()
    return "text/event-stream" in accept


def as_stream(obj: Any, request: dict, status: int, headers: t.Headers) -> Any:
    """A JSON-RPC answer to a request (an `id`) as one `event: message` frame: results (200) and the errors whose
    status the spec does not give (-32602, in band under 200); refusals with a status of the spec's keep it."""
    in_band = status == 200 or (400 <= status < 500 and error_code(obj) == INVALID_PARAMS)
    if not (in_band and "id" in request and isinstance(obj, dict) and ("result" in obj or "error" in obj)):
        return obj
    kept = [(k, v) for k, v in t.without(headers, b"content-type", b"content-length", b"cache-control")]
    return 200, kept + SSE_HEADERS, t.make_block(obj, "message", eol=b"\r\n")


def streams_every_answer_config(**overrides: Any) -> ServerConfig:
    def wrap(app, facts):
        streamed = answers_request(app, as_stream)

        async def choose(scope, receive, send):
            await (streamed if accepts_stream(scope) else app)(scope, receive, send)
        return choose
    return ServerConfig(**{"wrap_app": wrap, **overrides})


# -- a missing routing header as MCP 2026-07-28's HeaderMismatch ---------------------------------------------------
def missing_header_code(obj: Any, request: dict, status: int, headers: t.Headers, scope: dict) -> Any:
    sent = scope.get("headers") or []
    meta = (request.get("params") or {}).get("_meta") if isinstance(request.get("params"), dict) else None
    modern = isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") == p.MCP_VERSION
    missing = t.header(sent, b"mcp-method") is None or (modern and t.header(sent, b"mcp-protocol-version") is None)
    if status == 400 and missing and error_code(obj) == UNSUPPORTED_VERSION:
        obj["error"] = {"code": HEADER_MISMATCH, "message": "Header mismatch: a required header is missing"}
    return obj


def missing_header_code_config(**overrides: Any) -> ServerConfig:
    def wrap(app, facts):
        return t.rewrite_json_response(keep_request(app), lambda obj, scope, status, headers: missing_header_code(
            obj, scope.get(REQUEST) or {}, status, headers, scope), where="mcp")
    return ServerConfig(**{"wrap_app": wrap, **overrides})
