"""Listeners in front of a server's TLS port, for what ASGI middleware cannot bend (TLS sits below it): one port that
hands TLS connections to the server and does something else with a cleartext request. Daemon threads, stopped at
interpreter exit.

- `serve_both(tls_port, plain_port)`: cleartext goes to another (plain HTTP) server: a port that speaks both.
- `answers_cleartext(tls_port, answer)`: cleartext gets `answer` and the connection closes, as Go's net/http answers
  a plain request on its TLS port (`GO_CLEARTEXT_ANSWER`, an HTTP/1.0 400).
"""
from __future__ import annotations

import asyncio
import threading
from typing import Awaitable, Callable

#: what Go's net/http (crypto/tls) writes to a cleartext request on its TLS port, then closes
GO_CLEARTEXT_ANSWER = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"

Cleartext = Callable[[bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _forward(port: int, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        writer.close()
        return
    up_writer.write(first)
    await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


def front(tls_port: int, cleartext: Cleartext) -> int:
    """A loopback port that forwards TLS connections to `tls_port` and gives every other to `cleartext`."""
    ready = threading.Event()
    bound: dict[str, int] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.read(65536)
        if first[:1] == b"\x16":      # a TLS handshake record
            await _forward(tls_port, first, reader, writer)
        else:
            await cleartext(first, reader, writer)

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        bound["port"] = server.sockets[0].getsockname()[1]
        ready.set()
        async with server:
            await server.serve_forever()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True, name="selftest-tls-front").start()
    ready.wait(10)
    return bound["port"]


def serve_both(tls_port: int, plain_port: int) -> int:
    """A loopback port that forwards TLS connections to `tls_port` and everything else to `plain_port`."""
    return front(tls_port, lambda first, reader, writer: _forward(plain_port, first, reader, writer))


def answers_cleartext(tls_port: int, answer: bytes = GO_CLEARTEXT_ANSWER) -> int:
    """A loopback port that forwards TLS connections to `tls_port` and answers a cleartext request with `answer`."""
    async def refuse(first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer)
        try:
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        writer.close()
    return front(tls_port, refuse)


def port_of(base_url: str) -> int:
    return int(base_url.rsplit(":", 1)[1])
