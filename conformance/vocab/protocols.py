"""Request builders and reply readers for the three protocols, shared by every scenario and check.

Only shapes the spec states are built here; where it is silent (the `resume`
shape, the elicitation form) the upstream packages' shapes are used and the
callers say so in their reports.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from conformance.model.values import TRANSFORMABLE
from conformance.vocab import inputs
from conformance.wire.exchange import Exchange

MCP_VERSION = "2026-07-28"
MCP_LEGACY_VERSION = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
SSE = "text/event-stream"
MCP_ACCEPT = "application/json, text/event-stream"


# Ways to write one JSON request body (RFC 8259: whitespace between tokens is insignificant, any character may be
# written as a \u escape, an object is an unordered collection of members): every one means the same request.
JSON_WRITINGS = ("compact", "spaced", "ascii-escaped", "members-reversed", "slash-escaped")


def written(value: Any, writing: str) -> bytes:
    """`value` as JSON text in one of `JSON_WRITINGS`."""
    if writing == "members-reversed":
        return json.dumps(_reversed(value), ensure_ascii=False, separators=(",", ":")).encode()
    if writing == "slash-escaped":    # every `/` as `\/` (RFC 8259 §7), as PHP's json_encode writes it by default
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("/", "\\/").encode()
    if writing == "spaced":
        return (json.dumps(value, ensure_ascii=False, indent=1).replace("\n", "\r\n") + "\r\n").encode()
    return json.dumps(value, ensure_ascii=writing == "ascii-escaped", separators=(",", ":")).encode()


def compact_size(value: Any) -> tuple[int, int]:
    """(at least, at most) the bytes of `written(value, "compact")`, counted without writing it (a size probe is a MB
    of JSON): a string's characters take one to six bytes each; a value JSON writes otherwise than these types is
    written."""
    if isinstance(value, str):
        return len(value) + 2, 6 * len(value) + 2
    if isinstance(value, dict) and all(type(k) is str for k in value):
        lo = hi = 2 + max(2 * len(value) - 1, 0)        # braces, a colon a member, commas between
        for k, v in value.items():
            (klo, khi), (vlo, vhi) = compact_size(k), compact_size(v)
            lo, hi = lo + klo + vlo, hi + khi + vhi
        return lo, hi
    if type(value) in (list, tuple):
        lo = hi = 2 + max(len(value) - 1, 0)
        for v in value:
            vlo, vhi = compact_size(v)
            lo, hi = lo + vlo, hi + vhi
        return lo, hi
    n = len(written(value, "compact"))
    return n, n


def changes(value: Any, writing: str) -> bool:
    """Whether `written(value, writing)` differs from the compact writing, read without writing either: spacing
    always adds a line end; escaping changes a text with a character beyond ASCII, or with `/`; reversing, an object
    of two members or more."""
    if writing == "compact":
        return False
    if writing not in ("ascii-escaped", "slash-escaped", "members-reversed"):
        return True
    if isinstance(value, str):
        return not value.isascii() if writing == "ascii-escaped" else writing == "slash-escaped" and "/" in value
    if isinstance(value, dict):     # a key JSON writes from another type is ASCII, without `/`
        return writing == "members-reversed" and len(value) > 1 \
            or any(changes(k, writing) for k in value if isinstance(k, str)) \
            or any(changes(v, writing) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(changes(v, writing) for v in value)
    return False


def _reversed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """The conformance agent's canonical JSON (docs/agent.md)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def resume_facts(entry: dict[str, Any]) -> dict[str, Any]:
    """What the profile's `question_and_resume` says of the reply after a resume (a scenario notes it)."""
    return {"after_resume": entry.get("reply_after_resume"), "suffix": entry.get("reply_after_resume_suffix")}


def resumed_reply(facts: dict[str, Any], answer: Any) -> str | None:
    """The whole reply expected of a run resumed with `answer`, from `resume_facts`: the profile's
    `reply_after_resume`, else `answer: ` + canonical JSON of the answer + `reply_after_resume_suffix` (the
    conformance agent's form); None when the profile gives neither."""
    if facts.get("after_resume") is not None:
        return facts["after_resume"]
    return None if facts.get("suffix") is None else "answer: " + canonical(answer) + facts["suffix"]


def say_json(text: str) -> str:
    """A `say-json` directive line carrying any text exactly."""
    return "say-json " + json.dumps(text, ensure_ascii=False)


# -- invoke ------------------------------------------------------------------------------
def invoke_body(prompt: str, session: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"prompt": prompt}
    if session is not None:
        body["sessionId"] = session
    body.update(extra)
    return body


# a small structured value well inside the 4 KB the extra data field takes, which an `echo params` run carries along
EXTRA_DATA = {"note": "conformance \u2713 extra data", "list": [1, 2.5, True, False, None, "x"],
              "nested": {"a": {"b": ["c"]}}}
# ...with a text of characters a store or a transformation changes (outside the BMP, composed and not, case,
# whitespace at its ends, a format character): what changes the extra data of the probes built for it (class
# extra-data:multibyte-inside) shows on every echo run too
EXTRA_TEXT = f"{TRANSFORMABLE[0]}\U0001f600\u200b{TRANSFORMABLE[1:]}"


def extra_data_sample(target: Any) -> dict[str, Any]:
    """The extra data field with `EXTRA_DATA`, when its name is known (`--extra-data-field`); else nothing."""
    field = getattr(target, "extra_data_field", None)
    text = {"text": EXTRA_TEXT} if inputs.is_sent("extra-data:multibyte-inside") else {}
    return {field: {**EXTRA_DATA, **text}} if field else {}


def invoke_frames(ex: Exchange) -> list[tuple[str | None, Any]]:
    """(event name, parsed data) of every frame of an invoke stream; AssertionError if data is not JSON."""
    assert ex.stream is not None, f"expected a text/event-stream answer, got Content-Type {ex.header('content-type')!r}"
    return [(f.event, f.json()) for f in ex.stream.events]


def invoke_stream_text(ex: Exchange) -> str:
    return "".join(d.get("delta", "") for _, d in invoke_frames(ex) if isinstance(d, dict) and d.get("type") == "text")


# -- AG-UI ------------------------------------------------------------------------------
def agui_message(content: str, role: str = "user", msg_id: str | None = None) -> dict[str, Any]:
    made = int(hashlib.sha256(f"{role}|{content}".encode()).hexdigest()[:8], 16) % 10**8   # the same in every process
    return {"id": msg_id or f"m-{made}", "role": role, "content": content}


def agui_input(prompt: str | None = None, *, thread: str | None = None, run: str | None = None,
               messages: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if thread is not None:
        body["threadId"] = thread
    if run is not None:
        body["runId"] = run
    if messages is None:
        messages = [agui_message(prompt)] if prompt is not None else []
    body["messages"] = messages
    body.update(extra)
    return body


def agui_events(ex: Exchange) -> list[dict[str, Any]]:
    """The JSON AG-UI events of a stream (comments are not events)."""
    assert ex.stream is not None, f"expected a text/event-stream answer, got Content-Type {ex.header('content-type')!r}"
    return [f.json() for f in ex.stream.events if f.dispatched]


def agui_text(events: list[dict[str, Any]]) -> str:
    return "".join(e.get("delta", "") for e in events if e.get("type") == "TEXT_MESSAGE_CONTENT")


def interrupt_ids(interrupts: list[dict[str, Any]]) -> list[str]:
    """The ids a paused AG-UI run listed: only non-empty strings (an absent id is never answered with null)."""
    return [i["id"] for i in interrupts if isinstance(i, dict) and isinstance(i.get("id"), str) and i["id"]]


def agui_resume(interrupts: list[dict[str, Any]], payload: Any) -> list[dict[str, Any]]:
    """AG-UI 1.0 resume entries answering every interrupt the server listed (the spec does not show the shape)."""
    return [{"interruptId": i, "status": "resolved", "payload": payload} for i in interrupt_ids(interrupts)]


# -- MCP --------------------------------------------------------------------------------
def mcp_request(method: str, params: dict[str, Any] | None = None, *, id: Any = 1,
                version: str | None = MCP_VERSION, capabilities: dict[str, Any] | None = None,
                progress_token: Any = None) -> dict[str, Any]:
    params = dict(params or {})
    meta = dict(params.get("_meta") or {})
    if version is not None:
        meta[META_VERSION] = version
        meta.setdefault(META_CAPS, capabilities or {})
    if progress_token is not None:
        meta["progressToken"] = progress_token
    if meta:
        params["_meta"] = meta
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id is not None:
        body["id"] = id
    return body


def mcp_headers(method: str, *, version: str | None = MCP_VERSION, name: str | None = None) -> dict[str, str]:
    headers = {"Accept": MCP_ACCEPT, "Mcp-Method": method}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def slug_tool_name(slug: str) -> str:
    """The tool name the spec derives from an agent slug (`my-agent` -> `ask_my_agent`)."""
    return "ask_" + slug.replace("-", "_")


def tool_arguments(prompt: str | None, session: str | None = None, resume: Any = None) -> dict[str, Any]:
    """`arguments` of a tools/call: the ones given, under the spec's names."""
    args = {"prompt": prompt, "session_id": session, "resume": resume}
    return {k: v for k, v in args.items() if v is not None}


def mcp_call(tool: str, prompt: str | None, *, session: str | None = None, resume: Any = None,
             id: Any = 1, **kw: Any) -> dict[str, Any]:
    return mcp_request("tools/call", {"name": tool, "arguments": tool_arguments(prompt, session, resume)}, id=id, **kw)


def mcp_messages(ex: Exchange) -> list[dict[str, Any]]:
    """Every JSON-RPC message of an MCP answer: the frames of a stream, or the one JSON body."""
    if ex.stream is not None:
        return [f.json() for f in ex.stream.events if f.dispatched]
    return [ex.json()]


def mcp_response(ex: Exchange) -> dict[str, Any]:
    """The JSON-RPC response (the last message); AssertionError if there is none."""
    msgs = mcp_messages(ex)
    assert msgs, "the MCP answer held no JSON-RPC message"
    last = msgs[-1]
    assert isinstance(last, dict) and ("result" in last or "error" in last), \
        f"the last MCP message is not a JSON-RPC response: {json.dumps(last)[:300]}"
    return last


def mcp_text(result: dict[str, Any]) -> str:
    blocks = [b for b in result.get("content", []) if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(b.get("text", "") for b in blocks)
