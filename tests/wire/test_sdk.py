"""`wire.sdk.RecordingTransport`: a client the suite does not drive (the official MCP SDK's, over httpx or httpx2)
recorded like the suite's own: paced, 429s waited out, every exchange labelled and kept in order, bodies held to
the byte cap, event streams recorded frame by frame as the client reads them."""
from __future__ import annotations

import asyncio
import json

import httpx
import httpx2
import pytest

from conformance.reporting.repro import curl
from conformance.wire.http import Client, Limits
from conformance.wire.redact import MASK
from conformance.wire.sdk import CLOSED_BY_CLIENT, RecordingTransport

from .servers import SSE_HEAD, read_request, response, serve
from .test_client import FAST, SECRET, _bucket_server, run


def rpc(method: str, id: int | None = 1) -> dict:
    return {"jsonrpc": "2.0", "method": method, **({"id": id} if id is not None else {})}


def test_paced_for_a_client_we_do_not_drive() -> None:
    """httpx's own client through the pacer: 429s are waited out, the bucket kept, each request recorded once."""
    handler, state = _bucket_server(burst=4, per_second=10.0)

    async def main():
        async with serve(handler) as st:
            ours = Client(f"http://127.0.0.1:{st.port}", limits=FAST)
            recorded = []
            transport = RecordingTransport(ours, httpx.AsyncHTTPTransport(), recorded.append, prefix="sdk/")
            async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{st.port}") as theirs:
                got = await asyncio.gather(*(theirs.get(f"/s{i}") for i in range(20)))
            await ours.aclose()
            return got, ours, recorded

    got, ours, recorded = run(main(), timeout=120)
    assert [r.status_code for r in got] == [200] * 20
    assert ours.stats.paced_waits > 0 and ours.stats.rate_limited == 0
    assert len(recorded) == 20 and all(ex.status == 200 for ex in recorded)
    assert sorted(ex.label for ex in recorded) == sorted(["sdk/GET"] + [f"sdk/GET-{n}" for n in range(2, 21)])


def test_caps_an_endless_body() -> None:
    async def h(reader, writer, st):
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[")
        while not writer.is_closing():
            writer.write(b"1," * 4096)
            await writer.drain()
            await asyncio.sleep(0)

    async def main():
        async with serve(h, raw=True) as st:
            ours = Client(f"http://127.0.0.1:{st.port}", limits=Limits(max_body=2**20))
            recorded = []
            transport = RecordingTransport(ours, httpx.AsyncHTTPTransport(), recorded.append)
            async with httpx.AsyncClient(transport=transport) as theirs:
                try:
                    await theirs.get(f"http://127.0.0.1:{st.port}/endless")
                except OSError as exc:
                    return str(exc), recorded
            return "read it all", recorded

    said, recorded = run(main(), timeout=60)
    assert said == "body exceeded the 1 MiB cap"
    [ex] = recorded
    assert ex.error == said and len(ex.body) == 2**20


def test_records_what_the_sdk_client_sent_and_read() -> None:
    """httpx2 (the SDK's library): JSON-RPC methods label the exchanges; the credential is masked; a stream the
    client stops reading after its response is recorded up to there, frame by frame, `closed by the client`."""
    async def h(req, w, st):
        doc = json.loads(req.body)
        if doc.get("method") == "tools/call":
            w.write(SSE_HEAD + b'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\n\n')
            await w.drain()
            await asyncio.sleep(30)          # the stream stays open: the client stops reading at its response
            return False
        w.write(response(200, json.dumps({"jsonrpc": "2.0", "id": doc.get("id"), "result": {}}).encode(),
                         {"content-type": "application/json"}))
        return True

    async def main():
        async with serve(h) as st:
            url = f"http://127.0.0.1:{st.port}/mcp"
            ours = Client(url, limits=FAST, secrets=[SECRET])
            recorded = []
            transport = RecordingTransport(ours, httpx2.AsyncHTTPTransport(), recorded.append, prefix="run/")
            async with httpx2.AsyncClient(transport=transport, headers={"Authorization": f"Bearer {SECRET}"}) as hc:
                await hc.post(url, json=rpc("tools/list"))
                await hc.post(url, json=rpc("notifications/initialized", None))
                await hc.post(url, json={"jsonrpc": "2.0", "id": 9, "result": {}})
                async with hc.stream("POST", url, json=rpc("tools/call", 2)) as streamed:
                    async for line in streamed.aiter_lines():
                        if line.startswith("data:"):
                            break
                await hc.post(url, json=rpc("tools/list", 3))
            await ours.aclose()
            return recorded, ours

    recorded, ours = run(main(), timeout=30)
    assert [ex.label for ex in recorded] == ["run/tools/list", "run/notifications/initialized", "run/response",
                                             "run/tools/call", "run/tools/list-2"]
    assert all(ex.request_headers["authorization"] == f"Bearer {MASK}" and ex.credential == "api_key"
               for ex in recorded)
    streamed = recorded[3]
    assert streamed.stream.end == CLOSED_BY_CLIENT and len(streamed.stream.events) == 1
    assert json.loads(streamed.stream.events[0].data)["id"] == 2 and streamed.error is None
    assert recorded[4].json()["id"] == 3 and ours.stats.requests == 5
    # the version the client spoke: a finding's curl re-sends the exchange over it
    assert {ex.http_version for ex in recorded} == {"HTTP/1.1"} and " --http1.1 " in curl(recorded[0])


def test_not_sent_after_the_run_deadline_is_recorded() -> None:
    async def main():
        ours = Client("http://127.0.0.1:9", limits=FAST, run_deadline=0.0)
        recorded = []
        transport = RecordingTransport(ours, httpx2.AsyncHTTPTransport(), recorded.append)
        async with httpx2.AsyncClient(transport=transport) as hc:
            with pytest.raises(ConnectionError):
                await hc.post("http://127.0.0.1:9/mcp", json=rpc("tools/list"))
        return recorded

    [ex] = run(main())
    assert ex.status is None and "run's deadline" in ex.error and ex.label == "tools/list"


def test_the_breaker_stops_the_sdk_client_too() -> None:
    """After `breaker` exchanges cut off by a limit, the suite sends nothing more, the SDK's requests included."""
    async def main():
        ours = Client("http://127.0.0.1:9", limits=FAST, breaker=1)
        ours.cut_off = 1
        recorded = []
        transport = RecordingTransport(ours, httpx2.AsyncHTTPTransport(), recorded.append)
        async with httpx2.AsyncClient(transport=transport) as hc:
            with pytest.raises(ConnectionError):
                await hc.post("http://127.0.0.1:9/mcp", json=rpc("tools/list"))
        return recorded, ours

    [ex], ours = run(main())
    assert ex.status is None and ex.error.startswith("not sent: 1 earlier exchanges") and ours.stats.requests == 0
