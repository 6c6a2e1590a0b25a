"""The client over HTTP/2: the version each exchange went over, the strict stream recorder over DATA frames, the
ALPN probe, and the deadlines against hostile HTTP/2 servers (raw `h2` state machines over TLS on 127.0.0.1)."""
from __future__ import annotations

import asyncio
import ssl
import time
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

import h2.config
import h2.connection
import h2.events
import pytest
import trustme

from conformance.reporting.repro import curl
from conformance.reporting.transcript import transcript
from conformance.wire.http import HTTP1, HTTP2, Client, Limits

FAST = Limits(connect=2, headers=1, idle=1, total=2, max_body=2**20)
SLACK = 15.0   # an upper bound proves a deadline holds, not that the machine is fast

Respond = Callable[[h2.connection.H2Connection, asyncio.StreamWriter, int], Awaitable[None]]


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> tuple[trustme.CA, str]:
    authority = trustme.CA()
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(path))
    return authority, str(path)


def server_context(ca: trustme.CA, alpn: list[str] | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(ctx)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


@asynccontextmanager
async def serve_h2(ca: trustme.CA, respond: Respond | None, *, settings: bool = True) -> AsyncIterator[int]:
    """An HTTP/2 server: `respond(conn, writer, stream_id)` once a request has ended; `respond=None` answers
    nothing; `settings=False` never even sends its SETTINGS (nor reads)."""
    tasks: set[asyncio.Task] = set()

    async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks.add(asyncio.current_task())
        if not settings:
            await asyncio.sleep(3600)
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        try:
            while data := await reader.read(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.StreamEnded) and respond is not None:
                        tasks.add(asyncio.create_task(respond(conn, writer, event.stream_id)))
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0, ssl=server_context(ca, ["h2"]))
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def send(conn: h2.connection.H2Connection, writer: asyncio.StreamWriter) -> None:
    writer.write(conn.data_to_send())


async def exchange(ca_path: str, port: int, limits: Limits = FAST, **kw):
    client = Client(f"https://127.0.0.1:{port}", ca_bundle=ca_path, limits=limits, http2=True)
    try:
        t0 = time.monotonic()
        ex = await client.send(kw.pop("method", "GET"), "/x", **kw)
        return ex, time.monotonic() - t0
    finally:
        await client.aclose()


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


# -- the version and the stream -------------------------------------------------------------------------------
def test_json_over_http2_records_the_version_transcript_and_curl(ca) -> None:
    async def respond(conn, writer, sid):
        body = b'{"ok": true}'
        conn.send_headers(sid, [(":status", "200"), ("content-type", "application/json"),
                                ("content-length", str(len(body)))])
        conn.send_data(sid, body, end_stream=True)
        send(conn, writer)

    async def main():
        async with serve_h2(ca[0], respond) as port:
            return await exchange(ca[1], port)

    ex, _ = run(main())
    assert ex.status == 200 and ex.json() == {"ok": True}
    assert ex.http_version == HTTP2
    assert "< HTTP/2 200" in transcript(ex)
    assert curl(ex).startswith("curl -sS -N -i --http2 ")


def test_the_stream_recorder_sees_bytes_comments_line_endings_and_times_over_data_frames(ca) -> None:
    pieces = [b": ping\r\n\r\n", b"data: {\"a\":1}\r\n", b"\r\n", b"event: x\ndata: 2\n\n"]

    async def respond(conn, writer, sid):
        conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
        send(conn, writer)
        for piece in pieces:
            await asyncio.sleep(0.3)
            conn.send_data(sid, piece)
            send(conn, writer)
        conn.end_stream(sid)
        send(conn, writer)

    async def main():
        async with serve_h2(ca[0], respond) as port:
            return await exchange(ca[1], port, limits=Limits(connect=2, headers=2, idle=2, total=5))

    ex, _ = run(main())
    st = ex.stream
    assert ex.http_version == HTTP2 and ex.error is None and st.end == "eof"
    assert [c.text for c in st.comments] == [" ping"]
    assert [e.data for e in st.events] == ['{"a":1}', "2"] and st.events[1].event == "x"
    assert st.line_endings["CRLF"] == 4 and st.line_endings["LF"] == 3
    assert st.events[0].raw == b'data: {"a":1}\r\n\r\n'
    times = [item.t for item in st.items]
    assert times == sorted(times) and times[-1] - times[0] >= 0.5      # each piece as it arrived, not at the end


# -- the deadlines against a hostile HTTP/2 server ------------------------------------------------------------
def test_a_server_that_never_sends_its_settings_is_cut_at_the_headers_deadline(ca) -> None:
    async def main():
        async with serve_h2(ca[0], None, settings=False) as port:
            return await exchange(ca[1], port)

    ex, took = run(main())
    assert ex.status is None and "no response headers within 1 s" in ex.error
    assert ex.http_version == HTTP2 and took < 1 + SLACK


def test_a_request_never_answered_is_cut_at_the_headers_deadline(ca) -> None:
    async def main():
        async with serve_h2(ca[0], None) as port:
            return await exchange(ca[1], port)

    ex, took = run(main())
    assert ex.status is None and "no response headers" in ex.error and took < 1 + SLACK


def test_a_request_body_the_server_never_opens_its_window_for_is_cut_at_the_headers_deadline(ca) -> None:
    async def main():      # 200 kB: more than the 64 kB window the server never updates
        async with serve_h2(ca[0], None) as port:
            return await exchange(ca[1], port, method="POST", content=b"x" * 200_000)

    ex, took = run(main())
    assert ex.status is None and "no response headers" in ex.error and took < 1 + SLACK


def test_a_stream_that_goes_silent_is_cut_at_the_idle_deadline(ca) -> None:
    async def respond(conn, writer, sid):
        conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
        conn.send_data(sid, b"data: 1\n\n")
        send(conn, writer)
        await asyncio.sleep(3600)

    async def main():
        async with serve_h2(ca[0], respond) as port:
            return await exchange(ca[1], port)

    ex, took = run(main())
    assert ex.status == 200 and ex.stream.end == "deadline" and len(ex.stream.events) == 1
    assert "stream idle" in ex.error and took < 2 + SLACK


def test_a_stream_that_never_ends_is_cut_at_the_total_deadline(ca) -> None:
    async def respond(conn, writer, sid):
        conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
        send(conn, writer)
        while True:
            await asyncio.sleep(0.2)
            if conn.local_flow_control_window(sid) > 16:
                conn.send_data(sid, b": x\n\n")
                send(conn, writer)

    async def main():
        async with serve_h2(ca[0], respond) as port:
            return await exchange(ca[1], port)

    ex, took = run(main())
    assert ex.stream.end == "deadline" and "stream still open after the 2 s deadline" in ex.error
    assert took < 2 + SLACK


def test_a_goaway_mid_stream_ends_the_exchange_with_what_was_received(ca) -> None:
    async def respond(conn, writer, sid):
        conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
        conn.send_data(sid, b"data: 1\n\n")
        send(conn, writer)
        await asyncio.sleep(0.2)
        conn.close_connection(last_stream_id=sid)
        send(conn, writer)
        writer.close()

    async def main():
        async with serve_h2(ca[0], respond) as port:
            return await exchange(ca[1], port)

    ex, took = run(main())
    assert ex.status == 200 and len(ex.stream.events) == 1 and ex.error and took < 2 + SLACK


# -- the suite's own stalls are not the server's silence ----------------------------------------------------------
STREAMS = 4


def stalled_server(ca, *, answer_after_stall: bool, headers_first: bool = True):
    """A server that answers STREAMS concurrent requests over one connection, then (as soon as the last request is
    in) sends whatever remains and blocks the event loop, which the client shares, past every deadline of FAST: the
    suite's own work (a first import of a large SDK under load) holding its loop while the server's frames wait in
    the socket. `answer_after_stall=False`: nothing more is sent, ever."""
    arrived: list[int] = []

    async def respond(conn, writer, sid):
        if headers_first:
            conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
            conn.send_data(sid, b"data: 1\n\n")
            send(conn, writer)
        arrived.append(sid)
        if len(arrived) < STREAMS:
            return
        await asyncio.sleep(0.3)            # the client reads what was sent so far and waits for more
        for s in arrived if answer_after_stall else ():
            if not headers_first:
                conn.send_headers(s, [(":status", "200"), ("content-type", "text/event-stream")])
            conn.send_data(s, b"data: 2\n\n", end_stream=True)
        send(conn, writer)
        time.sleep(max(FAST.headers, FAST.idle) + 1.0)      # blocks the one loop: nobody reads the socket meanwhile

    return serve_h2(ca, respond)


async def concurrently(ca_path: str, port: int):
    client = Client(f"https://127.0.0.1:{port}", ca_bundle=ca_path, http2=True,
                    limits=Limits(connect=2, headers=FAST.headers, idle=FAST.idle, total=10))
    try:
        t0 = time.monotonic()
        exchanges = await asyncio.gather(*(client.send("GET", f"/s{i}") for i in range(STREAMS)))
        return exchanges, time.monotonic() - t0
    finally:
        await client.aclose()


@pytest.mark.parametrize("headers_first", [True, False], ids=["idle", "headers"])
def test_a_deadline_passed_while_the_suites_own_loop_was_blocked_cuts_no_stream(ca, headers_first) -> None:
    """Over HTTP/2 only the stream whose task holds the connection's read lock waits on the socket; the others wait
    on that lock, so when the loop comes back their overdue deadlines used to cut them all before the frames that
    had arrived meanwhile were handed over. A deadline counts only time the suite was listening."""
    async def main():
        async with stalled_server(ca[0], answer_after_stall=True, headers_first=headers_first) as port:
            return await concurrently(ca[1], port)

    exchanges, _ = run(main())
    assert [(ex.error, ex.stream.end) for ex in exchanges] == [(None, "eof")] * STREAMS
    assert all([e.data for e in ex.stream.events][-1] == "2" for ex in exchanges)


def test_a_stream_that_stays_silent_after_the_suites_stall_is_still_cut(ca) -> None:
    async def main():
        async with stalled_server(ca[0], answer_after_stall=False) as port:
            return await concurrently(ca[1], port)

    exchanges, took = run(main())
    assert all(ex.stream.end == "deadline" and "stream idle" in ex.error for ex in exchanges)
    assert took < FAST.idle + 1.0 + SLACK


# -- ALPN ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("offered, chosen", [(["h2", "http/1.1"], "h2"), (["http/1.1"], "http/1.1"), (None, None)])
def test_alpn_choice_reads_what_the_server_picks_without_a_request(ca, offered, chosen) -> None:
    requests = []

    async def main():
        async def on_conn(reader, writer):
            requests.append(await reader.read(1))      # a handshake alone sends no application byte
            writer.close()

        server = await asyncio.start_server(on_conn, "127.0.0.1", 0, ssl=server_context(ca[0], offered))
        port = server.sockets[0].getsockname()[1]
        try:
            client = Client(f"https://127.0.0.1:{port}", ca_bundle=ca[1], http2=True)
            got = await client.alpn_choice(2)
            await asyncio.sleep(0.1)
            return got
        finally:
            server.close()

    got, how = run(main())
    assert got == chosen and how.endswith(f"the target picked {chosen or 'neither'}")
    assert requests in ([], [b""])


def test_alpn_choice_is_bounded_and_says_why_when_there_is_none(ca) -> None:
    async def main():
        async def silent(reader, writer):      # accepts TCP, never answers the TLS handshake
            await asyncio.sleep(3600)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            t0 = time.monotonic()
            got = await Client(f"https://127.0.0.1:{port}", ca_bundle=ca[1]).alpn_choice(0.5)
            return got, time.monotonic() - t0, await Client(f"http://127.0.0.1:{port}").alpn_choice(0.5)
        finally:
            server.close()

    (got, how), took, (plain, plain_how) = run(main())
    assert got is None and "no TLS handshake within 0.5 s" in how and took < 0.5 + SLACK
    assert plain is None and "plain http://" in plain_how


def test_an_http1_client_never_offers_h2_even_beside_an_http2_client(ca) -> None:
    async def respond(conn, writer, sid):
        conn.send_headers(sid, [(":status", "204")], end_stream=True)
        send(conn, writer)

    async def main():
        async with serve_h2(ca[0], respond) as port:
            both = Client(f"https://127.0.0.1:{port}", ca_bundle=ca[1], limits=FAST, http2=True)
            only1 = Client(f"https://127.0.0.1:{port}", ca_bundle=ca[1], limits=FAST)
            try:
                return await both.send("GET", "/x"), await only1.send("GET", "/x")
            finally:
                await both.aclose()
                await only1.aclose()

    over2, over1 = run(main())
    assert over2.http_version == HTTP2 and over2.status == 204
    # the server speaks h2 alone: an HTTP/1.1 client is not answered, and says it asked for HTTP/1.1
    assert over1.status is None and over1.http_version == HTTP1


# -- the recording and the reports ----------------------------------------------------------------------------
def test_the_version_is_recorded_and_an_old_recording_without_it_reads_as_http1() -> None:
    import dataclasses
    import json

    from conformance import canned
    from conformance.recording import codec
    from conformance.wire.redact import Redactor

    ex = dataclasses.replace(canned.exchange(200, {"content-type": "application/json"}, body={"ok": True}),
                             http_version=HTTP2, started_at=1.0)
    written = json.loads(json.dumps(codec.encode_exchange(ex, lambda s: s)))
    assert written["http_version"] == HTTP2
    assert codec.decode_exchange(written, Redactor()).http_version == HTTP2
    older = {k: v for k, v in written.items() if k != "http_version"}
    assert codec.decode_exchange(older, Redactor()).http_version == HTTP1      # the suite spoke HTTP/1.1 only then
    never_sent = {**older, "status": None, "started_at": None}
    assert codec.decode_exchange(never_sent, Redactor()).http_version is None


@pytest.mark.parametrize("version, flag", [(HTTP1, "--http1.1"), (HTTP2, "--http2")])
def test_the_curl_line_reaches_the_version_the_exchange_went_over(version, flag) -> None:
    import dataclasses

    from conformance import canned

    ex = dataclasses.replace(canned.exchange(200, request_headers={"accept": "application/json"}),
                             http_version=version)
    assert curl(ex).split()[:5] == ["curl", "-sS", "-N", "-i", flag]
