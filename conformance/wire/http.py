"""The one HTTP client every scenario sends with (what it records: `exchange.py`; the official SDK's client,
recorded through it and held to the same pacer and caps: `sdk.py`, which imports this module, never the reverse).

``Client.send`` never raises for anything the server does: time-outs, resets,
garbage, TLS failures, endless or huge bodies all come back as an
:class:`Exchange` with ``error`` set and whatever was received so far.

Deadlines (see :class:`Limits`) are enforced with anyio cancel scopes around
the header phase and around every single body read, plus the overall
``total`` budget, so a hostile server cannot hold a check longer than
``total`` seconds (plus a few seconds to close the connection). They count only
time the suite was listening (`listening.py`): a stall of the suite's own event
loop is not the server's silence. A run-wide
deadline (``run_deadline``: a time, or a `pace.RunDeadline` that moves later while the run waits for the rate limit,
up to its cap) cuts every exchange still open then and stops new sends, whatever the server does.

HTTP versions: a client speaks HTTP/1.1 only, or (``http2=True``) offers ``h2`` and ``http/1.1`` by ALPN and
records on each exchange the version the server chose (``Exchange.http_version``). ``Client.alpn_choice`` asks the
target which it picks in one TLS handshake, without sending a request.

Rate limits: every request is paced by a :class:`~.pace.Pacer` (shared by the
run's clients) from the server's ``X-RateLimit-Remaining``; a 429 is waited out
(``Retry-After``) and the same request resent, as often as the run's deadline allows: a request the server has not
judged yet is no observation, so sending it again replays nothing.
A request that dies on a reused keep-alive connection before any response byte
is resent once on a fresh connection.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json as _json
import re
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urlsplit

import anyio
import anyio.lowlevel
import httpx
from anyio.streams.tls import TLSAttribute

from .exchange import ACTIVITY, SENSITIVE_HEADERS, Activity, Exchange, Limits
from .failures import describe, seconds_text, size_text
from .listening import listening_for
from .pace import GRANT, Grant, Pacer, RunDeadline, parse_rate_limit
from .redact import MASK, Redactor, is_suite_made
from . import sockets
from .sse import SSERecorder

__all__ = ["Limits", "Exchange", "Client", "ClientStats", "UNSET", "Activity", "ACTIVITY", "parse_rate_limit",
           "HTTP1", "HTTP2", "Transport"]

HTTP1, HTTP2 = "HTTP/1.1", "HTTP/2"     # as httpx names the version of a response

USER_AGENT = "aisvc-conformance/0.1"
MAX_CONNECTIONS = 32
_CLOSE_GRACE = 5.0
# Shorter than common servers' idle keep-alive (uvicorn: 5 s), so we rarely reuse a connection being closed.
KEEPALIVE_EXPIRY = 4.0
_MIN_AUTO_SECRET = 8  # credentials this long or longer are added to the redactor
# Without a run deadline (a client on its own): how long a 429 may hold a request, and how often it is resent
LONE_429_WAIT = 30.0
LONE_429_RETRIES = 4
BACKOFF_429 = (1.0, 2.0, 4.0, 8.0, 15.0)   # seconds before resending a 429 that names no Retry-After
RUN_DEADLINE = "the run's deadline (profile [timeouts] run)"


@dataclass(frozen=True)
class Transport:
    """How a request travels, beyond its headers and body (`model.dimensions`' free dimensions the client applies):
    the case of its header names (HTTP/1.1; HTTP/2 lower-cases them), their order, the body's framing (chunked:
    no Content-Length; over HTTP/2, DATA frames without one), and what it says of its connection (HTTP/1.1; HTTP/2
    has no such header): `keep-alive` as most libraries write it, `unsaid` as curl and Go leave it (persistence is
    HTTP/1.1's default, RFC 9112 §9.3), or `close`, ending it (§9.6: the next request opens one)."""
    name_case: str = "lower"         # lower | canonical | upper
    order: str = "as-built"          # as-built | reversed
    chunked: bool = False
    connection: str = "keep-alive"   # keep-alive | unsaid | close

    def cased(self, name: str) -> str:
        if self.name_case == "upper":
            return name.upper()
        if self.name_case == "canonical":
            return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))
        return name.lower()


PLAIN = Transport()
CHUNK = 16 * 1024


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")     # RFC 9110 §5.6.2


def _masked(name: str, value: str) -> str:
    """A credential-bearing header's value with its secret masked: `<scheme> «redacted»` for an Authorization of any
    scheme, each `name=«redacted»` of a Cookie, the whole value otherwise."""
    if name in ("authorization", "proxy-authorization"):
        scheme, _, rest = value.partition(" ")
        return f"{scheme} {MASK}" if rest.strip() and _TOKEN.fullmatch(scheme) else MASK
    if name == "cookie" and "=" in value:
        return "; ".join(f"{pair.split('=', 1)[0].strip()}={MASK}" for pair in value.split(";") if pair.strip())
    return MASK


@dataclass
class ClientStats:
    requests: int = 0  # HTTP requests actually sent, retries included
    agent_runs: int = 0  # requests that started an agent run
    bytes_received: int = 0  # response body bytes received
    waits_429: int = 0  # number of Retry-After waits taken
    waits_429_seconds: float = 0.0  # total seconds waited for 429s
    rate_limited: int = 0  # exchanges still 429 when the run's deadline came (or the retry budget ran out)
    paced_waits: int = 0  # requests held back to stay under the rate limit
    paced_seconds: float = 0.0  # total seconds they were held back
    transport_retries: int = 0  # requests resent on a fresh connection after a dead pooled one
    cut_by_run_deadline: int = 0  # exchanges cut off (or not sent) because the run's deadline passed


class RecordingBudget:
    """What the whole run may record (shared by a run's clients, across threads): stream frames and body bytes.
    Every recorded frame is judged afterwards by several checks and every body is kept until the reports are
    written, so a server flooding every stream or body must not make the judging outlast the run or the memory
    outgrow the machine. A conformant run records a few hundred frames and a few MiB."""

    def __init__(self, frames: int = 20_000, body_bytes: int = 96 * 2**20) -> None:
        self.frames = frames
        self.body_bytes = body_bytes
        self.used = 0
        self.used_bytes = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Count n more frames; False once the frame budget is spent."""
        with self._lock:
            self.used += n
            return self.used <= self.frames

    def take_bytes(self, n: int) -> bool:
        """Count n more body bytes; False once the byte budget is spent."""
        with self._lock:
            self.used_bytes += n
            return self.used_bytes <= self.body_bytes


async def _chunks(body: bytes):
    """A body sent without a Content-Length (chunked over HTTP/1.1), in pieces."""
    for i in range(0, len(body), CHUNK):
        yield body[i:i + CHUNK]


def is_loopback(host: str) -> bool:
    h = host.strip("[]").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def _carries_secret(headers: dict[str, str | None] | None) -> bool:
    """Whether a request's own headers carry a credential that is not one the suite made (a decoy)."""
    for k, v in (headers or {}).items():
        if k.lower() in SENSITIVE_HEADERS and v is not None:
            credential = v.split(None, 1)[-1].strip() if " " in v.strip() else v.strip()
            if credential and not is_suite_made(credential):
                return True
    return False


def _check_url(url: str, *, carries_secret: bool = True) -> None:
    """Plain http:// goes to loopback only, or elsewhere for a request carrying no secret (the cleartext probe)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https":
        return
    if scheme == "http":
        host = parts.hostname or ""
        if is_loopback(host) or not carries_secret:
            return
        raise ValueError(
            f"refusing plain http:// to non-loopback host {host!r}: use https:// "
            "(plain HTTP is only allowed for 127.0.0.0/8, ::1 and localhost, or without a credential)"
        )
    raise ValueError(f"unsupported URL scheme {parts.scheme!r} in {url!r}: use https://")


def tls_context(ca_bundle: str | None = None, insecure: bool = False, system_cas: bool = True) -> ssl.SSLContext:
    """The TLS context a client verifies the target with: the system's CAs and `ca_bundle`'s, or none (`insecure`).
    Without `system_cas`, `ca_bundle`'s alone: the embedded server's certificate is signed by the suite's own CA,
    which is then all there is to trust (the system's store takes 20 ms of CPU to read, each context)."""
    ctx = ssl.create_default_context(cafile=ca_bundle if ca_bundle and not system_cas and not insecure else None)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_bundle and system_cas:
        ctx.load_verify_locations(cafile=ca_bundle)
    return ctx


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, handed an answer only when it sets a cookie: for each answer of a run the standard
    library's jar wrapped the response and its request to find none (a twentieth of the recorder's thread). What is
    kept and sent back is the same."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers or "set-cookie2" in response.headers:
            super().extract_cookies(response)


class Client:
    """Pooled, deadline-enforcing HTTP client (httpx underneath)."""

    def __init__(
        self,
        base_url: str,
        *,
        ca_bundle: str | None = None,
        insecure: bool = False,
        system_cas: bool = True,
        limits: Limits | None = None,
        secrets: Iterable[str] = (),
        max_429_wait: float | None = None,
        max_429_retries: int | None = None,
        breaker: int = 10,
        rate_limit: str | tuple[int, float] | None = None,
        pacer: Pacer | None = None,
        run_deadline: float | None = None,
        budget: RecordingBudget | None = None,
        tls: ssl.SSLContext | None = None,
        http2: bool = False,
    ) -> None:
        """`tls`: a context made by `tls_context` to share between a run's clients (making one reads the system's
        CA store, about 20 ms of CPU); made here from `ca_bundle`, `insecure` and `system_cas` when not given.
        `max_429_wait` and `max_429_retries` bound the 429 resends (None: as the server's Retry-After asks and as
        often as the run's deadline allows; without a run deadline LONE_429_WAIT and LONE_429_RETRIES)."""
        _check_url(base_url)
        #: offer h2 as well as http/1.1 by ALPN (over https://; plain http:// stays HTTP/1.1)
        self.http2 = http2
        self.breaker = breaker      # exchanges cut off by a limit before the client stops sending
        self.cut_off = 0
        #: the target answered 411 to a chunked body: every later body goes with a Content-Length
        self.no_chunked = False
        self.base_url = base_url
        self.limits = limits if limits is not None else Limits()
        self.max_429_wait = max_429_wait
        self.max_429_retries = max_429_retries
        if isinstance(rate_limit, str):
            rate_limit = parse_rate_limit(rate_limit)
        #: shared by every client of a run (they hit the same bucket); pass one to share it
        self.pacer = pacer if pacer is not None else Pacer(rate_limit)
        #: time.monotonic() after which nothing is sent and every exchange still open is cut off, or a RunDeadline
        self.run_deadline = run_deadline
        #: shared by a run's clients like the pacer
        self.budget = budget if budget is not None else RecordingBudget()
        self.stats = ClientStats()
        self.redactor = Redactor(secrets)
        self._ca_bundle, self._insecure, self._system_cas = ca_bundle, insecure, system_cas
        # httpcore sets the ALPN offer on the context it is given: a context shared by several clients (`tls`) is
        # shared only by clients of one `http2`
        self._ssl = tls if tls is not None else tls_context(ca_bundle, insecure, system_cas)
        self._sem = anyio.Semaphore(MAX_CONNECTIONS)
        self._http = self._pool(MAX_CONNECTIONS, base_url)

    @property
    def version(self) -> str:
        """The version this client asks for first."""
        return HTTP2 if self.http2 and urlsplit(self.base_url).scheme == "https" else HTTP1

    async def alpn_choice(self, timeout: float) -> tuple[str | None, str]:
        """(the protocol the target picks by ALPN when offered `h2` and `http/1.1`, in words what happened): one TLS
        handshake, no request sent, bounded by `timeout`. None when there is no choice to read: plain http://, a
        failed handshake, a server that picks nothing."""
        parts = urlsplit(self.base_url)
        if parts.scheme != "https":
            return None, "plain http:// (ALPN is a TLS extension; HTTP/2 without TLS is not tried)"
        host = parts.hostname or ""
        ctx = tls_context(self._ca_bundle, self._insecure, self._system_cas)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        stream = None
        try:
            with anyio.fail_after(timeout):
                stream = await anyio.connect_tcp(host, parts.port or 443, ssl_context=ctx, tls_hostname=host,
                                                 tls_standard_compatible=False)
            chosen = stream.extra(TLSAttribute.alpn_protocol, None)
        except TimeoutError:
            return None, f"no TLS handshake within {seconds_text(timeout)} s"
        except Exception as exc:     # whatever the server does, the run goes on over HTTP/1.1
            return None, self.redact(f"the TLS handshake failed: {type(exc).__name__}: {exc}")
        finally:
            if stream is not None:
                with anyio.move_on_after(_CLOSE_GRACE, shield=True):
                    with contextlib.suppress(Exception):
                        await stream.aclose()
        return chosen, f"offered h2 and http/1.1 by ALPN, the target picked {chosen or 'neither'}"

    def _pool(self, size: int, base_url: str = "") -> httpx.AsyncClient:
        pool = httpx.AsyncClient(
            base_url=base_url,
            follow_redirects=False,
            trust_env=False,
            transport=sockets.transport(
                verify=self._ssl,
                trust_env=False,
                http2=self.http2,
                limits=httpx.Limits(
                    max_connections=size,
                    max_keepalive_connections=size,
                    keepalive_expiry=KEEPALIVE_EXPIRY,
                ),
            ),
            headers={"user-agent": USER_AGENT, "accept-encoding": "identity"},
        )
        if type(getattr(pool, "_cookies", None)) is httpx.Cookies:    # httpx names no jar class: set where it reads it
            pool._cookies = _Cookies()
        return pool

    def redact(self, text: str) -> str:
        return self.redactor.redact(text)

    async def aclose(self) -> None:
        with anyio.move_on_after(_CLOSE_GRACE, shield=True):
            await self._http.aclose()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- request building ---------------------------------------------------
    def _build(
        self,
        method: str,
        path: str,
        headers: dict[str, str | None] | None,
        json: Any,
        content: bytes | None,
        limits: Limits,
        transport: Transport = PLAIN,
    ) -> httpx.Request:
        if "://" in path:
            _check_url(path, carries_secret=_carries_secret(headers))
        body: bytes | None = content
        hdrs: dict[str, str | None] = {}
        if json is not UNSET:
            if content is not None:
                raise TypeError("pass json= or content=, not both")
            body = _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            hdrs["content-type"] = "application/json"
        for k, v in (headers or {}).items():
            hdrs[k.lower()] = v
        if transport.connection != "keep-alive" and not self.http2 and "connection" not in hdrs:
            hdrs["connection"] = "close" if transport.connection == "close" else None
        timeout = httpx.Timeout(
            connect=limits.connect,
            read=max(limits.headers, limits.idle) + 5.0,  # safety net; anyio scopes rule
            write=limits.headers + 5.0,
            pool=None,
        )
        chunked = transport.chunked and body is not None and not self.no_chunked
        req = self._http.build_request(method, path, content=_chunks(body) if chunked else body, timeout=timeout)
        req.extensions["conformance_body"] = body
        for k, v in hdrs.items():
            if v is None:
                if k in req.headers:
                    del req.headers[k]
            else:
                req.headers[k] = v
        if transport != PLAIN:
            items = [(transport.cased(k), v) for k, v in req.headers.multi_items()]
            req.headers = httpx.Headers(items[::-1] if transport.order == "reversed" else items)
        # every credential we send is a secret for transcripts and reports
        for k, v in req.headers.items():
            if k.lower() in SENSITIVE_HEADERS:
                cred = v.split(None, 1)[-1] if v.lower().startswith(("bearer ", "basic ")) else v
                if len(cred.strip()) >= _MIN_AUTO_SECRET and not is_suite_made(cred.strip()):
                    self.redactor.add(cred.strip())
        return req

    @staticmethod
    def _masked_headers(req: httpx.Request) -> dict[str, str]:
        """The request's headers as transcripts show them: a credential's value masked, what carries it kept (the
        scheme of an Authorization, RFC 9110 §11.4, whatever it is; a cookie's names), so a re-sent request carries
        the secret as the recorded one did."""
        out: dict[str, str] = {}
        for k, v in req.headers.multi_items():
            bare_scheme = v.strip().lower() in ("bearer", "basic")     # a scheme with no credential hides nothing
            if k.lower() in SENSITIVE_HEADERS and not bare_scheme and not is_suite_made(v.split(None, 1)[-1].strip()):
                v = _masked(k.lower(), v)
            out[k] = v if k not in out else out[k] + ", " + v
        return out

    def _counts_as_run(self, req: httpx.Request, status: int) -> bool:
        if req.method != "POST" or not (200 <= status < 300):
            return False
        p = req.url.path.rstrip("/")
        if p.endswith("/invoke") or p.endswith("/agui"):
            return True
        if p.endswith("/mcp"):
            try:
                doc = _json.loads(req.extensions.get("conformance_body") or req.content)
            except (ValueError, httpx.RequestNotRead):
                return False
            docs = doc if isinstance(doc, list) else [doc]
            return any(isinstance(d, dict) and d.get("method") == "tools/call" for d in docs)
        return False

    # -- sending --------------------------------------------------------------
    async def send(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str | None] | None = None,
        json: Any = UNSET,
        content: bytes | None = None,
        label: str = "",
        limits: Limits | None = None,
        retry_429: bool = True,
        paced: bool = True,
        sse: bool | None = None,
        transport: Transport = PLAIN,
    ) -> Exchange:
        """Send one request (plus 429 retries and one transport retry; a chunked body answered 411, Length Required,
        is sent again with a Content-Length, as RFC 9110 §15.5.12 lets a server ask).  ``headers`` values of ``None``
        remove a default header (e.g. ``{"accept": None}``). ``paced=False`` skips pacing: only for a probe
        that wants to reach the server's rate limit."""
        lim = limits if limits is not None else self.limits
        waits: list[float] = []
        activity = ACTIVITY.get()
        transport_retry: str | None = None
        length_required: str | None = None
        paced_for = 0.0
        while True:
            if self.cut_off >= self.breaker:
                return self._not_sent(method, path, label)
            seq, held = await self._wait_turn(paced, bool(waits), method, path, label, activity)
            paced_for += held
            if seq is None:
                return self._not_sent(method, path, label, waits=waits, why=self._deadline_reason(held))
            ex = await self._attempt(method, path, headers, json, content, label, lim, sse, activity,
                                     fresh=transport_retry is not None, seq=seq, transport=transport)
            if ex.status == 411 and transport.chunked and not length_required:
                length_required = f"{ex.status} to the chunked body"
                self.no_chunked = True
                transport = dataclasses.replace(transport, chunked=False)
                continue
            ex.length_required = length_required
            ex.waited_429 = list(waits)
            ex.waited_pace = paced_for
            ex.retried_transport = transport_retry
            if transport_retry is None and self._died_on_reused_connection(ex):
                transport_retry = ex.error
                self.stats.transport_retries += 1
                continue
            self.cut_off += _hit_a_limit(ex)
            if ex.status != 429 or not retry_429:
                return ex
            wait = self._resend_after(ex.status, ex.header("retry-after"), waits)
            if wait is None:
                ex.rate_limited = True
                self.stats.rate_limited += 1
                return ex
            waits.append(wait)
            await self._sleep_429(wait, activity)

    def _capped_retry_after(self, ex: Exchange) -> float | None:
        return self._retry_after(ex.status, ex.header("retry-after"))

    def _retry_after(self, status: int | None, value: str | None) -> float | None:
        """A 429's Retry-After in seconds (capped by `max_429_wait`); None when not a 429 or not usable."""
        if status != 429:
            return None
        wait = _retry_after_seconds(value)
        return None if wait is None else min(max(wait, 0.0), self._max_429_wait)

    @property
    def _max_429_wait(self) -> float:
        if self.max_429_wait is not None:
            return self.max_429_wait
        return LONE_429_WAIT if self.run_deadline is None else float("inf")

    def _resend_after(self, status: int | None, value: str | None, waits: list[float]) -> float | None:
        """Seconds to wait before sending a 429'd request again (its Retry-After, else a backoff), or None when it is
        not resent: the retries allowed are spent, or the wait would end after the run's deadline."""
        if status != 429:
            return None
        limit = self.max_429_retries if self.max_429_retries is not None else \
            LONE_429_RETRIES if self.run_deadline is None else None
        if limit is not None and len(waits) >= limit:
            return None
        wait = self._retry_after(status, value)
        if wait is None:
            wait = BACKOFF_429[min(len(waits), len(BACKOFF_429) - 1)]
        return None if self._after_cap(time.monotonic() + wait) else wait

    async def _sleep_429(self, wait: float, activity: Activity | None) -> None:
        self.stats.waits_429 += 1
        self.stats.waits_429_seconds += wait
        if activity is not None:
            activity.hold()
        self.pacer.hold()
        try:
            await anyio.sleep(wait)
        finally:
            self.pacer.release()
            if activity is not None:
                activity.release()

    @contextlib.asynccontextmanager
    async def granted(self, n: int):
        """Wait until the server's bucket holds `n` requests (at most what it shows, less the reserve), set them
        aside, and let the requests of this block (the tasks it starts too) go without waiting in line: for a client
        whose own time-outs a wait between its requests would trip. Yields the Grant (None when the run's deadline
        came first: the requests then wait their turn as usual)."""
        activity = ACTIVITY.get()
        size = self.pacer.grant_size(n)
        ticket = self.pacer.ticket(True, tokens=size)
        grant = None
        held = False
        try:
            while not self._after_deadline(time.monotonic()):
                ok, wait = self.pacer.try_grant(ticket)
                if ok:
                    grant = Grant(size)
                    break
                if not held:
                    held = True
                    self.pacer.hold()
                    if activity is not None:
                        activity.hold()
                t = time.monotonic()
                await anyio.sleep(wait)
                self.stats.paced_seconds += time.monotonic() - t
        finally:
            self.pacer.leave(ticket)
            if held:
                self.pacer.release()
                if activity is not None:
                    activity.release()
        token = GRANT.set(grant)
        try:
            yield grant
        finally:
            GRANT.reset(token)
            if grant is not None:
                self.pacer.return_grant(grant.left)
                grant.left = 0

    async def _wait_turn(self, paced: bool, retry: bool, method: str, path: str, label: str,
                         activity: Activity | None) -> tuple[int | None, float]:
        """Wait until the pacer lets the request go: (its sequence number, seconds held back); the sequence
        number is None when the run's deadline came first. A request held back shows as in flight. A request
        of a grant (`granted`) goes at once."""
        grant = GRANT.get()
        if paced and not retry and grant is not None and grant.take():
            ticket = self.pacer.ticket(False)
            while True:     # only our own --rate-limit cap can hold it
                seq, wait = self.pacer.try_send(ticket, True, granted=True)
                if seq is not None:
                    return seq, 0.0
                await anyio.sleep(wait)
        ticket = self.pacer.ticket(paced, retry)
        waiting = Exchange(label=label, method=method, url=str(self._http.base_url.join(path)), request_headers={},
                           request_body=None, status=None, headers=None, body=b"", stream=None, t_headers=None,
                           t_end=None, error=None)
        held = 0.0
        held_back = False
        try:
            while True:
                if self._after_deadline(time.monotonic()):
                    return None, held
                seq, wait = self.pacer.try_send(ticket, paced)
                if seq is not None:
                    return seq, held
                if not held_back:
                    held_back = True
                    self.stats.paced_waits += 1
                    self.pacer.hold()
                    if activity is not None:
                        activity.in_flight[id(waiting)] = waiting
                        activity.hold()
                t = time.monotonic()
                await anyio.sleep(wait)
                step = time.monotonic() - t
                held += step
                self.stats.paced_seconds += step
        finally:
            self.pacer.leave(ticket)
            if held_back:
                self.pacer.release()
            if activity is not None and activity.in_flight.pop(id(waiting), None) is not None:
                activity.release()

    def run_deadline_at(self) -> float | None:
        """The run's deadline as it stands now (time.monotonic()), None when there is none."""
        d = self.run_deadline
        return d.at() if isinstance(d, RunDeadline) else d

    def _after_deadline(self, at: float) -> bool:
        deadline = self.run_deadline_at()
        return deadline is not None and at >= deadline

    def _after_cap(self, at: float) -> bool:
        """Whether `at` is past the latest the run's deadline can ever be (its cap; a plain deadline is its own)."""
        d = self.run_deadline
        cap = d.cap_at if isinstance(d, RunDeadline) else d
        return cap is not None and at >= cap

    def run_deadline_words(self) -> str:
        """The run's deadline, in words naming what sets it (always starting "the run's")."""
        d = self.run_deadline
        return d.words() if isinstance(d, RunDeadline) else RUN_DEADLINE

    def _deadline_reason(self, held: float) -> str:
        if held > 0:
            return (f"not sent: held back {held:.1f} s to stay under the server's rate limit, until "
                    f"{self.run_deadline_words()} passed")
        return f"not sent: {self.run_deadline_words()} had passed"

    @staticmethod
    def _died_on_reused_connection(ex: Exchange) -> bool:
        """Closed or reset before any response byte on a keep-alive connection we reused: the server may have
        closed it as idle while we sent (a race, not an answer). Not for connections opened for this request."""
        if ex.status is not None or ex._new_connection or not ex.error:
            return False
        # over TLS an idle close often surfaces as a bare read error (an EOF without close_notify)
        return ex.error.startswith(("connection closed before any response headers", "connection reset before",
                                    "connection closed by the server while sending",
                                    "network error before any response headers"))

    def _not_sent(self, method: str, path: str, label: str, *, waits: list[float] = (), why: str | None = None) -> Exchange:
        """A hostile target cannot make the run download gigabytes or wait for hours: after `breaker`
        exchanges were cut off by a deadline or the byte cap, further requests are not sent. Nor is anything
        sent once the run's deadline has passed."""
        if why is not None:
            self.stats.cut_by_run_deadline += 1
        return Exchange(label=label, method=method, url=str(self._http.base_url.join(path)), request_headers={},
                        request_body=None, status=None, headers=None, body=b"", stream=None, t_headers=None,
                        t_end=None, _redactor=self.redactor, waited_429=list(waits),
                        rate_limited=bool(waits) or "rate limit" in (why or ""),
                        error=why or f"not sent: {self.cut_off} earlier exchanges with this target were cut off by the "
                              f"suite's deadlines or byte cap, so the run stopped sending requests")

    async def _attempt(
        self,
        method: str,
        path: str,
        headers: dict[str, str | None] | None,
        json: Any,
        content: bytes | None,
        label: str,
        lim: Limits,
        sse: bool | None,
        activity: Activity | None = None,
        fresh: bool = False,
        seq: int = 0,
        transport: Transport = PLAIN,
    ) -> Exchange:
        req = self._build(method, path, headers, json, content, lim, transport)
        ex = Exchange(
            label=label,
            method=req.method,
            url=str(req.url),
            request_headers=self._masked_headers(req),
            request_body=req.extensions.get("conformance_body") or None,
            status=None,
            headers=None,
            body=b"",
            stream=None,
            t_headers=None,
            t_end=None,
            error=None,
            _redactor=self.redactor,
            http_version=self.version,
        )
        async def trace(event: str, info: dict) -> None:
            if event.startswith("connection.connect_tcp"):
                ex._new_connection = True

        req.extensions["trace"] = trace
        if activity is not None:
            activity.in_flight[id(ex)] = ex
        try:
            async with self._sem:
                self.stats.requests += 1
                clock = time.monotonic
                t0 = clock()
                ex.started_at = t0
                deadline = t0 + lim.total
                run_deadline = self.run_deadline_at()
                if run_deadline is not None and run_deadline < deadline:
                    deadline = run_deadline
                try:
                    async with contextlib.AsyncExitStack() as stack:
                        # a resend gets a one-connection pool of its own, so it cannot reuse another stale one
                        http = await stack.enter_async_context(self._pool(1)) if fresh else self._http
                        await self._exchange(req, ex, lim, sse, t0, deadline, http, seq)
                except Exception as exc:  # never raise for what the server does
                    ex.error = ex.error or self.redact(describe(exc, "body", len(ex.body), lim))
                finally:
                    if ex.headers is None:   # no answer: the pacer still learns the request is over
                        self.pacer.observe(seq, None, spent=False)
                if ex.error and cut_by_run(ex.error):
                    self.stats.cut_by_run_deadline += 1
                return ex
        finally:
            if activity is not None:
                activity.in_flight.pop(id(ex), None)

    async def _exchange(
        self,
        req: httpx.Request,
        ex: Exchange,
        lim: Limits,
        sse: bool | None,
        t0: float,
        deadline: float,
        http: httpx.AsyncClient,
        seq: int,
    ) -> None:
        clock = time.monotonic
        resp: httpx.Response | None = None
        # -- headers phase -----------------------------------------------------
        budget = min(lim.headers, lim.total, deadline - t0)
        by_run = deadline - t0 < min(lim.headers, lim.total)
        try:
            with listening_for(budget) as scope:
                resp = await http.send(req, stream=True)
        except Exception as exc:
            ex.error = self.redact(describe(exc, "headers", 0, lim))
            ex.t_end = clock() - t0
            return
        if scope.cancelled_caught or resp is None:
            if resp is not None:
                await _close(resp)
            ex.error = (
                f"no response headers before {self.run_deadline_words()}, {budget:.1f} s after sending"
                if by_run
                else f"no response headers within {seconds_text(lim.headers)} s"
                if lim.headers <= lim.total
                else f"no response headers within the {seconds_text(lim.total)} s deadline"
            )
            ex.t_end = clock() - t0
            return
        try:
            ex.status = resp.status_code
            ex.headers = resp.headers
            ex.http_version = resp.http_version
            # the pacer learns at the headers: a stream may stay open long after
            self.pacer.observe(seq, ex.header("x-ratelimit-remaining"), self._capped_retry_after(ex),
                               spent=resp.status_code != 401 and "authorization" in req.headers)
            ex.t_headers = clock() - t0
            if self._counts_as_run(req, resp.status_code):
                self.stats.agent_runs += 1
            is_sse = sse if sse is not None else ex.content_type == "text/event-stream"
            rec = SSERecorder(t0=t0, clock=clock, redact=self.redact, max_items=lim.max_items) if is_sse else None
            await self._read_body(resp, ex, lim, rec, t0, deadline)
        finally:
            self.stats.bytes_received += resp.num_bytes_downloaded
            await _close(resp)

    async def _read_body(
        self,
        resp: httpx.Response,
        ex: Exchange,
        lim: Limits,
        rec: SSERecorder | None,
        t0: float,
        deadline: float,
    ) -> None:
        clock = time.monotonic
        body = bytearray()
        end = "eof"
        error: str | None = None
        it = resp.aiter_bytes().__aiter__()
        cut = f"the {seconds_text(lim.total)} s deadline" if deadline >= t0 + lim.total \
            else self.run_deadline_words()
        chunks = 0
        items = 0

        def frames() -> str:
            n = rec.events_so_far if rec is not None else 0
            return f"{n:,} frame{'s' if n != 1 else ''} received"

        while True:
            remaining = deadline - clock()
            bound_by_total = remaining <= lim.idle
            if remaining <= 0:
                chunk = None
                timed_out = True
            else:
                timed_out = False
                wait = min(lim.idle, remaining)
                chunk = None
                try:
                    with listening_for(wait) as scope:
                        try:
                            chunk = await it.__anext__()
                        except StopAsyncIteration:
                            chunk = None
                except Exception as exc:
                    error = self.redact(describe(exc, "body", len(body), lim))
                    end = f"error: {error}"
                    break
                timed_out = scope.cancelled_caught
            if timed_out:
                end = "deadline"
                if bound_by_total:
                    if rec is not None:
                        error = f"stream still open after {cut} ({frames()})"
                    else:
                        error = (
                            f"body still incomplete after {cut} "
                            f"({len(body):,} bytes received)"
                        )
                else:
                    if rec is not None:
                        error = f"stream idle: no data for {seconds_text(lim.idle)} s ({frames()})"
                    else:
                        error = f"body idle: no data for {seconds_text(lim.idle)} s ({len(body):,} bytes received)"
                break
            if chunk is None:
                break
            if not chunk:
                continue
            t = clock() - t0
            room = lim.max_body - len(body)
            capped = len(chunk) > room
            if capped:
                chunk = chunk[:room]
            if not self.budget.take_bytes(len(chunk)):
                end = "byte_cap"
                error = (f"{'stream' if rec is not None else 'body'} cut off: the run's budget of "
                         f"{size_text(self.budget.body_bytes)} of recorded bodies over all exchanges was spent "
                         f"({len(body):,} bytes kept)")
                break
            body += chunk
            ex._received = len(body)
            if rec is not None and chunk:
                rec.feed(chunk, t)
            chunks += 1
            if chunks % 64 == 0:   # a server that never lets the socket run dry still lets others (and cancel) in
                await anyio.lowlevel.checkpoint()
            if capped:
                end = "byte_cap"
                what = "stream" if rec is not None else "body"
                extra = f" ({frames()})" if rec is not None else ""
                error = f"{what} exceeded the {size_text(lim.max_body)} cap{extra}"
                break
            if rec is not None:
                n_items = len(rec.items) + rec.dropped
                if not self.budget.take(n_items - items):
                    end = "item_cap"
                    error = (f"stream cut off: the run's budget of {self.budget.frames:,} recorded frames "
                             f"over all streams was spent ({frames()}, {len(body):,} bytes)")
                    break
                items = n_items
                if items >= lim.max_items:
                    end = "item_cap"
                    error = f"stream exceeded the {lim.max_items:,} frame cap ({frames()}, {len(body):,} bytes)"
                    break
        t_end = clock() - t0
        ex.body = bytes(body)
        ex.t_end = t_end
        ex.error = error
        if rec is not None:
            ex.stream = rec.finish(end, t_end)


def cut_by_run(error: str) -> bool:
    """Whether an exchange's error says the run's deadline (or its cap) cut it."""
    return "the run's deadline" in error or "the run's cap" in error


def _hit_a_limit(ex: Exchange) -> bool:
    """Was this exchange cut off by one of the suite's limits (not merely answered badly)?"""
    if ex.stream is not None and ex.stream.end in ("deadline", "byte_cap", "item_cap"):
        return True
    return bool(ex.error) and any(w in ex.error for w in (" cap", "deadline", "idle: no data"))


async def _close(resp: httpx.Response) -> None:
    with anyio.move_on_after(_CLOSE_GRACE, shield=True):
        try:
            await resp.aclose()
        except Exception:
            pass


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as whole seconds, the form the spec gives it; anything else (an HTTP-date included, which the
    spec does not allow: MCP-ERR-003 judges it) is not used, and the resend then backs off by itself."""
    if value is None:
        return None
    v = value.strip()
    if not v.isascii() or not v.isdigit():
        return None
    return float(int(v))
