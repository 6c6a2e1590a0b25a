"""Authentication, sign-in metadata and agent addressing checks against the reference server, their
not-assessed reasons when an option is missing, and the WWW-Authenticate parser."""
from __future__ import annotations

import dataclasses

import pytest

from conformance import catalog
from conformance.api import certify
from conformance.vocab.challenges import parse_challenges
from conformance.target import from_server_facts
from tests.checks.support import checks_in

IDS = [rid for rid, r in catalog.load().items()
       if r.testable and (rid.startswith(("AUTH-", "META-", "GEN-AGENT-")))]
NEVER_PROVOKED: set[str] = set()


def my_checks() -> list[str]:
    return checks_in("auth", "metadata", "mcp")


@pytest.fixture(scope="module")
def report(server):
    return certify(from_server_facts(server.facts), requirements=IDS, check_ids=my_checks())


def row(report, rid):
    return next(r for r in report["requirements"] if r["id"] == rid)


def test_no_check_fails_or_errors(report):
    bad = [(c["id"], c["status"], c["message"][:300]) for c in report["checks"] if c["status"] in ("failed", "error")]
    assert not bad, bad


@pytest.mark.parametrize("rid", [r for r in IDS if r not in NEVER_PROVOKED])
def test_requirement_passes_on_the_reference_server(report, rid):
    r = row(report, rid)
    assert r["status"] == "passed", f"{rid}: {r['status']}: {r.get('message', '')[:500]}"


def test_post_to_metadata_is_the_refusal_judged(report):
    check = next(c for c in report["checks"] if c["id"] == "metadata.other_refusals_error_body")
    assert check["status"] == "passed" and "post 405" in check["message"], check


OPTION_OF = {
    "AUTH-MCP-001": "--access-token", "AUTH-MCP-002": "--access-token", "AUTH-KEY-009": "--access-token",
    "AUTH-MCP-006": "--revoked-key", "AUTH-KEY-005": "--revoked-key", "AUTH-MCP-007": "--expired-token",
    "AUTH-BIND-001": "--access-token", "GEN-AGENT-002": "--undeployed-agent-id",
    "GEN-AGENT-003": "--undeployed-agent-id", "GEN-AGENT-004": "--undeployed-agent-id",
    "META-STATE-001": "--undeployed-agent-id", "META-DOC-004": "--auth-url",
}


def test_missing_options_are_not_assessed_never_passed(server):
    bare = dataclasses.replace(from_server_facts(server.facts), access_token=None, revoked_key=None,
                               expired_token=None, other_agent_id=None, undeployed_agent_id=None, auth_url=None)
    rep = certify(bare, requirements=list(OPTION_OF), check_ids=my_checks())
    for rid, option in OPTION_OF.items():
        r = row(rep, rid)
        assert r["status"] == "not_assessed", f"{rid} is {r['status']} without {option}"
        assert option in r["message"], f"{rid}: the reason does not name {option}: {r['message']}"
    assert not [c for c in rep["checks"] if c["status"] in ("failed", "error")]


def test_other_agent_alone_is_not_enough(server):
    target = dataclasses.replace(from_server_facts(server.facts), access_token=None)
    rep = certify(target, requirements=["AUTH-MCP-002"], check_ids=my_checks())
    assert row(rep, "AUTH-MCP-002")["status"] == "not_assessed"
    assert "--access-token" in row(rep, "AUTH-MCP-002")["message"]


# -- the WWW-Authenticate parser (RFC 9110 §11.6.1) --------------------------------------------
URL = "https://h.example/.well-known/oauth-protected-resource/v1/agents/agt_1/mcp"


def bearer(value: str) -> dict[str, str]:
    chs = [c for c in parse_challenges(value) if c.scheme.lower() == "bearer"]
    assert len(chs) == 1
    return chs[0].params


@pytest.mark.parametrize("value", [
    f'Bearer resource_metadata="{URL}", scope="agent:invoke"',
    f'Bearer scope="agent:invoke", resource_metadata="{URL}"',                    # order
    f'bearer resource_metadata="{URL}",scope="agent:invoke"',                     # scheme case, no OWS
    f'BEARER  Resource_Metadata = "{URL}" ,  SCOPE="agent:invoke"',               # BWS, name case
    f'Bearer resource_metadata="{URL}", scope="agent:invoke", error="invalid_token"',  # extra param
    f'Bearer realm="svc", resource_metadata="{URL}", scope="agent:invoke"',
    f'Basic realm="x", Bearer resource_metadata="{URL}", scope="agent:invoke"',   # another challenge first
    f'Bearer resource_metadata="{URL}", scope="agent:invoke", Basic realm="x"',   # and after
    f'Bearer resource_metadata="{URL}", scope="agent\\:invoke"',                  # quoted-pair
    f', Bearer resource_metadata="{URL}", , scope="agent:invoke",',              # empty list elements
])
def test_parser_accepts_equivalent_forms(value):
    params = bearer(value)
    assert params["resource_metadata"] == URL and params["scope"] == "agent:invoke"


def test_token_and_quoted_values_are_equivalent():
    chs = parse_challenges('Bearer error=invalid_token, error_description="bad token"')
    assert chs[0].params == {"error": "invalid_token", "error_description": "bad token"}
    assert chs[0].quoted == {"error": False, "error_description": True}


def test_token68_and_bare_schemes():
    chs = parse_challenges("Basic dXNlcjpwYXNz==, Negotiate, Bearer")
    assert [(c.scheme, c.token68, c.params) for c in chs] == [
        ("Basic", "dXNlcjpwYXNz==", {}), ("Negotiate", None, {}), ("Bearer", None, {})]


@pytest.mark.parametrize("value", [
    'Bearer resource_metadata="unterminated',
    'Bearer scope=agent:invoke',                   # ':' is not a tchar: must be quoted
    'Bearer scope="a" scope2="b"',                 # missing comma
    'Bearer scope="a", SCOPE="b"',                 # a parameter twice
    '"Bearer" x=1',                                # no scheme
    'Bearer ="x"',
])
def test_parser_rejects_malformed_values(value):
    with pytest.raises(ValueError):
        parse_challenges(value)
