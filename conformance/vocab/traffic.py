"""Which requirement a schema violation in recorded traffic breaks, by the JSON path of the failing field
(`$.error.requestId` breaks GEN-ERR-004, not GEN-ERR-001).

The shared validator (`conformance.schemas`, compiled once) finds the violations; this module maps each to its
requirement. `exchange_violations(ex)` serves the schema checks (conformance/checks/schemas.py) and
`body_violations` the checks of the schemathesis cases (conformance/checks/fuzz.py), so generated and scripted traffic are
judged by the same mapping.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformance import schemas
from conformance.vocab.values import error_object, is_json_media_type, json_or_none

# -- which requirement states which field -------------------------------------------------
# Keys are field paths (list indices written as "*"); the longest matching prefix wins.
# For event schemas the first key element is the event type ("" = any type).
ERROR_BODY = {
    (): "GEN-ERR-001", ("error",): "GEN-ERR-001", ("error", "code"): "GEN-ERR-002",
    ("error", "message"): "GEN-ERR-003", ("error", "requestId"): "GEN-ERR-004",
    ("error", "details"): "GEN-ERR-005",
}
INVOKE_RESULT = {
    (): "INV-RES-001", ("status",): "INV-RES-002", ("result",): "INV-RES-003", ("events",): "INV-RES-005",
    ("events", "*"): "INV-RES-005", ("events", "*", "v"): "INV-RES-007", ("events", "*", "type"): "INV-RES-008",
    ("events", "*", "<not text>"): "INV-RES-006", ("sessionId",): "INV-RES-009", ("agentId",): "INV-RES-010",
    ("versionNumber",): "INV-RES-011", ("requestId",): "INV-RES-012", ("durationMs",): "INV-RES-013",
    ("error",): "INV-RES-015",
}
INVOKE_EVENT = {
    ("",): "INV-STREAM-002", ("", "v"): "INV-STREAM-004", ("", "type"): "INV-STREAM-005",
    ("text", "delta"): "INV-STREAM-006", ("tool_call_start", "name"): "INV-STREAM-010",
    ("error", "message"): "INV-TERM-006",
}
AGUI_EVENT = {
    ("",): "AGUI-FRAME-003", ("", "type"): "AGUI-FRAME-003",
    ("RUN_STARTED", "threadId"): "AGUI-ID-005", ("RUN_STARTED", "runId"): "AGUI-ID-006",
    ("TEXT_MESSAGE_START",): "AGUI-ID-007", ("TEXT_MESSAGE_CONTENT",): "AGUI-ID-008",
    ("TEXT_MESSAGE_END",): "AGUI-ID-009",
    ("RUN_FINISHED", "threadId"): "AGUI-ID-004", ("RUN_FINISHED", "runId"): "AGUI-ID-006",
    ("RUN_FINISHED", "result"): "AGUI-PROMPT-003", ("RUN_FINISHED", "outcome"): "AGUI-PROMPT-004",
    ("RUN_ERROR", "message"): "AGUI-FAIL-003",
}
# When the request carried the id, a missing or mistyped echo breaks the echo requirement instead.
AGUI_ECHO = {("RUN_STARTED", "threadId"): ("threadId", "AGUI-ID-001"),
             ("RUN_STARTED", "runId"): ("runId", "AGUI-ID-002"),
             ("RUN_FINISHED", "runId"): ("runId", "AGUI-ID-003")}
MCP_ERROR = {(): "MCP-ERR-001"}
MCP_32022 = {(): "MCP-ERR-001", ("error", "code"): "MCP-VER-002", ("error", "data"): "MCP-VER-003",
             ("error", "data", "supported"): "MCP-VER-003", ("error", "data", "requested"): "MCP-VER-004"}
MCP_RESPONSE = {(): "MCP-METH-005", ("error",): "MCP-ERR-001"}
MCP_TOOL_RESULT = {
    (): "MCP-TOOL-001", ("jsonrpc",): "MCP-METH-005", ("id",): "MCP-METH-005", ("result",): "MCP-TOOL-001",
    ("result", "content"): "MCP-TOOL-001", ("result", "structuredContent"): "MCP-SESS-001",
    ("result", "resultType"): "MCP-TOOL-003", ("result", "isError"): "MCP-TOOL-004",
}
MCP_PROGRESS = {(): "MCP-PROG-004", ("params", "progressToken"): "MCP-PROG-005",
                ("params", "progress"): "MCP-PROG-006", ("params", "message"): "MCP-PROG-007"}
METADATA = {(): "META-DOC-001", ("resource",): "META-DOC-002", ("authorization_servers",): "META-DOC-003",
            ("scopes_supported",): "META-DOC-005", ("bearer_methods_supported",): "META-DOC-007"}
METADATA_ERROR = {(): "META-STATE-003"}

MAPS = {
    "error-body": ERROR_BODY, "invoke-result": INVOKE_RESULT, "invoke-event": INVOKE_EVENT,
    "agui-event": AGUI_EVENT, "mcp-error": MCP_ERROR, "mcp-error-32022": MCP_32022, "mcp-response": MCP_RESPONSE,
    "mcp-tools-call-result": MCP_TOOL_RESULT, "mcp-progress-notification": MCP_PROGRESS,
    "protected-resource-metadata": METADATA,
}
EVENT_SCHEMAS = {"invoke-event", "agui-event"}
SHOWN = 240   # characters of an instance shown in a message


@dataclass(frozen=True)
class Violation:
    requirement: str
    where: str      # "POST …/invoke [label] frame 3"
    text: str       # "$.error.requestId: 'x' does not match '^req_.+' (schema error-body)"

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


def _field_path(err) -> tuple[str, ...]:
    path = tuple("*" if isinstance(p, int) else str(p) for p in err.absolute_path)
    if err.validator == "required" and isinstance(err.message, str) and err.message.startswith("'"):
        path += (err.message.split("'")[1],)      # "'code' is a required property" -> the missing field
    if err.validator == "not" and path[:1] == ("events",):
        path += ("<not text>",)
    return path


def _lookup(table: dict[tuple, str], key: tuple[str, ...]) -> str:
    for n in range(len(key), -1, -1):
        if key[:n] in table:
            return table[key[:n]]
    return table.get((), next(iter(table.values())))


def violations(name: str, instance: Any, where: str, sent: dict[str, Any] | None = None,
               applied: list[str] | None = None) -> list[Violation]:
    """Every schema violation of `instance` against `schemas/<name>.json`, each mapped to its requirement.

    `applied`, when given, collects the names of the schemas used (so callers know what was judged).
    """
    table = MAPS[name]
    if applied is not None and name not in applied:
        applied.append(name)
    if schemas.surely_valid(name, instance):
        return []
    out = []
    for err in schemas.validator(name).iter_errors(instance):
        path = _field_path(err)
        if name in EVENT_SCHEMAS:
            etype = instance.get("type") if isinstance(instance, dict) and isinstance(instance.get("type"), str) else ""
            key = (etype,) + path
            rid = table.get(key[:2]) or table.get(key[:1]) or table.get(("",) + path[:1]) or table[("",)]
            echo = AGUI_ECHO.get(key[:2]) if name == "agui-event" else None
            if echo and sent and sent.get(echo[0]) is not None:
                rid = echo[1]
        else:
            rid = _lookup(table, path)
        shown = json.dumps(err.instance, ensure_ascii=False)[:80] if _jsonable(err.instance) else repr(err.instance)[:80]
        text = f"$.{'.'.join(map(str, err.absolute_path))}".rstrip(".") + f": {err.message[:160]} [{err.validator}]" \
            + (f" (value {shown})" if err.validator != "required" else "") + f" (schema {name})"
        out.append(Violation(rid, where, text))
    return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


# -- which schema a recorded body or frame must match ---------------------------------------
def operation_of(path: str) -> str | None:
    """invoke | agui | mcp | metadata from a request path or URL."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/mcp") and "/.well-known/oauth-protected-resource/" in path:
        return "metadata"
    for op in ("invoke", "agui", "mcp"):
        if path.endswith("/" + op):
            return op
    return None


def body_violations(op: str, status: int | None, content_type: str | None, body: bytes,
                    frames: list[tuple[str | None, str]] | None, request: Any, where: str,
                    applied: list[str] | None = None) -> list[Violation]:
    """Map one answer (status, content type, body or SSE frames (event, data)) to schema violations.

    Only answers whose kind the spec fixes are judged: a body that is not JSON or a stream
    whose data is not JSON is left to the framing checks (it has no schema to match), and so is a refusal sent
    as a stream (its frames are no events: AGUI-ERR-005, INV-ERR-001, GEN-ERR-001, MCP-ERR-001 judge it).
    """
    if status is None:
        return []
    sent = request if isinstance(request, dict) else {}
    if frames is not None:
        if not 200 <= status < 300:
            return []       # a refusal sent as an event stream has no event schema: the refusal checks own it
        return _frame_violations(op, frames, sent, where, applied)
    doc = _parse(body)
    if doc is _NOT_JSON:
        return []
    if op == "invoke" or op == "agui":
        if 400 <= status < 500:
            return violations("error-body", doc, where, applied=applied)
        if status == 200 and op == "invoke" and is_json_media_type(content_type):
            return violations("invoke-result", doc, where, applied=applied)
        return []
    if op == "mcp":
        return _mcp_violations(status, doc, sent, where, applied)
    if op == "metadata":
        if status == 200:
            return violations("protected-resource-metadata", doc, where, applied=applied)
        if status != 404 and 400 <= status < 600:
            return [Violation("META-STATE-003", v.where, v.text) for v in violations("error-body", doc, where, applied=applied)]
    return []


def _mcp_violations(status: int, doc: Any, sent: dict[str, Any], where: str,
                    applied: list[str] | None = None) -> list[Violation]:
    if status >= 400:
        found = violations("mcp-error", doc, where, applied=applied)
        code = (error_object(doc) or {}).get("code")
        if code == -32022 and status == 400:
            found += [v for v in violations("mcp-error-32022", doc, where, applied=applied) if v.requirement != "MCP-ERR-001"]
        return found
    if status != 200:
        return []
    if sent.get("method") == "tools/call" and isinstance(doc, dict) and "result" in doc:
        return violations("mcp-tools-call-result", doc, where, applied=applied)
    return violations("mcp-response", doc, where, applied=applied)


def _frame_violations(op: str, frames: list[tuple[str | None, str]], sent: dict[str, Any],
                      where: str, applied: list[str] | None = None) -> list[Violation]:
    out: list[Violation] = []
    for i, (_event, data) in enumerate(frames):
        doc = _parse(data.encode() if isinstance(data, str) else data)
        if doc is _NOT_JSON:
            continue                        # framing checks own "data is JSON"
        at = f"{where} frame {i + 1}"
        if op == "invoke":
            out += violations("invoke-event", doc, at, applied=applied)
        elif op == "agui":
            out += violations("agui-event", doc, at, sent, applied)
        elif op == "mcp":
            last = i == len(frames) - 1
            if last and isinstance(doc, dict) and ("result" in doc or "error" in doc):
                out += _mcp_violations(200, doc, sent, at, applied)
            elif isinstance(doc, dict) and doc.get("method") == "notifications/progress":
                # the fields of a progress notification; a frame of any other kind is MCP-PROG-004's failure alone
                out += violations("mcp-progress-notification", doc, at, applied=applied)
    return out


_NOT_JSON = object()


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, AttributeError):
        return _NOT_JSON


def exchange_violations(ex) -> list[Violation]:
    """Every schema violation in one recorded Exchange (body, or every dispatched SSE frame); read once per exchange
    (the schema checks of every requirement a scenario's answers show ask again)."""
    return ex.remembered("schema violations", lambda: _violations_of(ex, ex.remembered("schemas applied", list)))


def schemas_applied(ex) -> list[str]:
    """The schemas one exchange's answer was validated against (read with its violations)."""
    exchange_violations(ex)
    return ex.remembered("schemas applied", list)


def _violations_of(ex, applied: list[str] | None = None) -> list[Violation]:
    op = operation_of(ex.url)
    if op is None or ex.status is None:
        return []
    where = f"{ex.method} {ex.url.split('://', 1)[-1].split('/', 1)[-1][:90]} [{ex.label}] -> {ex.status}"
    frames = None
    if ex.stream is not None:
        frames = [(f.event, f.data) for f in ex.stream.events if f.dispatched]
    return body_violations(op, ex.status, ex.content_type, ex.body, frames, json_or_none(ex.request_body), where,
                           applied)
