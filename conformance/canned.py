"""Recordings built by hand from a literal transcript, so a check can be tested without a server.

    rec = canned.recording("agui.plain", [
        canned.exchange(200, {"content-type": "text/event-stream"},
                        sse=[(0.0, b'data: {"type":"RUN_STARTED"}\\n\\n'), (0.2, b": ping\\n\\n")],
                        label="agui"),
    ], facts={"expected_reply": "conformance"})
    check_fn(rec)      # returns, or raises AssertionError / NotAssessed / Observation

The SSE chunks go through the real strict recorder (`wire.sse.SSERecorder`), each at its given time,
so framing, comments, line endings and timing are exactly what a live exchange would record.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

import httpx

from conformance.engine import Recording
from conformance.profile import AGENT_SCENARIOS, Profile
from conformance.target import Target
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSERecorder

DEFAULT_TARGET = Target(base_url="https://server.test", agent_id="agt_canned", api_key="ais_live_canned_key",
                        agent_slug="conformance-agent", auth_url="https://auth.server.test",
                        extra_data_field="data")


def exchange(status: int | None, headers: dict[str, str] | Iterable[tuple[str, str]] = (), *,
             body: bytes | str | Any = b"", sse: Iterable[tuple[float, bytes]] | None = None,
             label: str = "main", method: str = "POST", url: str = "https://server.test/v1/agents/agt_canned/invoke",
             request_headers: dict[str, str] | None = None, request_body: Any = None,
             error: str | None = None, t_headers: float = 0.01, stream_end: str = "eof") -> Exchange:
    """One exchange as a server could have answered it.

    `body`: bytes, str (UTF-8) or any other value (written as JSON). `sse`: (time, chunk) pairs fed to the
    strict recorder in order; the stream ends at the last chunk's time with `stream_end`."""
    if isinstance(body, str):
        body = body.encode()
    elif not isinstance(body, bytes):
        body = json.dumps(body).encode()
    stream = None
    t_end = t_headers
    if sse is not None:
        rec = SSERecorder(t0=0.0, clock=lambda: 0.0)
        chunks = list(sse)
        for t, chunk in chunks:
            rec.feed(chunk, t)
            body += chunk
        t_end = chunks[-1][0] if chunks else t_headers
        stream = rec.finish(stream_end, t_end)
    if request_body is not None and not isinstance(request_body, bytes):
        request_body = json.dumps(request_body).encode()
    return Exchange(label=label, method=method, url=url, request_headers=dict(request_headers or {}),
                    request_body=request_body, status=status,
                    headers=httpx.Headers(list(headers.items()) if isinstance(headers, dict) else list(headers))
                    if status is not None else None,
                    body=body, stream=stream, t_headers=t_headers if status is not None else None,
                    t_end=t_end, error=error, started_at=0.0)


def recording(scenario: str, exchanges: Iterable[Exchange], *, facts: dict[str, Any] | None = None,
              target: Target = DEFAULT_TARGET) -> Recording:
    """A Recording of `scenario` holding these exchanges (in order) and facts."""
    return Recording(scenario, target, list(exchanges), dict(facts or {}))


def sse_frames(*objects: Any, event: str | None = None, eol: bytes = b"\n", start: float = 0.0,
               step: float = 0.01) -> list[tuple[float, bytes]]:
    """(time, chunk) pairs: one `data: <json>` block per object (with `event:` when given)."""
    out = []
    for i, obj in enumerate(objects):
        head = f"event: {event}".encode() + eol if event else b""
        out.append((start + i * step, head + b"data: " + json.dumps(obj).encode() + eol + eol))
    return out


__all__ = ["exchange", "recording", "sse_frames", "DEFAULT_TARGET", "AGENT_SCENARIOS", "Profile"]
