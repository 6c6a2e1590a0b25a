"""Broken servers for the sign-in metadata (META-*): one deviation each."""
from __future__ import annotations

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken
from tests.selftest.zoo_mcp import agent_of, hdr, reroute_agent


def on_document(app, fn):
    """fn(document) mutates the metadata JSON object of a 200."""
    def rewrite(obj, scope, status, headers):
        if status == 200 and isinstance(obj, dict):
            fn(obj)
        return obj
    return t.rewrite_json_response(app, rewrite, where="metadata")


def on_metadata_headers(app, fn):
    return t.rewrite_headers(app, lambda h, s, status: fn(h) if status == 200 else h, where="metadata")


@broken("META-DOC-001", name="META-DOC-001-credential-required")
def credential_required(app, facts):
    """The metadata needs a credential: without Authorization it answers 401."""
    return t.respond(app, 401, {"error": {"code": "unauthenticated", "message": "no", "requestId": "req_zoo"}},
                     where=lambda s: t.path_kind(s.get("path", "")) == "metadata" and hdr(s, "authorization") is None)


@broken("META-DOC-002", name="META-DOC-002-resource-trailing-slash")
def resource_slash(app, facts):
    """`resource` ends with an extra `/`."""
    return on_document(app, lambda d: d.update(resource=d["resource"] + "/"))


@broken("META-DOC-003", name="META-DOC-003-two-servers")
def two_servers(app, facts):
    """`authorization_servers` lists a second server."""
    return on_document(app, lambda d: d["authorization_servers"].append("https://login.example.com"))


@broken("META-DOC-004", name="META-DOC-004-other-server")
def other_server(app, facts):
    """The one authorization server is not the agent's (`--auth-url`)."""
    return on_document(app, lambda d: d.update(authorization_servers=["https://login.example.com"]))


@broken("META-DOC-005", name="META-DOC-005-scope-agent")
def scope_agent(app, facts):
    """`scopes_supported` is ["agent"]."""
    return on_document(app, lambda d: d.update(scopes_supported=["agent"]))


@broken("META-DOC-006", name="META-DOC-006-extra-scope")
def extra_scope(app, facts):
    """`scopes_supported` lists `offline_access` too."""
    return on_document(app, lambda d: d["scopes_supported"].append("offline_access"))


@broken("META-DOC-007", name="META-DOC-007-body-method")
def body_method(app, facts):
    """`bearer_methods_supported` also lists `body`."""
    return on_document(app, lambda d: d["bearer_methods_supported"].append("body"))


@broken("META-DOC-008", name="META-DOC-008-no-cache-control")
def no_cache_control(app, facts):
    """The document carries no caching header."""
    return on_metadata_headers(app, lambda h: t.without(h, b"cache-control"))


@broken("META-DOC-008", name="META-DOC-008-max-age-300")
def max_age_300(app, facts):
    """The document is cacheable for 300 s."""
    return on_metadata_headers(app, lambda h: t.with_header(h, b"cache-control", b"public, max-age=300"))


@broken("META-DOC-011", name="META-DOC-011-no-store")
def no_store(app, facts):
    """The document is served with `Cache-Control: no-store` (no cache may keep it at all)."""
    return on_metadata_headers(app, lambda h: t.with_header(h, b"cache-control", b"no-store"))


@broken("META-DOC-011", name="META-DOC-011-max-age-5")
def max_age_5(app, facts):
    """The document is cacheable for 5 s only."""
    return on_metadata_headers(app, lambda h: t.with_header(h, b"cache-control", b"public, max-age=5"))


@broken("META-DOC-009", name="META-DOC-009-bad-bearer-refused")
def bad_bearer_refused(app, facts):
    """A GET with an unknown bearer credential is refused with 401."""
    known = {facts["api_key"], facts["access_token"]}
    return t.respond(app, 401, {"error": {"code": "unauthenticated", "message": "no", "requestId": "req_zoo"}},
                     where=lambda s: t.path_kind(s.get("path", "")) == "metadata"
                     and (hdr(s, "authorization") or "").lower().startswith("bearer ")
                     and hdr(s, "authorization")[7:] not in known)


@broken("META-DOC-010", name="META-DOC-010-challenge-points-to-root")
def challenge_root(app, facts):
    """The 401's resource_metadata points to the root well-known URL, which answers 404."""
    url = f"{facts['base_url']}/.well-known/oauth-protected-resource"

    def change(headers, scope, status):
        if status != 401:
            return headers
        value = f'Bearer resource_metadata="{url}", scope="agent:invoke"'.encode()
        return t.with_header(headers, b"www-authenticate", value)
    return t.rewrite_headers(app, change, where="mcp")


@broken("META-STATE-001", name="META-STATE-001-undeployed-served")
def undeployed_served(app, facts):
    """The undeployed agent's metadata is served (from the deployed agent)."""
    return reroute_agent(app, lambda agent: facts["agent_id"] if agent == facts["undeployed_agent_id"] else None,
                         where="metadata")


@broken("META-STATE-002", name="META-STATE-002-unknown-agent-400")
def unknown_agent_400(app, facts):
    """A nonexistent agent's metadata answers 400 with the error body."""
    known = {facts["agent_id"], facts["other_agent_id"], facts["undeployed_agent_id"]}
    return t.respond(app, 400, {"error": {"code": "invalid_request", "message": "no", "requestId": "req_zoo"}},
                     where=lambda s: t.path_kind(s.get("path", "")) == "metadata" and agent_of(s) not in known
                     and agent_of(s).startswith("agt_"))


@broken("META-STATE-003", name="META-STATE-003-plain-text-400")
def plain_text_400(app, facts):
    """A malformed agent id's metadata is refused with 400 and a plain-text body."""
    return t.respond(app, 400, b"bad agent id", headers=[(b"content-type", b"text/plain")],
                     where=lambda s: t.path_kind(s.get("path", "")) == "metadata" and not agent_of(s).startswith("agt_"))


@broken("META-COMPAT-001", name="META-COMPAT-001-text-json")
def text_json(app, facts):
    """The document is served as `text/json`."""
    return on_metadata_headers(app, lambda h: t.with_header(h, b"content-type", b"text/json"))


@broken("META-COMPAT-002", name="META-COMPAT-002-http-server")
def http_server(app, facts):
    """The authorization server is an http:// URL."""
    return on_document(app, lambda d: d.update(authorization_servers=[d["authorization_servers"][0].replace(
        "https://", "http://", 1)]))


@broken("META-STATE-003", name="META-STATE-003-post-405-plain-text")
def post_405_plain_text(app, facts):
    """A POST to the metadata URL is refused with 405 and a plain-text body (a framework default), not the error body."""
    return t.respond(app, 405, b"Method Not Allowed", headers=[(b"content-type", b"text/plain"), (b"allow", b"GET")],
                     where=lambda s: t.path_kind(s.get("path", "")) == "metadata" and s.get("method") == "POST")
