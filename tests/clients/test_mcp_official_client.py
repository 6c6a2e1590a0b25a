"""The official `mcp` Python client (2.3.0) calls the reference server's tool: mode 2026-07-28 and the 2025-11-25
handshake, with and without an elicitation callback; and the suite's own official-client checks pass."""
from __future__ import annotations

import json
import ssl

import anyio
import pytest

from conformance.api import certify
from conformance.rejudge import verify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from tests.selftest.resend import resend_failures
from tests.selftest.zoo import load_zoo

QUESTION = "ask What is your name?\nsay thanks"


@pytest.fixture(scope="module")
def server():
    with ReferenceServer(ServerConfig()) as srv:
        yield srv


async def run_client(facts, mode: str, elicit: bool) -> dict:
    import httpx2
    import mcp_types as types
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    url = f"{facts['base_url']}/v1/agents/{facts['agent_id']}/mcp"
    asked: list[str] = []

    async def on_elicit(_ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "Ada"})

    out: dict = {}
    context = ssl.create_default_context(cafile=facts["ca_bundle"])
    async with httpx2.AsyncClient(verify=context, headers={"Authorization": f"Bearer {facts['api_key']}"}) as hc:
        kwargs = {"mode": mode, "cache": None}
        if elicit:
            kwargs["elicitation_callback"] = on_elicit
        async with Client(streamable_http_client(url, http_client=hc, terminate_on_close=False), **kwargs) as client:
            tools = (await client.list_tools()).tools
            out["tools"] = [t.name for t in tools]
            tool = out["tools"][0]
            out["plain"] = (await client.call_tool(tool, {"prompt": "say conformance"})).content[0].text
            session = f"sdk-{mode}-{elicit}"
            first = await client.call_tool(tool, {"prompt": QUESTION, "session_id": session})
            out["first"] = first.content[0].text
            if not asked:
                resumed = await client.call_tool(tool, {"session_id": session, "resume": {"name": "Ada"}})
                out["resumed"] = resumed.content[0].text
    out["asked"] = asked
    return out


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
@pytest.mark.parametrize("elicit", [True, False], ids=["elicitation", "no-elicitation"])
def test_official_client_calls_the_tool(server, mode, elicit):
    out = anyio.run(run_client, server.facts, mode, elicit)
    assert out["tools"] == ["ask_" + server.facts["agent_slug"].replace("-", "_")]
    assert out["plain"] == "conformance"
    if elicit and mode != "legacy":
        # asked for a form, answered, and the SDK retried the call (upstream 2026-07-28 InputRequiredResult)
        assert out["asked"] == ["What is your name?"]
        assert out["first"] == "answer: " + json.dumps({"answer": "Ada"}, separators=(",", ":")) + "thanks"
    else:
        # a 2025-11-25 client cannot be asked for a form here: the question comes as text, answered with `resume`
        assert out["asked"] == [] and out["first"] == "What is your name?"
        assert out["resumed"] == 'answer: {"name":"Ada"}thanks'


CLIENT = ["MCP-CLIENT-001", "MCP-CLIENT-002", "MCP-CLIENT-003", "MCP-CLIENT-004", "MCP-CLIENT-005"]
RECORDED = {  # the official client's requests to the reference server, in order, as the scenario labels them
    "2026-07-28": ["server/discover", "tools/list", "tools/call", "tools/call-2", "tools/call-3"],
    "2025-11-25": ["initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call-2",
                   "tools/call-3"],
}


def certified(srv) -> tuple[dict, dict]:
    report = certify(from_server_facts(srv.facts), requirements=CLIENT, keep_recording=True)
    return report, report.pop("recording")["document"]


def rows(report: dict) -> dict[str, dict]:
    return {r["id"]: r for r in report["requirements"] if r["id"] in CLIENT}


def test_suite_official_client_checks_pass_on_its_recorded_traffic(server):
    report, document = certified(server)
    for rid, row in rows(report).items():
        assert row["status"] == "passed", (rid, row.get("message"))
    (scenario,) = [s for s in document["scenarios"] if s["scenario"] == "mcp.official_client"]
    labels = [ex["label"] for ex in scenario["exchanges"]]
    assert labels == [f"official-{run}/{step}" for run, done in RECORDED.items() for step in done]
    # the official client's requests are counted in the run's cost, and judged again from the recording alone
    assert report["cost"]["requests"] >= 11 and report["cost"]["agent_runs"] >= 5, report["cost"]
    assert not verify(report, document).differences


@pytest.fixture(scope="module")
def zoo():
    return load_zoo()


def test_a_tools_list_without_upstream_fields_warns_on_its_exchange_and_blocks_the_rest(zoo):
    broken = zoo["MCP-CLIENT-003-tools-list-without-cache-fields"]
    with ReferenceServer(broken.server_config()) as srv:
        report, document = certified(srv)
        target = from_server_facts(srv.facts)
        resent = resend_failures(report, document, target, levels=("SHOULD",))
    got = rows(report)
    row = got["MCP-CLIENT-003"]
    assert row["status"] == "warning" and "\n" not in row["message"]
    assert "tools/list answer: result.cacheScope: required, missing; also result.resultType, result.ttlMs" \
        in row["message"]
    evidence = row["evidence"][0]
    assert evidence["broke"] and evidence["label"] == "official-2026-07-28/tools/list"
    assert '"method":"tools/list"' in evidence["curl"] and '--oauth2-bearer "$CONFORMANCE_API_KEY"' in evidence["curl"]
    assert '"ttlMs"' not in evidence["transcript"].split("\n\n", 1)[-1]
    assert got["MCP-CLIENT-004"]["status"] == "not_assessed" and got["MCP-CLIENT-004"]["blocked_by"] == ["MCP-CLIENT-003"]
    assert got["MCP-CLIENT-001"]["status"] == got["MCP-CLIENT-005"]["status"] == "passed"
    assert not verify(report, document).differences
    assert [(r.requirement, r.label, r.outcome) for r in resent] == [
        ("MCP-CLIENT-003", "official-2026-07-28/tools/list", "reproduced")], resent


def test_a_tool_the_client_rejects_is_one_warning_every_client_requirement_links_to(zoo):
    broken = zoo["MCP-CLIENT-002-input-schema-array"]
    with ReferenceServer(broken.server_config()) as srv:
        report, document = certified(srv)
    got = rows(report)
    assert got["MCP-CLIENT-002"]["status"] == "warning"
    assert 'inputSchema.type: expected "object", got "array"' in got["MCP-CLIENT-002"]["message"]
    for rid in ("MCP-CLIENT-001", "MCP-CLIENT-003", "MCP-CLIENT-004", "MCP-CLIENT-005"):
        assert got[rid]["status"] == "not_assessed" and got[rid]["blocked_by"] == ["MCP-CLIENT-002"], got[rid]
        assert got[rid]["evidence"][0]["label"].endswith("/tools/list"), got[rid]["evidence"][0]["label"]
    assert not verify(report, document).differences
