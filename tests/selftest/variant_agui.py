"""AG-UI servers that are correct but not ours: what the official `ag-ui-protocol` 1.0 SDK and sse-starlette do
by default, and a pause that lists no interrupt ids.

``sdk_events`` and ``sdk_headers`` are composed into the main variant (``variant.py`` rows 20 to 22); it must
still pass every MUST and SHOULD. Two more servers choose what the spec allows but a SHOULD does not, so each
has its own test (``test_variant_agui.py``) with the one outcome it must produce:

* ``sse_starlette_config()``: the SDK defaults plus sse-starlette's keep-alive ``: ping - <timestamp>``. The spec:
  "While the agent is silent, a comment line `: ping` arrives every 15 seconds." A comment beginning with
  ``ping`` is a ping (AGUI-PING-001 passes); its form is not exactly ``: ping`` (AGUI-PING-003 warns, alone).
* ``no_interrupt_ids_config()``: a paused run ends with ``outcome: {"type": "interrupt"}`` and lists nothing; it
  is resumed with ``resume: {"answer": <value>}``. The spec: "A paused run ends with `RUN_FINISHED` whose
  `outcome.type` is `interrupt`" and "Shape of the `resume` field (answers to interrupts): not shown." No MUST
  fails: without a profile the resume is not assessed (naming ``[resume] agui``), with ``RESUME_PROFILE`` it
  passes. AG-UI 1.0 requires at least one interrupt (``RunFinishedInterruptOutcome.interrupts``, min 1, each
  with ``id``), so AGUI-COMPAT-001 warns, alone.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from conformance.server import ServerConfig
from conformance.target import Profile
from tests.selftest import asgi_tools as t

PING_BLOCK = b": ping\n\n"
RETRY_BLOCK = b"retry: 3000\n\n"
SDK_MEDIA_TYPE = b"text/event-stream; charset=utf-8"
RESUME_PROFILE = Profile(resume={"agui": {"answer": "$payload"}})


# --- the SDK's defaults (main variant rows 20 to 22) ------------------------------------------------------
def sdk_event(event: str | None, obj: Any, state: dict, scope: dict) -> Any:
    """What the SDK adds: `timestamp` (ms) on every event, the provider chunk as `rawEvent` on content, and a
    `responseSchema` on each interrupt; a standalone `retry:` block (no data) goes before the first event."""
    if not isinstance(obj, dict):
        return obj
    obj = {**obj, "timestamp": int(time.time() * 1000)}
    if obj.get("type") == "TEXT_MESSAGE_CONTENT":
        obj["rawEvent"] = {"provider": "variant-llm", "chunk": {"text": obj.get("delta")}}
    outcome = obj.get("outcome")
    if isinstance(outcome, dict) and isinstance(outcome.get("interrupts"), list):
        outcome["interrupts"] = [{**i, "responseSchema": {"type": "object"}} if isinstance(i, dict) else i
                                 for i in outcome["interrupts"]]
    if state.get("retry_sent"):
        return obj
    state["retry_sent"] = True
    return [RETRY_BLOCK, obj]


def sdk_events(app: t.ASGIApp) -> t.ASGIApp:
    return t.rewrite_sse_json(app, sdk_event, where="agui")


def sdk_headers(app: t.ASGIApp) -> t.ASGIApp:
    """sse-starlette's stream headers: `text/event-stream; charset=utf-8`, no caching, no proxy buffering."""
    def rewrite(headers, scope, status):
        if t.media_type(headers) != "text/event-stream":
            return headers
        headers = t.with_header(headers, b"content-type", SDK_MEDIA_TYPE)
        return t.with_header(t.with_header(headers, b"cache-control", b"no-store"), b"x-accel-buffering", b"no")
    return t.rewrite_headers(app, rewrite, where="agui")


# --- sse-starlette's keep-alive ------------------------------------------------------------------------------
def starlette_ping(block: bytes | None, state: dict, scope: dict) -> bytes | None:
    """`: ping - 2026-11-22 21:59:45.008900+00:00` with CRLF, as sse-starlette's default ping writes it."""
    if block == PING_BLOCK:
        return f": ping - {datetime.now(timezone.utc)}\r\n\r\n".encode()
    return block


def sse_starlette_config(**overrides: Any) -> ServerConfig:
    def wrap(app, facts):
        return sdk_headers(t.rewrite_sse(sdk_events(app), starlette_ping, where="agui"))
    return ServerConfig(**{"wrap_app": wrap, **overrides})


# --- a pause that lists no interrupt ids ------------------------------------------------------------------
class UnlistedInterrupts:
    """Pauses list nothing (the ids stay with the server, per thread); `resume: {"answer": X}` answers them all."""

    def __init__(self) -> None:
        self.pending: dict[str, list[str]] = {}

    def hide(self, event: str | None, obj: Any, state: dict, scope: dict) -> Any:
        outcome = obj.get("outcome") if isinstance(obj, dict) and obj.get("type") == "RUN_FINISHED" else None
        if isinstance(outcome, dict) and outcome.get("type") == "interrupt":
            self.pending[obj.get("threadId")] = [i.get("id") for i in outcome.get("interrupts") or []]
            obj = {**obj, "outcome": {"type": "interrupt"}}
        return obj

    def answer(self, body: Any, scope: dict) -> Any:
        resume = body.get("resume") if isinstance(body, dict) else None
        if not (isinstance(resume, dict) and set(resume) == {"answer"}):
            return None
        ids = self.pending.pop(body.get("threadId"), [])
        return {**body, "resume": [{"interruptId": i, "status": "resolved", "payload": resume["answer"]}
                                   for i in ids]}

    def wrap(self, app: t.ASGIApp, facts: dict) -> t.ASGIApp:
        app = t.rewrite_sse_json(app, self.hide, where="agui")
        return t.rewrite_request_json(app, self.answer, where="agui")


def no_interrupt_ids_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": UnlistedInterrupts().wrap, **overrides})
