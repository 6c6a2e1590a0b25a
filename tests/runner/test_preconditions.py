"""Preconditions are checked before judging: a refused key or an unknown agent is one `error`, not a wall of MUSTs."""
from __future__ import annotations

import asyncio
import time

import pytest

from conformance import engine
from conformance.api import certify
from conformance.profile import Profile, Timeouts
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import Target, from_server_facts


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


def _preflight_error(monkeypatch, preflight) -> str | None:
    """The preflight's verdict when its exchanges are `preflight`, under a bound of 0.8 s of the suite listening."""
    monkeypatch.setattr(engine, "PREFLIGHT_SLACK", 0.0)
    monkeypatch.setattr(engine.Session, "_preflight", preflight)
    quick = Profile(timeouts=Timeouts(connect=0.2, headers=0.2))
    session = engine.Session(Target(base_url="https://127.0.0.1:9", agent_id="agt_a", api_key="k", profile=quick,
                                    http2=False), [])
    try:
        session.start()
    finally:
        session.close()
    return session.preflight_error


def test_a_preflight_the_suites_own_loop_held_up_is_no_error(monkeypatch):
    """The preflight's bound counts only time the suite was listening (`wire.listening`): a loop held past it (the
    suite's own work, a machine too busy to run it) while the answers were on their way is no `error`."""
    async def held_then_answered(self, client):
        time.sleep(1.5)
        return None

    assert _preflight_error(monkeypatch, held_then_answered) is None


def test_a_preflight_left_unanswered_while_the_suite_listened_is_an_error(monkeypatch):
    async def never_answered(self, client):
        await asyncio.sleep(60)

    assert _preflight_error(monkeypatch, never_answered).startswith(
        "the preflight got no whole answer from https://127.0.0.1:9 within 0.8 s")
