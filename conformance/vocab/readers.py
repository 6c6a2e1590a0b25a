"""Reading recorded answers: what came back in one line, the error object and code of an error body, the JSON
the suite sent, the JSON-object events of a stream, and a step of a recording that may have been skipped.
Readers never judge a requirement; the `what` strings they take name the exchange in messages."""
from __future__ import annotations

import json
from typing import Any

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent
from conformance.vocab.values import error_object, error_of  # noqa: F401  (read here by checks)


def is_4xx(ex: Exchange) -> bool:
    return ex.status is not None and 400 <= ex.status < 500


def got(ex: Exchange) -> str:
    if ex.status is None:
        return f"no response ({ex.error})"
    body = ex.body[:240].decode("utf-8", "replace")
    return ex.redact(f"HTTP {ex.status} {ex.header('content-type') or '(no content-type)'} {body!r}")


def error_code(ex: Exchange, what: str) -> Any:
    """`error.code` of an error body; AssertionError if the body is not `{error: {...}}`."""
    body = ex.json()
    err = error_object(body)
    assert err is not None, f"{what}: expected the error body {{error: {{code, message, requestId}}}}, got {got(ex)}"
    return err.get("code")


def rpc_error(ex: Exchange, what: str) -> dict[str, Any]:
    """The JSON-RPC error body of an MCP refusal (jsonrpc, id possibly null, integer code, string message)."""
    body = ex.json()
    problems = schemas.errors("mcp-error", body)
    assert not problems, f"{what}: the body is not a JSON-RPC error body ({'; '.join(problems[:3])}): {got(ex)}"
    assert "result" not in body, f"{what}: a refusal carries both `error` and `result`: {got(ex)}"
    return body


def request_json(ex: Exchange) -> Any:
    """The JSON body the suite sent in an exchange (None if none or not JSON)."""
    try:
        return json.loads(ex.request_body) if ex.request_body else None
    except ValueError:
        return None


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


def step(rec: Recording, label: str) -> Exchange:
    """The exchange of a step, or NotAssessed naming the option its skip needed."""
    skipped = rec.facts.get("skipped", {})
    if label in skipped:
        raise NotAssessed(skipped[label])
    return rec.get(label)
