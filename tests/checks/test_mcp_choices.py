"""Where MCP itself allows more than one answer, every allowed one passes (its form noted) and only what MCP rules out
warns: the audited SHOULDs MCP-METH-007/009, MCP-PROG-011, MCP-HDR-006 and MCP-METH-006 on canned recordings.

- a call without `arguments.prompt`: a tool result with `isError: true` (MCP 2025-11-25, SEP-1303) or -32602;
- an unknown tool: -32602 only (a protocol error in MCP, never a tool result);
- a call without a progress token: one JSON body or an event stream ending with the response;
- a missing routing header: 400 with -32022 (the spec's reading) or -32020 (MCP 2026-07-28's HeaderMismatch);
- any JSON-RPC answer may come as the last frame of an event stream (MCP's Streamable HTTP), errors included.
"""
from __future__ import annotations

from typing import Any

import pytest

from conformance import canned
from conformance.vocab.steps import mcp as steps
from tests.checks.test_mcp_canned import MCP_URL, TOOL, outcomes, rpc_exchange, status, tool_result
from tests.checks.test_mcp_deviations import modern

INVALID_PARAMS = {"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "Unknown tool"}}
NOT_FOUND = {"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "Method not found"}}
INPUT_ERROR = {"jsonrpc": "2.0", "id": "x", "result": {
    "content": [{"type": "text", "text": "Input validation error: 'prompt' is a required property"}],
    "isError": True, "resultType": "complete"}}
RAN = tool_result("x", "")   # the agent ran on no prompt


def streamed(label: str, method: str, body: Any, *, status_: int = 200):
    """The answer as MCP's Streamable HTTP may send it: one `event: message` frame holding the JSON-RPC message."""
    sent = rpc_exchange(label, "x", method, status_, body)
    return canned.exchange(status_, {"content-type": "text/event-stream"}, label=label, url=MCP_URL,
                           sse=canned.sse_frames(body, event="message", eol=b"\r\n"),
                           request_headers=sent.request_headers, request_body=sent.request_body)


def refusals(*exchanges):
    return canned.recording("mcp.refusals", list(exchanges), facts={"tool": TOOL})


def answer(label: str, status_: int, body: Any, *, stream: bool = False, method: str = "tools/call"):
    return streamed(label, method, body, status_=status_) if stream else rpc_exchange(label, "x", method, status_,
                                                                                      body)


@pytest.mark.parametrize("status_, body, stream, expected, form", [
    (200, INPUT_ERROR, False, "passed", "isError: true"),      # MCP 2025-11-25: a tool execution error
    (200, INPUT_ERROR, True, "passed", "isError: true"),
    (400, INVALID_PARAMS, False, "passed", "-32602"),         # the 2026-07-28 schema's invalid tool arguments
    (200, INVALID_PARAMS, True, "passed", "-32602"),          # the same error in band, on a stream
    (200, RAN, False, "failed", ""),                           # the agent ran on no prompt
    (400, NOT_FOUND, False, "failed", ""),                     # an error, but not the one for invalid params
])
def test_a_missing_prompt_is_an_error_in_either_form(status_, body, stream, expected, form):
    rec = refusals(answer(steps.NO_PROMPT, status_, body, stream=stream))
    assert status("MCP-METH-009", rec) == expected, outcomes("MCP-METH-009", rec)
    if expected == "passed":
        assert form in outcomes("MCP-METH-009", rec)[0][1]


@pytest.mark.parametrize("status_, body, stream, expected", [
    (400, INVALID_PARAMS, False, "passed"),
    (200, INVALID_PARAMS, True, "passed"),                     # in band on a stream (the official SDKs' default)
    (200, INPUT_ERROR, False, "failed"),                       # an unknown tool is no tool result in MCP
    (200, INPUT_ERROR, True, "failed"),
])
def test_an_unknown_tool_is_a_protocol_error(status_, body, stream, expected):
    rec = refusals(answer(steps.UNKNOWN_TOOL, status_, body, stream=stream))
    assert status("MCP-METH-007", rec) == expected, outcomes("MCP-METH-007", rec)


@pytest.mark.parametrize("status_, stream, expected", [(404, False, "passed"), (200, False, "passed"),
                                                       (200, True, "passed")])
def test_an_unsupported_method_is_32601_in_any_form(status_, stream, expected):
    rec = refusals(answer(steps.UNSUPPORTED_METHOD, status_, NOT_FOUND, stream=stream, method="resources/list"))
    assert status("MCP-METH-006", rec) == expected, outcomes("MCP-METH-006", rec)


def test_errors_in_band_on_a_stream_keep_no_status_the_spec_does_not_give():
    rec = refusals(answer(steps.UNKNOWN_TOOL, 200, INVALID_PARAMS, stream=True),
                   answer(steps.UNSUPPORTED_METHOD, 200, NOT_FOUND, stream=True, method="resources/list"))
    assert status("MCP-ERR-001", rec) == "not_assessed", outcomes("MCP-ERR-001", rec)


@pytest.mark.parametrize("content_type, stream, expected, form", [
    ("application/json", False, "passed", "one application/json response"),
    ("application/json; charset=utf-8", False, "passed", "one application/json response"),
    ("text/event-stream", True, "passed", "an event stream"),   # the official SDKs stream by default
    ("text/plain", False, "failed", ""),                        # neither of MCP's two forms
])
def test_a_call_without_a_token_may_stream(content_type, stream, expected, form):
    rec = modern()
    call = rec.get(steps.CALL)
    if stream:
        new = streamed(steps.CALL, "tools/call", tool_result("call-3", "conformance"))
    else:
        new = canned.exchange(200, {"content-type": content_type}, body=tool_result("call-3", "conformance"),
                              label=steps.CALL, url=MCP_URL, request_headers=call.request_headers,
                              request_body=call.request_body)
    rec.exchanges[rec.exchanges.index(call)] = new
    assert status("MCP-PROG-011", rec) == expected, outcomes("MCP-PROG-011", rec)
    if expected == "passed":
        assert form in outcomes("MCP-PROG-011", rec)[0][1]
        for rid in ("MCP-TOOL-001", "MCP-TOOL-002", "MCP-TOOL-003", "MCP-TOOL-005", "MCP-VER-001"):
            assert status(rid, rec) == "passed", (rid, outcomes(rid, rec))


def missing_header(code: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "x", "error": {"code": code, "message": "Mcp-Method header is required"}}


@pytest.mark.parametrize("status_, codes, expected", [
    (400, (-32022, -32022), "passed"),     # the spec's code, a missing header read as not matching the body
    (400, (-32020, -32020), "passed"),     # MCP 2026-07-28's HeaderMismatch, which names missing headers
    (400, (-32020, -32022), "passed"),
    (400, (-32600, -32022), "failed"),     # neither
    (422, (-32020, -32020), "failed"),     # both name 400
])
def test_a_missing_header_is_400_with_either_code(status_, codes, expected):
    rec = refusals(answer(steps.METHOD_MISSING, status_, missing_header(codes[0])),
                   answer(steps.VERSION_HEADER_MISSING, status_, missing_header(codes[1])))
    assert status("MCP-HDR-006", rec) == expected, outcomes("MCP-HDR-006", rec)
    if expected == "passed":
        assert str(codes[0]) in outcomes("MCP-HDR-006", rec)[0][1]
