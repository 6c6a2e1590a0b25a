"""Preconditions are checked before judging: a refused key or an unknown agent is one `error`, not a wall of MUSTs."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts


@pytest.fixture(scope="module")
def server():
    with ReferenceServer(ServerConfig()) as srv:
        yield srv


def test_a_refused_api_key_is_one_error_naming_the_variable(server):
    report = certify(from_server_facts(server.facts, api_key="ais_live_not_a_key_of_this_server"))
    assert report["verdict"] == "error"
    assert report["verdict_reason"].startswith("the API key given in CONFORMANCE_API_KEY was refused")
    assert "401" in report["verdict_reason"] and "not_a_key" not in report["verdict_reason"]
    assert not any(r["status"] == "failed" for r in report["requirements"])


def test_an_unknown_agent_is_one_error_naming_the_option(server):
    report = certify(from_server_facts(server.facts, agent_id="agt_nobody_here"))
    assert report["verdict"] == "error"
    assert "agt_nobody_here" in report["verdict_reason"] and "--agent-id" in report["verdict_reason"]
    assert not any(r["status"] == "failed" for r in report["requirements"])


def test_a_good_key_passes_the_preconditions(server):
    report = certify(from_server_facts(server.facts), requirements=["INV-RES-001"])
    assert report["verdict"] != "error", report["verdict_reason"]
