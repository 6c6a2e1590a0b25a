"""A client the suite does not drive itself (the official `mcp` SDK's, over httpx2), recorded like the suite's own.

`RecordingTransport` wraps that client's transport. Every request waits its turn with the run's pacer, a 429 is
waited out and resent as the suite's own client does (`Client._resend_after`), and the request with its answer becomes an
`Exchange` in the scenario's recording, in the order sent: labelled, credentials masked, counted in the run's
cost, the body held to the byte cap, the run's recording budget and its deadline, and an event stream recorded
frame by frame by the strict SSE recorder. The client reads the body as it arrives (it answers a server's
request in the middle of a stream, it stops reading after its response), so the exchange holds what it read; a
stream the client closed early ends `closed by the client`.

Only this module knows the suite's client (`http.Client`); `http.py` does not know this one. `paced_timeout`
bounds what such a client does, not counting the time the rate limit held its requests back.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
import zlib
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable

import httpx

from .exchange import ACTIVITY, Exchange
from .failures import describe, size_text
from .sse import SSERecorder

if TYPE_CHECKING:
    from .http import Client

CLOSED_BY_CLIENT = "closed by the client"
WATCH = 0.5     # how often `paced_timeout` moves its deadline by the time held back meanwhile
STILL_OPEN = "still open when the client was done"


@contextlib.asynccontextmanager
async def paced_timeout(seconds: float):
    """`asyncio.timeout(seconds)`, but the time the scenario's requests were held back by the server's rate limit
    (pacing, a 429's Retry-After) does not count: a client kept waiting by the bucket has not timed out."""
    activity = ACTIVITY.get()
    loop = asyncio.get_running_loop()
    start = loop.time()
    async with asyncio.timeout_at(start + seconds) as scope:
        async def follow() -> None:
            while True:
                await asyncio.sleep(WATCH)
                scope.reschedule(start + seconds + activity.waited)
        watcher = asyncio.ensure_future(follow()) if activity is not None else None
        try:
            yield scope
        finally:
            if watcher is not None:
                watcher.cancel()


class RecordingTransport:
    """An httpx / httpx2 async transport (duck-typed) recording every exchange through `record`, each labelled
    `prefix` + what it carried (the JSON-RPC method, `response`, or the HTTP method), `-2`, `-3`… when repeated."""

    def __init__(self, client: Client, inner: Any, record: Callable[[Exchange], None], *, prefix: str = "",
                 credential: str | None = "api_key") -> None:
        self.client = client
        self.inner = inner
        self.record = record
        self.prefix = prefix
        self.credential = credential      # the fact whose secret the client's Authorization carries (for curl)
        self._sent: Counter[str] = Counter()    # requests labelled so far, by label before its number
        self._open: dict[int, _RecordedBody] = {}

    def label(self, request: Any) -> str:
        what = request.method
        if request.method == "POST":
            try:
                doc = json.loads(request.content)
            except (ValueError, TypeError):
                doc = None
            if isinstance(doc, dict):
                what = doc["method"] if isinstance(doc.get("method"), str) else "response"
        base = f"{self.prefix}{what}"
        self._sent[base] += 1
        n = self._sent[base]
        return base if n == 1 else f"{base}-{n}"

    async def handle_async_request(self, request: Any) -> Any:
        client = self.client
        activity = ACTIVITY.get()
        label = self.label(request)
        waits: list[float] = []
        paced = 0.0
        while True:
            if client.cut_off >= client.breaker:     # a hostile target's cut-off exchanges stop this client too
                ex = client._not_sent(request.method, str(request.url), label, waits=waits)
                ex.credential = self.credential
                self.record(ex)
                raise ConnectionError(ex.error)
            seq, held = await client._wait_turn(True, bool(waits), request.method, str(request.url), label, activity)
            paced += held
            ex = self._exchange(request, label, waits, paced)
            if seq is None:
                ex.error = client._deadline_reason(held)
                client.stats.cut_by_run_deadline += 1
                self.record(ex)
                raise ConnectionError(ex.error)
            client.stats.requests += 1
            ex.started_at = time.monotonic()
            try:
                response = await self.inner.handle_async_request(request)
            except BaseException as exc:
                client.pacer.observe(seq, None, spent=False)
                ex.t_end = time.monotonic() - ex.started_at
                ex.error = "cancelled by the client before any response headers" if isinstance(
                    exc, (asyncio.CancelledError, GeneratorExit)) else client.redact(
                    describe(exc, "headers", 0, client.limits))
                self.record(ex)
                raise
            client.pacer.observe(seq, response.headers.get("x-ratelimit-remaining"),
                                 client._retry_after(response.status_code, response.headers.get("retry-after")),
                                 spent=response.status_code != 401 and "authorization" in request.headers)
            wait = client._resend_after(response.status_code, response.headers.get("retry-after"), waits)
            if wait is None:
                break
            await response.aclose()
            waits.append(wait)
            await client._sleep_429(wait, activity)
        ex.status = response.status_code
        ex.headers = httpx.Headers(list(response.headers.raw))
        ex.http_version = response.http_version    # the curl of a finding reaches the version the client spoke
        ex.t_headers = time.monotonic() - ex.started_at
        if response.status_code == 429:
            ex.rate_limited = True
            client.stats.rate_limited += 1
        if client._counts_as_run(request, response.status_code):
            client.stats.agent_runs += 1
        self.record(ex)
        body = _stream_type(response.stream)(response.stream, ex, client, self._open)
        self._open[id(body)] = body
        response.stream = body
        return response

    def _exchange(self, request: Any, label: str, waits: list[float], paced: float) -> Exchange:
        client = self.client
        return Exchange(label=label, method=request.method, url=str(request.url),
                        request_headers=client._masked_headers(request), request_body=request.content or None,
                        status=None, headers=None, body=b"", stream=None, t_headers=None, t_end=None, error=None,
                        waited_429=waits, waited_pace=paced, credential=self.credential, _redactor=client.redactor)

    def finish_open(self) -> None:
        """Close the record of every body the client left unread (a stream still open when it was done)."""
        for body in list(self._open.values()):
            body.finish(STILL_OPEN)

    async def aclose(self) -> None:
        self.finish_open()
        await self.inner.aclose()

    async def __aenter__(self) -> "RecordingTransport":
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.finish_open()
        await self.inner.__aexit__(*exc)


def _decoder(coding: str | None) -> Any:
    """What decodes a body of this content coding for the record, as the suite's own client records bodies decoded
    (gzip, deflate with its zlib wrapper, br, zstd); None for a body kept as it came (identity, or a coding not read
    here)."""
    coding = (coding or "").strip().lower()
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    return zlib.decompressobj(wbits=zlib.MAX_WBITS | 32) if coding in ("gzip", "x-gzip", "deflate") else None


class _Brotli:
    """brotli's decompressor under zlib's name for a step (`decompress`)."""

    def __init__(self) -> None:
        import brotli
        self.inner = brotli.Decompressor()

    def decompress(self, chunk: bytes) -> bytes:
        return self.inner.process(chunk)


class _Zstd:
    """zstd frames one after another (a server may end a frame at each flush), as httpx reads them."""

    def __init__(self) -> None:
        import zstandard
        self.make = zstandard.ZstdDecompressor().decompressobj
        self.inner = self.make()

    def decompress(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            out.append(self.inner.decompress(chunk))
            chunk = self.inner.unused_data if self.inner.eof else b""
            if self.inner.eof:
                self.inner = self.make()
        return b"".join(out)


class _RecordedBody:
    """A response body as the client reads it, recorded (decoded) into its exchange and held to the suite's byte
    cap, recording budget and run deadline (an endless body must not fill the memory or outlast the run)."""

    def __init__(self, inner: Any, ex: Exchange, client: Client, open_bodies: dict[int, "_RecordedBody"]) -> None:
        self.inner = inner
        self.ex = ex
        self.client = client
        self.open_bodies = open_bodies
        self.body = bytearray()
        self.items = 0
        self.sse = SSERecorder(t0=ex.started_at, clock=time.monotonic, redact=client.redact,
                               max_items=client.limits.max_items) if ex.content_type == "text/event-stream" else None
        self.decoder = _decoder(ex.header("content-encoding"))

    async def __aiter__(self):
        try:
            async for chunk in self.inner:
                self._take(self.decoder.decompress(chunk) if self.decoder is not None else chunk)
                yield chunk
        except GeneratorExit:
            self.finish(CLOSED_BY_CLIENT)
            raise
        except asyncio.CancelledError:
            self.finish(CLOSED_BY_CLIENT)
            raise
        except Exception as exc:
            self.finish("error", self.ex.error or self.client.redact(
                describe(exc, "body", len(self.body), self.client.limits)))
            raise
        self.finish("eof")

    def _take(self, chunk: bytes) -> None:
        client, limits = self.client, self.client.limits
        what = "stream" if self.sse is not None else "body"
        room = limits.max_body - len(self.body)
        if len(chunk) > room:
            self._keep(chunk[:room])
            self._cut("byte_cap", f"{what} exceeded the {size_text(limits.max_body)} cap")
        if not client.budget.take_bytes(len(chunk)):
            self._cut("byte_cap", f"{what} cut off: the run's budget of {size_text(client.budget.body_bytes)} of "
                                  f"recorded bodies over all exchanges was spent ({len(self.body):,} bytes kept)")
        self._keep(chunk)
        if self.sse is not None:
            n_items = len(self.sse.items) + self.sse.dropped
            if not client.budget.take(n_items - self.items):
                self._cut("item_cap", f"stream cut off: the run's budget of {client.budget.frames:,} recorded frames "
                                      f"over all streams was spent")
            self.items = n_items
            if n_items >= limits.max_items:
                self._cut("item_cap", f"stream exceeded the {limits.max_items:,} frame cap")
        if client._after_deadline(time.monotonic()):
            self._cut("deadline", f"{what} still incomplete at {client.run_deadline_words()}")

    def _keep(self, chunk: bytes) -> None:
        self.body += chunk
        self.ex._received = len(self.body)
        self.client.stats.bytes_received += len(chunk)
        if self.sse is not None and chunk:
            self.sse.feed(chunk, time.monotonic() - self.ex.started_at)

    def _cut(self, end: str, error: str) -> None:
        self.client.cut_off += 1
        self.finish(end, error)
        raise OSError(error)

    def finish(self, end: str, error: str | None = None) -> None:
        """The exchange's body, stream and end time as read so far (once: the first end is the one kept)."""
        if self.open_bodies.pop(id(self), None) is None:
            return
        ex = self.ex
        ex.t_end = time.monotonic() - ex.started_at
        ex.body = bytes(self.body)
        ex.error = ex.error or error
        if self.sse is not None:
            ex.stream = self.sse.finish(f"error: {error}" if end == "error" else end, ex.t_end)

    async def aclose(self) -> None:
        self.finish(CLOSED_BY_CLIENT)
        await self.inner.aclose()


_STREAM_TYPES: dict[type, type] = {}


def _stream_type(original: Any) -> type:
    """_RecordedBody as an AsyncByteStream of the original stream's library (httpx and httpx2 check the type)."""
    base = next((c for c in type(original).__mro__ if c.__name__ == "AsyncByteStream"), object)
    if base not in _STREAM_TYPES:
        _STREAM_TYPES[base] = type("RecordedBody", (_RecordedBody, base), {})
    return _STREAM_TYPES[base]
