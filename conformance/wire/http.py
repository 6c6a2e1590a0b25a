"""The one HTTP client every check uses.

``Client.send`` never raises for anything the server does: time-outs, resets,
garbage, TLS failures, endless or huge bodies all come back as an
:class:`Exchange` with ``error`` set and whatever was received so far.

Deadlines (see :class:`Limits`) are enforced with anyio cancel scopes around
the header phase and around every single body read, plus the overall
``total`` budget, so a hostile server cannot hold a check longer than
``total`` seconds (plus a few seconds to close the connection).
"""

from __future__ import annotations

import ipaddress
import json as _json
import re
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import urlsplit

import anyio
import httpx

from .redact import MASK, Redactor
from .sse import SSEComment, SSERecorder, StreamRecord, strict_json_loads

__all__ = ["Limits", "Exchange", "Client", "ClientStats", "UNSET"]

USER_AGENT = "aisvc-conformance/0.1"
MAX_CONNECTIONS = 32
_CLOSE_GRACE = 5.0
_SENSITIVE_HEADERS = {
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
}
_MIN_AUTO_SECRET = 8  # credentials this long or longer are added to the redactor


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass
class Limits:
    connect: float = 10.0  # seconds to connect (incl. TLS)
    headers: float = 30.0  # seconds from sending to response headers
    idle: float = 30.0  # max seconds between two received chunks
    total: float = 60.0  # overall deadline for the exchange, body/stream included
    max_body: int = 8 * 2**20  # byte cap for a body or stream


@dataclass
class ClientStats:
    requests: int = 0  # HTTP requests actually sent, retries included
    agent_runs: int = 0  # requests that started an agent run
    bytes_received: int = 0  # response body bytes received
    waits_429: int = 0  # number of Retry-After waits taken
    waits_429_seconds: float = 0.0  # total seconds waited for 429s


def _secs(x: float) -> str:
    return f"{x:g}"


def _size(n: int) -> str:
    if n >= 2**20 and n % 2**20 == 0:
        return f"{n // 2**20} MiB"
    if n >= 2**10 and n % 2**10 == 0:
        return f"{n // 2**10} KiB"
    return f"{n:,} bytes"


def _clip(text: str, n: int) -> str:
    if len(text) <= n:
        return text
    return text[:n] + f"… [{len(text) - n:,} more chars]"


def is_loopback(host: str) -> bool:
    h = host.strip("[]").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def _check_url(url: str) -> None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https":
        return
    if scheme == "http":
        host = parts.hostname or ""
        if is_loopback(host):
            return
        raise ValueError(
            f"refusing plain http:// to non-loopback host {host!r}: use https:// "
            "(plain HTTP is only allowed for 127.0.0.0/8, ::1 and localhost)"
        )
    raise ValueError(f"unsupported URL scheme {parts.scheme!r} in {url!r}: use https://")


def _exc_chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(out) < 20:
        out.append(cur)
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return out


def _describe(exc: BaseException, phase: str, nbytes: int, limits: Limits) -> str:
    """Turn an exception raised while talking to the server into a sentence."""
    chain = _exc_chain(exc)
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError):
            return f"TLS verification failed: {e.verify_message or e.reason or e}"
    for e in chain:
        if isinstance(e, ssl.SSLError):
            return f"TLS error: {e.reason or e}"
    where = "before any response headers" if phase == "headers" else f"after {nbytes:,} bytes"
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect within {_secs(limits.connect)} s"
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
    _redactor: Redactor | None = field(default=None, repr=False, compare=False)

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

    def json(self) -> Any:
        where = f"{self.method} {self.url}"
        if self.status is None:
            raise AssertionError(self.redact(f"{where}: expected a JSON body, got {self._what()}"))
        if not self.body:
            raise AssertionError(self.redact(f"{where}: expected a JSON body, got an empty body ({self._what()})"))
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            ex = _clip(self.body.decode("utf-8", "replace"), 300)
            raise AssertionError(
                self.redact(
                    f"{where}: body is not valid UTF-8 (byte {exc.start}), so not JSON ({self._what()}): {ex!r}"
                )
            ) from None
        try:
            return strict_json_loads(text)
        except ValueError as exc:
            raise AssertionError(
                self.redact(f"{where}: body is not JSON ({exc}; {self._what()}): {_clip(text, 300)!r}")
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

    def transcript(self, limit: int = 4000) -> str:
        red = self.redact
        budget = limit + 2000
        lines: list[str] = []
        size = 0

        def add(line: str) -> bool:
            nonlocal size
            if size > budget:
                return False
            lines.append(line)
            size += len(line) + 1
            return True

        add(f"{self.method} {self.url}" + (f"    [{self.label}]" if self.label else ""))
        for k, v in self.request_headers.items():
            add(f"> {k}: {v}")
        if self.request_body:
            add(">")
            add("> " + _clip(red(self.request_body.decode("utf-8", "replace")), 1500))
        if self.waited_429:
            add("(after 429 Retry-After waits: " + ", ".join(f"{w:g}s" for w in self.waited_429) + ")")
        if self.status is None:
            add("< (no response)")
        else:
            add(f"< HTTP {self.status}" + (f"   (+{self.t_headers:.3f}s)" if self.t_headers is not None else ""))
            if self.headers is not None:
                for k, v in self.headers.multi_items():
                    if k.lower() in _SENSITIVE_HEADERS:
                        v = MASK
                    add(f"< {k}: {v}")
            add("<")
            if self.stream is not None:
                shown = 0
                for item in self.stream.items:
                    if isinstance(item, SSEComment):
                        line = f"+{item.t:.3f}s :{_clip(red(item.text), 300)}"
                    else:
                        parts = [f"{n}: {_clip(red(v), 400)}" for n, v in item.fields]
                        line = f"+{item.t:.3f}s " + " / ".join(parts)
                        if not item.dispatched:
                            line += "   (not dispatched: no data)"
                    if not add(line):
                        break
                    shown += 1
                rest = len(self.stream.items) - shown + self.stream.items_dropped
                if rest > 0:
                    lines.append(f"… {rest:,} more stream items")
                st = self.stream
                t_end = f"+{st.t_end:.3f}s " if st.t_end is not None else ""
                le = ", ".join(f"{k}×{v}" for k, v in st.line_endings.items() if v) or "none"
                lines.append(
                    f"{t_end}-- stream end: {st.end}; {len(st.events)} frames, {len(st.comments)} comments, "
                    f"{st.total_bytes:,} bytes, line endings {le}" + (", BOM" if st.bom else "")
                )
                if st.pending:
                    lines.append("   pending: " + _clip(red(st.pending.decode("utf-8", "replace")), 300))
                for f in st.findings[:20]:
                    lines.append("   finding: " + red(f))
            elif self.body:
                add(_clip(red(self.body.decode("utf-8", "replace")), budget))
                if self.t_end is not None:
                    lines.append(f"+{self.t_end:.3f}s -- body end ({len(self.body):,} bytes)")
        if self.error:
            lines.append(f"!! error: {red(self.error)}")
        text = red("\n".join(lines))
        if len(text) > limit:
            text = text[: max(0, limit - 40)] + f"\n… [transcript cut at {limit:,} chars]"
        return text


class Client:
    """Pooled, deadline-enforcing HTTP client (httpx underneath)."""

    def __init__(
        self,
        base_url: str,
        *,
        ca_bundle: str | None = None,
        insecure: bool = False,
        limits: Limits | None = None,
        secrets: Iterable[str] = (),
        max_429_wait: float = 30.0,
        max_429_retries: int = 2,
        breaker: int = 10,
    ) -> None:
        _check_url(base_url)
        self.breaker = breaker      # exchanges cut off by a limit before the client stops sending
        self.cut_off = 0
        self.base_url = base_url
        self.limits = limits if limits is not None else Limits()
        self.max_429_wait = max_429_wait
        self.max_429_retries = max_429_retries
        self.stats = ClientStats()
        self.redactor = Redactor(secrets)
        if insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context()
            if ca_bundle:
                ctx.load_verify_locations(cafile=ca_bundle)
        self._sem = anyio.Semaphore(MAX_CONNECTIONS)
        self._http = httpx.AsyncClient(
            base_url=base_url,
            verify=ctx,
            follow_redirects=False,
            trust_env=False,
            http2=False,
            limits=httpx.Limits(
                max_connections=MAX_CONNECTIONS,
                max_keepalive_connections=MAX_CONNECTIONS,
                keepalive_expiry=20.0,
            ),
            headers={"user-agent": USER_AGENT, "accept-encoding": "identity"},
        )

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
    ) -> httpx.Request:
        if "://" in path:
            _check_url(path)
        body: bytes | None = content
        hdrs: dict[str, str | None] = {}
        if json is not UNSET:
            if content is not None:
                raise TypeError("pass json= or content=, not both")
            body = _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            hdrs["content-type"] = "application/json"
        for k, v in (headers or {}).items():
            hdrs[k.lower()] = v
        timeout = httpx.Timeout(
            connect=limits.connect,
            read=max(limits.headers, limits.idle) + 5.0,  # safety net; anyio scopes rule
            write=limits.headers + 5.0,
            pool=None,
        )
        req = self._http.build_request(method, path, content=body, timeout=timeout)
        for k, v in hdrs.items():
            if v is None:
                if k in req.headers:
                    del req.headers[k]
            else:
                req.headers[k] = v
        # every credential we send is a secret for transcripts and reports
        for k, v in req.headers.items():
            if k.lower() in _SENSITIVE_HEADERS:
                cred = v.split(None, 1)[-1] if v.lower().startswith(("bearer ", "basic ")) else v
                if len(cred.strip()) >= _MIN_AUTO_SECRET:
                    self.redactor.add(cred.strip())
        return req

    @staticmethod
    def _masked_headers(req: httpx.Request) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in req.headers.multi_items():
            if k.lower() in _SENSITIVE_HEADERS:
                scheme = v.split(None, 1)[0] if " " in v else ""
                v = f"{scheme} {MASK}" if scheme.lower() in ("bearer", "basic") else MASK
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
                doc = _json.loads(req.content)
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
        sse: bool | None = None,
    ) -> Exchange:
        """Send one request (plus 429 retries).  ``headers`` values of ``None``
        remove a default header (e.g. ``{"accept": None}``)."""
        lim = limits if limits is not None else self.limits
        waits: list[float] = []
        attempt = 0
        while True:
            if self.cut_off >= self.breaker:
                return self._not_sent(method, path, label)
            ex = await self._attempt(method, path, headers, json, content, label, lim, sse)
            self.cut_off += _hit_a_limit(ex)
            ex.waited_429 = list(waits)
            if ex.status != 429 or not retry_429 or attempt >= self.max_429_retries:
                return ex
            wait = _retry_after_seconds(ex.header("retry-after"))
            if wait is None:
                return ex
            wait = min(max(wait, 0.0), self.max_429_wait)
            waits.append(wait)
            self.stats.waits_429 += 1
            self.stats.waits_429_seconds += wait
            await anyio.sleep(wait)
            attempt += 1

    def _not_sent(self, method: str, path: str, label: str) -> Exchange:
        """A hostile target cannot make the run download gigabytes or wait for hours: after `breaker`
        exchanges were cut off by a deadline or the byte cap, further requests are not sent."""
        return Exchange(label=label, method=method, url=str(self._http.base_url.join(path)), request_headers={},
                        request_body=None, status=None, headers=None, body=b"", stream=None, t_headers=None,
                        t_end=None, _redactor=self.redactor,
                        error=f"not sent: {self.cut_off} earlier exchanges with this target were cut off by the "
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
    ) -> Exchange:
        req = self._build(method, path, headers, json, content, lim)
        ex = Exchange(
            label=label,
            method=req.method,
            url=str(req.url),
            request_headers=self._masked_headers(req),
            request_body=req.content or None,
            status=None,
            headers=None,
            body=b"",
            stream=None,
            t_headers=None,
            t_end=None,
            error=None,
            _redactor=self.redactor,
        )
        async with self._sem:
            self.stats.requests += 1
            clock = time.monotonic
            t0 = clock()
            ex.started_at = t0
            deadline = t0 + lim.total
            try:
                await self._run(req, ex, lim, sse, t0, deadline)
            except Exception as exc:  # never raise for what the server does
                ex.error = ex.error or self.redact(_describe(exc, "body", len(ex.body), lim))
            return ex

    async def _run(
        self,
        req: httpx.Request,
        ex: Exchange,
        lim: Limits,
        sse: bool | None,
        t0: float,
        deadline: float,
    ) -> None:
        clock = time.monotonic
        resp: httpx.Response | None = None
        # -- headers phase -----------------------------------------------------
        budget = min(lim.headers, lim.total)
        try:
            with anyio.move_on_after(budget) as scope:
                resp = await self._http.send(req, stream=True)
        except Exception as exc:
            ex.error = self.redact(_describe(exc, "headers", 0, lim))
            ex.t_end = clock() - t0
            return
        if scope.cancelled_caught or resp is None:
            if resp is not None:
                await _close(resp)
            ex.error = (
                f"no response headers within {_secs(lim.headers)} s"
                if lim.headers <= lim.total
                else f"no response headers within the {_secs(lim.total)} s deadline"
            )
            ex.t_end = clock() - t0
            return
        try:
            ex.status = resp.status_code
            ex.headers = resp.headers
            ex.t_headers = clock() - t0
            if self._counts_as_run(req, resp.status_code):
                self.stats.agent_runs += 1
            is_sse = sse if sse is not None else ex.content_type == "text/event-stream"
            rec = SSERecorder(t0=t0, clock=clock, redact=self.redact) if is_sse else None
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
                    with anyio.move_on_after(wait) as scope:
                        try:
                            chunk = await it.__anext__()
                        except StopAsyncIteration:
                            chunk = None
                except Exception as exc:
                    error = self.redact(_describe(exc, "body", len(body), lim))
                    end = f"error: {error}"
                    break
                timed_out = scope.cancelled_caught
            if timed_out:
                end = "deadline"
                if bound_by_total:
                    if rec is not None:
                        error = f"stream still open after the {_secs(lim.total)} s deadline ({frames()})"
                    else:
                        error = (
                            f"body still incomplete after the {_secs(lim.total)} s deadline "
                            f"({len(body):,} bytes received)"
                        )
                else:
                    if rec is not None:
                        error = f"stream idle: no data for {_secs(lim.idle)} s ({frames()})"
                    else:
                        error = f"body idle: no data for {_secs(lim.idle)} s ({len(body):,} bytes received)"
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
            body += chunk
            if rec is not None and chunk:
                rec.feed(chunk, t)
            if capped:
                end = "byte_cap"
                what = "stream" if rec is not None else "body"
                extra = f" ({frames()})" if rec is not None else ""
                error = f"{what} exceeded the {_size(lim.max_body)} cap{extra}"
                break
        t_end = clock() - t0
        ex.body = bytes(body)
        ex.t_end = t_end
        ex.error = error
        if rec is not None:
            ex.stream = rec.finish(end, t_end)


def _hit_a_limit(ex: Exchange) -> bool:
    """Was this exchange cut off by one of the suite's limits (not merely answered badly)?"""
    if ex.stream is not None and ex.stream.end in ("deadline", "byte_cap"):
        return True
    return bool(ex.error) and any(w in ex.error for w in (" cap", "deadline", "idle: no data"))


async def _close(resp: httpx.Response) -> None:
    with anyio.move_on_after(_CLOSE_GRACE, shield=True):
        try:
            await resp.aclose()
        except Exception:
            pass


def _retry_after_seconds(value: str | None) -> float | None:
    if value is None:
        return None
    v = value.strip()
    if not v.isascii() or not v.isdigit():
        return None
    try:
        return float(int(v))
    except ValueError:
        return None
