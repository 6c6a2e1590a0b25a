"""Correct servers that choose differently where the sequence scenarios look (conformance/vocab/sequences.py):
each must pass every run, under any seed (registered in variant_servers.py).

``serialised_config()``: sessions taken one call at a time.

* Calls on one session key wait for each other (a lock per key, held until the answer ends) instead of running
  side by side: runs sent together on one key still reach one instance, one after the other.
* The result that ends a resumed MCP run holds only the text the run added after its last question (the reference
  server answers the whole reply): the spec's `result.content` "holds the reply" reads either way.
* A resume where no run waits is answered as a failed run (AG-UI: a stream with RUN_ERROR; MCP: a tool result with
  `isError: true`) instead of a `validation_failed` / -32602 refusal: the spec does not say what it is.

``coarse_clock_config()``: time kept coarsely, streams kept warm.

* `durationMs` counts whole seconds (a 6.3 s run reports 6000): a duration in milliseconds all the same.
* Invoke streams and MCP progress streams send an SSE comment every second while the agent is silent (legal SSE,
  no frame).
"""
from __future__ import annotations

import asyncio
import dataclasses
import json

from conformance.server import ServerConfig
from tests.selftest import asgi_tools as t
from tests.selftest.session_tools import Store, TrackedInstance, session_key, with_store

KEY = "conformance.variant.session"
RUN_ID = "conformance.variant.run_id"      # the AG-UI request's runId, echoed even on a stale resume's failed run
KEEP_ALIVE = b": keep-alive\n\n"
KEEP_ALIVE_EVERY = 1.0


# --- one call at a time per session -------------------------------------------------------------------------
def one_call_per_session(app: t.ASGIApp) -> t.ASGIApp:
    locks: dict[str, asyncio.Lock] = {}

    def note(body, scope):
        key = session_key(body, scope)
        if key is not None:
            scope[KEY] = key
        if isinstance(body, dict) and isinstance(body.get("runId"), str):
            scope[RUN_ID] = body["runId"]
        return None

    async def serialised(scope, receive, send):
        key = scope.get(KEY)
        if key is None:
            return await app(scope, receive, send)
        async with locks.setdefault(key, asyncio.Lock()):
            await app(scope, receive, send)

    return t.rewrite_request_json(serialised, note, where=("invoke", "agui", "mcp"))


class ContinuationOnly(TrackedInstance):
    """A paused run keeps no text from before its question: its resumed MCP result holds only what follows."""

    @TrackedInstance.paused.setter
    def paused(self, value):
        if value is not None and value.reply_so_far:
            value = dataclasses.replace(value, reply_so_far="")
        TrackedInstance.paused.fset(self, value)


NOTHING_WAITS = ("no paused run", "No paused run")


def stale_resume_fails(app: t.ASGIApp) -> t.ASGIApp:
    """A resume where no run waits: a failed run, not a refusal."""
    def agui(obj, scope, status, headers):
        message = ((obj.get("error") or {}).get("message") or "") if isinstance(obj, dict) else ""
        if status < 400 or not any(s in message for s in NOTHING_WAITS):
            return obj
        events = [{"type": "RUN_STARTED", "threadId": scope.get(KEY, "thr_unknown"),
                   "runId": scope.get(RUN_ID, "run_stale")},
                  {"type": "RUN_ERROR", "message": "No run waits for an answer on this thread.", "code": "no_paused_run"}]
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        return 200, [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")], body

    def mcp(obj, scope, status, headers):
        error = obj.get("error") if isinstance(obj, dict) else None
        if status < 400 or not isinstance(error, dict) or not any(s in str(error.get("message")) for s in NOTHING_WAITS):
            return obj
        text = "No run waits for an answer on this session."
        return 200, headers, {"jsonrpc": "2.0", "id": obj.get("id"), "result": {
            "content": [{"type": "text", "text": text}], "isError": True, "resultType": "complete"}}

    return t.rewrite_json_response(t.rewrite_json_response(app, agui, where="agui"), mcp, where="mcp")


def serialised_wrap(app, facts):
    with_store(app, Store(ContinuationOnly))
    return one_call_per_session(stale_resume_fails(app))


def serialised_config(**overrides) -> ServerConfig:
    return ServerConfig(**{"wrap_app": serialised_wrap, **overrides})


# --- a coarse clock and warm streams ---------------------------------------------------------------------------
def whole_seconds(app: t.ASGIApp) -> t.ASGIApp:
    def floor(obj):
        if isinstance(obj, dict) and isinstance(obj.get("durationMs"), int):
            obj["durationMs"] = obj["durationMs"] // 1000 * 1000
        return obj

    return t.rewrite_sse_json(t.rewrite_json_response(app, lambda obj, *_: floor(obj), where="invoke"),
                              lambda event, obj, state, scope: floor(obj), where="invoke")


def kept_warm(app: t.ASGIApp, where, comment: bytes = KEEP_ALIVE, every: float = KEEP_ALIVE_EVERY, *,
              on_a_clock: bool = False) -> t.ASGIApp:
    """An SSE comment every `every` s the stream is silent, until the answer ends; `on_a_clock`: every `every` s from
    the stream's start, whatever else it writes."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, where):
            return await app(scope, receive, send)
        lock = asyncio.Lock()
        loop = asyncio.get_running_loop()
        state = {"open": False, "last": loop.time()}

        async def wrapped(msg):
            async with lock:
                if msg["type"] == "http.response.start":
                    state["open"] = t.media_type(list(msg.get("headers") or [])) == "text/event-stream"
                elif msg["type"] == "http.response.body" and not msg.get("more_body", False):
                    state["open"] = False
                if not on_a_clock:
                    state["last"] = loop.time()
                await send(msg)

        async def warm():
            while True:
                await asyncio.sleep(min(every / 4, 0.25))
                async with lock:
                    if state["open"] and loop.time() - state["last"] >= every:
                        state["last"] = state["last"] + every if on_a_clock else loop.time()
                        await send({"type": "http.response.body", "body": comment, "more_body": True})

        task = asyncio.ensure_future(warm())
        try:
            await app(scope, receive, wrapped)
        finally:
            task.cancel()

    return middleware


def coarse_wrap(app, facts):
    return kept_warm(kept_warm(whole_seconds(app), "invoke"), "mcp")


def coarse_clock_config(**overrides) -> ServerConfig:
    return ServerConfig(**{"wrap_app": coarse_wrap, **overrides})
