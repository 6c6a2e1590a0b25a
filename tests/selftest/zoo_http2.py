"""Broken servers whose deviation shows over HTTP/2 alone: correct over HTTP/1.1, wrong in exactly one way on the
requests that came over HTTP/2 (a load balancer or stack that treats the versions apart does this).

The class, not one example: `over_http2_only` turns any deviation of the zoo into its HTTP/2-only twin, and the
servers below take one of each kind the versions can differ in: delivery (a stream buffered until its end), what a
stream carries (its comments), a header, the media type, the status, a value built from the request's address
(HTTP/2 has `:authority`, not `Host`), a protocol behaviour (the progress stream), and how a request's headers
are read: selection by Accept, a Content-Type parameter, a refusal's error body, a header looked up by its exact
spelling (HTTP/2 sends every name in lower case). Each serves HTTP/2 and HTTP/1.1 by ALPN (on Hypercorn);
`test_zoo.py` catches each on its requirement, `test_zoo_http2.py` proves the other way (the same server offering
only HTTP/1.1 passes) and that a default run reports each as one root, the rest blocked by it.
"""
from __future__ import annotations

from typing import Any, Callable

from tests.selftest import asgi_tools as t
from tests.selftest import zoo_agui, zoo_auth, zoo_inputs, zoo_invoke, zoo_mcp
from tests.selftest.zoo import broken

HTTP2 = {"http2": True}


def over_http2_only(wrap: Callable[[Any, dict], Any]) -> Callable[[Any, dict], Any]:
    """The deviation `wrap(app, facts)` makes, on the requests that came over HTTP/2 alone (ASGI's
    `scope["http_version"]` is "2"); every other request reaches the correct app."""
    def gated(app, facts):
        deviant = wrap(app, facts)

        async def asgi(scope, receive, send):
            over_h2 = scope.get("type") == "http" and scope.get("http_version") == "2"
            await (deviant if over_h2 else app)(scope, receive, send)
        return asgi
    gated.__doc__ = wrap.__doc__
    return gated


def buffered(app, where: t.Where):
    """Every body of the matched answers held back until it is complete, then sent at once (what a proxy that
    buffers does): the bytes are the same, the times are not."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, where):
            return await app(scope, receive, send)
        held: list[bytes] = []

        async def hold(message):
            if message["type"] != "http.response.body":
                return await send(message)
            held.append(message.get("body", b""))
            if not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"".join(held), "more_body": False})
        await app(scope, receive, hold)
    return middleware


@broken("INV-STREAM-009", name="INV-STREAM-009-http2-stream-buffered", config=HTTP2)
def stream_buffered(app, facts):
    """Over HTTP/2, the invoke stream is held back until the run ends (delivery differs)."""
    return over_http2_only(lambda app, facts: buffered(app, "invoke"))(app, facts)


@broken("AGUI-PING-001", name="AGUI-PING-001-http2-never-pings", config=HTTP2)
def never_pings(app, facts):
    """Over HTTP/2, the AG-UI stream drops its `: ping` comments (what a stream carries differs)."""
    return over_http2_only(zoo_agui.never_pings)(app, facts)


@broken("AUTH-MCP-008", name="AUTH-MCP-008-http2-no-www-authenticate", config=HTTP2)
def no_challenge(app, facts):
    """Over HTTP/2, MCP's 401 loses its WWW-Authenticate header (a header differs)."""
    return over_http2_only(zoo_auth.no_challenge)(app, facts)


@broken("AGUI-FRAME-001", name="AGUI-FRAME-001-http2-text-plain", config=HTTP2)
def text_plain(app, facts):
    """Over HTTP/2, the AG-UI stream is labelled `text/plain` (the media type differs)."""
    return over_http2_only(zoo_agui.text_plain)(app, facts)


@broken("INV-RES-001", name="INV-RES-001-http2-status-201", config=HTTP2)
def status_201(app, facts):
    """Over HTTP/2, invoke's JSON result comes with status 201 instead of 200 (the status differs)."""
    def json_201(headers, scope, status):
        return (201, headers) if status == 200 and t.media_type(headers) == "application/json" else headers
    return over_http2_only(lambda app, facts: t.rewrite_headers(app, json_201, where="invoke"))(app, facts)


@broken("META-DOC-002", name="META-DOC-002-http2-resource-from-host", config=HTTP2)
def resource_from_host(app, facts):
    """Over HTTP/2 (no `Host` header, `:authority` instead), the metadata's `resource` names `localhost` instead
    of the base URL's host (a value built from the request's address differs)."""
    host = facts["base_url"].split("://", 1)[1].split(":", 1)[0]

    def rewrite(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("resource"), str):
            obj["resource"] = obj["resource"].replace(f"://{host}:", "://localhost:", 1)
        return obj
    return over_http2_only(lambda app, facts: t.rewrite_json_response(app, rewrite, where="metadata"))(app, facts)


@broken("MCP-PROG-001", name="MCP-PROG-001-http2-token-ignored", config=HTTP2)
def token_ignored(app, facts):
    """Over HTTP/2, MCP ignores the progress token and answers one JSON body (a protocol behaviour differs)."""
    return over_http2_only(zoo_mcp.token_ignored)(app, facts)


# -- the rules that read request headers ------------------------------------------------------------------------
@broken("INV-SEL-002", name="INV-SEL-002-http2-accept-ignored", config=HTTP2)
def accept_ignored(app, facts):
    """Over HTTP/2, invoke without `stream` answers JSON whatever Accept says (selection by a header differs)."""
    return over_http2_only(zoo_invoke.accept_ignored)(app, facts)


@broken("INV-RES-001", name="INV-RES-001-http2-content-type-parameter-refused", config=HTTP2)
def content_type_parameter_refused(app, facts):
    """Over HTTP/2, invoke refuses `Content-Type: application/json; charset=utf-8` (415) as a media type it does not
    take (how a request header is parsed differs)."""
    return over_http2_only(lambda app, facts: zoo_inputs.header_swap(
        app, "content-type", lambda v: ";" in v and v.split(";")[0].strip().lower() == "application/json",
        "text/plain", where="invoke"))(app, facts)


@broken("GEN-ERR-001", name="GEN-ERR-001-http2-refusal-without-error-body", config=HTTP2)
def refusal_without_error_body(app, facts):
    """Over HTTP/2, invoke's refusals keep their 4xx and lose their error body (an empty body, as a proxy that
    rewrites error answers per version leaves it)."""
    def empty(raw, scope, status, headers):
        return (status, t.without(headers, "content-type"), b"") if 400 <= status < 500 else raw
    return over_http2_only(lambda app, facts: t.rewrite_body(app, empty, where="invoke"))(app, facts)


@broken("MCP-SESS-005", name="MCP-SESS-005-http2-version-header-by-exact-case", config=HTTP2)
def version_header_by_exact_case(app, facts):
    """MCP-Protocol-Version looked up by its exact spelling: found over HTTP/1.1, where the suite sends it so, never
    over HTTP/2, where every header name is lower case; each 2026-07-28 call over HTTP/2 (tools/list first, the
    protocol's basic call) is refused as if it had none."""
    def unseen(headers, scope):
        return t.without(headers, "mcp-protocol-version")
    return over_http2_only(lambda app, facts: t.rewrite_request_headers(app, unseen, where="mcp"))(app, facts)


@broken("AUTH-KEY-001", name="AUTH-KEY-001-http2-authorization-dropped", config=HTTP2)
def authorization_dropped(app, facts):
    """Over HTTP/2, every request reaches the service without its Authorization header (a proxy that forwards the
    header on one version only): the API key is refused on every protocol there."""
    def dropped(headers, scope):
        return t.without(headers, "authorization")
    return over_http2_only(lambda app, facts: t.rewrite_request_headers(app, dropped))(app, facts)
