"""Broken servers for authentication (AUTH-*) and agent addressing (GEN-AGENT-*): one deviation each."""
from __future__ import annotations

import base64
import secrets
from urllib.parse import parse_qs

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken
from tests.selftest.zoo_mcp import agent_of, bearer_of, hdr, on_errors, reroute_agent, swap_bearer

INVOKE_AGUI = ("invoke", "agui")


def known(facts) -> set[str]:
    return {facts[k] for k in ("api_key", "access_token", "revoked_key", "expired_token") if facts.get(k)}


on_error_body = t.rewrite_error


def on_401(app, fn, where="mcp"):
    """fn(headers) -> headers on every 401 answer."""
    return t.rewrite_headers(app, lambda headers, scope, status: fn(headers) if status == 401 else headers,
                             where=where)


def challenge(facts, **params) -> bytes:
    return ("Bearer " + ", ".join(f'{k}="{v}"' for k, v in params.items())).encode()


def metadata_url(facts, agent_id) -> str:
    return f"{facts['base_url']}/.well-known/oauth-protected-resource/v1/agents/{agent_id}/mcp"


# -- API keys on invoke and AG-UI -------------------------------------------------------------
@broken("AUTH-KEY-001", name="AUTH-KEY-001-invoke-rejects-api-keys")
def invoke_rejects_keys(app, facts):
    """Invoke refuses every API key with 401 unauthenticated."""
    return t.respond(app, 401, {"error": {"code": "unauthenticated", "message": "no", "requestId": "req_zoo"}},
                     where=lambda s: t.path_kind(s.get("path", "")) == "invoke" and bearer_of(s) == facts["api_key"])


@broken("AUTH-KEY-002", name="AUTH-KEY-002-invoke-anonymous-runs")
def invoke_anonymous(app, facts):
    """An invoke without Authorization runs as the organization."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if hdr(s, "authorization") is None else None,
                       where="invoke")


@broken("AUTH-KEY-003", name="AUTH-KEY-003-agui-anonymous-runs")
def agui_anonymous(app, facts):
    """An AG-UI run without Authorization runs as the organization."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if hdr(s, "authorization") is None else None,
                       where="agui")


@broken("AUTH-KEY-004", name="AUTH-KEY-004-any-live-key-accepted")
def any_live_key(app, facts):
    """Invoke and AG-UI accept any key of the `_live_` form (a prefix check only)."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if cred and "_live_" in cred
                       and cred not in known(facts) else None, where=INVOKE_AGUI)


@broken("AUTH-KEY-005", name="AUTH-KEY-005-revoked-key-accepted")
def revoked_accepted(app, facts):
    """Invoke and AG-UI still accept the revoked key."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if cred == facts["revoked_key"] else None,
                       where=INVOKE_AGUI)


@broken("AUTH-KEY-006", name="AUTH-KEY-006-basic-accepted")
def basic_accepted(app, facts):
    """Invoke and AG-UI accept the API key as the password of Basic credentials."""
    def basic(cred, scope):
        auth = hdr(scope, "authorization") or ""
        if not auth.lower().startswith("basic "):
            return None
        try:
            return base64.b64decode(auth[6:]).decode().partition(":")[2] or None
        except ValueError:
            return None
    return swap_bearer(app, basic, where=INVOKE_AGUI)


def issued_in_other_form(app, facts, fact: str, form: str):
    """The service issues the credential in another form: facts carry it, requests map it back."""
    real = facts[fact]
    alias = form + secrets.token_hex(12)
    facts[fact] = alias
    return swap_bearer(app, lambda cred, s: real if cred == alias else None)


@broken("AUTH-KEY-008", name="AUTH-KEY-008-key-without-live-prefix")
def key_form(app, facts):
    """API keys are issued as `key-<hex>`, without `<svc>_live_`."""
    return issued_in_other_form(app, facts, "api_key", "key-")


@broken("AUTH-KEY-009", name="AUTH-KEY-009-token-without-oat-prefix")
def token_form(app, facts):
    """Access tokens are issued as `tok-<hex>`, without `<svc>_oat_`."""
    return issued_in_other_form(app, facts, "access_token", "tok-")


@broken("AUTH-BIND-001", name="AUTH-BIND-001-token-reaches-other-agent")
def token_unbound_on_invoke(app, facts):
    """Invoke and AG-UI let the access token run any agent of the organization."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if cred == facts["access_token"]
                       and agent_of(s) == facts["other_agent_id"] else None, where=INVOKE_AGUI)


# -- MCP credentials --------------------------------------------------------------------------
@broken("AUTH-MCP-001", name="AUTH-MCP-001-token-refused-on-mcp")
def token_refused(app, facts):
    """MCP refuses access tokens (only API keys work)."""
    return swap_bearer(app, lambda cred, s: "zoo_live_refused" if cred == facts["access_token"] else None, where="mcp")


@broken("AUTH-MCP-002", name="AUTH-MCP-002-other-agent-403")
def other_agent_403(app, facts):
    """An access token used on another agent answers 403 instead of 404."""
    return on_errors(app, lambda err, status: 403 if status == 404 else None,
                     where=lambda s: t.path_kind(s.get("path", "")) == "mcp" and bearer_of(s) == facts["access_token"])


@broken("AUTH-MCP-003", name="AUTH-MCP-003-no-credential-403")
def no_credential_403(app, facts):
    """MCP without Authorization answers 403."""
    return t.rewrite_headers(app, lambda h, s, status: (403, h) if status == 401 and hdr(s, "authorization") is None
                             else h, where="mcp")


@broken("AUTH-MCP-004", name="AUTH-MCP-004-empty-bearer-400")
def empty_bearer_400(app, facts):
    """`Authorization: Bearer` with no credential answers 400 (a malformed header)."""
    return t.rewrite_headers(app, lambda h, s, status: (400, h) if status == 401
                             and (hdr(s, "authorization") or "").strip().lower() == "bearer" else h, where="mcp")


@broken("AUTH-MCP-005", name="AUTH-MCP-005-unknown-token-404")
def unknown_token_404(app, facts):
    """An unknown `_oat_` token answers 404 (treated as bound to another agent)."""
    return t.rewrite_headers(app, lambda h, s, status: (404, h) if status == 401 and "_oat_" in (bearer_of(s) or "")
                             else h, where="mcp")


@broken("AUTH-MCP-006", name="AUTH-MCP-006-revoked-key-accepted")
def mcp_revoked_accepted(app, facts):
    """MCP still accepts the revoked key."""
    return swap_bearer(app, lambda cred, s: facts["api_key"] if cred == facts["revoked_key"] else None, where="mcp")


@broken("AUTH-MCP-007", name="AUTH-MCP-007-expired-token-accepted")
def expired_accepted(app, facts):
    """MCP still accepts the expired token."""
    return swap_bearer(app, lambda cred, s: facts["access_token"] if cred == facts["expired_token"] else None,
                       where="mcp")


@broken("AUTH-MCP-008", name="AUTH-MCP-008-no-www-authenticate")
def no_challenge(app, facts):
    """MCP 401s carry no WWW-Authenticate."""
    return on_401(app, lambda h: t.without(h, b"www-authenticate"))


@broken("AUTH-MCP-008", name="AUTH-MCP-008-scope-agent")
def scope_agent(app, facts):
    """The challenge says scope="agent"."""
    return on_401(app, lambda h: t.with_header(h, b"www-authenticate", challenge(
        facts, resource_metadata=metadata_url(facts, facts["agent_id"]), scope="agent")))


@broken("AUTH-MCP-008", name="AUTH-MCP-008-metadata-of-other-agent")
def other_agents_metadata(app, facts):
    """The challenge's resource_metadata names another agent's metadata URL."""
    return on_401(app, lambda h: t.with_header(h, b"www-authenticate", challenge(
        facts, resource_metadata=metadata_url(facts, facts["other_agent_id"]), scope="agent:invoke")))


@broken("AUTH-MCP-008", name="AUTH-MCP-008-basic-scheme")
def basic_challenge(app, facts):
    """The challenge uses the Basic scheme with the right parameters."""
    return on_401(app, lambda h: t.with_header(h, b"www-authenticate", challenge(
        facts, resource_metadata=metadata_url(facts, facts["agent_id"]), scope="agent:invoke").replace(
        b"Bearer", b"Basic")))


@broken("AUTH-MCP-009", name="AUTH-MCP-009-code-32001")
def code_32001(app, facts):
    """MCP 401 bodies carry code -32001 instead of -32600."""
    return on_errors(app, lambda err, status: status == 401 and err.update(code=-32001))


@broken("AUTH-MCP-010", name="AUTH-MCP-010-query-credential-accepted")
def query_accepted(app, facts):
    """MCP accepts a credential in the `access_token` query parameter."""
    def from_query(cred, scope):
        values = parse_qs(scope.get("query_string", b"").decode()).get("access_token")
        return values[0] if values and hdr(scope, "authorization") is None else None
    return swap_bearer(app, from_query, where="mcp")


# -- agent addressing -------------------------------------------------------------------------
@broken("GEN-AGENT-001", name="GEN-AGENT-001-malformed-id-runs-agent")
def malformed_runs(app, facts):
    """An invoke to an agentId without `agt_` runs the organization's default agent."""
    return reroute_agent(app, lambda agent: facts["agent_id"] if not agent.startswith("agt_") else None,
                         where="invoke")


@broken("GEN-AGENT-002", name="GEN-AGENT-002-undeployed-invoke-403")
def undeployed_invoke_403(app, facts):
    """Invoke on the undeployed agent answers 403 instead of 404."""
    return on_error_body(app, lambda err, status: 403 if status == 404 else None,
                         where=lambda s: t.path_kind(s.get("path", "")) == "invoke"
                         and agent_of(s) == facts["undeployed_agent_id"])


@broken("GEN-AGENT-003", name="GEN-AGENT-003-undeployed-agui-runs")
def undeployed_agui_runs(app, facts):
    """AG-UI on the undeployed agent still runs (its last deployed version)."""
    return reroute_agent(app, lambda agent: facts["agent_id"] if agent == facts["undeployed_agent_id"] else None,
                         where="agui")


@broken("GEN-AGENT-004", name="GEN-AGENT-004-undeployed-mcp-403")
def undeployed_mcp_403(app, facts):
    """MCP on the undeployed agent answers 403 instead of 404."""
    return on_errors(app, lambda err, status: 403 if status == 404 else None,
                     where=lambda s: t.path_kind(s.get("path", "")) == "mcp"
                     and agent_of(s) == facts["undeployed_agent_id"])


@broken("GEN-AGENT-005", name="GEN-AGENT-005-agent-not-found-code")
def agent_not_found_code(app, facts):
    """Invoke and AG-UI name an unknown agent `agent_not_found` instead of `not_found`."""
    return on_error_body(app, lambda err, status: err.get("code") == "not_found" and err.update(code="agent_not_found"),
                         where=INVOKE_AGUI)


def _loosely_matched(compare):
    """Invoke and AG-UI take a Bearer credential that `compare(sent, real)` finds close to a known one for it."""
    def wrap(app, facts):
        def fn(headers, scope):
            scheme, _, sent = (t.header(headers, "authorization") or b"").decode("latin-1").partition(" ")
            sent = sent.strip()
            match = next((real for real in known(facts) if sent != real and compare(sent, real)), None)
            if scheme.lower() == "bearer" and match:
                return t.with_header(headers, "authorization", f"Bearer {match}")
            return headers
        return t.rewrite_request_headers(app, fn, where=INVOKE_AGUI)
    return wrap


broken("AUTH-KEY-004", name="AUTH-KEY-004-key-looked-up-by-prefix")(_loosely_matched(
    lambda sent, real: len(sent) >= 17 and sent[:17] == real[:17]))
broken("AUTH-KEY-004", name="AUTH-KEY-004-key-compared-as-far-as-sent")(_loosely_matched(
    lambda sent, real: len(sent) >= 16 and real.startswith(sent)))
broken("AUTH-KEY-004", name="AUTH-KEY-004-key-looked-up-by-suffix")(_loosely_matched(
    lambda sent, real: len(sent) >= 16 and sent[-8:] == real[-8:] and sent.split("_")[0] == real.split("_")[0]))
