"""Pure-ASGI middleware that bends one rule of the reference server.

Each builder takes the reference app (``ServerConfig.wrap_app`` gives ``(app, facts)``)
and returns a new ASGI app. ``where`` picks the requests a middleware touches,
matched on the request path:

====================  ===============================================================
``"invoke"``          ``/v1/agents/{id}/invoke``
``"agui"``            ``/v1/agents/{id}/agui``
``"mcp"``             ``/v1/agents/{id}/mcp``
``"metadata"``        ``/.well-known/oauth-protected-resource/v1/agents/{id}/mcp``
``None``              every request
a tuple of names      any of them
a callable            ``where(scope) -> bool``
====================  ===============================================================

Builders:

* ``rewrite_request_json(app, fn, where)``: ``fn(body, scope) -> body`` on the parsed
  request JSON (``body`` is None when the request body is not JSON); returning None
  keeps the body, returning ``bytes`` sends those bytes. Content-Length is fixed.
* ``rewrite_request_headers(app, fn, where)``: ``fn(headers, scope) -> headers``.
* ``rewrite_json_response(app, fn, where)``: ``fn(obj, scope, status, headers)`` on a
  JSON response (buffered) returns the new object, or ``(status, headers, obj)``;
  ``bytes`` replaces the body verbatim. Content-Length is fixed. Event streams pass.
* ``rewrite_body(app, fn, where)``: ``fn(raw, scope, status, headers) -> bytes | (status,
  headers, bytes)`` on every answer that is not an event stream (buffered, any media type).
* ``rewrite_headers(app, fn, where)``: ``fn(headers, scope, status)`` returns the new
  header list, or ``(status, headers)``. Header names are bytes as sent (lowercase).
* ``rewrite_sse(app, fn, where)``: ``fn(block, state, scope)`` on every complete SSE
  block of a ``text/event-stream`` answer *as it passes* (no buffering: timing is
  preserved), returning bytes, a list of bytes, or None (drop). It is called once more
  with ``block=None`` when the stream ends, so it can append. ``fn`` may be async.
* ``rewrite_sse_json(app, fn, where)``: the same, over parsed ``data:`` JSON:
  ``fn(event, obj, state, scope)`` returns ``obj`` (same event name), ``(event, obj)``,
  a list of those, or None (drop). Blocks without JSON data (comments) pass unchanged.
* ``delay(app, seconds, where, before="headers"|"body")``, ``replace_status``,
  ``set_header``, ``drop_header``, ``respond`` (answer without running the app),
  ``chain(app, *wrappers)``.

Helpers: ``sse_json(block) -> (event_name, obj)``, ``make_block(obj, event=None)``,
``split_blocks(buffer, final) -> (blocks, rest)``, ``header(headers, name)``,
``path_kind(path)``, ``json_leaves(value, fn)`` (a JSON value with ``fn`` applied to every leaf).
"""
from __future__ import annotations

import asyncio
import inspect
import json
import re
from typing import Any, Awaitable, Callable, Iterable

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]
Where = str | Iterable[str] | Callable[[Scope], bool] | None

_AGENT_PATH = re.compile(r"^/v1/agents/[^/]+/(invoke|agui|mcp)$")
_METADATA_PATH = re.compile(r"^/\.well-known/oauth-protected-resource/v1/agents/[^/]+/mcp$")
KINDS = ("invoke", "agui", "mcp", "metadata")


# --- matching -------------------------------------------------------------------------

def path_kind(path: str) -> str | None:
    """'invoke' | 'agui' | 'mcp' | 'metadata' for the service's paths, else None."""
    m = _AGENT_PATH.match(path)
    if m:
        return m.group(1)
    if _METADATA_PATH.match(path):
        return "metadata"
    return None


def matches(scope: Scope, where: Where) -> bool:
    if scope.get("type") != "http":
        return False
    if where is None:
        return True
    if callable(where):
        return bool(where(scope))
    kind = path_kind(scope.get("path", ""))
    if isinstance(where, str):
        if where not in KINDS:
            raise ValueError(f"where={where!r}: not one of {KINDS}")
        return kind == where
    return kind in set(where)


def _check_where(where: Where) -> None:
    if isinstance(where, str) and where not in KINDS:
        raise ValueError(f"where={where!r}: not one of {KINDS}")
    if where is not None and not isinstance(where, str) and not callable(where):
        bad = set(where) - set(KINDS)
        if bad:
            raise ValueError(f"where: unknown kinds {sorted(bad)}; known {KINDS}")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


# --- headers ----------------------------------------------------------------------------

def header(headers: Headers, name: str | bytes) -> bytes | None:
    """The first value of header ``name`` (case-insensitive), or None."""
    key = name.lower().encode() if isinstance(name, str) else name.lower()
    for k, v in headers:
        if k.lower() == key:
            return v
    return None


def without(headers: Headers, *names: str | bytes) -> Headers:
    keys = {n.lower().encode() if isinstance(n, str) else n.lower() for n in names}
    return [(k, v) for k, v in headers if k.lower() not in keys]


def with_header(headers: Headers, name: str | bytes, value: str | bytes) -> Headers:
    """Replaces every ``name`` header by one with ``value``."""
    k = name.encode() if isinstance(name, str) else name
    v = value.encode() if isinstance(value, str) else value
    return without(headers, k) + [(k, v)]


def media_type(headers: Headers) -> str:
    raw = header(headers, b"content-type") or b""
    return raw.decode("latin-1").split(";", 1)[0].strip().lower()


def _is_json_type(mt: str) -> bool:
    return mt == "application/json" or mt.endswith("+json")


def json_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """`value` (parsed JSON) with `fn` applied to every leaf (anything but a list or an object)."""
    if isinstance(value, list):
        return [json_leaves(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: json_leaves(v, fn) for k, v in value.items()}
    return fn(value)


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: keep them as escapes
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _loads(raw: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, None


# --- requests ---------------------------------------------------------------------------

async def _read_all(receive: Receive) -> tuple[bytes, Message | None]:
    """The whole request body; a disconnect seen while reading is returned to replay."""
    chunks = []
    while True:
        msg = await receive()
        if msg["type"] != "http.request":
            return b"".join(chunks), msg
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, pending: Message | None, receive: Receive) -> Receive:
    """A receive that first yields ``body`` in one message, then delegates (disconnect watching)."""
    queue: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if pending is not None:
        queue.append(pending)

    async def replay() -> Message:
        if queue:
            return queue.pop(0)
        return await receive()

    return replay


def rewrite_request_json(app: ASGIApp, fn: Callable[[Any, Scope], Any], where: Where = None) -> ASGIApp:
    """``fn(body, scope) -> new body`` on the request JSON; None keeps it; bytes are sent verbatim."""
    _check_where(where)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)
        raw, pending = await _read_all(receive)
        ok, body = _loads(raw)
        new = await _maybe_await(fn(body if ok else None, scope))
        if new is not None:
            raw = new if isinstance(new, (bytes, bytearray)) else _dumps(new)
            scope = dict(scope, headers=with_header(list(scope.get("headers") or []), b"content-length",
                                                    str(len(raw)).encode()))
        await app(scope, _replay(bytes(raw), pending, receive), send)

    return middleware


def rewrite_request_headers(app: ASGIApp, fn: Callable[[Headers, Scope], Headers], where: Where = None) -> ASGIApp:
    """``fn(headers, scope) -> headers`` on the request headers before the app sees them."""
    _check_where(where)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if matches(scope, where):
            new = await _maybe_await(fn(list(scope.get("headers") or []), scope))
            scope = dict(scope, headers=list(new))
        await app(scope, receive, send)

    return middleware


# --- responses --------------------------------------------------------------------------

def rewrite_headers(app: ASGIApp, fn: Callable[[Headers, Scope, int], Any], where: Where = None) -> ASGIApp:
    """``fn(headers, scope, status) -> headers | (status, headers)`` on every matched response start."""
    _check_where(where)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)

        async def wrapped(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                out = await _maybe_await(fn(list(msg.get("headers") or []), scope, msg["status"]))
                status, headers = out if isinstance(out, tuple) else (msg["status"], out)
                msg = dict(msg, status=status, headers=list(headers))
            await send(msg)

        await app(scope, receive, wrapped)

    return middleware


def rewrite_json_response(app: ASGIApp, fn: Callable[..., Any], where: Where = None) -> ASGIApp:
    """``fn(obj, scope, status, headers) -> obj | (status, headers, obj) | bytes`` on JSON answers."""
    async def on_json(raw: bytes, scope: Scope, status: int, headers: Headers) -> Any:
        ok, obj = _loads(raw)
        if not (_is_json_type(media_type(headers)) and ok and raw):  # a HEAD answer has no body to rewrite
            return raw
        out = await _maybe_await(fn(obj, scope, status, headers))
        if isinstance(out, tuple) and len(out) == 3:
            status, headers, out = out
        return status, headers, out if isinstance(out, (bytes, bytearray)) else _dumps(out)

    return rewrite_body(app, on_json, where)


def rewrite_error(app: ASGIApp, fn: Callable[[dict, int], Any], where: Where = None) -> ASGIApp:
    """``fn(error, status)`` mutates the `error` object of error bodies (invoke/AG-UI and JSON-RPC alike);
    it may return a new status."""
    def on_error(obj: Any, scope: Scope, status: int, headers: Headers) -> Any:
        if isinstance(obj, dict) and isinstance(obj.get("error"), dict):
            new = fn(obj["error"], status)
            if isinstance(new, int) and not isinstance(new, bool):   # `cond and err.update(…)` returns False
                return new, headers, obj
        return obj

    return rewrite_json_response(app, on_error, where)


def rewrite_body(app: ASGIApp, fn: Callable[..., Any], where: Where = None) -> ASGIApp:
    """``fn(raw, scope, status, headers) -> bytes | (status, headers, bytes)`` on every non-SSE answer (buffered).

    For bodies that are not JSON, or to change bytes JSON parsing would hide. Content-Length is fixed
    (left out when the app sent none).
    """
    _check_where(where)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)
        start: Message | None = None
        chunks: list[bytes] = []

        async def wrapped(msg: Message) -> None:
            nonlocal start
            if msg["type"] == "http.response.start":
                if media_type(msg.get("headers") or []) == "text/event-stream":
                    return await send(msg)
                start = msg
                return
            if msg["type"] != "http.response.body" or start is None:
                return await send(msg)
            chunks.append(msg.get("body", b""))
            if msg.get("more_body", False):
                return
            raw = b"".join(chunks)
            status, headers = start["status"], list(start.get("headers") or [])
            out = await _maybe_await(fn(raw, scope, status, headers))
            if isinstance(out, tuple):
                status, headers, out = out
            if scope.get("method") != "HEAD" and header(headers, b"content-length") is not None:
                headers = with_header(list(headers), b"content-length", str(len(out)).encode())
            await send(dict(start, status=status, headers=list(headers)))
            await send({"type": "http.response.body", "body": bytes(out), "more_body": False})

        await app(scope, receive, wrapped)

    return middleware


# --- event streams ------------------------------------------------------------------------

_EOL = re.compile(rb"\r\n|\r|\n")


def split_blocks(buffer: bytes, final: bool = False) -> tuple[list[bytes], bytes]:
    """Complete SSE blocks (each ending with its blank line) and the unfinished rest.

    Lines end with CRLF, CR or LF; a CR at the very end of a non-final buffer waits for
    the next chunk (it may be the first half of a CRLF).
    """
    blocks: list[bytes] = []
    start = pos = 0
    line_start = 0
    n = len(buffer)
    while pos < n:
        m = _EOL.search(buffer, pos)
        if m is None:
            break
        if m.group() == b"\r" and m.end() == n and not final:
            break
        empty_line = m.start() == line_start
        pos = line_start = m.end()
        if empty_line:
            blocks.append(buffer[start:pos])
            start = pos
    return blocks, buffer[start:]


def sse_json(block: bytes) -> tuple[str | None, Any]:
    """(event name or None, parsed data JSON or None) of one SSE block."""
    event, data = None, []
    for line in re.split(r"\r\n|\r|\n", block.decode("utf-8", "replace")):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if not data:
        return event, None
    try:
        return event, json.loads("\n".join(data))
    except ValueError:
        return event, None


def is_comment(block: bytes) -> bool:
    lines = [ln for ln in _EOL.split(block) if ln]
    return bool(lines) and all(ln.startswith(b":") for ln in lines)


def make_block(obj: Any, event: str | None = None, *, eol: bytes = b"\n") -> bytes:
    """One SSE block: optional ``event:`` line, one ``data:`` line of compact JSON, blank line."""
    head = b"event: " + event.encode() + eol if event is not None else b""
    return head + b"data: " + _dumps(obj) + eol + eol


def _as_blocks(out: Any) -> list[bytes]:
    if out is None:
        return []
    if isinstance(out, (bytes, bytearray)):
        return [bytes(out)]
    return [bytes(b) for b in out if b]


def rewrite_sse(app: ASGIApp, fn: Callable[[bytes | None, dict, Scope], Any], where: Where = None) -> ASGIApp:
    """``fn(block, state, scope) -> bytes | [bytes] | None`` on each SSE block as it passes; ``block=None`` at the end."""
    _check_where(where)

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)
        active = False
        state: dict[str, Any] = {}
        buffer = b""

        async def wrapped(msg: Message) -> None:
            nonlocal active, buffer
            if msg["type"] == "http.response.start":
                headers = list(msg.get("headers") or [])
                active = media_type(headers) == "text/event-stream"
                if active:
                    state["status"] = msg["status"]
                    msg = dict(msg, headers=without(headers, b"content-length"))
                return await send(msg)
            if msg["type"] != "http.response.body" or not active:
                return await send(msg)
            more = msg.get("more_body", False)
            buffer += msg.get("body", b"")
            blocks, buffer = split_blocks(buffer, final=not more)
            out: list[bytes] = []
            for block in blocks:
                out += _as_blocks(await _maybe_await(fn(block, state, scope)))
            if not more:
                if buffer:  # a last block without its blank line passes as it is
                    out.append(buffer)
                    buffer = b""
                out += _as_blocks(await _maybe_await(fn(None, state, scope)))
            if out or not more:
                await send({"type": "http.response.body", "body": b"".join(out), "more_body": more})

        await app(scope, receive, wrapped)

    return middleware


def rewrite_sse_json(app: ASGIApp, fn: Callable[[str | None, Any, dict, Scope], Any], where: Where = None,
                     *, eol: bytes = b"\n") -> ASGIApp:
    """``fn(event, obj, state, scope)`` on each JSON data block: obj | (event, obj) | [..] | None (drop).

    Blocks without JSON data (comments, the end call) pass unchanged; re-made blocks use ``make_block``.
    """

    def one(event: str | None, item: Any) -> bytes:
        if isinstance(item, (bytes, bytearray)):
            return bytes(item)
        if isinstance(item, tuple) and len(item) == 2:
            return make_block(item[1], item[0], eol=eol)
        return make_block(item, event, eol=eol)

    async def per_block(block: bytes | None, state: dict, scope: Scope) -> Any:
        if block is None:
            return None
        event, obj = sse_json(block)
        if obj is None:
            return block
        out = await _maybe_await(fn(event, obj, state, scope))
        if out is None:
            return None
        if isinstance(out, list):
            return [one(event, item) for item in out]
        return one(event, out)

    return rewrite_sse(app, per_block, where)


# --- small ones -----------------------------------------------------------------------------

def delay(app: ASGIApp, seconds: float, where: Where = None, *, before: str = "headers") -> ASGIApp:
    """Waits ``seconds`` before the response start (``before="headers"``) or its first body bytes."""
    _check_where(where)
    if before not in ("headers", "body"):
        raise ValueError("before must be 'headers' or 'body'")

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)
        waited = False

        async def wrapped(msg: Message) -> None:
            nonlocal waited
            kind = "http.response.start" if before == "headers" else "http.response.body"
            if msg["type"] == kind and not waited:
                waited = True
                await asyncio.sleep(seconds)
            await send(msg)

        await app(scope, receive, wrapped)

    return middleware


def replace_status(app: ASGIApp, status: int | Callable[[int, Scope], int], where: Where = None) -> ASGIApp:
    """Another HTTP status (a number, or ``status(old, scope) -> new``); headers and body unchanged."""
    pick = status if callable(status) else (lambda old, scope: status)
    return rewrite_headers(app, lambda headers, scope, old: (pick(old, scope), headers), where)


def set_header(app: ASGIApp, name: str, value: str, where: Where = None) -> ASGIApp:
    return rewrite_headers(app, lambda headers, scope, status: with_header(headers, name, value), where)


def drop_header(app: ASGIApp, name: str, where: Where = None) -> ASGIApp:
    return rewrite_headers(app, lambda headers, scope, status: without(headers, name), where)


def respond(app: ASGIApp, status: int, body: Any, headers: Headers | None = None, where: Where = None) -> ASGIApp:
    """Answers matched requests itself (JSON ``body``, or bytes) without running the app."""
    _check_where(where)
    raw = body if isinstance(body, (bytes, bytearray)) else _dumps(body)
    base = headers if headers is not None else [(b"content-type", b"application/json")]

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if not matches(scope, where):
            return await app(scope, receive, send)
        await _read_all(receive)
        await send({"type": "http.response.start", "status": status,
                    "headers": with_header(list(base), b"content-length", str(len(raw)).encode())})
        await send({"type": "http.response.body", "body": bytes(raw), "more_body": False})

    return middleware


def chain(app: ASGIApp, *wrappers: Callable[[ASGIApp], ASGIApp]) -> ASGIApp:
    """``chain(app, a, b)`` is ``b(a(app))``: ``a`` sees the app's output first."""
    for wrap in wrappers:
        app = wrap(app)
    return app
