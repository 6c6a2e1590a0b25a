"""Hostile servers: plain asyncio on 127.0.0.1 (HTTPS with a throwaway trustme CA) that misbehave
below the protocol: they never answer, hang, stream forever, drip, flood, send bad bytes, reset,
lie about the content type or do not speak HTTP at all.

    with HostileServer("drip") as srv:
        srv.base_url, srv.ca_path

``BEHAVIOURS`` maps each name to (one-line description, handler). A handler gets the
connection's reader/writer and the parsed request (None for the ones that never read).
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import socket
import ssl
import struct
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import trustme

MAX_HEAD = 64 * 1024
MAX_BODY = 8 * 1024 * 1024


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def kind(self) -> str:
        for k in ("invoke", "agui"):
            if self.path.endswith("/" + k):
                return k
        return "metadata" if self.path.startswith("/.well-known/") else "mcp"

    @property
    def wants_stream(self) -> bool:
        if self.kind == "agui" or "text/event-stream" in self.headers.get("accept", "") and self.kind == "invoke":
            return True
        try:
            body = json.loads(self.body)
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("stream") is True


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ssl.SSLError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    body = b""
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        length = 0
    if 0 < length <= MAX_BODY:
        try:
            body = await reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            return None
    return Request(parts[0], parts[1], headers, body)


def head(status: str, content_type: str | None, length: int | None = None, extra: str = "") -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode("latin-1")


async def until_client_leaves(reader: asyncio.StreamReader) -> None:
    try:
        while await reader.read(65536):
            pass
    except (ConnectionError, ssl.SSLError):
        pass


async def open_(writer: asyncio.StreamWriter) -> bool:
    """The client is still there. A write to a lost connection does not raise, and drain() returns without
    yielding when nothing is buffered, so a sending loop must yield for the loss to be noticed at all."""
    await asyncio.sleep(0)
    return not writer.is_closing()


def event_frame(req: Request, n: int) -> bytes:
    """One valid-looking frame of the request's protocol."""
    if req.kind == "agui":
        return b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"x"}\n\n'
    if req.kind == "mcp":
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": n, "message": "working"}}
        return b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
    return b'event: text\ndata: {"v":1,"type":"text","delta":"x"}\n\n'


# --- behaviours -------------------------------------------------------------------------------------

async def silent(reader, writer, req):
    """Accepts the connection, reads the request, never answers."""
    await until_client_leaves(reader)


async def headers_then_hang(reader, writer, req):
    """Sends 200 and the headers of a 1000-byte JSON body, then nothing."""
    writer.write(head("200 OK", "application/json", 1000))
    await writer.drain()
    await until_client_leaves(reader)


async def endless_events(reader, writer, req):
    """A 200 event stream of valid frames of the request's protocol, a frame every 20 ms, forever."""
    writer.write(head("200 OK", "text/event-stream"))
    n = 0
    while await open_(writer):
        n += 1
        writer.write(event_frame(req, n))
        await writer.drain()
        await asyncio.sleep(0.02)


async def flood_events(reader, writer, req):
    """A 200 event stream of small valid frames of the request's protocol, as fast as the connection takes them, forever."""
    writer.write(head("200 OK", "text/event-stream"))
    n = 0
    while await open_(writer):
        batch = []
        for _ in range(256):
            n += 1
            batch.append(event_frame(req, n))
        writer.write(b"".join(batch))
        await writer.drain()


async def drip_stream_forever(reader, writer, req):
    """A 200 event stream of valid frames of the request's protocol, sent one byte a second, forever."""
    writer.write(head("200 OK", "text/event-stream"))
    await writer.drain()
    n = 0
    while await open_(writer):
        n += 1
        if not await drip_bytes(writer, event_frame(req, n)):
            return


async def stream_headers_then_nothing(reader, writer, req):
    """Sends 200 and text/event-stream headers, then nothing, holding the connection open."""
    writer.write(head("200 OK", "text/event-stream"))
    await writer.drain()
    await until_client_leaves(reader)


async def endless_body(reader, writer, req):
    """A 200 JSON answer without a length whose body never ends (a JSON array of numbers, as fast as possible)."""
    writer.write(head("200 OK", "application/json"))
    writer.write(b"[")
    chunk = b"1," * 32768
    while await open_(writer):
        writer.write(chunk)
        await writer.drain()


async def drip(reader, writer, req):
    """A 200 JSON answer announced as 100 kB, sent one byte a second."""
    writer.write(head("200 OK", "application/json", 100_000))
    await writer.drain()
    await drip_bytes(writer, b'{"status":"completed","result":"' + b"x" * 99_900)


async def drip_bytes(writer, data: bytes) -> bool:
    """Sends `data` one byte a second; False when the client left first."""
    for byte in data:
        if not await open_(writer):
            return False
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(1.0)
    return True


async def huge_frame(reader, writer, req):
    """A 200 event stream whose first frame is one `data:` line of 64 MB."""
    writer.write(head("200 OK", "text/event-stream"))
    writer.write(b'data: {"type":"text","delta":"')
    chunk = b"a" * (1 << 20)
    for _ in range(64):
        if not await open_(writer):
            return
        writer.write(chunk)
        await writer.drain()
    writer.write(b'"}\n\n')
    await writer.drain()


async def invalid_utf8(reader, writer, req):
    """Answers 200 with bodies (JSON or event stream) holding bytes that are not UTF-8."""
    bad = b"\xff\xfe\xc3\x28\xed\xa0\x80"
    if req.wants_stream:
        body = b"event: text\ndata: {\"v\":1,\"type\":\"text\",\"delta\":\"" + bad + b"\"}\n\n"
        writer.write(head("200 OK", "text/event-stream", len(body)) + body)
    else:
        body = b'{"status":"completed","result":"' + bad + b'","events":[],"jsonrpc":"2.0","id":1}'
        writer.write(head("200 OK", "application/json", len(body)) + body)
    await writer.drain()


async def reset_mid_body(reader, writer, req):
    """Announces a 2000-byte JSON body, sends 200 bytes, then resets the connection (RST)."""
    writer.write(head("200 OK", "application/json", 2000) + b'{"status":"completed","result":"' + b"y" * 168)
    await writer.drain()
    await asyncio.sleep(0.05)
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def wrong_content_type(reader, writer, req):
    """Answers every request 200 with an HTML page."""
    body = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
    writer.write(head("200 OK", "text/html; charset=utf-8", len(body)) + body)
    await writer.drain()


GARBAGE = b"\x00\x01\x02 SSH-2.0-NotHTTP \xff\xfe\r\n\x1b[31mgarbage\x1b[0m\r\n\r\n" * 64


async def garbage(reader, writer, req):
    """Completes TLS, then answers every request with bytes that are not HTTP."""
    writer.write(GARBAGE)
    await writer.drain()


async def garbage_without_tls(reader, writer, req):
    """No TLS: sends bytes that are neither a TLS handshake nor HTTP as soon as a client connects."""
    writer.write(GARBAGE)
    await writer.drain()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, Request | None], Awaitable[None]]
# name -> (handler, speaks TLS, reads the request first)
BEHAVIOURS: dict[str, tuple[Handler, bool, bool]] = {
    "silent": (silent, True, True),
    "headers-then-hang": (headers_then_hang, True, True),
    "endless-events": (endless_events, True, True),
    "drip": (drip, True, True),
    "flood-events": (flood_events, True, True),
    "drip-stream-forever": (drip_stream_forever, True, True),
    "stream-headers-then-nothing": (stream_headers_then_nothing, True, True),
    "endless-body": (endless_body, True, True),
    "huge-frame": (huge_frame, True, True),
    "invalid-utf8": (invalid_utf8, True, True),
    "reset-mid-body": (reset_mid_body, True, True),
    "wrong-content-type": (wrong_content_type, True, True),
    "garbage": (garbage, True, True),
    "garbage-without-tls": (garbage_without_tls, False, False),
}


def describe(name: str) -> str:
    return (BEHAVIOURS[name][0].__doc__ or "").strip().splitlines()[0]


# --- the server ---------------------------------------------------------------------------------------

_ca_lock = threading.Lock()
_ca: dict[str, object] = {}


def _certs() -> tuple[str, ssl.SSLContext]:
    """One CA per process (written once), shared by every hostile server."""
    with _ca_lock:
        if not _ca:
            ca = trustme.CA()
            cert = ca.issue_cert("127.0.0.1", "localhost")
            folder = tempfile.mkdtemp(prefix="hostile-ca-")
            atexit.register(shutil.rmtree, folder, True)
            path = os.path.join(folder, "ca.pem")
            ca.cert_pem.write_to_path(path)
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            cert.configure_cert(ctx)
            _ca.update(path=path, ctx=ctx)
        return _ca["path"], _ca["ctx"]  # type: ignore[return-value]


class HostileServer:
    def __init__(self, behaviour: str) -> None:
        self.name = behaviour
        self.handler, self.tls, self.reads = BEHAVIOURS[behaviour]
        self.ca_path, self._ssl = _certs()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self.connections = 0

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            req = await read_request(reader) if self.reads else None
            if self.reads and req is None:
                return
            await self.handler(reader, writer, req)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, OSError):
            pass
        except asyncio.CancelledError:  # the server stops: end quietly
            pass
        finally:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the transport may already be gone
                pass

    def start(self) -> "HostileServer":
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def boot() -> None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0,
                                                      ssl=self._ssl if self.tls else None, limit=MAX_HEAD)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(boot())
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name=f"hostile-{self.name}", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"hostile server {self.name} did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self._loop = None

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
