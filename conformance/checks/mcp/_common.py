"""What the MCP check modules share: constants and readers of JSON-RPC answers and streams."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.vocab import protocols as p
from conformance.vocab.steps import mcp as steps
from conformance.vocab.readers import frame_json, got, request_json
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
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

REFUSALS = ["mcp.refusals"]
