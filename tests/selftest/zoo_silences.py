"""Broken servers that keep a stream alive while the agent is silent at the start of a run, and not when it falls
silent somewhere else: what the silence scenarios (conformance/vocab/silences.py) catch.

Each is the reference server with one conditional deviation, by class:

- idle cuts: a stream cut (everything after the silence lost, its end included) after 8, 10 or 12 s without a
  write, only once its reply has begun, after a tool call, after a step, on a resumed run, or before the first
  output of an invoke stream;
- keep-alives: AG-UI `: ping` comments that stop once the reply has begun, that come only before a tool call, or
  that a resumed run never sends.

``tests/selftest/test_zoo_silences.py`` proves the other half: without the silence scenarios, each passes.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken

STARTED = "conformance.zoo.started"     # scope key: when the request reached the server
RESUMED = "conformance.zoo.resumed"     # scope key: the request carries `resume` (AG-UI) or `arguments.resume` (MCP)

# What a block of each stream shows (an AG-UI event type, an invoke event name, an MCP frame of JSON-RPC).
Armed = Callable[[bytes, dict, dict], bool]


def kind_of(block: bytes) -> str:
    """The AG-UI type, the invoke event name, or `progress`/`response` for an MCP frame ("" for a comment)."""
    event, obj = t.sse_json(block)
    if not isinstance(obj, dict):
        return ""
    if event == "message":
        return "progress" if obj.get("method") == "notifications/progress" else "response"
    return event or str(obj.get("type", ""))


def stamped(app):
    """Notes when each request arrived, and whether it resumes a paused run."""
    def mark(body: Any, scope: dict) -> None:
        scope[STARTED] = time.monotonic()
        params = body.get("params") if isinstance(body, dict) else None
        args = params.get("arguments") if isinstance(params, dict) else None
        scope[RESUMED] = isinstance(body, dict) and (body.get("resume") is not None
                                                     or (isinstance(args, dict) and "resume" in args))
        return None
    return t.rewrite_request_json(app, mark, where=("invoke", "agui", "mcp"))


def idle_cut(app, where: str, seconds: float, armed: Armed | None):
    """Drops every SSE block after one that came more than `seconds` after the one before, once `armed(block,
    state, scope)` said so for an earlier block or the request; with `armed` None, only when the first block came
    that long after the request (nothing written until then): a proxy's idle cut that applies only at some point of
    a run."""
    def cut(block: bytes | None, state: dict, scope: dict) -> bytes | None:
        now = time.monotonic()
        first = "last" not in state
        last = state.get("last", scope.get(STARTED, now))
        state["last"] = now
        counts = first if armed is None else state.get("armed")
        if block is not None and counts and now - last > seconds:
            state["cut"] = True
        if block is not None and armed is not None and not state.get("armed") and armed(block, state, scope):
            state["armed"] = True
        return None if state.get("cut") else block
    return stamped(t.rewrite_sse(app, cut, where=where))


def text_began(block: bytes, state: dict, scope: dict) -> bool:
    return kind_of(block) in ("text", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "progress")


def after(*kinds: str) -> Armed:
    return lambda block, state, scope: kind_of(block) in kinds


def resumed(block: bytes, state: dict, scope: dict) -> bool:
    return bool(scope.get(RESUMED))


def pings_dropped(app, armed: Armed):
    """AG-UI: the `: ping` comments of a stream are dropped once `armed` said so for a block or the request."""
    def drop(block: bytes | None, state: dict, scope: dict) -> bytes | None:
        if block is None:
            return None
        if t.is_comment(block):
            return None if state.get("armed") else block
        if armed(block, state, scope):
            state["armed"] = True
        return block
    return stamped(t.rewrite_sse(app, drop, where="agui"))


# == idle cuts =====================================================================================================
@broken("INV-TERM-001", name="INV-TERM-001-invoke-stream-cut-after-8s-idle-once-text-began")
def invoke_cut_after_text(app, facts):
    """An invoke stream whose reply has begun loses everything after 8 s without a write (its `done` included)."""
    return idle_cut(app, "invoke", 8.0, text_began)


@broken("AGUI-ORDER-002", name="AGUI-ORDER-002-agui-stream-cut-after-10s-idle-once-text-began")
def agui_cut_after_text(app, facts):
    """An AG-UI stream whose reply has begun loses everything after 10 s without a write (its RUN_FINISHED
    included)."""
    return idle_cut(app, "agui", 10.0, text_began)


@broken("MCP-PROG-003", name="MCP-PROG-003-progress-stream-cut-after-10s-idle-after-a-notification")
def progress_cut_after_notification(app, facts):
    """An MCP progress stream loses everything after 10 s without a write that follow a progress notification (its
    result included)."""
    return idle_cut(app, "mcp", 10.0, after("progress"))


@broken("INV-TERM-001", name="INV-TERM-001-invoke-stream-cut-after-12s-idle-after-a-tool-call")
def invoke_cut_after_tool(app, facts):
    """An invoke stream loses everything after 12 s without a write once a tool call started."""
    return idle_cut(app, "invoke", 12.0, after("tool_call_start", "tool_call_end", "tool_result", "tool_call_result"))


@broken("INV-TERM-001", name="INV-TERM-001-invoke-stream-cut-after-12s-idle-before-any-output")
def invoke_cut_at_start(app, facts):
    """An invoke stream that has written nothing for 12 s since the request is cut (its `done` lost)."""
    return idle_cut(app, "invoke", 12.0, None)


@broken("AGUI-ORDER-002", name="AGUI-ORDER-002-agui-stream-cut-after-12s-idle-after-a-step")
def agui_cut_after_step(app, facts):
    """An AG-UI stream loses everything after 12 s without a write once a step started."""
    return idle_cut(app, "agui", 12.0, after("STEP_STARTED", "STEP_FINISHED"))


@broken("MCP-PROG-003", name="MCP-PROG-003-resumed-progress-stream-cut-after-12s-idle")
def resumed_progress_cut(app, facts):
    """The progress stream of a call that resumes a paused run loses everything after 12 s without a write."""
    return idle_cut(app, "mcp", 12.0, resumed)


# == keep-alives ===================================================================================================
@broken("AGUI-PING-001", name="AGUI-PING-001-pings-stop-once-the-reply-began")
def pings_stop_after_text(app, facts):
    """No `: ping` once the first text message of a run has begun."""
    return pings_dropped(app, after("TEXT_MESSAGE_START"))


@broken("AGUI-PING-001", name="AGUI-PING-001-pings-only-before-a-tool-call")
def pings_only_before_tool(app, facts):
    """No `: ping` once a tool call has started."""
    return pings_dropped(app, after("TOOL_CALL_START"))


@broken("AGUI-PING-001", name="AGUI-PING-001-no-pings-on-a-resumed-run")
def no_pings_when_resumed(app, facts):
    """A run resumed with `resume` sends no `: ping` while the agent is silent."""
    return pings_dropped(app, resumed)
