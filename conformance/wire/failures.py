"""An exception raised while talking to a server, turned into a sentence a report can show."""
from __future__ import annotations

import re
import ssl

import httpx

from .exchange import Limits


def seconds_text(x: float) -> str:
    return f"{x:g}"


def size_text(n: int) -> str:
    if n >= 2**20 and n % 2**20 == 0:
        return f"{n // 2**20} MiB"
    if n >= 2**10 and n % 2**10 == 0:
        return f"{n // 2**10} KiB"
    return f"{n:,} bytes"


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(out) < 20:
        out.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return out


def describe(exc: BaseException, phase: str, nbytes: int, limits: Limits) -> str:
    """Turn an exception raised while talking to the server into a sentence."""
    chain = _chain(exc)
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError):
            return f"TLS verification failed: {e.verify_message or e.reason or e}"
    for e in chain:
        if isinstance(e, ssl.SSLError):
            return f"TLS error: {e.reason or e}"
    where = "before any response headers" if phase == "headers" else f"after {nbytes:,} bytes"
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect within {seconds_text(limits.connect)} s"
    if isinstance(exc, httpx.ConnectError):
        for e in chain:
            if isinstance(e, ConnectionRefusedError):
                return "connection refused"
        return f"could not connect: {exc or type(exc).__name__}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out {where}: {type(exc).__name__}"
    if isinstance(exc, httpx.RemoteProtocolError):
        msg = re.sub(r"bytearray\((b(['\"]).*?\2)\)", r"\1", str(exc))
        if phase == "headers":
            if "without sending a response" in msg or "disconnected" in msg.lower():
                return "connection closed before any response headers were received"
            return f"server did not speak HTTP: {msg}"
        return f"connection closed {where} before the body was complete ({msg})"
    if isinstance(exc, httpx.DecodingError):
        return f"could not decode the response body {where}: {exc}"
    if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.NetworkError)):
        for e in chain:
            if isinstance(e, ConnectionResetError):
                return f"connection reset {where}"
            if isinstance(e, BrokenPipeError):
                return f"connection closed by the server while sending the request ({where})"
        return f"network error {where}: {exc or type(exc).__name__}"
    if isinstance(exc, httpx.HTTPError):
        return f"HTTP error {where}: {type(exc).__name__}: {exc}"
    if isinstance(exc, OSError):
        return f"network error {where}: {exc}"
    return f"client error {where}: {type(exc).__name__}: {exc}"
