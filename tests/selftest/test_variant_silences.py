"""Two correct servers that keep a stream alive through a silence otherwise than the reference server
(variant_silences.py) pass every check over the silences: a ping clock that runs from the stream's start, frames or
not, and streams whose headers wait for the agent's first word. The first tests prove each really chooses so, so a
green certification means something; bench/bench_false_failures.py runs them whole, under random seeds."""
from __future__ import annotations

import asyncio

import pytest

from conformance import registry
from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.vocab import protocols as p, silences
from conformance.wire.exchange import Exchange
from conformance.wire.http import Client
from conformance.wire.sse import SSEComment
from tests.selftest.variant_servers import SERVERS, false_verdicts
from tests.selftest.variant_silences import late_headers_config, ticker_config


def send(srv, operation: str, body: dict, headers: dict) -> Exchange:
    f = srv.facts

    async def go() -> Exchange:
        client = Client(f["base_url"], ca_bundle=f["ca_bundle"])
        try:
            return await client.send("POST", f"/v1/agents/{f['agent_id']}/{operation}", label="x", sse=True,
                                     headers={"Authorization": f"Bearer {f['api_key']}", **headers}, json=body)
        finally:
            await client.aclose()
    return asyncio.run(go())


def test_the_ticker_pings_on_its_own_clock_frames_or_not():
    """Pings every second from the stream's start, while the reference server (15 s after its last write) sends
    none in 2.5 s."""
    body = p.agui_input("say early\nsleep 2.5\nsay late", thread="t-ticker")
    for config, want in ((ticker_config(every=1.0), 2), (ServerConfig(), 0)):
        with ReferenceServer(config) as srv:
            ex = send(srv, "agui", body, {"Accept": p.SSE})
        pings = [i for i in ex.stream.items if isinstance(i, SSEComment)]
        assert len(pings) == want, (config, [(i.t, i.text) for i in ex.stream.items])


def test_late_headers_come_with_the_first_frame():
    body = p.invoke_body("sleep 2\nsay late", "k-late", stream=True)
    with ReferenceServer(late_headers_config()) as srv:
        late = send(srv, "invoke", body, {"Accept": p.SSE})
    with ReferenceServer(ServerConfig()) as srv:
        early = send(srv, "invoke", body, {"Accept": p.SSE})
    assert late.t_headers >= 1.5 > 1.0 > early.t_headers, (late.t_headers, early.t_headers)
    assert [f.event for f in late.stream.events] == [f.event for f in early.stream.events]


@pytest.mark.parametrize("name", ["silences-ping-ticker", "silences-late-headers"])
def test_the_silence_variants_pass_every_check_over_the_silences(name: str) -> None:
    server = SERVERS[name]
    scenarios = {s.scenario for s in silences.SILENCES.values()}
    ids = [c.id for c in registry.load_all().values() if set(c.scenarios) & scenarios]
    with ReferenceServer(server.config()) as srv:
        report = certify(from_server_facts(srv.facts), check_ids=ids)
    assert not false_verdicts(server, report), false_verdicts(server, report)
    judged = {r["id"] for r in report["requirements"] if r.get("silences")}
    assert {"AGUI-PING-001", "INV-TERM-001", "MCP-PROG-003"} <= judged
