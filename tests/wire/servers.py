"""Tiny raw asyncio HTTP servers on 127.0.0.1 for the wire tests.

They write bytes by hand so tests can misbehave in every way a hostile
server could: hang, drip, reset, stream forever, send garbage."""

from __future__ import annotations

import asyncio
import socket
import struct
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import AsyncIterator, Awaitable, Callable


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class ServerState:
    port: int
    connections: int = 0
    requests: list[Request] = field(default_factory=list)


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = b""
    n = int(headers.get("content-length", "0"))
    if n:
        body = await reader.readexactly(n)
    return Request(method, path, headers, body)


Handler = Callable[[Request, asyncio.StreamWriter, ServerState], Awaitable[bool | None]]


@asynccontextmanager
async def serve(handler: Handler, *, ssl=None, raw: bool = False) -> AsyncIterator[ServerState]:
    """Run ``handler`` for every request (keep-alive loop).  The handler
    returns True to keep the connection open for another request.  With
    ``raw=True`` the handler gets (reader, writer, state) and does everything."""
    tasks: set[asyncio.Task] = set()
    state = ServerState(port=0)

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        state.connections += 1
        try:
            if raw:
                await handler(reader, writer, state)  # type: ignore[arg-type]
            else:
                while True:
                    req = await read_request(reader)
                    if req is None:
                        break
                    state.requests.append(req)
                    keep = await handler(req, writer, state)
                    await writer.drain()
                    if not keep:
                        break
        except (ConnectionError, asyncio.CancelledError, asyncio.IncompleteReadError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass
            tasks.discard(task)

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0, ssl=ssl)
    state.port = server.sockets[0].getsockname()[1]
    try:
        yield state
    finally:
        server.close()
        for t in list(tasks):
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def response(status: int, body: bytes = b"", headers: dict[str, str] | None = None, reason: str = "X") -> bytes:
    hdrs = {"content-length": str(len(body))}
    hdrs.update(headers or {})
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
    return head.encode("latin-1") + body


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0)."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
