"""Broken servers that are right on every call alone and wrong only after one kind of transition: what the history of
the sessions model (`sequences.history`: every transition, then a reading, on every path) catches.

Each is the reference server with one deviation that shows on the next call on a key after the run on it failed,
failed after several pieces, called a tool, or on one path with an optional field left out, the way real servers go
wrong (an error handler that drops the session, a tool runner that recreates it, a handler of one protocol version
that reads one field too few).

``tests/selftest/test_zoo_histories.py`` proves the other half: without the history, each passes.
"""
from __future__ import annotations

import secrets
from typing import Callable

from tests.selftest import asgi_tools as t
from tests.selftest.session_tools import key_holder, rerouted, session_key
from tests.selftest.zoo import broken, registered
from tests.selftest.zoo_inputs import wrong_for

KEY = "conformance.zoo.history.key"
REFUSED = "conformance.zoo.history.refused"
FAILED = (b'"status":"failed"', b"event: error", b"RUN_ERROR", b'"isError":true')
TOOL_CALLED = (b'"type":"tool_call_start"', b"event: tool_call_start", b"TOOL_CALL_START", b"lookup")


def moved_after(markers: tuple[bytes, ...]):
    """A session whose run answered with one of `markers` is dropped: the key's next call reaches a new instance
    (its answers still name the key sent)."""
    moved: dict[str, str] = {}

    async def route(key, body, scope):
        return moved.get(key, key)

    def wrap(app, facts):
        inner = rerouted(app, route)

        async def observe(scope, receive, send):
            seen: list[bytes] = []

            async def watch(msg):
                if msg["type"] == "http.response.body":
                    seen.append(msg.get("body", b""))
                    key = scope.get(KEY)
                    if key is not None and not msg.get("more_body") and any(m in b"".join(seen) for m in markers):
                        moved[key] = f"{key}~{secrets.token_hex(4)}"
                await send(msg)
            await inner(scope, receive, watch)

        def note(body, scope):
            scope[KEY] = session_key(body, scope)
            return None
        return t.rewrite_request_json(observe, note, where=("invoke", "agui", "mcp"))
    return wrap


registered("GEN-SESS-001", "GEN-SESS-001-session-dropped-after-a-failed-run",
           "After a run on a key fails (on any protocol), the key's next call reaches a new instance.",
           moved_after(FAILED))
registered("GEN-SESS-001", "GEN-SESS-001-session-recreated-after-a-tool-call",
           "After a run on a key calls a tool, the key's next call reaches a new instance.",
           moved_after(TOOL_CALLED))


@broken("GEN-SESS-001", name="GEN-SESS-001-legacy-call-without-mcp-name-ignores-session")
def legacy_without_name(app, facts):
    """On the 2025-11-25 path, a tools/call without the optional Mcp-Name header ignores `session_id`: each such call
    reaches a new instance."""
    async def route(key, body, scope):
        hdrs = list(scope.get("headers") or [])
        legacy = t.header(hdrs, b"mcp-protocol-version") == b"2025-11-25"
        return f"{key}~{secrets.token_hex(4)}" if legacy and t.header(hdrs, b"mcp-name") is None else key
    return rerouted(app, route)


@broken("MCP-VER-006", name="MCP-VER-006-legacy-call-without-accept-refused")
def legacy_without_accept(app, facts):
    """On the 2025-11-25 path, a tools/call without the recommended Accept header is refused with 406."""
    def refuse(body, scope):
        hdrs = list(scope.get("headers") or [])
        if t.header(hdrs, b"mcp-protocol-version") == b"2025-11-25" and t.header(hdrs, b"accept") is None \
                and isinstance(body, dict) and body.get("method") == "tools/call":
            scope[REFUSED] = body.get("id")
        return None

    async def refusing(scope, receive, send):
        if REFUSED not in scope:
            return await app(scope, receive, send)
        body = t._dumps({"jsonrpc": "2.0", "id": scope[REFUSED],
                         "error": {"code": -32600, "message": "Accept must list application/json and "
                                                              "text/event-stream"}})
        await send({"type": "http.response.start", "status": 406,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    return t.rewrite_request_json(refusing, refuse, where="mcp")


def first_piece_only(is_piece: Callable[[str | None, dict], bool], holds: Callable[[str | None, dict], bool],
                     is_failure: Callable[[str | None, dict], bool]):
    """Pieces after the first are held until the next event; when that is the failure they are dropped (an error path
    that flushes only what it sent first)."""
    def each(event, obj, state, scope):
        if is_piece(event, obj):
            state["pieces"] = state.get("pieces", 0) + 1
            if state["pieces"] > 1:
                state.setdefault("held", []).append((event, obj))
                return []
            return obj
        held = state.get("held")
        if held and holds(event, obj):
            held.append((event, obj))
            return []
        if held:
            state["held"] = []
            kept = [item for item in held if not is_piece(*item)] if is_failure(event, obj) else held
            return [*kept, (event, obj)]
        return obj
    return each


@broken("INV-TERM-004", name="INV-TERM-004-only-the-first-piece-before-the-error-frame")
def invoke_first_piece(app, facts):
    """A failing invoke stream sends only its first `text` frame before the `error` frame (right when one piece was
    sent)."""
    return t.rewrite_sse_json(app, first_piece_only(lambda e, o: e == "text", lambda e, o: False,
                                                    lambda e, o: e == "error"), where="invoke")


@broken("AGUI-FAIL-001", name="AGUI-FAIL-001-only-the-first-piece-before-run-error")
def agui_first_piece(app, facts):
    """A failing AG-UI run streams only its first content delta before RUN_ERROR (right when one piece was sent)."""
    kind = lambda obj: obj.get("type") if isinstance(obj, dict) else None     # noqa: E731
    return t.rewrite_sse_json(app, first_piece_only(lambda e, o: kind(o) == "TEXT_MESSAGE_CONTENT",
                                                    lambda e, o: kind(o) == "TEXT_MESSAGE_END",
                                                    lambda e, o: kind(o) == "RUN_ERROR"), where="agui")


@wrong_for("MCP-VER-005", "MCP-VER-005-jsonrpc-member-expected-first", "request-body:writings")
def jsonrpc_first(app, facts):
    """A hand-written JSON-RPC router takes a request for JSON-RPC only when its text starts `{"jsonrpc":"2.0"`: a
    body written with spaces, or with its members in another order, is answered -32600 (400)."""

    async def router(scope, receive, send):
        body, more = b"", True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        if t.path_kind(scope.get("path", "")) == "mcp" and scope.get("method") == "POST" \
                and not body.lstrip().startswith(b'{"jsonrpc":"2.0"'):
            out = t._dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not JSON-RPC"}})
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())]})
            await send({"type": "http.response.body", "body": out})
            return
        sent = False

        async def replay():
            nonlocal sent
            if sent:        # the body is read: what comes next is the client's real disconnect, which a stream awaits
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await app(scope, replay, send)
    return router


def kept_messages(keep, where: str, doc: str):
    def rewrite(body, scope):
        msgs = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(msgs, list) or keep(msgs) == msgs:
            return None
        return {**body, "messages": keep(msgs)}

    def wrap(app, facts):
        return t.rewrite_request_json(app, rewrite, where=where)
    wrap.__doc__ = doc
    return wrap


broken("AGUI-PROMPT-002", name="AGUI-PROMPT-002-keeps-the-last-ten-messages")(kept_messages(
    lambda msgs: msgs[-10:], "agui",
    "AG-UI passes the agent the last ten messages of a longer list (a context window kept by the service)."))
broken("INV-PASS-004", name="INV-PASS-004-drops-system-messages")(kept_messages(
    lambda msgs: [m for m in msgs if not (isinstance(m, dict) and m.get("role") in ("system", "developer"))],
    "invoke", "Invoke drops the `system` and `developer` messages of the list it passes on."))


# -- the session key had in every form, the client that can elicit, a run's steps and tool calls -------------------
GENERATED = "conformance.zoo.history.generated"
PAUSED = (b'"interrupt"', b'"awaitingResume":true')


def named_elsewhere(gated: Callable[[dict, dict], bool], shown: Callable[[bytes], bool]):
    """A call that carries no session key, when `gated(body, scope)`, runs on a key the server makes up, but its answer
    names another one when `shown(answer)`: the key the client goes on with reaches no instance of that call."""
    def wrap(app, facts):
        async def swapped(scope, receive, send):
            made = scope.get(GENERATED)
            if made is None:
                return await app(scope, receive, send)
            messages: list[dict] = []

            async def hold(msg):
                messages.append(msg)
            await app(scope, receive, hold)
            body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
            if shown(body):
                body = body.replace(made.encode(), f"{made[:-4]}{secrets.token_hex(2)}".encode())
            start = next(m for m in messages if m["type"] == "http.response.start")
            headers = list(start.get("headers") or [])
            if t.header(headers, b"content-length") is not None:
                headers = t.with_header(headers, b"content-length", str(len(body)).encode())
            await send(dict(start, headers=headers))
            await send({"type": "http.response.body", "body": body, "more_body": False})

        def make_up(body, scope):
            held = key_holder(body, scope)
            if held is None or held[0].get(held[1]) is not None or not gated(body, scope):
                return None
            held[0][held[1]] = scope[GENERATED] = f"ses_{secrets.token_hex(8)}"
            return body
        return t.rewrite_request_json(swapped, make_up, where=("invoke", "agui", "mcp"))
    return wrap


def _on(kind: str) -> Callable[[dict, dict], bool]:
    return lambda body, scope: t.path_kind(scope.get("path", "")) == kind


def _legacy(body: dict, scope: dict) -> bool:
    return t.header(list(scope.get("headers") or []), b"mcp-protocol-version") == b"2025-11-25"


registered("AGUI-INT-002", "AGUI-INT-002-pause-on-a-generated-thread-kept-under-another",
           "An AG-UI run without threadId that pauses names, in its events, another threadId than the one its "
           "pause is kept under: the resume on the threadId it named finds nothing paused.",
           named_elsewhere(_on("agui"), lambda answer: PAUSED[0] in answer))
registered("MCP-PAUSE-002", "MCP-PAUSE-002-pause-on-a-generated-session-kept-under-another",
           "A tools/call without session_id that pauses (the question as text) names another session than the one "
           "its pause is kept under: the resume on the session it named finds nothing paused.",
           named_elsewhere(_on("mcp"), lambda answer: PAUSED[1] in answer))
registered("MCP-PAUSE-002", "MCP-PAUSE-002-legacy-call-without-session-id-names-another",
           "On the 2025-11-25 path, a tools/call without the optional session_id runs on a session it does not "
           "name: the next call on the session it named reaches a new instance (under the zoo's seed the history "
           "reads it on a resume of a pause taken that way).",
           named_elsewhere(_legacy, lambda answer: True))


@broken("MCP-SESS-002", name="MCP-SESS-002-session-dropped-after-an-elicited-retry")
def dropped_after_elicited_retry(app, facts):
    """Once an eliciting client's retry continued its paused run, the session is dropped: the key's next run reaches a
    new instance (a resume as text, or on AG-UI, keeps it; under the zoo's seed the next run is over MCP)."""
    from conformance.server.mcp import _decode_state
    RETRIED = "conformance.zoo.history.retried"

    def note(body, scope):
        params = body.get("params") if isinstance(body, dict) else None
        state = params.get("requestState") if isinstance(params, dict) else None
        decoded = _decode_state(state) if state is not None else None
        if decoded:
            scope[RETRIED] = decoded[:2]
        return None

    async def dropping(scope, receive, send):
        await app(scope, receive, send)
        if RETRIED in scope:
            app.org.sessions._items.pop(scope[RETRIED], None)
    return t.rewrite_request_json(dropping, note, where="mcp")


@broken("INV-RES-005", name="INV-RES-005-events-grouped-by-kind")
def events_grouped_by_kind(app, facts):
    """A JSON invoke result lists a run's steps first, then its tool calls and results (each kind in order): right
    for a run of one kind, out of order for a run that mixes them."""
    def group(obj, scope, status, headers):
        events = obj.get("events") if isinstance(obj, dict) else None
        if isinstance(events, list):
            obj["events"] = sorted(events, key=lambda e: not (isinstance(e, dict) and
                                                             str(e.get("type", "")).startswith("step")))
        return obj
    return t.rewrite_json_response(app, group, where="invoke")

