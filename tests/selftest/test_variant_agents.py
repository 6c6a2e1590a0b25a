"""A correct service whose deployed agent is off its contract is never failed for it (variant_agents.py): each such
server of variant_servers.py gets no failed, warning or error requirement beyond its design, a verdict that is not
non-conformant, and a report that names its agent once, in the ways its design gives (report.json `agent`); judged
again from its recording, the same. The reference server, whose agent keeps its contract, is named as such.

The other half, broken services whose fault shows through the same readings, is zoo_agent_readings.py (test_zoo.py)."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.rejudge import verify
from conformance.server import ReferenceServer
from conformance.target import from_server_facts
from tests.selftest.variant_agents import AGENTS
from tests.selftest.variant_servers import SERVERS, false_verdicts

NAMES = ["reference", *(name for name in SERVERS if name.startswith("agent-"))]


def test_every_agent_off_its_contract_is_a_registered_correct_server():
    assert {f"agent-{name}" for name in AGENTS} <= set(SERVERS)


@pytest.mark.xdist_group("variant-agents")
@pytest.mark.parametrize("name", NAMES)
def test_a_correct_service_is_not_failed_for_its_agent(name):
    server = SERVERS[name]
    with ReferenceServer(server.config()) as srv:
        report = certify(from_server_facts(srv.facts), keep_recording=True)
    document = report.pop("recording")["document"]
    wrong = false_verdicts(server, report)
    assert not wrong, wrong + [f"{r['id']}: {r.get('message', '')[:300]}" for r in report["requirements"]
                               if f"{r['id']}={r['status']}" in wrong]
    assert report["verdict"] in ("conformant", "conformant-partial"), report["verdict_reason"]
    agent = report["agent"]
    assert {way["way"] for way in agent["deviations"]} == set(server.agent), agent
    assert agent["status"] == ("off-contract" if server.agent else "no-deviation-seen")
    for way in agent["deviations"]:
        assert way["example"]["label"] and way["contract"] and way["vector"], way
        # what it hides is not assessed, with the agent named as the reason
        for rid in way["not_assessed"]:
            row = next(r for r in report["requirements"] if r["id"] == rid)
            assert row["status"] == "not_assessed" and "off its contract" in row["message"], row
    assert not verify(report, document).differences
