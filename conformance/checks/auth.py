"""Authentication and agent addressing: credentials accepted and refused on invoke, AG-UI and MCP, the MCP 401
challenge (parsed by RFC 9110 rules in `conformance.vocab.challenges`, not compared as a string), agent-bound
tokens, and agentId handling.
"""
from __future__ import annotations

import re

from conformance.engine import Recording
from conformance.outcomes import Deviation, NotAssessed, judge_all, on, precondition
from conformance.registry import check, rule
from conformance.vocab import protocols as p, requests as rq
from conformance.vocab.steps import access as steps, mcp as mcp_steps
from conformance.vocab.challenges import challenge_params, metadata_url, same_url, spelled
from conformance.vocab.constants import JSONRPC_INVALID_REQUEST, SCOPE
from conformance.vocab.readers import error_body, error_code, got, is_4xx, step
from conformance.vocab.refusals import (each, mcp_refused, not_refused_as, refused_4xx, step_sent as sent,
                                       valid_credential_refused)
from conformance.wire.exchange import Exchange


def register(fn, reqs: tuple[str, ...], scenarios_by_name: dict[str, str]) -> None:
    """One check per protocol scenario (so --protocols keeps the ones it can), same rule: `<fn>_<protocol>`."""
    rule(lambda suffix: fn, over=scenarios_by_name, requirements=reqs, scenarios=lambda suffix: [scenarios_by_name[suffix]],
         name=lambda suffix: f"{fn.__name__}_{suffix}")


BOTH = {"invoke": "access.invoke", "agui": "access.agui"}


def answers_of(rec: Recording, labels) -> list[Exchange]:
    """The exchanges of the steps among `labels` that were sent (a skipped or unreached step has none)."""
    out = []
    for label in labels:
        try:
            out.append(step(rec, label))
        except NotAssessed:
            continue
    return out


# -- API keys on invoke and AG-UI -------------------------------------------------------------
def api_key_accepted(rec: Recording):
    """Sends the plain prompt with `Authorization: Bearer <--api-key>`; the call is accepted: 200, the run answered
    (the reply's exactness is the protocol's own requirements')."""
    ex = rec.get(steps.ACCEPTED)
    with on(ex):
        assert ex.status == 200, f"{rec.scenario}: the plain prompt with the API key; expected 200, got {got(ex)}"
    return f"accepted: HTTP 200 {ex.header('content-type')}"


register(api_key_accepted, ("AUTH-KEY-001",), BOTH)


def answered_with_result(ex: Exchange, what: str) -> None:
    with on(ex):
        assert ex.status == 200, f"{what} with the API key: expected 200, got {got(ex)}"
        assert "result" in p.mcp_response(ex), f"{what} with the API key: expected a result, got {got(ex)}"


@check("AUTH-KEY-001", scenarios=["mcp.modern"])
def api_key_accepted_mcp(rec: Recording):
    """Sends a 2026-07-28 tools/call with `Authorization: Bearer <--api-key>`; it answers 200 with a result."""
    answered_with_result(rec.get(mcp_steps.CALL), "tools/call")


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
    each((steps.BASIC_SCHEME, steps.EMPTY_BEARER), rec, lambda label: refused_4xx(rec, label, code="unauthenticated"))


def challenge_on_401(rec: Recording):
    """Every 401 of the invoke/AG-UI credential refusals carries a WWW-Authenticate header (RFC 9110 §11.6.1)."""
    seen = answers_401(rec, steps.INVOKE_AGUI_CREDENTIALS)
    if not seen:
        raise NotAssessed("no 401 was observed (the spec leaves the invoke/AG-UI status open)")

    def has_challenge(item: tuple[str, Exchange]) -> None:
        label, ex = item
        assert ex.headers is not None and ex.headers.get("www-authenticate"), \
            f"{rec.scenario} sent {sent(label)}; the 401 has no WWW-Authenticate header (RFC 9110 §11.6.1)"
    return judge_all(seen, has_challenge, exchange=lambda item: item[1])


def token_bound_to_its_agent(rec: Recording):
    """Sends the access token to --other-agent-id; refused with a 4xx, so that agent never runs."""
    refused_4xx(rec, steps.OTHER_AGENT_TOKEN)


REFUSED_STEPS = tuple(label for label in steps.ACCESS_INVOKE if label != steps.ACCEPTED)


def refusals_error_body(rec: Recording):
    """Every credential and addressing step that was refused (answered, not 2xx) is a 4xx whose body is the error
    body: a JSON object whose `error` is an object, sent as `application/json` or a `+json` type. (Whether a step
    was refused at all is its own requirement's; the fields of the body are GEN-ERR-002…005's.)"""
    refused = [ex for ex in answers_of(rec, REFUSED_STEPS) if ex.status is not None and not 200 <= ex.status < 300]
    if not refused:
        raise NotAssessed(f"scenario {rec.scenario} saw no refusal")

    def is_error_body(ex: Exchange) -> None:
        what = f"{rec.scenario} sent {sent(ex.label)}"
        assert is_4xx(ex), f"{what}; a refusal must have a 4xx status, got {got(ex)}"
        error_body(ex, what)
    return judge_all(refused, is_error_body)


register(refusals_error_body, ("GEN-ERR-001",), BOTH)
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
    """The API key the suite was given has the form `<svc>_live_<opaque>` (checked locally, never printed); the
    evidence is the call that carried it."""
    ex = rec.get(steps.ACCEPTED)
    if not _LIVE.match(rec.target.api_key or ""):
        raise Deviation(f"the API key this call carried (--api-key, answered {ex.status}) does not have the form "
                        f"`<svc>_live_<opaque>` (value not shown)", ex)


@check("AUTH-KEY-009", scenarios=["access.mcp"])
def access_token_form(rec: Recording):
    """The access token has the form `<svc>_oat_<opaque>` with the API key's `<svc>` (never printed); the evidence
    is the call that carried it."""
    token = rec.target.access_token
    if not token:
        raise NotAssessed(f"needs {rec.target.option_for('access_token')}, which was not given")
    ex = step(rec, steps.ACCEPTED_TOKEN)
    with on(ex):
        m = _OAT.match(token)
        assert m, f"the access token this call carried (--access-token, answered {ex.status}) does not have the " \
                  f"form `<svc>_oat_<opaque>` (value not shown)"
        live = _LIVE.match(rec.target.api_key or "")
        if live:
            assert live.group(1) == m.group(1), "the access token's `<svc>` prefix differs from the API key's"


# -- MCP credentials --------------------------------------------------------------------------
MCP_401_LABELS = (*steps.MCP_CREDENTIALS, steps.QUERY_KEY, steps.QUERY_TOKEN, steps.BODY_KEY)


@check("AUTH-MCP-001", scenarios=["access.mcp"])
def access_token_accepted(rec: Recording):
    """Sends a request with the access token on its own agent (tools/call, server/discover or tools/list, by seed);
    200 with a result (a tools/call's with the plain reply)."""
    ex = step(rec, steps.ACCEPTED_TOKEN)
    method = rq.rpc_method(ex)
    with on(ex):
        assert ex.status == 200, f"{method} with the access token: expected 200, got {got(ex)}"
        result = p.mcp_response(ex).get("result")
        assert isinstance(result, dict), f"{method} with the access token: expected a result, got {got(ex)}"
        reply = rec.facts.get("reply")
        if reply is not None and method == "tools/call":
            text = p.mcp_text(result)
            if text != reply:   # the call was accepted: how its text reads is MCP-TOOL-002's (the reply exactly)
                raise precondition("MCP-TOOL-002", ex, f"tools/call with the access token: expected the reply "
                                                       f"{reply!r}, got {text[:200]!r}")


@check("AUTH-MCP-002", scenarios=["access.mcp"])
def access_token_other_agent(rec: Recording):
    """Sends tools/call with the access token to --other-agent-id; 404 with JSON-RPC error -32600."""
    mcp_refused(rec, steps.OTHER_AGENT_TOKEN, 404, JSONRPC_INVALID_REQUEST)


OUTSIDE_HEADER = (steps.QUERY_KEY, steps.QUERY_TOKEN, steps.BODY_KEY)


def refused_401(rec: Recording, label: str) -> None:
    """The step answered HTTP 401 (the body is MCP-ERR-001's and AUTH-MCP-009's). A request that carries no
    Authorization header (a credential only in the query or the body) and is refused with another 4xx breaks
    AUTH-MCP-003 first: no header, 401."""
    ex = step(rec, label)
    what = f"{rec.scenario} sent {sent(label)}"
    if ex.status == 401:
        return
    if label in OUTSIDE_HEADER and is_4xx(ex):
        raise precondition("AUTH-MCP-003", ex, f"{what}; a tools/call without an Authorization header must answer "
                                               f"401, got {got(ex)}")
    raise not_refused_as(ex, what, "HTTP 401", rec)


def _mcp_401(*labels: str):
    def fn(rec: Recording):
        each(labels, rec, lambda label: refused_401(rec, label))
    return fn


MCP_401 = {   # requirement: (steps, check name, what they sent)
    "AUTH-MCP-003": ((steps.NO_CREDENTIAL,), "mcp_no_credential", "no Authorization header"),
    "AUTH-MCP-004": ((steps.EMPTY_BEARER,), "mcp_empty_bearer", "the bare scheme `Bearer` and no credential"),
    "AUTH-MCP-005": ((steps.UNKNOWN_KEY, steps.UNKNOWN_TOKEN), "mcp_unknown_credential",
                     "unknown `<svc>_live_…` and `<svc>_oat_…` credentials"),
    "AUTH-MCP-006": ((steps.REVOKED_KEY,), "mcp_revoked_key", "the revoked key (--revoked-key)"),
    "AUTH-MCP-007": ((steps.EXPIRED_TOKEN,), "mcp_expired_token", "the expired token (--expired-token)"),
    "AUTH-MCP-010": ((steps.QUERY_KEY, steps.QUERY_TOKEN, steps.BODY_KEY), "mcp_credential_outside_header",
                     "a valid credential only in the query string, or in the JSON body and a cookie"),
}
rule(lambda req: _mcp_401(*MCP_401[req][0]), over=MCP_401, requirements=lambda req: req, scenarios=["access.mcp"],
     name=lambda req: MCP_401[req][1],
     doc=lambda req: f"Sends tools/call with {MCP_401[req][2]}; HTTP 401.")


def answers_401(rec: Recording, labels) -> list[tuple[str, Exchange]]:
    """(label, exchange) of the steps among `labels` that were sent and answered 401."""
    return [(ex.label, ex) for ex in answers_of(rec, labels) if ex.status == 401]


def _401s(rec: Recording) -> list[tuple[str, Exchange]]:
    out = answers_401(rec, MCP_401_LABELS)
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

    def challenge_names_metadata(item: tuple[str, Exchange]) -> None:
        label, ex = item
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
        extras.update(set(params) - {"resource_metadata", "scope"})

    notes.add(judge_all(_401s(rec), challenge_names_metadata, exchange=lambda item: item[1]) or "")
    notes.discard("")
    if extras:
        notes.add(f"extra challenge parameters (allowed): {sorted(extras)}")
    return "; ".join(sorted(notes))


@check("AUTH-MCP-009", scenarios=["access.mcp"])
def mcp_401_code(rec: Recording):
    """Every MCP 401 has a JSON-RPC error body with `error.code` -32600."""
    return judge_all(_401s(rec), lambda item: mcp_refused(rec, item[0], 401, JSONRPC_INVALID_REQUEST),
                     exchange=lambda item: item[1])


# -- agent addressing (GEN-AGENT) -------------------------------------------------------------
def malformed_agent_id(rec: Recording):
    """Sends a valid call to an agentId without `agt_`; refused with a 4xx and the protocol's error body (no run)."""
    if rec.base_scenario == "access.mcp":
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
    """Sends a valid AG-UI run to --undeployed-agent-id; 404 with the error body, not a stream (an AG-UI refusal
    sent as a stream is AGUI-ERR-005's)."""
    refused_4xx(rec, steps.UNDEPLOYED_AGENT, status=404, error_body=True)


@check("GEN-AGENT-004", scenarios=["access.mcp"])
def mcp_undeployed_agent(rec: Recording):
    """Sends a valid tools/call to --undeployed-agent-id; 404 with a JSON-RPC error body."""
    mcp_refused(rec, steps.UNDEPLOYED_AGENT, 404)


def unknown_agent_not_found(rec: Recording):
    """Sends a valid call to a nonexistent `agt_…` id; refused with a 4xx and `error.code` `not_found`."""
    refused_4xx(rec, steps.UNKNOWN_AGENT, code="not_found")


def unknown_agent_404(rec: Recording):
    """The `not_found` refusal of a nonexistent `agt_…` id has HTTP status 404. Without a `not_found` refusal (the
    call ran, or another code) there is no such refusal to judge: GEN-AGENT-005 says so."""
    ex = step(rec, steps.UNKNOWN_AGENT)
    what = f"{rec.scenario} sent {sent(steps.UNKNOWN_AGENT)}"
    with on(ex):
        if ex.status == 404:
            return
        valid_credential_refused(ex, what, rec)
        if not is_4xx(ex):
            not_refused = not_refused_as(ex, what, "a 404 refusal", rec)
            if ex.status is None:
                raise not_refused
            raise precondition("GEN-AGENT-005", ex, str(not_refused))
        code = error_code(ex, what)
        if code != "not_found":
            raise precondition("GEN-AGENT-005", ex, f"{what}; expected the `not_found` refusal, got error.code "
                                                    f"{code!r}: {got(ex)}")
        raise AssertionError(f"{what}; the `not_found` refusal should be 404, got {got(ex)}")


register(unknown_agent_not_found, ("GEN-AGENT-005",), BOTH)
register(unknown_agent_404, ("GEN-AGENT-006",), BOTH)
