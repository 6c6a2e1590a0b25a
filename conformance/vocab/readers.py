"""Reading recorded answers: what came back in one line, the error object and code of an error body, the JSON
the suite sent, the JSON-object events of a stream, and a step of a recording that may have been skipped.

Readers never judge a requirement. When an answer cannot be read because it broke the rule every reading of it
relies on (a refusal whose body is not its protocol's error body), a reader raises `precondition(ROOT, ex, …)`:
a plain Deviation for ROOT's own checks, a Blocked by ROOT for every other one. Anything else a reader cannot read
is a Deviation naming the exchange. The `what` strings they take say what was sent, for messages."""
from __future__ import annotations

from typing import Any

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import Deviation, NotAssessed, precondition
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent
from conformance.vocab.traffic import operation_of
from conformance.vocab.values import error_object, error_of, is_json_media_type, json_or_none  # noqa: F401  (read here by checks)


def is_4xx(ex: Exchange) -> bool:
    return ex.status is not None and 400 <= ex.status < 500


def sent_header(ex: Exchange, name: str) -> str | None:
    """The value of a request header as the suite sent it (names compared case-insensitively), or None."""
    return next((v for k, v in ex.request_headers.items() if k.lower() == name.lower()), None)


def got(ex: Exchange) -> str:
    if ex.status is None:
        return f"no response ({ex.error})"
    body = ex.body[:240].decode("utf-8", "replace")
    return ex.redact(f"HTTP {ex.status} {ex.header('content-type') or '(no content-type)'} {body!r}")


def error_body_rule(ex: Exchange) -> str | None:
    """The requirement stating the body of this answer when it is a refusal (a status other than 2xx): GEN-ERR-001
    for invoke and AG-UI (AGUI-ERR-005 for an AG-UI refusal sent as an event stream), MCP-ERR-001 for an MCP 4xx
    (the body of a 429 is MCP-ERR-003's), META-STATE-003 for a metadata refusal other than 404; else None."""
    status, op = ex.status, operation_of(ex.url)
    if status is None or 200 <= status < 300:
        return None
    if op == "agui" and ex.stream is not None:
        return "AGUI-ERR-005"
    if op in ("invoke", "agui"):
        return "GEN-ERR-001"
    if op == "mcp":
        return "MCP-ERR-001" if 400 <= status < 500 and status != 429 else None
    if op == "metadata":
        return "META-STATE-003" if status >= 400 and status != 404 else None
    return None


def unreadable(ex: Exchange, message: str, root: str | None = None) -> Deviation:
    """What a reader raises for an answer it cannot read: precondition(root) when the answer broke a rule every
    reading relies on (by default its protocol's error-body rule, `error_body_rule`), else a Deviation naming it."""
    root = root or error_body_rule(ex)
    return precondition(root, ex, message) if root else Deviation(message, ex)


def error_body(ex: Exchange, what: str) -> dict[str, Any]:
    """The `error` object of a refusal's error body: a JSON object whose `error` is an object, sent as JSON
    (`application/json` or a `+json` type). Otherwise the refusal broke its protocol's error-body rule (see
    `error_body_rule`), and nothing in the body can be read."""
    err = error_of(ex)
    if err is None:
        raise unreadable(ex, f"{what}: expected the error body {{error: {{code, message, requestId}}}}, got {got(ex)}")
    if not is_json_media_type(ex.header("content-type")):
        raise unreadable(ex, f"{what}: the error body is not sent as JSON (application/json or a +json type): "
                             f"{got(ex)}")
    return err


def error_code(ex: Exchange, what: str) -> Any:
    """`error.code` of an error body. A body that is not `{error: {...}}` broke its protocol's error-body rule
    (`error_body_rule`); an invoke/AG-UI `error.code` that is not a non-empty string broke GEN-ERR-002: either way
    the code cannot be read, and the reader raises that requirement as a precondition. The media type is not
    needed to read the code (it is GEN-ERR-001's own business)."""
    err = error_of(ex)
    if err is None:
        raise unreadable(ex, f"{what}: expected the error body {{error: {{code, message, requestId}}}}, got {got(ex)}")
    code = err.get("code")
    if not (isinstance(code, str) and code) and error_body_rule(ex) == "GEN-ERR-001":
        raise precondition("GEN-ERR-002", ex, f"{what}: `error.code` is not a non-empty string: {got(ex)}")
    return code


def rpc_error(ex: Exchange, what: str) -> dict[str, Any]:
    """The JSON-RPC error body of an MCP refusal (jsonrpc, id possibly null, integer code, string message, no
    `result`). A 4xx with any other body broke MCP-ERR-001, a precondition of reading it."""
    try:
        body = ex.json()
    except AssertionError as exc:
        raise unreadable(ex, f"{what}: the body is not a JSON-RPC error body: {exc}") from None
    problems = schemas.errors("mcp-error", body)
    if isinstance(body, dict) and "result" in body:
        problems.append("a refusal carries both `error` and `result`")
    if problems:
        raise unreadable(ex, f"{what}: the body is not a JSON-RPC error body ({'; '.join(problems[:3])}): {got(ex)}")
    return body


def request_json(ex: Exchange) -> Any:
    """The JSON body the suite sent in an exchange (None if none or not JSON)."""
    return json_or_none(ex.request_body)


def frame_json(frame: SSEEvent) -> tuple[bool, Any]:
    """(True, the frame's data parsed as JSON), or (False, None) when it is not JSON; never raises."""
    try:
        return True, frame.json()
    except (AssertionError, ValueError):
        return False, None


def stream_events(ex: Exchange) -> list[dict[str, Any]]:
    """The JSON-object events of an answer; [] when it is no stream (never raises: a scenario reads hostile data)."""
    if ex.stream is None:
        return []
    return [value for ok, value in map(frame_json, ex.stream.dispatched) if ok and isinstance(value, dict)]


def outcome_interrupts(ex: Exchange) -> list[dict[str, Any]]:
    """The interrupts a paused AG-UI run lists on RUN_FINISHED.outcome (AG-UI 1.0 place; the spec shows none)."""
    for ev in stream_events(ex):
        outcome = ev.get("outcome") if ev.get("type") == "RUN_FINISHED" else None
        if isinstance(outcome, dict) and isinstance(outcome.get("interrupts"), list):
            return [i for i in outcome["interrupts"] if isinstance(i, dict)]
    return []


def paused(ex: Exchange) -> bool:
    """Whether an AG-UI run ended with RUN_FINISHED whose outcome.type is `interrupt`."""
    return any(ev.get("type") == "RUN_FINISHED" and isinstance(ev.get("outcome"), dict)
               and ev["outcome"].get("type") == "interrupt" for ev in stream_events(ex))


def step(rec: Recording, label: str) -> Exchange:
    """The exchange of a step, or NotAssessed naming the option its skip needed."""
    skipped = rec.facts.get("skipped", {})
    if label in skipped:
        raise NotAssessed(skipped[label])
    return rec.get(label)
