"""What one request and its answer left behind (`Exchange`), the limits it was held to (`Limits`), and what a
scenario has in flight (`Activity`). The client (`http.py`) fills these; checks and reports read them.
"""
from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import httpx

from .redact import Redactor
from .sse import StreamRecord, strict_json_loads
from conformance.vocab.text import truncate

PARSED = "the body as JSON"     # a reading (`Exchange._readings`): (the body's length when parsed, its value)
#: header values masked in every transcript and report
SENSITIVE_HEADERS = {
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
}


def decoded_headers(headers: httpx.Headers) -> httpx.Headers:
    """An answer's header fields for its body as recorded, which the client already decoded: without the
    `Content-Encoding` (and the `Content-Length` of the encoded body) a response rebuilt from it would decode again.
    The fields stay bytes as they came (a value beyond ASCII, such as a redaction mark, is kept)."""
    raw = headers.raw
    if not any(k.lower() == b"content-encoding" for k, _ in raw):
        return headers
    return httpx.Headers([(k, v) for k, v in raw if k.lower() not in (b"content-encoding", b"content-length")])


@dataclass
class Limits:
    connect: float = 10.0  # seconds to connect (incl. TLS)
    headers: float = 30.0  # seconds from sending to response headers
    idle: float = 30.0  # max seconds between two received chunks
    total: float = 60.0  # overall deadline for the exchange, body/stream included
    max_body: int = 8 * 2**20  # byte cap for a body or stream
    # frame (and comment) cap for a stream: every recorded frame is judged later, so a server that floods small
    # frames must not make the judging phase outlast the run; the conformance scenarios need a few dozen
    max_items: int = 5_000


@dataclass
class Activity:
    """What one scenario is doing on the wire: the exchanges in flight (so a scenario cut off can say which
    exchange held it), the seconds spent waiting for the rate limit and those spent on the suite's own work (drawing
    its inputs): its deadline counts neither, since the server was not waited on."""
    in_flight: dict[int, "Exchange"] = field(default_factory=dict)
    _waited: float = 0.0
    _holding: int = 0              # requests held back right now
    _since: float = 0.0            # when the current stretch of holding began
    _own: float = 0.0
    _own_since: float | None = None     # when the suite's work in progress began (None: none)

    @contextlib.contextmanager
    def suite_work(self) -> Iterator[None]:
        """The suite working for this scenario (a draw, waiting for the drawing process included); nested: once."""
        outer = self._own_since is None
        if outer:
            self._own_since = time.monotonic()
        try:
            yield
        finally:
            if outer:
                self._own += time.monotonic() - self._own_since
                self._own_since = None

    @property
    def suite_seconds(self) -> float:
        since = self._own_since
        return self._own + (time.monotonic() - since if since is not None else 0.0)

    def hold(self) -> None:
        if self._holding == 0:
            self._since = time.monotonic()
        self._holding += 1

    def release(self) -> None:
        self._holding -= 1
        if self._holding == 0:
            self._waited += time.monotonic() - self._since

    @property
    def waited(self) -> float:
        """Seconds during which at least one of the scenario's requests was held back (concurrent waits
        count once)."""
        return self._waited + (time.monotonic() - self._since if self._holding else 0.0)

    @property
    def held_back(self) -> bool:
        """A request is waiting right now for the server's rate limit (pacing or a 429's Retry-After)."""
        return self._holding > 0

    def holding(self) -> str:
        """The exchanges in flight, in words."""
        return "; ".join(ex.progress() for ex in self.in_flight.values())


#: the Activity of the scenario the current task runs for (set by the engine; None outside scenarios)
ACTIVITY: contextvars.ContextVar[Activity | None] = contextvars.ContextVar("conformance_activity", default=None)


@dataclass(repr=False)
class Exchange:
    label: str
    method: str
    url: str
    request_headers: dict[str, str]  # as sent; credential values masked
    request_body: bytes | None
    status: int | None
    headers: httpx.Headers | None
    body: bytes
    stream: StreamRecord | None
    t_headers: float | None
    t_end: float | None
    error: str | None
    waited_429: list[float] = field(default_factory=list)
    #: time.monotonic() when the (final) request was sent
    started_at: float | None = None
    #: still 429 when the retry budget ran out (or the run's deadline came first): the server never judged it
    rate_limited: bool = False
    #: the credential fact the request carried (set by the engine)
    credential: str | None = None
    #: why the request was resent on a fresh connection (the first attempt's transport error), if it was
    retried_transport: str | None = None
    #: seconds the request was held back before sending to stay under the rate limit
    waited_pace: float = 0.0
    #: the HTTP version it went over (`HTTP/1.1`, `HTTP/2`): the answer's; without an answer, the one the client
    #: asked for; None when it was never sent
    http_version: str | None = None
    #: the free dimensions the sender chose for it (`model.dimensions`): what the request alone cannot show
    form: dict[str, str] = field(default_factory=dict)
    #: sent again with a Content-Length after the server asked for one (411 to its chunked body)
    length_required: str | None = None
    _redactor: Redactor | None = field(default=None, repr=False, compare=False)
    _received: int = field(default=0, repr=False, compare=False)  # body bytes so far, while in flight
    _new_connection: bool = field(default=False, repr=False, compare=False)
    #: why the body is not JSON, once found: hundreds of checks may ask, and a body of many MB that is not JSON
    #: must not be decoded and parsed again each time
    _not_json: str | None = field(default=None, repr=False, compare=False)
    _readings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- helpers ----------------------------------------------------------
    @property
    def content_type(self) -> str | None:
        if self.headers is None:
            return None
        value = self.headers.get("content-type")
        if value is None:
            return None
        return value.split(";", 1)[0].strip().lower() or None

    def header(self, name: str) -> str | None:
        if self.headers is None:
            return None
        return self.headers.get(name)

    @property
    def transport_failed(self) -> bool:
        """No response at all (no status line): a transport error, a deadline before headers, or not sent."""
        return self.status is None

    def progress(self) -> str:
        """Where this exchange stands, in words (for an exchange cut off while in flight)."""
        what = f"{self.label or '-'} ({self.method} {self.url})"
        if self.started_at is None:
            return f"{what}: not sent yet (waiting for the rate limit)"
        took = time.monotonic() - self.started_at
        if self.status is None:
            return f"{what}: no response headers after {took:.1f} s"
        return f"{what}: status {self.status}, {self._received:,} body bytes received in {took:.1f} s"

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def redact(self, text: str) -> str:
        return self._redactor.redact(text) if self._redactor is not None else Redactor().redact(text)

    def _what(self) -> str:
        if self.status is None:
            return f"no response ({self.error})"
        ct = self.header("content-type")
        s = f"status {self.status}, content-type {ct!r}, {len(self.body):,} bytes"
        if self.error:
            s += f", error: {self.error}"
        return s

    def remembered(self, key: str, read: Callable[[], Any]) -> Any:
        """A reading of this recorded exchange that many checks ask for (its schema violations, …): computed once.
        Only for an exchange whose recording is over."""
        if key not in self._readings:
            self._readings[key] = read()
        return self._readings[key]

    def json(self) -> Any:
        """The body as JSON (an AssertionError saying why when it is not). Parsed once for the body as it stands:
        every rule and check reads it, none changes it."""
        if self._not_json is None:
            parsed = self._readings.get(PARSED)
            if parsed is not None and parsed[0] == len(self.body):
                return parsed[1]
            try:
                value = self._parse_json()
            except AssertionError as exc:
                self._not_json = str(exc)
            else:
                self._readings[PARSED] = (len(self.body), value)
                return value
        raise AssertionError(self._not_json)

    def _parse_json(self) -> Any:
        where = f"{self.method} {self.url}"
        if self.status is None:
            raise AssertionError(self.redact(f"{where}: expected a JSON body, got {self._what()}"))
        if not self.body:
            raise AssertionError(self.redact(f"{where}: expected a JSON body, got an empty body ({self._what()})"))
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            ex = truncate(self.body[:2000].decode("utf-8", "replace"), 300, count=True)
            raise AssertionError(
                self.redact(
                    f"{where}: body is not valid UTF-8 (byte {exc.start}), so not JSON ({self._what()}): {ex!r}"
                )
            ) from None
        try:
            return strict_json_loads(text)
        except ValueError as exc:
            raise AssertionError(
                self.redact(f"{where}: body is not JSON ({exc}; {self._what()}): {truncate(text, 300, count=True)!r}")
            ) from None

    def __repr__(self) -> str:
        return self.redact(
            f"Exchange({self.label!r}, {self.method} {self.url} -> "
            + (str(self.status) if self.status is not None else "no response")
            + f", {len(self.body):,} bytes"
            + (f", {len(self.stream.events)} frames, end={self.stream.end!r}" if self.stream else "")
            + (f", error={self.error!r}" if self.error else "")
            + ")"
        )


def same_call(a: Exchange, b: Exchange) -> bool:
    """One exchange recorded twice (a scenario may read the preflight's call as its own step)."""
    return a is b or (a.url, a.started_at, a.request_body) == (b.url, b.started_at, b.request_body)
