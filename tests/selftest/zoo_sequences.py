"""Broken servers that are right on every single call the scripted scenarios make, and wrong only in a longer
chain, under an overlap, or for a long run: what the sequence scenarios (conformance/vocab/sequences.py) catch.

Each is the reference server with one conditional deviation, by class:

- sequences: a session forgotten once a paused run was answered; a second pause on a session that cannot be
  resumed; the 2025-11-25 path refusing a session's third call; invoke's streaming path ignoring `sessionId`; an
  eliciting client asked a second question as text instead of by a form;
- overlaps: a get-or-create race (calls on a new key at the same time each create an instance);
- durations: `durationMs` kept in 12 bits (wrong beyond 4 s); `durationMs` counted from the session's first run;
  invoke and MCP streams cut after 4 s without a write; a paused run forgotten 4 s after it paused.

``tests/selftest/test_zoo_sequences.py`` proves the other half: without the sequence scenarios, each passes.
"""
from __future__ import annotations

import asyncio
import itertools
import time

from tests.selftest import asgi_tools as t
from tests.selftest.session_tools import Store, TrackedInstance, rerouted, with_store
from tests.selftest.zoo import broken

# == sequences =====================================================================================================
@broken("GEN-SESS-001", name="GEN-SESS-001-session-forgotten-after-a-pause")
def forgotten_after_pause(app, facts):
    """Once a paused run on a session was answered, the next new run on its key starts a new instance."""
    return with_store(app, Store(forget=lambda inst: inst.answered))


@broken("AGUI-INT-002", name="AGUI-INT-002-second-pause-not-kept")
def second_pause_lost(app, facts):
    """A session keeps only its first pause: a run that pauses again after an answered one cannot be resumed."""
    class FirstPauseOnly(TrackedInstance):
        @TrackedInstance.paused.setter
        def paused(self, value):
            if value is None or not self.answered:
                TrackedInstance.paused.fset(self, value)
    return with_store(app, Store(FirstPauseOnly))


@broken("MCP-VER-006", name="MCP-VER-006-third-legacy-call-on-a-session-refused")
def legacy_session_worn_out(app, facts):
    """After the 2025-11-25 handshake, a session's third tools/call is refused with -32022 (the first two work)."""
    calls: dict[str, int] = {}
    REFUSED = "conformance.zoo.refused"

    def count(body, scope):
        if not isinstance(body, dict):
            return None
        version = t.header(list(scope.get("headers") or []), b"mcp-protocol-version")
        params = body.get("params")
        args = params.get("arguments") if isinstance(params, dict) else None
        key = args.get("session_id") if isinstance(args, dict) else None
        if version == b"2025-11-25" and body.get("method") == "tools/call" and isinstance(key, str):
            calls[key] = calls.get(key, 0) + 1
            if calls[key] > 2:
                scope[REFUSED] = body.get("id")
        return None

    async def refuse(scope, receive, send):
        if REFUSED not in scope:
            return await app(scope, receive, send)
        error = {"jsonrpc": "2.0", "id": scope[REFUSED], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}}
        await t.respond(app, 400, error)(scope, receive, send)

    return t.rewrite_request_json(refuse, count, where="mcp")


@broken("INV-SESS-004", name="INV-SESS-004-streamed-invoke-ignores-sessionId")
def streamed_invoke_own_instance(app, facts):
    """A streamed invoke runs on an instance of its own: its `sessionId` is echoed, but reaches no earlier run."""
    fresh = itertools.count(1)

    async def route(key, body, scope):
        accept = t.header(list(scope.get("headers") or []), b"accept") or b""
        streamed = body.get("stream") is True or (body.get("stream") is None and b"text/event-stream" in accept)
        return f"{key}~stream{next(fresh)}" if t.path_kind(scope["path"]) == "invoke" and streamed else key
    return rerouted(app, route)


@broken("MCP-PAUSE-004", name="MCP-PAUSE-004-second-question-as-text")
def second_question_as_text(app, facts):
    """An eliciting client's retry whose run asks again gets the question as text, not a second form."""
    RETRY = "conformance.zoo.retry"

    def mark(body, scope):
        params = body.get("params") if isinstance(body, dict) else None
        if isinstance(params, dict) and params.get("requestState") is not None:
            scope[RETRY] = True
        return None

    def as_text(obj, scope, status, headers):
        result = obj.get("result") if isinstance(obj, dict) else None
        if not scope.get(RETRY) or not isinstance(result, dict) or result.get("resultType") != "input_required":
            return obj
        request = next(iter(result.get("inputRequests", {}).values()), {})
        question = (request.get("params") or {}).get("message", "")
        obj["result"] = {"content": [{"type": "text", "text": question}], "isError": False, "resultType": "complete"}
        return obj

    return t.rewrite_request_json(t.rewrite_json_response(app, as_text, where="mcp"), mark, where="mcp")


# == overlaps ======================================================================================================
RACE_WINDOW = 0.5     # seconds a new key's instance takes to be created


@broken("INV-SESS-002", name="INV-SESS-002-get-or-create-race")
def get_or_create_race(app, facts):
    """Creating a new key's instance takes 0.5 s; a call on that key meanwhile creates an instance of its own, which
    the key then forgets."""
    known: set[str] = set()
    creating: set[str] = set()
    twins = itertools.count(1)

    async def route(key, body, scope):
        if key in known:
            return key
        if key in creating:
            return f"{key}~race{next(twins)}"
        creating.add(key)
        await asyncio.sleep(RACE_WINDOW)
        creating.discard(key)
        known.add(key)
        return key
    return rerouted(app, route)


# == durations =====================================================================================================
@broken("INV-RES-013", name="INV-RES-013-duration-in-12-bits")
def duration_wraps(app, facts):
    """`durationMs` is kept in 12 bits: right up to 4095 ms, wrong for a run of several seconds."""
    def wrap(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("durationMs"), int):
            obj["durationMs"] %= 4096
        return obj
    return t.rewrite_json_response(app, wrap, where="invoke")


@broken("INV-RES-013", name="INV-RES-013-duration-since-session-start")
def duration_since_session(app, facts):
    """`durationMs` counts from the first run of the session, not from the start of this run."""
    began: dict[str, float] = {}

    def since(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("durationMs"), int) and isinstance(obj.get("sessionId"), str):
            first = began.setdefault(obj["sessionId"], time.monotonic() - obj["durationMs"] / 1000)
            obj["durationMs"] = max(obj["durationMs"], round((time.monotonic() - first) * 1000))
        return obj
    return t.rewrite_json_response(app, since, where="invoke")


def cut_after_silence(app, where: str, seconds: float):
    """Drops every SSE block after one that came more than `seconds` after the one before (a proxy's idle cut)."""
    def cut(block, state, scope):
        now = time.monotonic()
        last = state.setdefault("last", now)
        state["last"] = now
        if block is not None and now - last > seconds:
            state["cut"] = True
        return None if state.get("cut") else block
    return t.rewrite_sse(app, cut, where=where)


@broken("INV-TERM-001", name="INV-TERM-001-invoke-stream-cut-after-4s-idle")
def invoke_stream_cut(app, facts):
    """An invoke stream silent for more than 4 s loses everything after the silence (its `done` included)."""
    return cut_after_silence(app, "invoke", 4.0)


@broken("MCP-PROG-003", name="MCP-PROG-003-progress-stream-cut-after-4s-idle")
def progress_stream_cut(app, facts):
    """An MCP progress stream silent for more than 4 s loses everything after the silence (its response included)."""
    return cut_after_silence(app, "mcp", 4.0)


@broken("AGUI-INT-002", name="AGUI-INT-002-pause-forgotten-after-4s")
def pause_expires(app, facts):
    """A paused run is forgotten 4 s after it paused: a later resume finds nothing to continue."""
    class Expiring(TrackedInstance):
        @TrackedInstance.paused.getter
        def paused(self):
            since = self.paused_since
            return None if since is not None and time.monotonic() - since > 4.0 else getattr(self, "_paused", None)
    return with_store(app, Store(Expiring))
