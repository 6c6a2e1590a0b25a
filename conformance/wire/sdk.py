"""A client the suite does not drive itself (the official MCP SDK's) held to the run's pacer, retry budget, byte
cap and deadline: `Client.paced_transport(inner)` wraps its httpx transport."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .exchange import ACTIVITY
from .failures import size_text

if TYPE_CHECKING:
    from .http import Client


class PacedTransport:
    """An httpx / httpx2 async transport (duck-typed) that waits its turn with a :class:`Client`'s pacer and
    resends on a 429 with a usable Retry-After, within the client's retry budget."""

    def __init__(self, client: Client, inner: Any) -> None:
        self.client = client
        self.inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        client = self.client
        activity = ACTIVITY.get()
        waits = 0
        while True:
            seq, _ = await client._wait_turn(True, waits > 0, request.method, str(request.url), "sdk", activity)
            if seq is None:
                raise ConnectionError("not sent: the run's deadline (profile [timeouts] run) had passed")
            response = await self.inner.handle_async_request(request)   # (the caller's hooks count requests)
            wait = client._retry_after(response.status_code, response.headers.get("retry-after"))
            client.pacer.observe(seq, response.headers.get("x-ratelimit-remaining"), wait)
            if wait is None or waits >= client.max_429_retries or client._after_deadline(time.monotonic() + wait):
                if response.status_code == 429:
                    client.stats.rate_limited += 1
                response.stream = _capped(response.stream, client)
                return response
            await response.aclose()
            waits += 1
            await client._sleep_429(wait, activity)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> "PacedTransport":
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


class _CappedStream:
    """A response body stream held to the client's byte cap and run deadline (for a client we do not drive:
    an endless body must not fill the memory or outlast the run)."""

    def __init__(self, inner: Any, client: Client) -> None:
        self.inner = inner
        self.client = client

    async def __aiter__(self):
        got = 0
        async for chunk in self.inner:
            got += len(chunk)
            self.client.stats.bytes_received += len(chunk)
            if got > self.client.limits.max_body:
                raise OSError(f"response body exceeded the {size_text(self.client.limits.max_body)} cap")
            if self.client._after_deadline(time.monotonic()):
                raise OSError("response body still incomplete at the run's deadline (profile [timeouts] run)")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


_CAPPED_TYPES: dict[type, type] = {}


def _capped(stream: Any, client: Client) -> Any:
    """_CappedStream around ``stream``, of its library's AsyncByteStream type (httpx and httpx2 check it)."""
    base = next((c for c in type(stream).__mro__ if c.__name__ == "AsyncByteStream"), object)
    if base not in _CAPPED_TYPES:
        _CAPPED_TYPES[base] = type("CappedStream", (_CappedStream, base), {})
    return _CAPPED_TYPES[base](stream, client)
