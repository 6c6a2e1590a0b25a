"""Correct servers that choose differently where the silence scenarios look (conformance/vocab/silences.py): each
must pass every run, under any seed (registered in variant_servers.py).

``ticker_config()``: AG-UI keep-alives on a clock of their own.

* A `: ping` every 15 s counted from the start of the stream, frames or not (sse-starlette's ping task runs so),
  instead of 15 s after the last write: while the agent is silent one still arrives every 15 s.

``late_headers_config()``: a response begins when the agent first speaks.

* Invoke and MCP streams send their status and headers with their first frame, not when the request arrives: a run
  that opens with a silence answers nothing until it ends (the spec says nothing of when headers come).
"""
from __future__ import annotations

from conformance.server import ServerConfig
from tests.selftest import asgi_tools as t
from tests.selftest.variant_sequences import kept_warm

PING = b": ping\n\n"
PING_EVERY = 15.0


def ticking(app: t.ASGIApp, every: float = PING_EVERY) -> t.ASGIApp:
    """AG-UI streams: the server's own pings dropped, one `: ping` every `every` s from the stream's start instead."""
    quiet = t.rewrite_sse(app, lambda block, state, scope: None if block and t.is_comment(block) else block,
                          where="agui")
    return kept_warm(quiet, "agui", PING, every, on_a_clock=True)


def headers_with_first_frame(app: t.ASGIApp, where) -> t.ASGIApp:
    """An event stream's status and headers held back until its first non-empty body bytes."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, where):
            return await app(scope, receive, send)
        held: list[dict] = []

        async def wrapped(msg):
            if msg["type"] == "http.response.start" and \
                    t.media_type(list(msg.get("headers") or [])) == "text/event-stream":
                held.append(msg)
                return
            if msg["type"] == "http.response.body" and held and (msg.get("body") or not msg.get("more_body", False)):
                await send(held.pop())
            if msg["type"] == "http.response.body" and held and not msg.get("body"):
                return
            await send(msg)

        await app(scope, receive, wrapped)

    return middleware


def ticker_config(every: float = PING_EVERY, **overrides) -> ServerConfig:
    return ServerConfig(**{"wrap_app": lambda app, facts: ticking(app, every), **overrides})


def late_headers_config(**overrides) -> ServerConfig:
    return ServerConfig(**{"wrap_app": lambda app, facts: headers_with_first_frame(app, ("invoke", "mcp")),
                           **overrides})
