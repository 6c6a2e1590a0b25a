"""What the official `mcp` client (2.3.0) made of each answer it got, read again from the recorded traffic with the
SDK's own parsers and models, so that a verdict about the client follows from the recording alone.

The client ran twice (`RUNS`): in its default mode `auto` (`server/discover`, then 2026-07-28) and on the
2025-11-25 handshake. `answers(rec, run)` walks a run's requests in the order sent and reads each answer the way
the SDK's streamable HTTP transport and session do: the HTTP status, the content type, the JSON-RPC message (the
JSON body, or the `message` frames of a stream up to the response), then the result against the SDK's model of
that method at the negotiated version (`rejection`). Each answer says what it carried and, when the client could
not use it, why, in one line (`result.ttlMs: required, missing`).

Each request is one operation of the client's run (`OPERATIONS`): the handshake (`connect`), the listing, the
call with the plain-reply prompt, the call with the question prompt (with its retry), the call with `resume`.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from conformance.engine import Recording
from conformance.vocab.readers import request_json
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.vocab.values import json_or_none
from conformance.wire.exchange import Exchange

MODERN, LEGACY = "2026-07-28", "2025-11-25"
#: run -> its step family and the SDK mode it ran in
RUNS = {MODERN: (steps.OFFICIAL_MODERN, "auto"), LEGACY: (steps.OFFICIAL_LEGACY, "legacy")}
OPERATIONS = ("connect", "list", "plain", "question", "resume")
CONNECT_METHODS = ("initialize", "server/discover")
#: run -> operation -> the requirement that owns it (checks/mcp/client.py; docs/protocol-mapping.md's table)
OWNERS = {
    MODERN: {"connect": "MCP-CLIENT-003", "list": "MCP-CLIENT-003", "plain": "MCP-CLIENT-003",
             "question": "MCP-CLIENT-004"},
    LEGACY: {"connect": "MCP-CLIENT-001", "list": "MCP-CLIENT-001", "plain": "MCP-CLIENT-001",
             "question": "MCP-CLIENT-005", "resume": "MCP-CLIENT-005"},
}
TOOL_SHAPE = "MCP-CLIENT-002"      # judges the listed tool itself (checks/mcp/methods.py): the root of a rejected one


@dataclass
class Answer:
    """One request of the client's and what it made of the answer."""
    exchange: Exchange
    method: str
    operation: str
    version: str                   # the protocol version the client read it at
    result: dict[str, Any] | None  # the result it accepted (None: an error, or unusable)
    error: dict[str, Any] | None   # a JSON-RPC error object it got
    problem: str | None            # why it could not use the answer, in one line
    path: str = ""                 # where in the result the problem is (`result.tools[0].name`), if there

    @property
    def text(self) -> str | None:
        """The reply text of a tool result (its text blocks joined)."""
        content = (self.result or {}).get("content")
        if not isinstance(content, list):
            return None
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def operation(method: str, params: Any, prompts: dict[str, str]) -> str:
    """Which operation of the client's run a request belongs to (`OPERATIONS`)."""
    if method in CONNECT_METHODS:
        return "connect"
    if method == "tools/list":
        return "list"
    args = params.get("arguments") if isinstance(params, dict) else None
    args = args if isinstance(args, dict) else {}
    if "resume" in args:
        return "resume"
    return "question" if args.get("prompt") == prompts.get("question") else "plain"


def answers(rec: Recording, run: str) -> list[Answer]:
    """Every request the client sent in `run` (no notification, no answer of its own, no GET stream), with what
    it made of the answer, in the order sent."""
    family, _ = RUNS[run]
    prompts = rec.facts.get("prompts") or {}
    out: list[Answer] = []
    version: str | None = None        # until the client has negotiated, it reads an answer at 2025-11-25
    sent_by_run = rec.labelled(family)
    for n, ex in enumerate(sent_by_run):
        sent = request_json(ex)
        if ex.method != "POST" or not isinstance(sent, dict) or "id" not in sent or not isinstance(
                sent.get("method"), str):
            continue
        if _followed(ex, sent_by_run[n + 1:]):
            continue
        method = sent["method"]
        answer = read(ex, method, version or LEGACY, sent.get("id"))
        answer.operation = operation(method, sent.get("params"), prompts)
        if answer.result is not None:
            version = negotiated(method, answer.result, version)
        out.append(answer)
    return out


def _followed(ex: Exchange, later: list[Exchange]) -> bool:
    """A redirect the client followed (within the endpoint's origin): the same request was sent again."""
    return ex.status is not None and 300 <= ex.status < 400 and any(
        other.request_body == ex.request_body for other in later)


def negotiated(method: str, result: dict[str, Any], version: str | None) -> str | None:
    """The version the client speaks after accepting `result` (`initialize` and `server/discover` set it)."""
    if method == "initialize":
        return result.get("protocolVersion")
    if method == "server/discover" and MODERN in (result.get("supportedVersions") or ()):
        return MODERN
    return version


# -- reading one answer as the SDK does ----------------------------------------------------------------------
def read(ex: Exchange, method: str, version: str, request_id: Any) -> Answer:
    """What the client made of the answer to its request `method` (sent with `request_id`), read at `version`."""
    def answer(problem: str | None, result: Any = None, error: Any = None, path: str = "") -> Answer:
        if problem and method == "server/discover":
            problem += "; in its default mode the client then falls back to the 2025-11-25 handshake"
        return Answer(ex, method, "", version, result, error, problem, path)

    if ex.status is None:
        return answer(f"no answer ({ex.error})")
    media = (ex.header("content-type") or "").split(";")[0].strip().lower()
    if ex.status == 202:
        return answer("202 Accepted, so no response will follow")
    if 300 <= ex.status < 400:
        return answer(f"a redirect (HTTP {ex.status}) the client does not follow")
    if ex.status >= 400:
        message = _message(ex.body) if media == "application/json" else None
        if isinstance(message, dict) and isinstance(message.get("error"), dict):
            return answer(f"HTTP {ex.status} with the JSON-RPC error {_error_text(message['error'])}",
                          error=message["error"])
        return answer(f"HTTP {ex.status} with no JSON-RPC error")
    if media == "application/json":
        message = _message(ex.body)
        if isinstance(message, str):
            return answer(f"not a JSON-RPC message: {message}")
        if not _same_id(message.get("id"), request_id):
            return answer(f"a response with the id {truncate(message.get('id'), 40)}, not the request's "
                          f"{truncate(request_id, 40)}, which the client never matches to its request")
    elif media == "text/event-stream":
        message = _streamed_response(ex)
        if isinstance(message, str):
            return answer(message)
    else:
        return answer(f"the content type {media or '(none)'}, neither JSON nor an event stream")
    if "error" in message:
        return answer(f"the JSON-RPC error {_error_text(message['error'])}", error=message["error"])
    result = message.get("result")
    found = rejection(method, version, result)
    if found is not None:
        path, what = found
        return answer(f"{path}: {what}", path=path)
    return answer(None, result=result)


def _message(body: bytes) -> dict[str, Any] | str:
    """The JSON-RPC message of a body, if the SDK's `jsonrpc_message_adapter` reads one; else why not."""
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValidationError as exc:
        raw = json_or_none(body)
        meant = "JSONRPCError" if isinstance(raw, dict) and "error" in raw else "JSONRPCResponse"
        return "; ".join(f"{p.lstrip('.')}: {w}" if p else w for p, w in _problems(exc, raw, meant)[:2])
    return json.loads(body)


def _streamed_response(ex: Exchange) -> dict[str, Any] | str:
    """The response among a stream's `message` frames, as the SDK reads them (a frame that is no JSON-RPC message
    fails the call), or why there is none."""
    if ex.stream is None:
        return "an event stream the client could not read"
    for n, frame in enumerate(ex.stream.dispatched, 1):
        if frame.event_type != "message" or not frame.data:
            continue
        message = _message(frame.data.encode("utf-8"))
        if isinstance(message, str):
            return f"an event stream whose frame {n} is not a JSON-RPC message: {message}"
        if "result" in message or "error" in message:
            return message
    return f"an event stream ending without a response ({ex.stream.end})"


def _same_id(got: Any, sent: Any) -> bool:
    """The SDK matches a response to its request by id, "7" and 7 alike (`coerce_request_id`)."""
    return got is not None and str(got) == str(sent) and not isinstance(got, bool)


def _error_text(error: Any) -> str:
    if not isinstance(error, dict):
        return truncate(error, 80)
    return f"{error.get('code')}: {truncate(error.get('message'), 120, one_line=True)}"


def rejection(method: str, version: str, result: Any) -> tuple[str, str] | None:
    """(where, what) when the SDK rejects `result` of `method` at `version`, else None; as `ClientSession` does:
    a negative `ttlMs` floored to 0, the version's own model (`mcp_types.methods.SERVER_RESULTS`; not for
    `server/discover`, which the `auto` probe reads with the version-free model alone), a later revision's fields
    dropped, then the version-free model (`MONOLITH_RESULTS`), then what the session checks itself."""
    from mcp.client.session import _clamp_inbound_ttl, _later_revision_fields
    from mcp_types import methods
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
    from pydantic import ValidationError

    if not isinstance(result, dict):
        return "result", f"expected an object, got {truncate(result, 60)}"
    raw = dict(result)
    _clamp_inbound_ttl(raw)
    try:
        if method != "server/discover" and (method, version) in methods.SERVER_RESULTS:
            methods.validate_server_result(method, version, raw)
        raw = {k: v for k, v in raw.items() if k not in _later_revision_fields(method, version)}
        if method in methods.MONOLITH_RESULTS:
            _version_free(method).validate_python(raw, by_name=False)
    except ValidationError as exc:
        (where, what), *more = _problems(exc, raw)
        also = [f"result{p}" if w == what else f"result{p} ({w})" for p, w in more[:3]]
        return f"result{where}", what + (f"; also {', '.join(also)}" if also else "")
    if method == "initialize" and raw.get("protocolVersion") not in HANDSHAKE_PROTOCOL_VERSIONS:
        return "result.protocolVersion", (f"{truncate(raw.get('protocolVersion'), 40)} is not a handshake version "
                                          f"the client speaks ({', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})")
    if method == "server/discover" and not set(raw.get("supportedVersions") or ()) & set(MODERN_PROTOCOL_VERSIONS):
        return "result.supportedVersions", (f"lists no version the client speaks without the handshake "
                                            f"({', '.join(MODERN_PROTOCOL_VERSIONS)})")
    return None


@functools.cache
def _version_free(method: str) -> Any:
    """The SDK's version-free model of `method`'s result, as a (costly to build, so kept) TypeAdapter."""
    from mcp_types import methods
    from pydantic import TypeAdapter

    return TypeAdapter(methods.MONOLITH_RESULTS[method])


# -- pydantic's complaints, one line each ---------------------------------------------------------------------
def _problems(exc: Any, value: Any, member: str | None = None) -> list[tuple[str, str]]:
    """(path, what) of each distinct complaint about the union member the server meant (`member`, else the one
    its value names by `resultType`, `method`, `mode` or `type`): pydantic reports every member of a union, and
    only one is what was meant. When the value names none, the member it came closest to naming."""
    errors = exc.errors(include_url=False)
    if member:
        errors = [e for e in errors if e["loc"][:1] == (member,)] or errors
    scored = [(_named(e["loc"], value), e) for e in errors]
    best = max(score for score, _ in scored)
    meant = [e for score, e in scored if score == best]
    if not best[0]:     # named none all the way: keep the complaints about one member, the first tried
        meant = [e for e in meant if _members(e["loc"]) == _members(meant[0]["loc"])]
    out: dict[str, str] = {}
    for e in meant:
        out.setdefault(_path(e["loc"]), _what(e))
    return list(out.items())


def _is_member(part: Any) -> bool:
    """A loc part naming a union member or a validator (`CallToolResult`, `function-after[…]`), not a field."""
    return isinstance(part, str) and (part[:1].isupper() or "[" in part or part in _PRIMITIVES)


_PRIMITIVES = {"int", "str", "float", "bool", "none", "list", "dict"}     # members of a union of plain types


def _members(loc: tuple) -> list[str]:
    return [part for part in loc if _is_member(part)]


def _named(loc: tuple, value: Any) -> tuple[bool, int]:
    """(every union member on `loc` is the one its value names, how many of them from the top are)."""
    node, named = value, 0
    for part in loc:
        if _is_member(part):
            if not _member_is(part, node):
                return False, named
            named += 1
            continue
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return True, named


def _member_is(member: str, node: Any) -> bool:
    """Whether `node` names the union member `member` as the SDK's unions tell theirs apart: a result by
    `resultType`, a request by `method`, elicitation params by `mode` (`form` when absent), content by `type`."""
    from mcp_types import methods

    name = member.rstrip("]").split("[")[-1].split(",")[-1].strip()    # function-after[…, InputRequiredResult]
    if not isinstance(node, dict):
        return False
    if name.endswith("Result"):
        return (name == "InputRequiredResult") == (node.get("resultType") == "input_required")
    if name.endswith("Request"):
        return any(cls.__name__ == name and method == node.get("method")
                   for (method, _), cls in methods.SERVER_REQUESTS.items())
    if name.startswith("ElicitRequest"):
        return name == ("ElicitRequestURLParams" if node.get("mode") == "url" else "ElicitRequestFormParams")
    tag = node.get("type")
    return isinstance(tag, str) and name.lower().startswith(tag.replace("_", "").lower())


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _is_member(part):
            out += f".{part}"
    return out


def _what(error: dict[str, Any]) -> str:
    kind, got = error["type"], error.get("input")
    if kind == "missing":
        return "required, missing"
    if kind == "literal_error":
        expected = str((error.get("ctx") or {}).get("expected", "")).replace("'", '"')
        return f"expected {expected}, got {_json(got)}"
    message = str(error.get("msg", "")).removeprefix("Value error, ").replace("Input should be ", "expected ")
    return f"{message}, got {_json(got)}"


def _json(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return truncate(json.dumps(value, ensure_ascii=False, default=repr), 60)


def tool_rejection(tool: Any) -> tuple[str, str] | None:
    """(where, what) when the client's 2026-07-28 model of a listed tool (`Tool`) rejects `tool`, else None."""
    from mcp_types._v2026_07_28 import Tool
    from pydantic import ValidationError

    try:
        Tool.model_validate(tool, by_name=False)
    except ValidationError as exc:
        (where, what), *more = _problems(exc, tool)
        return where.lstrip("."), what + (f"; also {', '.join(p.lstrip('.') for p, _ in more[:3])}" if more else "")
    return None
