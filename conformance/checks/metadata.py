"""Sign-in metadata (RFC 9728 protected resource metadata of the agent's MCP endpoint)."""
from __future__ import annotations

import email.utils
import json
from typing import Any
from urllib.parse import urlsplit

from conformance import schemas
from conformance.checks.auth import SCOPE, challenge_params, got, step
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.wire.http import Exchange

CACHE_SECONDS = 30
DOC = ["metadata.document"]


def mcp_url(target, agent_id: str | None = None) -> str:
    return f"{target.base_url.rstrip('/')}/v1/agents/{agent_id or target.agent_id}/mcp"


def document(ex: Exchange, what: str = "GET of the metadata without a credential") -> dict[str, Any]:
    assert ex.status == 200, f"{what}: expected 200, got {got(ex)}"
    doc = ex.json()
    assert isinstance(doc, dict), f"{what}: expected a JSON object, got {type(doc).__name__}: {got(ex)}"
    return doc


def field_of(rec: Recording, name: str) -> Any:
    doc = document(rec.get("doc"))
    assert name in doc, f"the metadata has no `{name}` member: {json.dumps(doc)[:300]}"
    return doc[name]


def string_list(value: Any, name: str) -> list[str]:
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), \
        f"`{name}` must be an array of strings, got {json.dumps(value)[:200]}"
    return value


@check("META-DOC-001", scenarios=DOC)
def no_credential_needed(rec: Recording):
    """GETs the metadata without Authorization; 200 with a JSON object."""
    document(rec.get("doc"))


@check("META-DOC-002", scenarios=DOC)
def resource_is_mcp_url(rec: Recording):
    """`resource` equals `{base_url}/v1/agents/<agent_id>/mcp` of the addressed agent."""
    expected = mcp_url(rec.target)
    value = field_of(rec, "resource")
    assert value == expected, f"`resource` is {value!r}, expected {expected!r}"


@check("META-DOC-003", scenarios=DOC)
def one_authorization_server(rec: Recording):
    """`authorization_servers` is an array of exactly one string."""
    servers = string_list(field_of(rec, "authorization_servers"), "authorization_servers")
    assert len(servers) == 1, f"`authorization_servers` has {len(servers)} entries, expected exactly one: {servers}"


@check("META-DOC-004", scenarios=DOC)
def authorization_server_is_auth_url(rec: Recording):
    """The one `authorization_servers` entry equals --auth-url."""
    if not rec.target.auth_url:
        raise NotAssessed(f"needs {rec.target.option_for('auth_url')}, which was not given")
    servers = string_list(field_of(rec, "authorization_servers"), "authorization_servers")
    assert servers == [rec.target.auth_url], \
        f"`authorization_servers` is {servers}, expected [{rec.target.auth_url!r}] (--auth-url)"


@check("META-DOC-005", scenarios=DOC)
def scope_listed(rec: Recording):
    """`scopes_supported` is an array of strings containing `agent:invoke`."""
    scopes = string_list(field_of(rec, "scopes_supported"), "scopes_supported")
    assert SCOPE in scopes, f"`scopes_supported` is {scopes}, which lacks {SCOPE!r}"


@check("META-DOC-006", scenarios=DOC)
def only_scope(rec: Recording):
    """`scopes_supported` is exactly `["agent:invoke"]`."""
    scopes = field_of(rec, "scopes_supported")
    assert scopes == [SCOPE], f"`scopes_supported` is {json.dumps(scopes)[:200]}, expected [{SCOPE!r}]"


@check("META-DOC-007", scenarios=DOC)
def header_only(rec: Recording):
    """`bearer_methods_supported` is exactly `["header"]`."""
    methods = field_of(rec, "bearer_methods_supported")
    assert methods == ["header"], f"`bearer_methods_supported` is {json.dumps(methods)[:200]}, expected [\"header\"]"


def cache_directives(ex: Exchange) -> dict[str, str | None]:
    lines = ex.headers.get_list("cache-control") if ex.headers is not None else []
    out: dict[str, str | None] = {}
    for part in ",".join(lines).split(","):
        name, eq, value = part.strip().partition("=")
        if name:
            out[name.strip().lower()] = value.strip().strip('"') if eq else None
    return out


def freshness(ex: Exchange) -> tuple[int | None, str]:
    """The freshness lifetime the response's HTTP caching headers give (RFC 9111 §4.2.1), and how it was found."""
    cc = cache_directives(ex)
    for blocker in ("no-store", "no-cache"):
        if blocker in cc:
            return 0, f"Cache-Control {blocker}"
    for name in ("max-age", "s-maxage"):
        if name in cc:
            value = cc[name] or ""
            return (int(value) if value.isdigit() else None), f"Cache-Control {name}={value}"
    expires, date = ex.header("expires"), ex.header("date")
    if expires and date:
        try:
            e, d = email.utils.parsedate_to_datetime(expires), email.utils.parsedate_to_datetime(date)
        except (TypeError, ValueError):
            return None, f"unparsable Expires {expires!r} / Date {date!r}"
        return round((e - d).total_seconds()), f"Expires − Date ({expires} − {date})"
    return None, "no Cache-Control max-age/s-maxage and no Expires with Date"


@check("META-DOC-008", scenarios=DOC)
def cached_30_seconds(rec: Recording):
    """The 200's HTTP caching headers give a 30 s lifetime: `max-age=30` (or `s-maxage=30`, or Expires − Date = 30 s)."""
    ex = rec.get("doc")
    document(ex)
    lifetime, how = freshness(ex)
    if lifetime is not None and how.startswith("Expires"):
        assert abs(lifetime - CACHE_SECONDS) <= 1, f"{how} gives {lifetime} s, expected {CACHE_SECONDS} s"
        return how
    assert lifetime == CACHE_SECONDS, f"the caching headers give no 30 s lifetime: {how}"
    return how


@check("META-DOC-009", scenarios=DOC)
def credential_ignored(rec: Recording):
    """GETs the metadata with no credential, the API key and an unknown bearer; 200 with the same document each time."""
    base = document(rec.get("doc"))
    for label, what in (("doc-key", "with the API key"), ("doc-unknown-bearer", "with an unknown bearer credential")):
        other = document(rec.get(label), f"GET of the metadata {what}")
        assert other == base, f"GET of the metadata {what} gave another document: {json.dumps(other)[:300]}"


@check("META-DOC-010", scenarios=["metadata.challenge"])
def challenge_leads_to_document(rec: Recording):
    """Follows `resource_metadata` of an MCP 401; 200 with the document whose `resource` is that MCP URL."""
    ex = rec.get("challenge")
    assert ex.status == 401, f"tools/call without a credential: expected 401, got {got(ex)}"
    url = challenge_params(ex).get("resource_metadata")
    assert isinstance(url, str), "the 401's Bearer challenge has no resource_metadata parameter"
    base = rec.target.base_url.rstrip("/") + "/"
    assert url.startswith(base), f"resource_metadata {url!r} is not under the base URL {base!r}"
    doc = document(rec.get("followed"), f"GET {url}")
    expected = mcp_url(rec.target)
    assert doc.get("resource") == expected, \
        f"the document at resource_metadata has `resource` {doc.get('resource')!r}, expected {expected!r}"


@check("META-STATE-001", scenarios=DOC)
def undeployed_agent_404(rec: Recording):
    """GETs the metadata of --undeployed-agent-id; 404."""
    ex = step(rec, "undeployed-agent")
    assert ex.status == 404, f"metadata of the undeployed agent: expected 404, got {got(ex)}"


@check("META-STATE-002", scenarios=DOC)
def unknown_agent_404(rec: Recording):
    """GETs the metadata of a well-formed agent id that never existed; 404."""
    ex = rec.get("unknown-agent")
    assert ex.status == 404, f"metadata of a nonexistent agt_ id: expected 404, got {got(ex)}"


@check("META-STATE-003", scenarios=DOC)
def other_refusals_error_body(rec: Recording):
    """Any answer of the metadata endpoint other than 200 and 404 has the error body {error: {code, message, requestId}}."""
    others = [ex for ex in rec.exchanges if ex.status is not None and ex.status not in (200, 404)]
    if not others:
        raise NotAssessed("the metadata endpoint gave no refusal other than 404 (none is provoked on purpose)")
    for ex in others:
        schemas.check("error-body", ex.json(), f"the {ex.status} answer to {ex.label}")


@check("META-COMPAT-001", scenarios=DOC)
def content_type_json(rec: Recording):
    """The 200's Content-Type is `application/json` (RFC 9728 §3.2)."""
    ex = rec.get("doc")
    document(ex)
    assert ex.content_type == "application/json", \
        f"Content-Type is {ex.header('content-type')!r}, expected application/json"


@check("META-COMPAT-002", scenarios=DOC)
def upstream_model_accepts(rec: Recording):
    """Every `authorization_servers` entry is an absolute https URL, and the official MCP client's
    ProtectedResourceMetadata model accepts the document."""
    doc = document(rec.get("doc"))
    for url in string_list(doc.get("authorization_servers"), "authorization_servers"):
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc, f"authorization server {url!r} is not an absolute https URL"
    from mcp.shared.auth import ProtectedResourceMetadata
    from pydantic import ValidationError
    try:
        ProtectedResourceMetadata.model_validate(doc)
    except ValidationError as exc:
        raise AssertionError(f"mcp.shared.auth.ProtectedResourceMetadata rejects the document: {exc}"[:600]) from None

