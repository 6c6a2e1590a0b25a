"""Small ASGI helpers: requests, JSON bodies, responses, SSE and disconnect watching."""

from __future__ import annotations

import asyncio
import json
import math
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON_TYPE = b"application/json"
SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def request_id() -> str:
    return "req_" + secrets.token_hex(12)


def dumps(value: Any) -> bytes:
    """Wire JSON as UTF-8; lone surrogates (legal as JSON escapes) are kept as escapes."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class BadJSON(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise BadJSON(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BadJSON("number out of range")
    return value


def loads(body: bytes) -> Any:
    """Strict JSON: UTF-8 only, no NaN/Infinity, no number that does not fit."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadJSON("the body is not valid UTF-8") from None
    if text.startswith("\ufeff"):
        raise BadJSON("the body starts with a byte order mark")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except BadJSON:
        raise
    except (ValueError, RecursionError) as exc:
        raise BadJSON(f"the body is not valid JSON ({getattr(exc, 'msg', type(exc).__name__)})") from None


class Request:
    __slots__ = ("scope", "receive", "headers", "raw_headers", "request_id", "body")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        self.raw_headers: list[tuple[bytes, bytes]] = scope.get("headers") or []
        headers: dict[str, str] = {}
        for k, v in self.raw_headers:
            headers[k.decode("latin-1").lower()] = v.decode("latin-1")
        self.headers = headers
        self.request_id = request_id()
        self.body: bytes | None = None

    @property
    def method(self) -> str:
        return self.scope["method"]

    def header_count(self, name: bytes) -> int:
        name = name.lower()
        return sum(1 for k, _ in self.raw_headers if k.lower() == name)

    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def accepts(self, media: str) -> bool:
        """Whether Accept names ``media`` (or its wildcards) with a non-zero q."""
        accept = self.headers.get("accept")
        if not accept:
            return False
        major = media.split("/", 1)[0] + "/*"
        for part in accept.split(","):
            fields = [f.strip() for f in part.split(";")]
            name = fields[0].lower()
            if name not in (media, major, "*/*"):
                continue
            q = 1.0
            for f in fields[1:]:
                if f.lower().startswith("q="):
                    try:
                        q = float(f[2:])
                    except ValueError:
                        q = 0.0
            if q > 0 and name == media:
                return True
        return False

    def declared_length(self) -> int | None:
        raw = self.headers.get("content-length")
        if raw is None:
            return None
        try:
            return int(raw)
        except ValueError:
            return -1

    async def read_body(self, limit: int) -> bytes | None:
        """The whole body, or None when it is over ``limit`` bytes (reading stops there)."""
        declared = self.declared_length()
        if declared is not None and declared > limit:
            return None
        chunks = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone()
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    return None
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        self.body = b"".join(chunks)
        return self.body


class ClientGone(Exception):
    """The client went away."""


async def send_bytes(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = headers + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_json(send: Send, status: int, value: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send_bytes(send, status, dumps(value), [(b"content-type", JSON_TYPE)] + (headers or []))


async def send_empty(send: Send, status: int, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send_bytes(send, status, b"", headers or [])


async def start_stream(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + headers})


async def stream_write(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def stream_end(send: Send, data: bytes = b"") -> None:
    await send({"type": "http.response.body", "body": data, "more_body": False})


class DisconnectWatch:
    """Cancels the current task when the client disconnects (the body must be fully read first).

    Used around every run that can wait (a script with ``sleep``) and every stream,
    so a client that goes away stops its run instead of leaving it running.
    """

    __slots__ = ("_receive", "_task", "_watcher", "gone", "_armed")

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._task: asyncio.Task[Any] | None = None
        self._watcher: asyncio.Task[Any] | None = None
        self.gone = False
        self._armed = True

    async def _watch(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                if not self._armed:
                    return
                self.gone = True
                if self._task is not None:
                    self._task.cancel()
                return

    async def __aenter__(self) -> DisconnectWatch:
        self._task = asyncio.current_task()
        self._watcher = asyncio.ensure_future(self._watch())
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._armed = False
        watcher = self._watcher
        if watcher is not None and not watcher.done():
            watcher.cancel()
            try:
                await watcher
            except BaseException:  # noqa: BLE001 - the watcher's own cancellation
                pass
        if self.gone and exc_type is asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            raise ClientGone()
        return False
