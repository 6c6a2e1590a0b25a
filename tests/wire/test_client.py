"""Client tests against hostile local servers (127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import trustme

from conformance.target import Target
from conformance.wire.http import Client, Exchange, RecordingBudget, Limits, Transport, tls_context
from conformance.wire.redact import MASK
from conformance.reporting.transcript import transcript

from .servers import SSE_HEAD, Request, ServerState, read_request, reset, response, serve

SECRET = "svc_live_S3cr3t/Key+With=Chars"
FAST = Limits(connect=2, headers=1, idle=1, total=2, max_body=2**20)
# Upper bounds below prove a deadline holds, not that the machine is fast: a loaded CI box gets this much slack.
SLACK = 15.0


def run(coro, timeout: float = 20.0):
    async def guarded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(guarded())


async def one(handler, method="GET", path="/x", *, raw=False, limits=FAST, client_kw=None, **kw) -> tuple[Exchange, ServerState, Client]:
    async with serve(handler, raw=raw) as st:
        client = Client(f"http://127.0.0.1:{st.port}", limits=limits, **(client_kw or {}))
        try:
            ex = await client.send(method, path, **kw)
        finally:
            await client.aclose()
        return ex, st, client


# -- normal traffic -------------------------------------------------------------


def test_normal_json() -> None:
    async def h(req: Request, w, st):
        w.write(response(200, b'{"ok": true, "n": 1}', {"content-type": "application/json; charset=utf-8", "x-ratelimit-remaining": "9"}))
        return True

    ex, st, client = run(one(h, "POST", "/v1/agents/agt_1/invoke", json={"prompt": "hi", "é": [1, 2]}))
    assert ex.error is None and ex.status == 200 and ex.ok
    assert ex.content_type == "application/json"
    assert ex.header("X-RateLimit-Remaining") == "9"
    assert ex.json() == {"ok": True, "n": 1}
    assert ex.stream is None
    assert ex.t_headers is not None and ex.t_end is not None and 0 <= ex.t_headers <= ex.t_end < 2 + SLACK
    sent = st.requests[0]
    assert sent.body == '{"prompt":"hi","é":[1,2]}'.encode()  # compact JSON
    assert sent.headers["content-type"] == "application/json"
    assert client.stats.requests == 1 and client.stats.agent_runs == 1
    assert client.stats.bytes_received == len(b'{"ok": true, "n": 1}')


def test_headers_override_and_removal() -> None:
    async def h(req, w, st):
        w.write(response(204))
        return True

    ex, st, _ = run(
        one(h, "POST", "/p", json=[1], headers={"Content-Type": "text/plain", "accept": None, "X-Test": "1"})
    )
    sent = st.requests[0]
    assert sent.headers["content-type"] == "text/plain"
    assert "accept" not in sent.headers
    assert sent.headers["x-test"] == "1"
    assert ex.status == 204 and ex.body == b""
    assert "accept" not in {k.lower() for k in ex.request_headers}


def test_sse_stream_with_timing() -> None:
    async def h(req, w, st):
        w.write(SSE_HEAD + b'event: text\ndata: {"delta":"a"}\n\n')
        await w.drain()
        await asyncio.sleep(0.3)
        w.write(b": ping\n\n")
        await w.drain()
        await asyncio.sleep(0.3)
        w.write(b'event: done\r\ndata: {}\r\n\r\n')
        await w.drain()
        return False

    ex, _, client = run(one(h, "POST", "/v1/agents/a/agui", json={}, limits=Limits(total=5)))
    assert ex.error is None and ex.status == 200
    st = ex.stream
    assert st is not None and st.end == "eof"
    kinds = [(type(i).__name__, getattr(i, "event", None)) for i in st.items]
    assert kinds == [("SSEEvent", "text"), ("SSEComment", None), ("SSEEvent", "done")]
    t = [i.t for i in st.items]
    assert t[1] - t[0] >= 0.25 and t[2] - t[1] >= 0.25
    assert st.events[0].json() == {"delta": "a"}
    assert st.line_endings == {"LF": 5, "CRLF": 3, "CR": 0}
    assert ex.body.startswith(b"event: text")
    tr = transcript(ex)
    assert "event: text / data: {\"delta\":\"a\"}" in tr and ": ping" in tr and "stream end: eof" in tr
    assert client.stats.agent_runs == 1


def test_sse_forced_on_wrong_content_type() -> None:
    async def h(req, w, st):
        w.write(response(200, b"data: 1\n\n", {"content-type": "text/plain"}))
        return True

    ex, _, _ = run(one(h, sse=True))
    assert ex.stream is not None and ex.stream.events[0].data == "1"
    ex, _, _ = run(one(h))
    assert ex.stream is None


# -- hostile servers -----------------------------------------------------------


def test_never_answers() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        await asyncio.sleep(30)

    start = time.monotonic()
    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=0.5, total=2)))
    assert time.monotonic() - start < 2 + SLACK
    assert ex.status is None and ex.error == "no response headers within 0.5 s"
    assert ex.json is not None
    with pytest.raises(AssertionError, match="no response"):
        ex.json()


def test_headers_then_hang_idle() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD + b"data: 1\n\n")
        await writer.drain()
        await asyncio.sleep(30)

    start = time.monotonic()
    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=1, idle=0.5, total=3)))
    assert time.monotonic() - start < 2 + SLACK
    assert ex.status == 200
    assert ex.error == "stream idle: no data for 0.5 s (1 frame received)"
    assert ex.stream is not None and ex.stream.end == "deadline" and len(ex.stream.events) == 1


def test_drip_one_byte_per_second_hits_total_deadline() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD)
        for b in b"data: " + b"x" * 100:
            writer.write(bytes([b]))
            await writer.drain()
            await asyncio.sleep(1.0)

    start = time.monotonic()
    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=1, idle=1.5, total=2)))
    assert time.monotonic() - start < 3.5 + SLACK
    assert ex.error == "stream still open after the 2 s deadline (0 frames received)"
    assert ex.stream is not None and ex.stream.end == "deadline"
    assert ex.stream.pending.startswith(b"da")
    assert 1.9 <= (ex.t_end or 0) < 3 + SLACK


def test_drip_headers() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        for b in b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n":
            writer.write(bytes([b]))
            await writer.drain()
            await asyncio.sleep(0.2)

    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=1, total=5)))
    assert ex.status is None and ex.error == "no response headers within 1 s"


def test_plain_body_drip_deadline() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n")
        while True:
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.1)

    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=1, idle=1, total=1)))
    assert ex.error is not None and ex.error.startswith("body still incomplete after the 1 s deadline (")
    assert 3 <= len(ex.body) <= 12


def test_stream_forever() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD)
        i = 0
        while True:
            writer.write(f"event: text\ndata: {{\"i\":{i}}}\n\n".encode())
            await writer.drain()
            i += 1
            await asyncio.sleep(0.01)

    start = time.monotonic()
    ex, _, _ = run(one(h, raw=True, limits=Limits(headers=1, idle=1, total=1)))
    assert time.monotonic() - start < 2.5 + SLACK
    n = len(ex.stream.events)
    assert n > 10
    assert ex.error == f"stream still open after the 1 s deadline ({n:,} frames received)"
    assert ex.stream.end == "deadline"


def test_huge_frame_hits_byte_cap() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD + b"data: ")
        block = b"x" * 65536
        for _ in range(50 * 16):  # 50 MB
            writer.write(block)
            await writer.drain()
        writer.write(b"\n\n")

    start = time.monotonic()
    ex, _, client = run(one(h, raw=True, limits=Limits(headers=2, idle=2, total=5, max_body=2**20)))
    assert time.monotonic() - start < 3 + SLACK
    assert ex.error == "stream exceeded the 1 MiB cap (0 frames received)"
    assert len(ex.body) == 2**20
    assert ex.stream.end == "byte_cap" and ex.stream.total_bytes == 2**20
    assert len(ex.stream.pending) == 2**20
    assert client.stats.bytes_received >= 2**20
    assert len(transcript(ex)) <= 4000


def test_huge_json_body_hits_byte_cap() -> None:
    async def h(req, w, st):
        w.write(response(200, b"[" + b"1," * 600_000 + b"1]", {"content-type": "application/json"}))
        return False

    ex, _, _ = run(one(h, limits=Limits(headers=2, total=5, max_body=100_000)))
    assert ex.error == "body exceeded the 100,000 bytes cap"
    assert len(ex.body) == 100_000
    with pytest.raises(AssertionError, match="not JSON"):
        ex.json()


def test_invalid_utf8_body_and_stream() -> None:
    async def h(req, w, st):
        if req.path == "/json":
            w.write(response(200, b'{"a": "\xff\xfe"}', {"content-type": "application/json"}))
        else:
            w.write(SSE_HEAD + b"data: caf\xc3\n\n")
            return False
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            a = await c.send("GET", "/json")
            b = await c.send("GET", "/sse")
            await c.aclose()
            return a, b

    a, b = run(main())
    assert a.body == b'{"a": "\xff\xfe"}'
    with pytest.raises(AssertionError, match="not valid UTF-8"):
        a.json()
    assert "\ufffd" in transcript(a)
    assert b.stream.events[0].data == "caf\ufffd"
    assert any("invalid UTF-8" in f for f in b.stream.findings)


def test_reset_mid_body() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10000\r\n\r\n" + b"y" * 1234)
        await writer.drain()
        await asyncio.sleep(0.3)
        reset(writer)

    ex, _, _ = run(one(h, raw=True))
    assert ex.status == 200
    assert ex.error == "connection reset after 1,234 bytes"
    assert ex.body == b"y" * 1234


def test_close_mid_body() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc")
        await writer.drain()
        writer.close()

    ex, _, _ = run(one(h, raw=True))
    assert ex.error is not None and ex.error.startswith("connection closed after 3 bytes before the body was complete")
    assert ex.body == b"abc"


def test_reset_mid_stream() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD + b"data: 1\n\ndata: 2\n")
        await writer.drain()
        await asyncio.sleep(0.3)
        reset(writer)

    ex, _, _ = run(one(h, raw=True))
    assert ex.stream.end == "error: connection reset after 17 bytes"
    assert [e.data for e in ex.stream.events] == ["1"] and ex.stream.pending == b"data: 2\n"


def test_garbage_instead_of_http() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"\x00\xffSSH-2.0-OpenSSH garbage\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)

    ex, _, _ = run(one(h, raw=True))
    assert ex.status is None
    assert ex.error is not None and ex.error.startswith("server did not speak HTTP:")


def test_closes_without_answer_and_refused() -> None:
    async def h(reader, writer, st):
        await read_request(reader)

    ex, _, _ = run(one(h, raw=True))
    assert ex.status is None and ex.error == "connection closed before any response headers were received"

    async def refused():
        c = Client("http://127.0.0.1:1", limits=FAST)
        ex = await c.send("GET", "/")
        await c.aclose()
        return ex

    ex = run(refused())
    assert ex.status is None and ex.error == "connection refused"


def test_redirect_not_followed() -> None:
    async def h(req, w, st):
        w.write(response(302, b"", {"location": "https://example.invalid/"}))
        return True

    ex, st, client = run(one(h))
    assert ex.status == 302 and ex.header("location") == "https://example.invalid/"
    assert client.stats.requests == 1 and len(st.requests) == 1


# -- 429 ------------------------------------------------------------------------


def _limited(n_429: int, retry_after: str = "1"):
    async def h(req, w, st):
        if len(st.requests) <= n_429:
            w.write(response(429, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"slow"}}', {"retry-after": retry_after, "content-type": "application/json"}))
        else:
            w.write(response(200, b"{}", {"content-type": "application/json"}))
        return True

    return h


def test_429_retry_after_then_200() -> None:
    start = time.monotonic()
    ex, st, client = run(one(_limited(1), "POST", "/v1/agents/a/invoke", json={"prompt": "x"}))
    assert 1.0 <= time.monotonic() - start  # it did wait the Retry-After
    assert ex.status == 200 and ex.waited_429 == [1.0]
    assert client.stats.requests == 2 and client.stats.waits_429 == 1 and client.stats.waits_429_seconds == 1.0
    assert client.stats.agent_runs == 1
    assert "429 Retry-After waits: 1s" in transcript(ex)


def test_429_not_retried_when_asked() -> None:
    ex, st, client = run(one(_limited(1), retry_429=False))
    assert ex.status == 429 and ex.waited_429 == [] and client.stats.requests == 1
    assert ex.header("retry-after") == "1"


def test_429_wait_capped_and_retries_bounded() -> None:
    start = time.monotonic()
    ex, st, client = run(one(_limited(10, "100"), client_kw={"max_429_wait": 0.2, "max_429_retries": 2}))
    assert time.monotonic() - start < 2 + SLACK
    assert ex.status == 429 and ex.waited_429 == [0.2, 0.2]
    assert client.stats.requests == 3 and len(st.requests) == 3


@pytest.mark.parametrize("retry_after", ["soon", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_429_without_whole_seconds_is_resent_after_a_backoff(retry_after) -> None:
    """The spec gives Retry-After in seconds: anything else (an HTTP-date too) is not waited for, nor does it hold
    the other requests back; the request is resent after a backoff of its own."""
    ex, st, client = run(one(_limited(1, retry_after)))
    assert ex.status == 200 and ex.waited_429 == [1.0] and client.stats.requests == 2
    assert client.pacer.state().blocked_until == 0.0


def test_429_is_resent_as_long_as_the_run_deadline_allows() -> None:
    """With a run deadline there is no retry count: a 429 is resent until the wait would end after the deadline."""
    ex, st, client = run(one(_limited(3, "0"), client_kw={"run_deadline": time.monotonic() + 30}))
    assert ex.status == 200 and ex.waited_429 == [0.0, 0.0, 0.0] and not ex.rate_limited
    ex, st, client = run(one(_limited(3, "20"), client_kw={"run_deadline": time.monotonic() + 5}))
    assert ex.status == 429 and ex.rate_limited and ex.waited_429 == [] and len(st.requests) == 1


# -- agent run accounting, pooling, concurrency -------------------------------


def test_agent_run_accounting() -> None:
    async def h(req, w, st):
        status = 401 if req.headers.get("x-fail") else 200
        w.write(response(status, b"{}", {"content-type": "application/json"}))
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            await c.send("POST", "/v1/agents/a/invoke", json={"prompt": "x"})
            await c.send("POST", "/v1/agents/a/agui", json={})
            await c.send("POST", "/v1/agents/a/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
            await c.send("POST", "/v1/agents/a/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            await c.send("POST", "/v1/agents/a/invoke", json={}, headers={"x-fail": "1"})
            await c.send("GET", "/v1/agents/a/invoke")
            await c.aclose()
            return c, st

    c, st = run(main())
    assert c.stats.requests == 6 and c.stats.agent_runs == 3
    assert st.connections == 1  # keep-alive reuse


def test_concurrent_requests_share_a_bounded_pool() -> None:
    """200 requests at once: the server holds each until 32 are in flight together (or 30 s pass), so the
    client must open exactly its 32 connections at once, never more, and reuse them for the rest."""
    active = [0, 0]
    full = asyncio.Event()

    async def h(req, w, st):
        active[0] += 1
        active[1] = max(active[1], active[0])
        if active[0] >= 32:
            full.set()
        try:
            await asyncio.wait_for(full.wait(), 30)
        except asyncio.TimeoutError:
            pass
        active[0] -= 1
        w.write(response(200, req.path.encode()))
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=Limits(headers=60, total=60))
            exs = await asyncio.gather(*(c.send("GET", f"/r{i}") for i in range(200)))
            await c.aclose()
            return exs, st, c

    exs, st, c = run(main(), timeout=120)
    assert all(e.status == 200 and e.body == f"/r{i}".encode() for i, e in enumerate(exs))
    assert c.stats.requests == 200
    assert active[1] == 32, f"at most {active[1]} requests were in flight together, expected the pool's 32"
    assert st.connections == 32


# -- URL policy ------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://example.com", "http://10.0.0.1:8080", "http://[2001:db8::1]/", "ftp://127.0.0.1/"])
def test_plain_http_to_non_loopback_refused(url: str) -> None:
    with pytest.raises(ValueError, match="https://"):
        Client(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "http://127.8.9.10", "http://localhost:8000/base", "http://[::1]:9", "https://example.com"])
def test_loopback_http_and_https_allowed(url: str) -> None:
    c = Client(url)
    asyncio.run(c.aclose())


def test_a_credential_to_non_loopback_http_is_refused() -> None:
    async def main():
        c = Client("http://127.0.0.1:1")
        try:
            with pytest.raises(ValueError, match="refusing plain http://"):
                await c.send("GET", "http://example.com/x", headers={"Authorization": "Bearer svc_live_RealKey123"})
        finally:
            await c.aclose()

    run(main())


def test_plain_http_elsewhere_is_only_for_requests_without_a_secret() -> None:
    from conformance.wire.http import _carries_secret, _check_url
    from conformance.wire.redact import suite_made
    decoy = suite_made("conformance-decoy-0123456789abcdef")
    assert not _carries_secret({"Authorization": f"Bearer {decoy}", "Accept": "application/json"})
    assert not _carries_secret({"Authorization": None})
    assert _carries_secret({"authorization": "Bearer svc_live_RealKey123"})
    _check_url("http://198.18.0.2:8443/x", carries_secret=False)
    with pytest.raises(ValueError):
        _check_url("http://198.18.0.2:8443/x", carries_secret=True)


# -- secrets ------------------------------------------------------------------------


def test_secrets_redacted_even_when_echoed() -> None:
    other = "svc_oat_AnotherToken123"

    async def h(req, w, st):
        echoed = {"auth": req.headers.get("authorization"), "key": SECRET, "url": "?k=" + SECRET.replace("/", "%2F").replace("+", "%2B").replace("=", "%3D"), "other": other}
        if req.path == "/sse":
            w.write(SSE_HEAD + f"data: {json.dumps(echoed)}\n: {SECRET}\n\ndata: not json {SECRET}\n\n".encode())
            return False
        w.write(response(200, json.dumps(echoed).encode() + b" trailing " + SECRET.encode(), {"content-type": "application/json", "x-echo": SECRET}))
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST, secrets=[SECRET])
            a = await c.send("POST", "/json", headers={"Authorization": f"Bearer {SECRET}", "X-Other": "1"}, json={"k": SECRET})
            b = await c.send("GET", "/sse", headers={"authorization": f"Bearer {other}"})
            await c.aclose()
            return a, b, c, st

    a, b, c, st = run(main())
    assert st.requests[0].headers["authorization"] == f"Bearer {SECRET}"  # really sent
    outputs = [transcript(a), transcript(b), repr(a), repr(b), str(a.request_headers), c.redact(a.body.decode())]
    for exc_source in (a.json, b.stream.events[1].json):
        with pytest.raises(AssertionError) as info:
            exc_source()
        outputs.append(str(info.value))
    outputs += b.stream.findings
    for text in outputs:
        assert SECRET not in text
        assert "S3cr3t" not in text
        assert other not in text  # credentials sent are learned automatically
    assert MASK in transcript(a) and "Bearer " + MASK in transcript(a)


# -- TLS -----------------------------------------------------------------------------


def test_https_with_trustme(tmp_path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    server_ctx = __import__("ssl").create_default_context(__import__("ssl").Purpose.CLIENT_AUTH)
    cert.configure_cert(server_ctx)
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))

    async def h(req, w, st):
        w.write(response(200, b'{"tls": true}', {"content-type": "application/json"}))
        return True

    async def main():
        async with serve(h, ssl=server_ctx) as st:
            base = f"https://127.0.0.1:{st.port}"
            results = []
            for kw in ({"ca_bundle": str(bundle)}, {}, {"insecure": True},
                       {"ca_bundle": str(bundle), "system_cas": False}):
                c = Client(base, limits=FAST, **kw)
                results.append(await c.send("GET", "/"))
                await c.aclose()
            return results

    trusted, untrusted, insecure, own_ca_only = run(main())
    assert trusted.status == 200 and trusted.json() == {"tls": True}
    assert own_ca_only.status == 200 and own_ca_only.json() == {"tls": True}
    assert untrusted.status is None and untrusted.error.startswith("TLS verification failed:")
    assert insecure.status == 200


def test_the_embedded_servers_context_trusts_its_own_ca_alone(tmp_path) -> None:
    bundle = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    own = tls_context(str(bundle), system_cas=False)
    assert own.cert_store_stats()["x509_ca"] == 1
    assert own.verify_mode == __import__("ssl").CERT_REQUIRED and own.check_hostname
    assert Target(base_url="https://127.0.0.1:1", ca_bundle=str(bundle), embedded=True).tls().cert_store_stats() == \
        own.cert_store_stats()


def test_plain_http_to_tls_port_does_not_hang() -> None:
    ca = trustme.CA()
    ssl = __import__("ssl")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)

    async def h(req, w, st):
        return False

    async def main():
        async with serve(h, ssl=server_ctx) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            ex = await c.send("GET", "/")
            await c.aclose()
            return ex

    start = time.monotonic()
    ex = run(main())
    assert time.monotonic() - start < 3 + SLACK
    assert ex.status is None and ex.error


# -- rate limits, transport retry, the run's deadline ------------------------------


def test_429_budget_spent_marks_the_exchange_rate_limited() -> None:
    ex, st, client = run(one(_limited(10, "0"), client_kw={"max_429_retries": 3}))
    assert ex.status == 429 and ex.rate_limited and ex.waited_429 == [0.0, 0.0, 0.0]
    assert client.stats.rate_limited == 1 and len(st.requests) == 4
    assert "no more resends were allowed" in transcript(ex)


def test_429_probe_is_not_marked_rate_limited() -> None:
    ex, _, _ = run(one(_limited(1), retry_429=False, paced=False))
    assert ex.status == 429 and not ex.rate_limited


def _bucket_server(burst: int, per_second: float):
    """A token bucket like the reference server's: 429 + Retry-After when empty, X-RateLimit-Remaining always."""
    state = {"tokens": float(burst), "stamp": time.monotonic(), "429": 0}

    async def h(req, w, st):
        now = time.monotonic()
        state["tokens"] = min(burst, state["tokens"] + (now - state["stamp"]) * per_second)
        state["stamp"] = now
        if state["tokens"] >= 1:
            state["tokens"] -= 1
            w.write(response(200, b"{}", {"x-ratelimit-remaining": str(int(state["tokens"]))}))
        else:
            state["429"] += 1
            wait = max(1, int((1 - state["tokens"]) / per_second + 0.999))
            w.write(response(429, b"{}", {"x-ratelimit-remaining": "0", "retry-after": str(wait)}))
        return True

    return h, state


def test_pacing_keeps_concurrent_requests_under_the_servers_bucket() -> None:
    handler, state = _bucket_server(burst=6, per_second=10.0)

    async def main():
        async with serve(handler) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=Limits(total=30))
            exs = await asyncio.gather(*(c.send("GET", f"/r{i}") for i in range(40)))
            await c.aclose()
            return exs, c

    exs, c = run(main(), timeout=120)
    assert all(e.status == 200 and not e.rate_limited for e in exs)
    # the first burst goes before the first answer shows the bucket; after that the pacer keeps it from zero
    assert state["429"] <= 8, f"{state['429']} answers were 429"
    assert c.stats.paced_waits > 0


def test_rate_limit_cap_paces_even_a_silent_server() -> None:
    async def h(req, w, st):
        w.write(response(200, b"{}"))
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST, rate_limit="5/1s")
            exs = await asyncio.gather(*(c.send("GET", "/") for _ in range(8)))
            await c.aclose()
            return exs, c

    exs, c = run(main())
    assert all(e.status == 200 for e in exs)
    assert c.stats.paced_waits == 3 and sum(e.waited_pace > 0 for e in exs) == 3


def test_dead_pooled_connection_is_resent_once_on_a_fresh_one() -> None:
    async def h(reader, writer, st):
        """The first connection answers once, then drops the next request unanswered (an idle close racing
        our reuse); later connections answer normally."""
        first = st.connections == 1
        while True:
            req = await read_request(reader)
            if req is None:
                return
            st.requests.append(req)
            if first and len(st.requests) == 2:
                writer.close()
                return
            writer.write(response(200, b"{}"))
            await writer.drain()

    async def main():
        async with serve(h, raw=True) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            a = await c.send("GET", "/a")
            b = await c.send("GET", "/b", label="b")
            await c.aclose()
            return a, b, c, st

    a, b, c, st = run(main())
    assert a.status == 200 and b.status == 200
    assert b.retried_transport == "connection closed before any response headers were received"
    assert c.stats.transport_retries == 1 and st.connections == 2
    assert "resent on a fresh connection" in transcript(b)


def test_no_transport_retry_on_a_fresh_connection() -> None:
    async def h(reader, writer, st):
        await read_request(reader)

    ex, st, client = run(one(h, raw=True))
    assert ex.transport_failed and ex.retried_transport is None and client.stats.transport_retries == 0
    assert st.connections == 1


def test_run_deadline_cuts_a_flood_and_stops_sending() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD)
        frame = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}\n\n' * 200
        while not writer.is_closing():
            writer.write(frame)
            await writer.drain()
            await asyncio.sleep(0)

    async def main():
        async with serve(h, raw=True) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=Limits(total=60, idle=60, max_items=10**9, max_body=2**31),
                       run_deadline=time.monotonic() + 2.0, budget=RecordingBudget(10**9))
            ex = await c.send("POST", "/v1/agents/a/agui", json={})
            after = await c.send("GET", "/later")
            await c.aclose()
            return ex, after, c

    start = time.monotonic()
    ex, after, c = run(main(), timeout=60)
    assert time.monotonic() - start < 2 + SLACK
    assert ex.status == 200 and ex.stream is not None and ex.stream.end == "deadline"
    assert "run's deadline" in (ex.error or "")
    assert after.transport_failed and "run's deadline" in (after.error or "")
    assert c.stats.cut_by_run_deadline == 2


def test_run_budget_is_shared() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD + b"data: {}\n\n" * 60)
        await writer.drain()

    async def main():
        async with serve(h, raw=True) as st:
            budget = RecordingBudget(100)
            a = Client(f"http://127.0.0.1:{st.port}", limits=FAST, budget=budget)
            b = Client(f"http://127.0.0.1:{st.port}", limits=FAST, budget=budget)
            first, second = await a.send("GET", "/"), await b.send("GET", "/")
            await a.aclose()
            await b.aclose()
            return first, second

    first, second = run(main())
    assert first.stream.end == "eof" and second.stream.end == "item_cap"
    assert "budget of 100 recorded frames" in second.error


def test_run_body_byte_budget_is_shared() -> None:
    async def h(req, w, st):
        w.write(response(200, b"x" * 3000))
        return True

    async def main():
        async with serve(h) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=FAST, budget=RecordingBudget(body_bytes=5000))
            got = [await c.send("GET", "/") for _ in range(2)]
            await c.aclose()
            return got

    first, second = run(main())
    assert first.error is None and len(first.body) == 3000
    assert second.error.startswith("body cut off: the run's budget of 5,000 bytes") and second.body == b""


def test_stream_frame_cap() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(SSE_HEAD + b"data: {}\n\n" * 500)
        await writer.drain()
        await asyncio.sleep(5)

    ex, _, _ = run(one(h, raw=True, limits=Limits(total=10, idle=10, max_items=100)))
    assert ex.stream is not None and ex.stream.end == "item_cap"
    assert len(ex.stream.items) == 100 and "100 frame cap" in (ex.error or "")


def test_in_flight_exchange_is_reported_by_the_activity() -> None:
    from conformance.wire.exchange import ACTIVITY, Activity

    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"a\":")
        await writer.drain()
        await asyncio.sleep(30)

    async def main():
        async with serve(h, raw=True) as st:
            c = Client(f"http://127.0.0.1:{st.port}", limits=Limits(total=30, idle=30))
            activity = Activity()
            ACTIVITY.set(activity)
            task = asyncio.create_task(c.send("GET", "/slow", label="slow-one"))
            for _ in range(200):
                await asyncio.sleep(0.05)
                if "body bytes" in activity.holding():
                    break
            held = activity.holding()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await c.aclose()
            return held, activity

    held, activity = run(main(), timeout=60)
    assert held.startswith("slow-one (GET http://127.0.0.1:") and "status 200, 5 body bytes received" in held
    assert not activity.in_flight


def test_a_request_may_end_its_connection() -> None:
    """`Transport(connection="close")` sends `Connection: close` (HTTP/1.1): the next request opens a connection of
    its own, where requests without it share one, whether they say `keep-alive` or nothing."""
    async def h(req, w, st):
        w.write(response(200, b"{}", {"content-type": "application/json"}))
        return True

    async def two(first: Transport) -> ServerState:
        async with serve(h) as st:
            client = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            try:
                await client.send("GET", "/a", transport=first)
                await client.send("GET", "/b")
            finally:
                await client.aclose()
            return st

    closed, kept = run(two(Transport(connection="close"))), run(two(Transport()))
    unsaid = run(two(Transport(connection="unsaid")))
    assert closed.requests[0].headers.get("connection") == "close" and closed.connections == 2
    assert kept.requests[0].headers.get("connection") == "keep-alive" and kept.connections == 1
    assert "connection" not in unsaid.requests[0].headers and unsaid.connections == 1


def test_a_cookie_an_answer_sets_is_sent_back() -> None:
    """The pool reads cookies only off answers that set one (`http._Cookies`): one that does is still kept."""
    async def h(req: Request, w, st):
        setting = req.path == "/set"
        w.write(response(200, b"{}", {"content-type": "application/json",
                                      **({"set-cookie": "lb=node-2; Path=/"} if setting else {})}))
        return True

    async def scenario():
        async with serve(h) as st:
            client = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            try:
                for path in ("/before", "/set", "/after"):
                    await client.send("GET", path, label=path)
            finally:
                await client.aclose()
            return st

    st = run(scenario())
    cookies = [r.headers.get("cookie") for r in st.requests]
    assert cookies == [None, None, "lb=node-2"]
