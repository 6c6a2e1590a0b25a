"""MCP: protocol versions and mirrored headers, methods and the tool, tools/call results, sessions, progress
streams, paused runs, refusals, and the official `mcp` client.

Where the spec and upstream MCP 2026-07-28 differ (-32022 for a header mismatch where upstream uses -32020;
refusing an unknown `initialize` version where upstream negotiates; `Mcp-Name` optional) the checks follow the
spec and name the upstream rule in their pass note.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import SCENARIOS, check, rule
from conformance.vocab import protocols as p
from conformance.vocab import steps
from conformance.vocab.constants import (INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNKNOWN_VERSION,
                                         UNSUPPORTED_VERSION)
from conformance.vocab.readers import got, request_json, rpc_error
from conformance.vocab.refusals import mcp_refused
from conformance.vocab.text import truncate
from conformance.wire.http import Exchange
from conformance.wire.sse import SSEEvent

UPSTREAM_HEADER_MISMATCH = -32020
MODERN = ["mcp.modern"]
NO_NAME = steps.CALL_NONAME   # judged by MCP-HDR-004 alone: the other checks use calls that carry Mcp-Name
UPSTREAM_NOTE = "follows the spec's -32022; upstream MCP 2026-07-28 uses -32020 (HeaderMismatch) here"


# -- helpers ----------------------------------------------------------------------------------
def sent_id(ex: Exchange) -> Any:
    body = request_json(ex)
    return body.get("id") if isinstance(body, dict) else None


def frames(ex: Exchange) -> list[SSEEvent]:
    """The frames of an event stream that a client dispatches (WHATWG): a block without data (such as a lone
    `retry:` or `id:`) dispatches nothing and is no frame."""
    return ex.stream.dispatched if ex.stream is not None else []


def frame_json(frame: SSEEvent) -> tuple[bool, Any]:
    try:
        return True, frame.json()
    except (AssertionError, ValueError):
        return False, None


def messages(ex: Exchange) -> list[Any]:
    """The JSON-RPC messages of an answer: the one JSON body, or the JSON data of every dispatched frame (a frame
    whose data is not JSON is MCP-PROG-002's to judge, not a message)."""
    if ex.stream is None:
        return [ex.json()]
    return [value for ok, value in map(frame_json, frames(ex)) if ok]


def response(ex: Exchange, what: str) -> dict[str, Any]:
    """The JSON-RPC response of a 200 answer (the one body, or the last message of a stream)."""
    assert ex.status == 200, f"{what}: expected HTTP 200, got {got(ex)}"
    msgs = messages(ex)
    assert msgs, f"{what}: the answer held no JSON-RPC message: {got(ex)}"
    msg = msgs[-1]
    assert isinstance(msg, dict) and ("result" in msg or "error" in msg), \
        f"{what}: the last message is not a JSON-RPC response: {truncate(msg)}"
    return msg


def result_of(ex: Exchange, what: str) -> dict[str, Any]:
    msg = response(ex, what)
    assert "error" not in msg, f"{what}: expected a JSON-RPC result, got the error {truncate(msg.get('error'))}"
    result = msg.get("result")
    assert isinstance(result, dict), f"{what}: `result` is not an object: {truncate(msg)}"
    return result


def text_block(result: dict[str, Any], what: str) -> str:
    content = result.get("content")
    assert isinstance(content, list) and len(content) == 1, \
        f"{what}: `result.content` must be an array of exactly one block, got {truncate(content)}"
    block = content[0]
    assert isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str), \
        f"{what}: the content block must be {{type: \"text\", text: <string>}}, got {truncate(block)}"
    return block["text"]


def structured_session(result: dict[str, Any], what: str) -> str:
    sc = result.get("structuredContent")
    sid = sc.get("sessionId") if isinstance(sc, dict) else None
    assert isinstance(sid, str) and 1 <= len(sid) <= 256, \
        f"{what}: `result.structuredContent.sessionId` must be a string of 1 to 256 characters, got {truncate(sc)}"
    return sid


def conformance_reply(rec: Recording, value: Any) -> str:
    """The conformance agent's reply after a resumed `ask`: `answer: ` + canonical JSON of the answer + the rest."""
    if not rec.target.profile.is_conformance_agent or rec.facts.get("suffix") is None:
        raise NotAssessed("the exact reply after a resume needs the conformance agent")
    return "answer: " + p.canonical(value) + rec.facts["suffix"]


def labels(rec: Recording, *names: str) -> list[tuple[str, Exchange]]:
    return [(n, rec.get(n)) for n in names]


# -- versions and headers ---------------------------------------------------------------------
@check("MCP-VER-001", scenarios=MODERN)
def modern_call_served(rec: Recording):
    """Sends a 2026-07-28 tools/call (header = `_meta` version, matching Mcp-Method/Mcp-Name, no initialize);
    HTTP 200 with a JSON-RPC result."""
    result_of(rec.get(steps.CALL), "2026-07-28 tools/call")


@check("MCP-HDR-004", scenarios=MODERN)
def call_without_mcp_name(rec: Recording):
    """Sends a valid tools/call without Mcp-Name (the only exchange that leaves it out); 200 with a result
    (upstream 2026-07-28 requires Mcp-Name; the spec makes it optional)."""
    result_of(rec.get(NO_NAME), "tools/call without Mcp-Name")
    return "spec: Mcp-Name optional (upstream 2026-07-28 requires it)"


@check("MCP-VER-005", scenarios=["mcp.legacy"])
def legacy_initialize(rec: Recording):
    """Sends `initialize` at 2025-11-25 without MCP-Protocol-Version; 200 with `result.protocolVersion` 2025-11-25."""
    result = result_of(rec.get("initialize"), "initialize (2025-11-25)")
    assert result.get("protocolVersion") == p.MCP_LEGACY_VERSION, \
        f"initialize: `result.protocolVersion` is {truncate(result.get('protocolVersion'))}, expected 2025-11-25"


@check("MCP-VER-006", scenarios=["mcp.legacy"])
def legacy_calls_served(rec: Recording):
    """After initialize, tools/list and tools/call with `MCP-Protocol-Version: 2025-11-25` (no `_meta` version)
    answer 200 with results; the call replies the plain reply."""
    result_of(rec.get(steps.LIST), "tools/list at 2025-11-25")
    result = result_of(rec.get(steps.CALL), "tools/call at 2025-11-25")
    reply = rec.facts.get("replies", {}).get("call")
    if reply is not None:
        text = text_block(result, "tools/call at 2025-11-25")
        assert text == reply, f"tools/call at 2025-11-25: expected the reply {reply!r}, got {truncate(text)}"


def _supported(err: dict[str, Any], what: str) -> list[str]:
    data = err.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    assert isinstance(supported, list) and all(isinstance(v, str) for v in supported), \
        f"{what}: `error.data.supported` must be an array of version strings, got {truncate(data)}"
    assert p.MCP_VERSION in supported, f"{what}: `error.data.supported` {supported} lacks {p.MCP_VERSION}"
    return supported


REFUSALS = ["mcp.refusals"]


@check("MCP-VER-002", scenarios=REFUSALS)
def unknown_version_refused(rec: Recording):
    """Sends tools/call declaring 1999-01-01 in header and `_meta`; HTTP 400 with JSON-RPC code -32022."""
    mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)


@check("MCP-VER-003", scenarios=REFUSALS)
def unknown_version_lists_supported(rec: Recording):
    """The -32022 for version 1999-01-01 has `error.data.supported`: version strings holding 2026-07-28."""
    err = mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    _supported(err, "the -32022 for version 1999-01-01")


@check("MCP-VER-004", scenarios=REFUSALS)
def unknown_version_echoes_requested(rec: Recording):
    """The -32022 for version 1999-01-01 has `error.data.requested` = "1999-01-01"."""
    err = mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    data = err.get("data")
    requested = data.get("requested") if isinstance(data, dict) else None
    assert requested == UNKNOWN_VERSION, \
        f"the -32022 for version {UNKNOWN_VERSION}: `error.data.requested` is {truncate(requested)}, " \
        f"expected {UNKNOWN_VERSION!r} (data: {truncate(data)})"


@check("MCP-VER-007", scenarios=REFUSALS)
def unknown_initialize_version_refused(rec: Recording):
    """Sends `initialize` with protocolVersion 1999-01-01; HTTP 400, -32022, `data.supported` listing versions
    (upstream 2025-11-25 would negotiate instead; the spec says refuse)."""
    err = mcp_refused(rec, steps.INITIALIZE_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    _supported(err, "the -32022 for initialize 1999-01-01")
    return "spec: refuse; upstream 2025-11-25 initialize negotiates a version instead"


def _mismatch(label: str, doc: str):
    def fn(rec: Recording):
        mcp_refused(rec, label, 400, UNSUPPORTED_VERSION)
        return UPSTREAM_NOTE
    fn.__doc__ = doc
    return fn


MISMATCHES = {   # requirement: (step, check name, doc)
    "MCP-HDR-001": (steps.VERSION_MISMATCH, "version_header_mismatch",
                    "Sends tools/call with header 2026-07-28 but `_meta` version 2025-11-25; HTTP 400 with -32022."),
    "MCP-HDR-002": (steps.METHOD_MISMATCH, "method_header_mismatch",
                    "Sends tools/call with `Mcp-Method: tools/list`; HTTP 400 with -32022."),
    "MCP-HDR-003": (steps.NAME_MISMATCH, "name_header_mismatch",
                    "Sends tools/call whose Mcp-Name names another tool than params.name; HTTP 400 with -32022."),
}
rule(lambda req: _mismatch(MISMATCHES[req][0], MISMATCHES[req][2]), over=MISMATCHES, requirements=lambda req: req,
     scenarios=REFUSALS, name=lambda req: MISMATCHES[req][1])


@check("MCP-HDR-005", scenarios=REFUSALS)
def method_header_required(rec: Recording):
    """Sends a 2026-07-28 tools/call without Mcp-Method; a 4xx with a JSON-RPC error body (the exact 400 is
    MCP-HDR-006's SHOULD: that a missing header "does not match the body" is a reading of the spec)."""
    mcp_refused(rec, steps.METHOD_MISSING, None)


@check("MCP-HDR-007", scenarios=REFUSALS)
def version_header_required(rec: Recording):
    """Sends tools/call with `_meta` version 2026-07-28 but no MCP-Protocol-Version header; a 4xx with a JSON-RPC
    error body (the exact 400 is MCP-HDR-006's SHOULD)."""
    mcp_refused(rec, steps.VERSION_HEADER_MISSING, None)


@check("MCP-HDR-006", scenarios=REFUSALS)
def missing_header_code(rec: Recording):
    """The refusals of a missing Mcp-Method and a missing MCP-Protocol-Version are HTTP 400 with code -32022."""
    for label in (steps.METHOD_MISSING, steps.VERSION_HEADER_MISSING):
        mcp_refused(rec, label, 400, UNSUPPORTED_VERSION)
    return "spec reading: missing = not matching; upstream 2026-07-28 uses -32020 for missing headers"


@check("MCP-HDR-008", scenarios=REFUSALS)
def wrong_content_type(rec: Recording):
    """Sends tools/call as `Content-Type: text/plain`; a 4xx with a JSON-RPC error body (upstream code -32005)."""
    body = mcp_refused(rec, steps.CONTENT_TYPE, None)
    return f"code {body['error']['code']} (upstream: -32005)"


# -- methods and the tool ---------------------------------------------------------------------
def the_tools(rec: Recording) -> list[Any]:
    result = result_of(rec.get(steps.LIST), "tools/list")
    tools = result.get("tools")
    assert isinstance(tools, list), f"tools/list: `result.tools` is not an array: {truncate(result)}"
    return tools


def the_tool(rec: Recording) -> dict[str, Any]:
    tools = the_tools(rec)
    assert len(tools) == 1 and isinstance(tools[0], dict), \
        f"tools/list: expected exactly one tool object, got {len(tools)}: {truncate(tools)}"
    assert isinstance(tools[0].get("name"), str), f"tools/list: the tool has no string `name`: {truncate(tools[0])}"
    return tools[0]


@check("MCP-METH-001", scenarios=MODERN)
def discover_describes_tool(rec: Recording):
    """Sends server/discover; 200 with a JSON-RPC result that names the tool or declares the `tools` capability."""
    result = result_of(rec.get(steps.DISCOVER), "server/discover")
    tool = rec.facts.get("tool")
    caps = result.get("capabilities")
    named = isinstance(tool, str) and tool in json.dumps(result, ensure_ascii=False)
    declared = isinstance(caps, dict) and isinstance(caps.get("tools"), dict)
    assert named or declared, \
        f"server/discover: the result neither names the tool {tool!r} nor declares capabilities.tools: {truncate(result)}"


@check("MCP-METH-002", scenarios=MODERN)
def exactly_one_tool(rec: Recording):
    """Sends tools/list; 200 with `result.tools`, an array of exactly one object."""
    the_tool(rec)


@check("MCP-METH-003", scenarios=MODERN)
def tool_name_form(rec: Recording):
    """The tool's name is `ask_` followed by at least one character, with no hyphen."""
    name = the_tool(rec)["name"]
    assert name.startswith("ask_") and len(name) > 4 and "-" not in name, \
        f"the tool is named {name!r}; expected `ask_` + the slug with hyphens replaced by underscores"


@check("MCP-METH-004", scenarios=MODERN)
def tool_name_from_slug(rec: Recording):
    """The tool's name is `ask_` + --agent-slug with every `-` replaced by `_`."""
    if not rec.target.agent_slug:
        raise NotAssessed(f"needs {rec.target.option_for('agent_slug')}, which was not given")
    expected = p.slug_tool_name(rec.target.agent_slug)
    name = the_tool(rec)["name"]
    assert name == expected, f"the tool is named {name!r}, expected {expected!r} (from --agent-slug)"


def ids_kept(rec: Recording):
    """Every JSON-RPC response has `jsonrpc` "2.0" and the request's `id`, type kept (string and integer ids).
    The call without Mcp-Name is MCP-HDR-004's, not judged here."""
    judged = [ex for ex in rec.exchanges if ex.label != NO_NAME]
    if not judged:
        raise NotAssessed(f"{rec.scenario} recorded no request")
    for ex in judged:
        msg = response(ex, f"{rec.scenario} {ex.label}")
        want = sent_id(ex)
        assert msg.get("jsonrpc") == "2.0", f"{ex.label}: `jsonrpc` is {truncate(msg.get('jsonrpc'))}, expected \"2.0\""
        assert "id" in msg and msg["id"] == want and type(msg["id"]) is type(want), \
            f"{ex.label}: sent id {want!r} ({type(want).__name__}), the response has id {truncate(msg.get('id'))}"


rule(lambda scn: ids_kept, over=("mcp.modern", "mcp.legacy"), requirements="MCP-METH-005", scenarios=lambda scn: [scn],
     name=lambda scn: f"ids_kept_{scn.split('.')[1]}")


@check("MCP-CLIENT-002", scenarios=MODERN)
def tool_matches_upstream(rec: Recording):
    """The listed tool validates as upstream `Tool`; its inputSchema is an object schema with a string `prompt` and
    accepts arguments `prompt`, `session_id` and `resume`."""
    tool = the_tool(rec)
    from mcp_types._v2026_07_28 import Tool
    from pydantic import ValidationError
    try:
        Tool.model_validate(tool)
    except ValidationError as exc:
        raise AssertionError(f"upstream Tool rejects the listed tool: {exc}"[:500]) from None
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    assert isinstance(schema, dict) and schema.get("type") == "object" and isinstance(props, dict), \
        f"inputSchema is not an object schema with properties: {truncate(schema)}"
    prompt = props.get("prompt")
    assert isinstance(prompt, dict) and prompt.get("type") == "string", \
        f"inputSchema declares no string `prompt`: {truncate(props)}"
    import jsonschema
    sample = {"prompt": "x", "session_id": "s-1", "resume": {"name": "Ada"}}
    try:
        jsonschema.validate(sample, schema)
    except jsonschema.ValidationError as exc:
        raise AssertionError(f"inputSchema rejects {truncate(sample)}: {exc.message}") from None
    except jsonschema.SchemaError as exc:
        raise AssertionError(f"inputSchema is not a valid JSON Schema: {exc.message}") from None


# -- tools/call results -----------------------------------------------------------------------
CALLS = (steps.CALL, steps.CALL_TOOL)   # the plain-reply and tool-call prompts, both with Mcp-Name


@check("MCP-TOOL-001", scenarios=MODERN)
def one_text_block(rec: Recording):
    """Sends tools/call without a progress token; 200, `result.content` is exactly one `{type: text, text}` block."""
    for label, ex in labels(rec, *CALLS):
        text_block(result_of(ex, f"tools/call ({label})"), f"tools/call ({label})")


@check("MCP-TOOL-002", scenarios=MODERN)
def text_is_reply(rec: Recording):
    """The text block of the plain-reply and tool-call prompts equals their reply exactly."""
    replies = rec.facts.get("replies", {})
    compared = 0
    for label, ex in labels(rec, *CALLS):
        text = text_block(result_of(ex, f"tools/call ({label})"), f"tools/call ({label})")
        if replies.get(label) is not None:
            assert text == replies[label], f"tools/call ({label}): expected {replies[label]!r}, got {truncate(text)}"
            compared += 1
    if not compared:
        raise NotAssessed("the profile gives no expected reply for these prompts")


ROUND_TRIP_LABEL = re.compile(r"mcp-(\d+)")   # the runs; `mcp-tools-list` is the tool lookup


if "generated.round_trip" in SCENARIOS:  # the lead's shared generated-text scenario, when present
    @check("MCP-TOOL-002", scenarios=["generated.round_trip"])
    def generated_text_round_trip(rec: Recording):
        """Sends generated texts as `say-json` prompts over MCP; each text block equals its text exactly."""
        texts = rec.facts.get("texts") or []
        runs = [(int(m.group(1)), ex) for ex in rec.labelled("mcp-") if (m := ROUND_TRIP_LABEL.fullmatch(ex.label))]
        if not runs:
            raise NotAssessed("the generated round trip sent no tools/call over MCP")
        for i, ex in runs:
            text = text_block(result_of(ex, f"round trip {ex.label}"), f"round trip {ex.label}")
            assert 0 <= i < len(texts) and text == texts[i], \
                f"round trip {ex.label}: sent {truncate(texts[i] if 0 <= i < len(texts) else None, 120)}, " \
                f"got {truncate(text, 120)}"


@check("MCP-TOOL-003", scenarios=MODERN)
def result_type_complete(rec: Recording):
    """A finished run's result has `resultType` "complete"."""
    for label, ex in labels(rec, *CALLS):
        rt = result_of(ex, f"tools/call ({label})").get("resultType")
        assert rt == "complete", f"tools/call ({label}): `resultType` is {truncate(rt)}, expected \"complete\""


@check("MCP-TOOL-005", scenarios=MODERN)
def success_is_not_error(rec: Recording):
    """A run that ends normally has `isError` absent or false."""
    for label, ex in labels(rec, *CALLS):
        flag = result_of(ex, f"tools/call ({label})").get("isError", False)
        assert flag is False, f"tools/call ({label}): a finished run has `isError` {truncate(flag)}"


@check("MCP-TOOL-004", scenarios=["mcp.failures"])
def failure_is_tool_result(rec: Recording):
    """Sends the two failing prompts; each answers 200 with a `result` (no JSON-RPC error) whose `isError` is true."""
    for label, ex in labels(rec, "fail-after", "fail-before"):
        result = result_of(ex, f"failed run ({label})")
        assert result.get("isError") is True, \
            f"failed run ({label}): `isError` is {truncate(result.get('isError'))}, expected true"


@check("MCP-TOOL-006", scenarios=["mcp.failures"])
def failure_has_content(rec: Recording):
    """A failed run's result still has `content` with one text block (upstream CallToolResult needs it)."""
    text_block(result_of(rec.get("fail-after"), "failed run"), "failed run")


@check("MCP-PROG-011", scenarios=MODERN)
def no_token_one_json_body(rec: Recording):
    """Sends tools/call without a progress token (Accept lists both types); one application/json response."""
    ex = rec.get(steps.CALL)
    assert ex.status == 200 and ex.content_type == "application/json", \
        f"tools/call without a progress token: expected one application/json body, got {got(ex)}"


@check("MCP-SESS-005", scenarios=MODERN)
def stateless(rec: Recording):
    """Sends tools/list and tools/call with no prior initialize and no Mcp-Session-Id; both answer with results."""
    for label in (steps.LIST, steps.CALL):
        result_of(rec.get(label), f"{label} without initialize or Mcp-Session-Id")


# -- sessions ---------------------------------------------------------------------------------
def count_reply(rec: Recording, label: str) -> tuple[str, dict[str, Any]]:
    result = result_of(rec.get(label), f"count ({label})")
    return text_block(result, f"count ({label})"), result


@check("MCP-SESS-001", scenarios=["mcp.sessions"])
def session_generated(rec: Recording):
    """Sends tools/call without `session_id`; `structuredContent.sessionId` is a string of 1 to 256 characters."""
    _, result = count_reply(rec, "generated-1")
    structured_session(result, "tools/call without session_id")


@check("MCP-SESS-002", scenarios=["mcp.sessions"])
def same_session_same_instance(rec: Recording):
    """Sends `count` twice with the same fresh session_id; the replies are 1 then 2."""
    got_ = [count_reply(rec, label)[0] for label in ("given-1", "given-2")]
    assert got_ == ["1", "2"], f"two `count` calls on one session_id replied {got_}, expected ['1', '2']"


@check("MCP-SESS-003", scenarios=["mcp.sessions"])
def session_echoed(rec: Recording):
    """With `arguments.session_id`, `structuredContent.sessionId` equals it."""
    for label in ("given-1", "given-2"):
        _, result = count_reply(rec, label)
        sid = structured_session(result, f"count ({label})")
        assert sid == rec.facts["session"], f"count ({label}): sessionId {sid!r}, expected {rec.facts['session']!r}"


@check("MCP-SESS-004", scenarios=["mcp.sessions"])
def generated_session_reaches_instance(rec: Recording):
    """`count` without session_id replies 1; `count` on the returned sessionId replies 2."""
    first, result = count_reply(rec, "generated-1")
    structured_session(result, "count without session_id")
    assert first == "1", f"count without session_id replied {first!r}, expected '1'"
    second, _ = count_reply(rec, "generated-2")
    assert second == "2", f"count on the generated sessionId replied {second!r}, expected '2'"


# -- progress streams -------------------------------------------------------------------------
TOKENS = ("string-token", "integer-token")


def stream_messages(ex: Exchange, what: str) -> list[Any]:
    """The JSON messages of a progress stream's dispatched frames (blocks without data are no frames; data that
    is not JSON is MCP-PROG-002's finding)."""
    assert ex.status == 200, f"{what}: expected HTTP 200, got {got(ex)}"
    assert ex.stream is not None, f"{what}: expected text/event-stream, got {got(ex)}"
    out = messages(ex)
    assert out, f"{what}: the stream has no frame with JSON data ({len(frames(ex))} dispatched frame(s))"
    return out


def notifications(ex: Exchange, what: str) -> list[dict[str, Any]]:
    return [m for m in stream_messages(ex, what)[:-1] if isinstance(m, dict)]


def each_stream(rec: Recording, fn: Callable[[str, Exchange], None]) -> None:
    for label in TOKENS:
        fn(label, rec.get(label))


def each_notification(rec: Recording, fn: Callable[[str, dict[str, Any], int], None]) -> None:
    seen = 0
    for label in TOKENS:
        for n, msg in enumerate(notifications(rec.get(label), f"progress stream ({label})"), 1):
            if msg.get("method") == "notifications/progress":
                seen += 1
                fn(label, msg, n)
    if not seen:
        raise NotAssessed("no progress notification arrived (MCP-PROG-009)")


@check("MCP-PROG-001", scenarios=["mcp.progress"])
def token_gets_stream(rec: Recording):
    """Sends tools/call with `_meta.progressToken` and Accept of both types; 200 with Content-Type text/event-stream."""
    def one(label, ex):
        assert ex.status == 200 and ex.content_type == p.SSE, \
            f"tools/call with a progress token ({label}): expected 200 text/event-stream, got {got(ex)}"
    each_stream(rec, one)


@check("MCP-PROG-002", scenarios=["mcp.progress"])
def frames_are_messages(rec: Recording):
    """Every frame of the progress stream is `event: message` with JSON-object data."""
    def one(label, ex):
        what = f"progress stream ({label})"
        assert ex.status == 200 and ex.stream is not None, f"{what}: expected a 200 event stream, got {got(ex)}"
        dispatched = frames(ex)
        assert dispatched, f"{what}: the stream dispatched no frame"
        for n, frame in enumerate(dispatched, 1):
            assert frame.event == "message", f"{what}: frame {n} has event name {frame.event!r}, expected 'message'"
            ok, value = frame_json(frame)
            assert ok and isinstance(value, dict), \
                f"{what}: frame {n} data is not a JSON object: {truncate(frame.data, 160)}"
    each_stream(rec, one)


@check("MCP-PROG-003", scenarios=["mcp.progress"])
def response_is_last(rec: Recording):
    """The last frame is the JSON-RPC response to the request's id, it occurs once, and nothing follows it."""
    def one(label, ex):
        what = f"progress stream ({label})"
        msgs = stream_messages(ex, what)
        want = sent_id(ex)
        is_response = [i for i, m in enumerate(msgs) if isinstance(m, dict) and ("result" in m or "error" in m)]
        assert is_response, f"{what}: no JSON-RPC response among {len(msgs)} frames"
        assert is_response == [len(msgs) - 1], \
            f"{what}: the response is frame {[i + 1 for i in is_response]} of {len(msgs)}; it must be the last, once"
        last = msgs[-1]
        assert last.get("id") == want and type(last.get("id")) is type(want) and "result" in last, \
            f"{what}: the last frame is {truncate(last)}, expected the result for id {want!r}"
        items, dispatched = ex.stream.items, frames(ex)
        tail = [i for i in items[items.index(dispatched[-1]) + 1:]
                if isinstance(i, SSEEvent) and i.dispatched]  # comments and data-less blocks are no frames
        assert not tail, f"{what}: {len(tail)} frame(s) follow the response (first: {truncate(tail[0].raw.decode('utf-8', 'replace'), 80)})"
        assert ex.stream.end == "eof" and not ex.error, f"{what}: the stream did not end cleanly after the response " \
                                                        f"(end: {ex.stream.end}; {ex.error or ''})"
    each_stream(rec, one)


@check("MCP-PROG-004", scenarios=["mcp.progress"])
def others_are_progress(rec: Recording):
    """Every frame before the last is a notification (no `id`) with method `notifications/progress`."""
    seen = 0

    def one(label, ex):
        nonlocal seen
        for n, msg in enumerate(stream_messages(ex, f"progress stream ({label})")[:-1], 1):
            seen += 1
            assert isinstance(msg, dict) and msg.get("method") == "notifications/progress" and "id" not in msg, \
                f"progress stream ({label}): frame {n} is not a notifications/progress notification: {truncate(msg)}"
    each_stream(rec, one)
    if not seen:
        raise NotAssessed("no frame preceded the response (MCP-PROG-009)")


@check("MCP-PROG-005", scenarios=["mcp.progress"])
def token_echoed(rec: Recording):
    """Every progress notification's `params.progressToken` equals the token sent, type kept (string and integer)."""
    tokens = rec.facts.get("tokens", {})

    def one(label, msg, n):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        got_, want = params.get("progressToken"), tokens.get(label)
        assert got_ == want and type(got_) is type(want), \
            f"progress stream ({label}) frame {n}: progressToken {truncate(got_)}, expected {want!r}"
    each_notification(rec, one)


def _param_type(name: str, ok: Callable[[Any], bool], kind: str, doc: str):
    def fn(rec: Recording):
        def one(label, msg, n):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            assert ok(params.get(name)), \
                f"progress stream ({label}) frame {n}: `params.{name}` is {truncate(params.get(name))}, expected {kind}"
        each_notification(rec, one)
    fn.__doc__ = doc
    return fn


_is_number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
check("MCP-PROG-006", scenarios=["mcp.progress"], name="progress_is_number")(
    _param_type("progress", _is_number, "a number", "Every progress notification's `params.progress` is a number."))
check("MCP-PROG-007", scenarios=["mcp.progress"], name="message_is_string")(
    _param_type("message", lambda v: isinstance(v, str), "a string",
                "Every progress notification's `params.message` is a string."))


@check("MCP-PROG-008", scenarios=["mcp.progress"])
def streamed_result_complete(rec: Recording):
    """The stream's final response holds the same result as without a token: one text block with the reply,
    `resultType` complete."""
    reply = rec.facts.get("reply")

    def one(label, ex):
        what = f"progress stream ({label})"
        result = result_of(ex, what)
        text = text_block(result, what)
        if reply is not None:
            assert text == reply, f"{what}: the final text is {truncate(text)}, expected {reply!r}"
        assert result.get("resultType") == "complete", f"{what}: `resultType` is {truncate(result.get('resultType'))}"
    each_stream(rec, one)


@check("MCP-PROG-009", scenarios=["mcp.progress"])
def some_progress(rec: Recording):
    """At least one progress notification precedes the result of the streamed-reply prompt."""
    def one(label, ex):
        assert notifications(ex, f"progress stream ({label})"), \
            f"progress stream ({label}): no progress notification before the result"
    each_stream(rec, one)


@check("MCP-PROG-010", scenarios=["mcp.progress"])
def progress_increases(rec: Recording):
    """`params.progress` strictly increases from one notification to the next (upstream MCP rule)."""
    pairs = 0

    def one(label, ex):
        nonlocal pairs
        values = [m.get("params", {}).get("progress") for m in notifications(ex, f"progress stream ({label})")
                  if isinstance(m.get("params"), dict)]
        numbers = [v for v in values if _is_number(v)]
        pairs += max(0, len(numbers) - 1)
        assert all(a < b for a, b in zip(numbers, numbers[1:])), \
            f"progress stream ({label}): progress values {numbers} do not strictly increase"
    each_stream(rec, one)
    if not pairs:
        raise NotAssessed("no stream had two numeric progress values to compare")


# -- paused runs ------------------------------------------------------------------------------
@check("MCP-PAUSE-001", scenarios=["mcp.pause_text"])
def question_as_text(rec: Recording):
    """Sends the question prompt from a client without elicitation; 200 with a result whose text holds the question."""
    result = result_of(rec.get("ask"), "question prompt (no elicitation)")
    text = p.mcp_text(result)
    question = rec.facts.get("question")
    if question is None:
        raise NotAssessed("the profile gives no question text")
    assert question in text, f"question prompt (no elicitation): the result text {truncate(text)} lacks {question!r}"


@check("MCP-PAUSE-002", scenarios=["mcp.pause_text"])
def resume_continues(rec: Recording):
    """Repeats the call with the session_id and `arguments.resume` {"name": "Ada"}; the run continues to the reply
    `answer: {"name":"Ada"}thanks`, `resultType` complete."""
    labels = [e.label for e in rec.exchanges]
    result = result_of(rec.get("resume-with-prompt" if "resume-with-prompt" in labels else "resume"), "resume")
    expected = conformance_reply(rec, rec.facts["answer"])
    text = text_block(result, "resume")
    assert text == expected, f"resume: expected the reply {expected!r}, got {truncate(text)}"
    assert result.get("resultType") == "complete", f"resume: `resultType` is {truncate(result.get('resultType'))}"


def is_form_request(request: Any) -> bool:
    """An `elicitation/create` request asking for a form: form mode (or no mode) and a requested schema object."""
    params = request.get("params") if isinstance(request, dict) else None
    return isinstance(request, dict) and request.get("method") == "elicitation/create" \
        and isinstance(params, dict) and params.get("mode", "form") == "form" \
        and isinstance(params.get("requestedSchema"), dict)


def asked_for_form(ex: Exchange) -> str | None:
    """How an eliciting client was asked for a form: an upstream InputRequiredResult whose inputRequests hold a form
    elicitation, or a form elicitation/create request in the stream."""
    msgs = messages(ex) if ex.status == 200 else []
    if any(is_form_request(m) and "id" in m for m in msgs):
        return "a form elicitation/create request in the stream"
    last = msgs[-1] if msgs else None
    result = last.get("result") if isinstance(last, dict) else None
    requests = result.get("inputRequests") if isinstance(result, dict) else None
    if isinstance(requests, dict) and any(is_form_request(r) for r in requests.values()):
        return "an input_required result with a form elicitation (upstream 2026-07-28 multi round-trip)"
    return None


@check("MCP-PAUSE-003", scenarios=["mcp.pause_elicit"])
def eliciting_client_gets_form(rec: Recording):
    """Sends the question prompt declaring form elicitation; the answer asks for a form (an elicitation/create request
    in form mode with a requested schema), it is neither a finished result nor an `input_required` without a form."""
    ex = rec.get("ask")
    what = "question prompt from a client that can elicit"
    how = asked_for_form(ex)
    if how:
        return f"asked by {how}"
    answer = result_of(ex, what)   # a refusal or an error fails here
    kind = answer.get("resultType", "complete")
    assert kind != "complete", f"{what}: expected a request for a form, got a finished result {got(ex)}"
    assert kind != "input_required", \
        f"{what}: the result is input_required but asks for no form: `inputRequests` holds no elicitation/create " \
        f"request with a `requestedSchema` (form mode): {got(ex)}"
    raise NotAssessed(f"the answer is neither a finished result nor a form request the suite recognises "
                      f"(resultType {kind!r}; the spec does not show the form's shape, MCP-OPEN-001): {got(ex)}")


@check("MCP-PAUSE-004", scenarios=["mcp.pause_elicit"])
def retry_continues(rec: Recording):
    """Retries the call with the form answered (inputResponses + requestState, upstream 2026-07-28 shape); the paused
    run continues: the reply is `answer: <canonical content>` then the rest of the run (`thanks`), `resultType`
    complete. Asked again, or a reply that is not the continuation, fails."""
    if not rec.facts.get("form"):
        raise NotAssessed("no form request in the upstream 2026-07-28 shape (InputRequiredResult with an "
                          "elicitation/create form) was received, so the suite could not answer it (MCP-OPEN-001)")
    what = "retry with the form answered"
    answers = list(rec.facts.get("answers", {}).values())
    result = result_of(rec.get("retry"), what)
    assert result.get("resultType") != "input_required", \
        f"{what}: the server asked again instead of continuing the paused run: {truncate(result)}"
    expected = conformance_reply(rec, answers[0] if len(answers) == 1 else answers)
    text = text_block(result, what)
    assert text == expected, f"{what}: expected the run's continuation {expected!r}, got {truncate(text)}"
    assert result.get("resultType") == "complete", f"{what}: `resultType` is {truncate(result.get('resultType'))}"
    return "form and retry in the upstream 2026-07-28 shape (the spec does not show them)"


# -- refusals ---------------------------------------------------------------------------------
@check("MCP-METH-006", scenarios=REFUSALS)
def unknown_method(rec: Recording):
    """Sends `resources/list`; a JSON-RPC error with code -32601."""
    ex = rec.get(steps.UNSUPPORTED_METHOD)
    body = rpc_error(ex, "resources/list")
    assert body["error"]["code"] == METHOD_NOT_FOUND, f"resources/list: code {body['error']['code']}, expected -32601"


@check("MCP-METH-007", scenarios=REFUSALS)
def invalid_params(rec: Recording):
    """Sends tools/call for an unknown tool, and one without `arguments.prompt`; JSON-RPC errors with code -32602."""
    for label in (steps.UNKNOWN_TOOL, steps.NO_PROMPT):
        body = rpc_error(rec.get(label), f"tools/call ({label})")
        assert body["error"]["code"] == INVALID_PARAMS, \
            f"tools/call ({label}): code {body['error']['code']}, expected -32602"


# Errors whose HTTP status the spec's table does not give (it only lists -32601 and -32602 among "other codes"):
# a JSON-RPC error under 200 is as legitimate for them as a 4xx.
STATUS_OPEN = {steps.UNSUPPORTED_METHOD, steps.UNKNOWN_TOOL, steps.NO_PROMPT, steps.CONTENT_TYPE}


def refusals_keep_status(rec: Recording):
    """Every MCP refusal the suite provokes has a 4xx and a JSON-RPC error body whose `id` is the request's or null;
    a JSON-RPC error under a 2xx is a refusal that lost its status (except where the spec gives no status)."""
    judged = 0
    for ex in rec.exchanges:
        if ex.status is None:
            continue
        what = f"{rec.scenario} {ex.label}"
        if 200 <= ex.status < 300 and ex.label in STATUS_OPEN:
            continue
        if 200 <= ex.status < 300:
            try:
                msgs = messages(ex)
            except AssertionError:
                continue
            refused = [m for m in msgs if isinstance(m, dict) and "error" in m and "result" not in m]
            assert not refused, f"{what}: a JSON-RPC error under HTTP {ex.status}; a refusal must keep its 4xx status: " \
                                f"{got(ex)}"
            continue
        assert 400 <= ex.status < 500, f"{what}: a refusal must keep a 4xx status, got {got(ex)}"
        body = rpc_error(ex, what)
        assert body.get("id") in (None, sent_id(ex)), \
            f"{what}: the error's id is {truncate(body.get('id'))}, expected the request's {sent_id(ex)!r} or null"
        judged += 1
    if not judged:
        raise NotAssessed(f"{rec.scenario}: no refusal was observed")


rule(lambda scn: refusals_keep_status, over=("mcp.refusals", "access.mcp"), requirements="MCP-ERR-001",
     scenarios=lambda scn: [scn], name=lambda scn: f"refusal_body_{scn.replace('.', '_')}")


@check("MCP-ERR-002", scenarios=REFUSALS)
def unknown_agent(rec: Recording):
    """Sends tools/call with a valid API key to a nonexistent `agt_…` id; HTTP 404 with code -32600."""
    mcp_refused(rec, steps.UNKNOWN_AGENT, 404, INVALID_REQUEST)


def probed_429(rec: Recording) -> Exchange:
    limited = [ex for ex in rec.exchanges if ex.status == 429]
    if not limited:
        raise NotAssessed(f"no 429 within {rec.facts.get('sent')} requests")
    return limited[0]


def retry_after_seconds(ex: Exchange) -> str:
    retry = (ex.header("retry-after") or "").strip()
    assert retry.isascii() and retry.isdigit(), f"the 429's Retry-After is {retry!r}, expected whole seconds"
    return retry


@check("MCP-ERR-003", scenarios=["mcp.rate_limit"])
def rate_limited(rec: Recording):
    """A 429 from the MCP endpoint has a JSON-RPC error body and an integer `Retry-After`."""
    ex = probed_429(rec)
    body = rpc_error(ex, "the 429")
    return f"code {body['error']['code']}, Retry-After {retry_after_seconds(ex)}"


@check("GEN-RATE-003", scenarios=["mcp.rate_limit"])
def probed_429_has_retry_after(rec: Recording):
    """The 429 the rate-limit probe provoked carries `Retry-After` in whole seconds."""
    return f"Retry-After {retry_after_seconds(probed_429(rec))}"


# -- the official client ----------------------------------------------------------------------
def client_run(rec: Recording, mode: str) -> dict[str, Any]:
    run = (rec.facts.get("runs") or {}).get(mode)
    if not run:
        raise NotAssessed(f"the official mcp client did not run in mode {mode}")
    if run.get("error"):
        raise AssertionError(f"the official mcp client ({mode}) failed at step {run.get('step')!r}: {run['error']}")
    return run


def client_plain(rec: Recording, mode: str) -> str:
    run = client_run(rec, mode)
    tools = run.get("tools")
    assert isinstance(tools, list) and len(tools) == 1, f"the official client ({mode}) listed tools {tools}"
    expected = rec.facts.get("expected")
    if expected is not None:
        assert run.get("plain") == expected and not run.get("plain_is_error"), \
            f"the official client ({mode}) got {truncate(run.get('plain'))}, expected {expected!r}"
    return f"{run['counts']['requests']} requests, protocol {run.get('protocol_version')}"


@check("MCP-CLIENT-001", scenarios=["mcp.official_client"])
def official_client_legacy(rec: Recording):
    """The official `mcp` client on the 2025-11-25 handshake initializes, lists one tool and gets the plain reply."""
    return client_plain(rec, "legacy")


@check("MCP-CLIENT-003", scenarios=["mcp.official_client"])
def official_client_modern(rec: Recording):
    """The official `mcp` client in mode 2026-07-28 lists one tool and gets the plain reply."""
    return client_plain(rec, "2026-07-28")


@check("MCP-CLIENT-004", scenarios=["mcp.official_client"])
def official_client_elicits(rec: Recording):
    """The official client (2026-07-28, elicitation callback) answers the form for the question prompt and gets
    `answer: <content>thanks`."""
    run = client_run(rec, "2026-07-28")
    elicited = run.get("elicited") or []
    assert len(elicited) == 1, f"the official client's elicitation callback ran {len(elicited)} times, expected once " \
                               f"(the call answered {truncate(run.get('question'))})"
    expected = conformance_reply(rec, elicited[0]["content"])
    assert run.get("question") == expected, f"after the form, the official client got {truncate(run.get('question'))}, " \
                                            f"expected {expected!r}"


@check("MCP-CLIENT-005", scenarios=["mcp.official_client"])
def official_client_resumes(rec: Recording):
    """The official client (2025-11-25, no elicitation) gets the question as text, then answers it with the `resume`
    argument and gets `answer: {"name":"Ada"}thanks`."""
    run = client_run(rec, "legacy")
    question = rec.facts.get("question")
    if question is not None:
        assert question in (run.get("question") or ""), \
            f"the official client got {truncate(run.get('question'))}, expected the question {question!r} as text"
    expected = conformance_reply(rec, run.get("resume_value"))
    assert run.get("resumed") == expected, f"after resume the official client got {truncate(run.get('resumed'))}, " \
                                           f"expected {expected!r}"
