"""A custom-agent profile: only mapped scenarios run; the rest is not assessed, never passed."""
import dataclasses

from conformance import api
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import Profile, from_server_facts

ONLY_PLAIN = Profile(agent="custom", scenarios={"plain_reply": {"prompt": "say conformance", "reply": "conformance"}})


def test_unmapped_scenarios_are_not_assessed_with_the_reason(tmp_path):
    with ReferenceServer(ServerConfig()) as srv:
        target = dataclasses.replace(from_server_facts(srv.facts), profile=ONLY_PLAIN)
        rep = api.certify(target, protocols={"invoke"})
    statuses = {c["status"] for c in rep["checks"]}
    assert "passed" in statuses and "not_assessed" in statuses and "failed" not in statuses
    reasons = " ".join(c["message"] for c in rep["checks"] if c["status"] == "not_assessed")
    assert "profile" in reasons or "conformance agent" in reasons
    assert rep["verdict"] == "conformant-partial"


def test_profile_file_is_validated(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('agent = "custom"\n[scenarios.no_such_scenario]\nprompt = "x"\n')
    try:
        Profile.load(str(bad))
    except ValueError as exc:
        assert "no_such_scenario" in str(exc)
    else:
        raise AssertionError("an unknown scenario name was accepted")
