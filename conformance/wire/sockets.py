"""The network under the recorder's connection pool: httpcore's own streams, each keeping its socket.

httpcore asks every idle connection of the pool whether its socket is readable (the server closed it) on every
request and every response's end: 32 connections, some 15,000 questions a run. Its anyio stream answers each by
rebuilding anyio's table of socket attributes (a peer-name system call and an enum conversion each time); a stream
that keeps its socket answers with one poll. Nothing else of what goes over the wire changes."""
from __future__ import annotations

import select
import socket
import ssl
from typing import Any, Iterable

import httpcore
import httpx


def _poller(sock: socket.socket | None) -> Any:
    """A poll set of the socket alone, made once (asked thousands of times a run); None where there is no poll."""
    if sock is None or not hasattr(select, "poll"):
        return None
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return poll


def _readable(sock: socket.socket | None, poll: Any = None) -> bool:
    """Whether a read would not block: data, or the peer's close. A socket gone counts as readable, so that httpcore
    drops its connection, as it does itself."""
    if sock is None or sock.fileno() < 0:
        return True
    if poll is None:
        return bool(select.select([sock], [], [], 0)[0])
    return bool(poll.poll(0))


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket = inner.get_extra_info("socket")
        self._poll = _poller(self._socket)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return _readable(self._socket, self._poll)
        return self._inner.get_extra_info(info)


class Backend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend (what it picks under asyncio, the run's loop), its streams keeping their socket."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        return _Stream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def transport(**options: Any) -> httpx.AsyncHTTPTransport:
    """httpx's transport with `options`, its pool on `Backend`. httpx names no network backend, so it is set on the
    pool it built, where httpcore reads it for each new connection; should a release of httpx build its pool
    otherwise, the pool keeps httpcore's backend and only the saving is lost."""
    made = httpx.AsyncHTTPTransport(**options)
    pool = getattr(made, "_pool", None)
    if isinstance(pool, httpcore.AsyncConnectionPool) and hasattr(pool, "_network_backend"):
        pool._network_backend = Backend()
    return made
