"""Authentication and agent addressing: credentials accepted and refused on invoke, AG-UI and MCP, the MCP 401
challenge (parsed by RFC 9110 rules in `conformance.vocab.challenges`, not compared as a string), agent-bound
tokens, and agentId handling.
"""
from __future__ import annotations

import re

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check, rule
from conformance.vocab import protocols as p
from conformance.vocab.steps import access as steps, mcp as mcp_steps
from conformance.vocab.challenges import challenge_params, metadata_url, same_url, spelled
from conformance.vocab.constants import JSONRPC_INVALID_REQUEST, SCOPE
from conformance.vocab.readers import got, step
from conformance.vocab.refusals import each, mcp_refused, refused_4xx, step_sent as sent
from conformance.wire.exchange import Exchange


def register(fn, reqs: tuple[str, ...], scenarios_by_name: dict[str, str]) -> None:
    """One check per protocol scenario (so --protocols keeps the ones it can), same rule: `<fn>_<protocol>`."""
    rule(lambda suffix: fn, over=scenarios_by_name, requirements=reqs, scenarios=lambda suffix: [scenarios_by_name[suffix]],
         name=lambda suffix: f"{fn.__name__}_{suffix}")


BOTH = {"invoke": "access.invoke", "agui": "access.agui"}


# -- API keys on invoke and AG-UI -------------------------------------------------------------
def api_key_accepted(rec: Recording):
    """Sends the plain prompt with `Authorization: Bearer <--api-key>`; the call is accepted and replies."""
    ex = rec.get(steps.ACCEPTED)
    reply = rec.facts.get("reply")
    what = f"{rec.scenario}: the plain prompt with the API key"
    assert ex.status == 200, f"{what}; expected 200, got {got(ex)}"
    if rec.facts.get("protocol") == "invoke":
        body = ex.json()
        text = body.get("result") if isinstance(body, dict) else None
    else:
        text = p.agui_text(p.agui_events(ex))
    if reply is not None:
        assert text == reply, f"{what}; expected the reply {reply!r}, got {str(text)[:200]!r}"


register(api_key_accepted, ("AUTH-KEY-001",), BOTH)


@check("AUTH-KEY-001", scenarios=["mcp.modern"])
def api_key_accepted_mcp(rec: Recording):
    """Sends a 2026-07-28 tools/call with `Authorization: Bearer <--api-key>`; it answers 200 with a result."""
    ex = rec.get(mcp_steps.CALL)
    assert ex.status == 200, f"tools/call with the API key: expected 200, got {got(ex)}"
    assert "result" in p.mcp_response(ex), f"tools/call with the API key: expected a result, got {got(ex)}"


@check("AUTH-KEY-002", scenarios=["access.invoke"])
def invoke_without_credential(rec: Recording):
    """Sends invoke without Authorization; refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, steps.NO_CREDENTIAL, code="unauthenticated")


@check("AUTH-KEY-003", scenarios=["access.agui"])
def agui_without_credential(rec: Recording):
    """Sends AG-UI without Authorization; refused before the stream with a 4xx and `unauthenticated`."""
    refused_4xx(rec, steps.NO_CREDENTIAL, code="unauthenticated")


def unknown_key_refused(rec: Recording):
    """Sends an unknown `<svc>_live_…` key; refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, steps.UNKNOWN_KEY, code="unauthenticated")


def revoked_key_refused(rec: Recording):
    """Sends the revoked key (--revoked-key); refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, steps.REVOKED_KEY, code="unauthenticated")


def other_scheme_refused(rec: Recording):
    """Sends the API key under Basic, and a bare `Bearer`; both refused with a 4xx and `unauthenticated`."""
    for label in (steps.BASIC_SCHEME, steps.EMPTY_BEARER):
        refused_4xx(rec, label, code="unauthenticated")


def challenge_on_401(rec: Recording):
    """Every 401 of the invoke/AG-UI credential refusals carries a WWW-Authenticate header (RFC 9110 §11.6.1)."""
    seen = answered_401(rec, steps.INVOKE_AGUI_CREDENTIALS)
    if not seen:
        raise NotAssessed("no 401 was observed (the spec leaves the invoke/AG-UI status open)")
    for label, ex in seen:
        assert ex.headers is not None and ex.headers.get("www-authenticate"), \
            f"{rec.scenario} sent {sent(label)}; the 401 has no WWW-Authenticate header (RFC 9110 §11.6.1)"


def token_bound_to_its_agent(rec: Recording):
    """Sends the access token to --other-agent-id; refused with a 4xx, so that agent never runs."""
    refused_4xx(rec, steps.OTHER_AGENT_TOKEN)


register(unknown_key_refused, ("AUTH-KEY-004",), BOTH)
register(revoked_key_refused, ("AUTH-KEY-005",), BOTH)
register(other_scheme_refused, ("AUTH-KEY-006",), BOTH)
register(challenge_on_401, ("AUTH-KEY-007",), BOTH)
register(token_bound_to_its_agent, ("AUTH-BIND-001",), BOTH)


# -- credential forms -------------------------------------------------------------------------
_LIVE = re.compile(r"^(.+?)_live_(.+)$", re.S)
_OAT = re.compile(r"^(.+?)_oat_(.+)$", re.S)


@check("AUTH-KEY-008", scenarios=["access.invoke"])
def api_key_form(rec: Recording):
    """The API key the suite was given has the form `<svc>_live_<opaque>` (checked locally, never printed)."""
    key = rec.target.api_key or ""
    assert _LIVE.match(key), "the --api-key value does not have the form `<svc>_live_<opaque>` (value not shown)"


@check("AUTH-KEY-009", scenarios=["access.mcp"])
def access_token_form(rec: Recording):
    """The access token has the form `<svc>_oat_<opaque>` with the API key's `<svc>` (never printed)."""
    token = rec.target.access_token
    if not token:
        raise NotAssessed(f"needs {rec.target.option_for('access_token')}, which was not given")
    m = _OAT.match(token)
    assert m, "the --access-token value does not have the form `<svc>_oat_<opaque>` (value not shown)"
    live = _LIVE.match(rec.target.api_key or "")
    if live:
        assert live.group(1) == m.group(1), "the access token's `<svc>` prefix differs from the API key's"


# -- MCP credentials --------------------------------------------------------------------------
MCP_401_LABELS = (*steps.MCP_CREDENTIALS, steps.QUERY_KEY, steps.QUERY_TOKEN, steps.BODY_KEY)


@check("AUTH-MCP-001", scenarios=["access.mcp"])
def access_token_accepted(rec: Recording):
    """Sends tools/call with the access token on its own agent; 200 with the plain reply."""
    ex = step(rec, steps.ACCEPTED_TOKEN)
    assert ex.status == 200, f"tools/call with the access token: expected 200, got {got(ex)}"
    msg = p.mcp_response(ex)
    result = msg.get("result")
    assert isinstance(result, dict), f"tools/call with the access token: expected a result, got {got(ex)}"
    reply = rec.facts.get("reply")
    if reply is not None:
        text = p.mcp_text(result)
        assert text == reply, f"tools/call with the access token: expected the reply {reply!r}, got {text[:200]!r}"


@check("AUTH-MCP-002", scenarios=["access.mcp"])
def access_token_other_agent(rec: Recording):
    """Sends tools/call with the access token to --other-agent-id; 404 with JSON-RPC error -32600."""
    mcp_refused(rec, steps.OTHER_AGENT_TOKEN, 404, JSONRPC_INVALID_REQUEST)


def _mcp_401(*labels: str):
    def fn(rec: Recording):
        each(labels, rec, lambda label: mcp_refused(rec, label, 401))
    return fn


MCP_401 = {   # requirement: (steps, check name, what they sent)
    "AUTH-MCP-003": ((steps.NO_CREDENTIAL,), "mcp_no_credential", "no Authorization header"),
    "AUTH-MCP-004": ((steps.EMPTY_BEARER,), "mcp_empty_bearer", "the bare scheme `Bearer` and no credential"),
    "AUTH-MCP-005": ((steps.UNKNOWN_KEY, steps.UNKNOWN_TOKEN), "mcp_unknown_credential",
                     "unknown `<svc>_live_…` and `<svc>_oat_…` credentials"),
    "AUTH-MCP-006": ((steps.REVOKED_KEY,), "mcp_revoked_key", "the revoked key (--revoked-key)"),
    "AUTH-MCP-007": ((steps.EXPIRED_TOKEN,), "mcp_expired_token", "the expired token (--expired-token)"),
    "AUTH-MCP-010": ((steps.QUERY_KEY, steps.QUERY_TOKEN, steps.BODY_KEY), "mcp_credential_outside_header",
                     "a valid credential only in the query string or the JSON body"),
}
rule(lambda req: _mcp_401(*MCP_401[req][0]), over=MCP_401, requirements=lambda req: req, scenarios=["access.mcp"],
     name=lambda req: MCP_401[req][1],
     doc=lambda req: f"Sends tools/call with {MCP_401[req][2]}; HTTP 401 with a JSON-RPC error body.")


def answered_401(rec: Recording, labels) -> list[tuple[str, Exchange]]:
    """(label, exchange) of the steps among `labels` that were sent and answered 401."""
    out = []
    for label in labels:
        try:
            ex = step(rec, label)
        except NotAssessed:
            continue
        if ex.status == 401:
            out.append((label, ex))
    return out


def _401s(rec: Recording) -> list[tuple[str, Exchange]]:
    out = answered_401(rec, MCP_401_LABELS)
    if not out:
        raise NotAssessed("no MCP 401 was observed (AUTH-MCP-003…007 say why)")
    return out


@check("AUTH-MCP-008", scenarios=["access.mcp"])
def mcp_401_challenge(rec: Recording):
    """Every MCP 401 carries `WWW-Authenticate: Bearer resource_metadata="<this agent's metadata URL>",
    scope="agent:invoke"` (parsed by RFC 9110 rules; parameter order, quoting and case of names free)."""
    expected = metadata_url(rec.target)
    extras: set[str] = set()
    notes: set[str] = set()
    for label, ex in _401s(rec):
        what = f"the 401 for {sent(label)}"
        try:
            params = challenge_params(ex)
        except AssertionError as exc:
            raise AssertionError(f"{what}: {exc}") from None
        rm, scope = params.get("resource_metadata"), params.get("scope")
        assert same_url(rm, expected), \
            f"{what}: resource_metadata is {rm!r}, expected {expected!r} (compared after RFC 3986 normalization)"
        notes.add(spelled(rm, expected))
        assert scope == SCOPE, f"{what}: scope is {scope!r}, expected {SCOPE!r}"
        extras |= set(params) - {"resource_metadata", "scope"}
    notes.discard("")
    if extras:
        notes.add(f"extra challenge parameters (allowed): {sorted(extras)}")
    return "; ".join(sorted(notes))


@check("AUTH-MCP-009", scenarios=["access.mcp"])
def mcp_401_code(rec: Recording):
    """Every MCP 401 has a JSON-RPC error body with `error.code` -32600."""
    for label, ex in _401s(rec):
        mcp_refused(rec, label, 401, JSONRPC_INVALID_REQUEST)


# -- agent addressing (GEN-AGENT) -------------------------------------------------------------
def malformed_agent_id(rec: Recording):
    """Sends a valid call to an agentId without `agt_`; refused with a 4xx and the protocol's error body (no run)."""
    if rec.scenario == "access.mcp":
        mcp_refused(rec, steps.MALFORMED_AGENT, None)
    else:
        refused_4xx(rec, steps.MALFORMED_AGENT, error_body=True)


register(malformed_agent_id, ("GEN-AGENT-001",), {**BOTH, "mcp": "access.mcp"})


@check("GEN-AGENT-002", scenarios=["access.invoke"])
def invoke_undeployed_agent(rec: Recording):
    """Sends a valid invoke to --undeployed-agent-id; 404 with the error body."""
    refused_4xx(rec, steps.UNDEPLOYED_AGENT, status=404, error_body=True)


@check("GEN-AGENT-003", scenarios=["access.agui"])
def agui_undeployed_agent(rec: Recording):
    """Sends a valid AG-UI run to --undeployed-agent-id; 404 with the error body, not a stream."""
    ex = refused_4xx(rec, steps.UNDEPLOYED_AGENT, status=404, error_body=True)
    assert ex.stream is None, "the 404 for the undeployed agent came as an event stream"


@check("GEN-AGENT-004", scenarios=["access.mcp"])
def mcp_undeployed_agent(rec: Recording):
    """Sends a valid tools/call to --undeployed-agent-id; 404 with a JSON-RPC error body."""
    mcp_refused(rec, steps.UNDEPLOYED_AGENT, 404)


def unknown_agent_not_found(rec: Recording):
    """Sends a valid call to a nonexistent `agt_…` id; refused with a 4xx and `error.code` `not_found`."""
    refused_4xx(rec, steps.UNKNOWN_AGENT, code="not_found")


def unknown_agent_404(rec: Recording):
    """The `not_found` refusal of a nonexistent `agt_…` id has HTTP status 404."""
    ex = step(rec, steps.UNKNOWN_AGENT)
    assert ex.status == 404, f"{rec.scenario} sent {sent(steps.UNKNOWN_AGENT)}; expected 404, got {got(ex)}"


register(unknown_agent_not_found, ("GEN-AGENT-005",), BOTH)
register(unknown_agent_404, ("GEN-AGENT-006",), BOTH)
