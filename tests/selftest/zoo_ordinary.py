"""Broken servers whose fault shows only on what ordinary clients and agents send: a tool name with a dot, a slash or a
colon; a run ending on a tool call; two context entries of one description; a string that reads as a date; a
terminal's colour codes in a reply; a cache validator on a GET; an MCP client's stale session id on every request;
another service prefix on a key; a browser's Accept on a refused request; a client offering both elicitation modes; a
failure with no message; a run with the access token; a reply said before and after a tool call; a browser's reload;
a chat client's message of content parts.
"""
from __future__ import annotations

import hashlib
import re
import time
from datetime import datetime, timedelta
from typing import Any

from conformance.server import agui as ref_agui
from conformance.server.asgi import Request
from conformance.server.refusal import is_session_key
from tests.selftest import asgi_tools as t
from tests.selftest import session_tools as st
from tests.selftest.zoo import broken
from tests.selftest.zoo_agui import on_events, on_request
from tests.selftest.zoo_auth import INVOKE_AGUI
from tests.selftest.zoo_bodies import CAPS
from tests.selftest.zoo_forms import agui_runs, on_tool_results
from tests.selftest.zoo_inputs import FORWARDED
from tests.selftest.zoo_mcp import bearer_of, hdr, meta_of

NOT_IN_FUNCTION_NAMES = re.compile(r"[^a-zA-Z0-9_-]")
ISO_DATE_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?$")
# strip-ansi's pattern (chalk/ansi-regex)
ANSI = re.compile("[\u001B\u009B][\\[\\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\\d/#&.:=?%@~_]+)*|[a-zA-Z\\d]+(?:;[-a-zA-Z\\d/#&.:="
                  "?%@~_]*)*)?\u0007)|(?:(?:\\d{1,4}(?:;\\d{0,4})*)?[\\dA-PR-TZcf-nq-uy=><~]))")
KEY_FORM = re.compile(r"^(.*?)_(live|oat)_(.+)$")
BOTH_MODES = "conformance.zoo.ordinary.both-modes"   # scope key: the MCP client declared form and url elicitation
WHITELABEL = ("<html><body><h1>Whitelabel Error Page</h1><p>This application has no explicit mapping for /error, so "
              "you are seeing this as a fallback.</p><div id='created'>{date}</div><div>There was an unexpected error "
              "(type={reason}, status={status}).</div><div>{message}</div></body></html>")


# -- helpers -------------------------------------------------------------------------------------------------------
def json_net_date(value: Any) -> Any:
    """`value` as Json.NET's default `DateParseHandling.DateTime` writes it back: a string that reads as an ISO 8601
    date-time becomes a DateTime (an offset converted to the server's time zone, UTC) in its round-trip form; anything
    else is unchanged."""
    m = ISO_DATE_TIME.match(value) if isinstance(value, str) else None
    if m is None:
        return value
    try:
        when = datetime(*(int(m.group(i)) for i in range(1, 6)), int(m.group(6) or 0))
    except ValueError:
        return value
    zone, fraction = m.group(8), (m.group(7) or "")[:7].rstrip("0")
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        when -= (1 if zone[0] == "+" else -1) * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    suffix = "Z" if zone == "Z" else "+00:00" if zone else ""
    return when.strftime("%Y-%m-%dT%H:%M:%S") + ("." + fraction if fraction else "") + suffix


# == invoke ===========================================================================================================
@broken("INV-STREAM-010", name="INV-STREAM-010-tool-names-sanitized-for-function-calling")
def tool_names_sanitized(app, facts):
    """A streamed tool whose name is no valid function name (a dot, a slash, a colon, a space, a letter beyond ASCII,
    over 64 characters) is announced under a rewritten one (`web.search` as `web_search`): the OpenAI-compatible
    adapter's `^[a-zA-Z0-9_-]{1,64}$`, as LangChain's and LiteLLM's converters make it."""
    def sanitized(event, obj, state, scope):
        if event in ("tool_call_start", "tool_result") and isinstance(obj, dict) and isinstance(obj.get("name"), str):
            obj["name"] = NOT_IN_FUNCTION_NAMES.sub("_", obj["name"])[:64] or "_"
        return obj
    return t.rewrite_sse_json(app, sanitized, where="invoke")


@broken("INV-ERR-001", name="INV-ERR-001-html-error-page-for-browser-accept")
def html_error_page(app, facts):
    """An invoke or AG-UI refusal of a request whose Accept admits `text/html` (a browser's
    `text/html,application/xhtml+xml,…,*/*;q=0.8`) keeps its status but comes as Spring Boot's 'Whitelabel Error Page'
    (`text/html`), not the error body."""
    # shown where the refused request asked for a stream as well: such a refusal is sent as JSON (INV-ERR-001)
    def page(raw, scope, status, headers):
        if not 400 <= status < 500 or t.media_type(headers) != "application/json" \
                or not Request(scope, None).accepts("text/html"):
            return raw
        ok, obj = t._loads(raw)
        error = obj.get("error") if ok and isinstance(obj, dict) else None
        if not isinstance(error, dict):
            return raw
        html = WHITELABEL.format(date=time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime()),
                                 reason=error.get("code"), status=status, message=str(error.get("message"))[:200])
        return status, t.with_header(headers, b"content-type", b"text/html;charset=UTF-8"), html.encode()
    return t.rewrite_body(app, page, where=INVOKE_AGUI)


# == AG-UI ============================================================================================================
@broken("AGUI-ORDER-003", name="AGUI-ORDER-003-trailing-tool-result-after-run-finished")
def trailing_tool_result(app, facts):
    """When a tool call is the run's last act (no text after it, or a question), its TOOL_CALL_RESULT comes after
    RUN_FINISHED: the tool runner's completion callback is drained only before the next event written."""
    def held_back(ev, state, scope):
        held = state.get("held")
        if ev.get("type") == "TOOL_CALL_RESULT":
            state["held"] = ev
            return held
        if held is None:
            return ev
        state["held"] = None
        return [ev, held] if ev.get("type") in ("RUN_FINISHED", "RUN_ERROR") else [held, ev]
    return on_events(app, held_back)


@broken("AGUI-PASS-001", name="AGUI-PASS-001-context-entries-keyed-by-description")
def context_keyed_by_description(app, facts):
    """`context` entries sharing a description collapse into one, the last one's value in the first one's place: the
    front keeps `context` as a dictionary `{description: value}` (an agent framework's 'readables') and rebuilds the
    list from it."""
    def merged(body, scope):
        ctx = body.get("context")
        if not agui_runs(body) or not isinstance(ctx, list) \
                or not all(isinstance(c, dict) and isinstance(c.get("description"), str) for c in ctx):
            return None
        values = {c["description"]: c.get("value") for c in ctx}
        if len(values) == len(ctx):
            return None
        body["context"] = [{"description": d, "value": v} for d, v in values.items()]
        return body
    return on_request(app, merged)


@broken("AGUI-PASS-002", name="AGUI-PASS-002-date-strings-reformatted")
def date_strings_reformatted(app, facts):
    """A string that reads as an ISO 8601 date-time, at any depth of a member the AG-UI endpoint does not bind, reaches
    the agent in Json.NET's form (`2024-05-01T10:00:00+02:00` as `2024-05-01T08:00:00+00:00`, `…T10:00:00.500Z` as
    `…T10:00:00.5Z`, `…T10:00` as `…T10:00:00`): ASP.NET's `[JsonExtensionData]` with the default date parsing."""
    bound = set(ref_agui.INTERPRETED) | set(FORWARDED)

    def reformatted(body, scope):
        if not agui_runs(body):
            return None
        new = {k: v if k in bound else t.json_leaves(v, json_net_date) for k, v in body.items()}
        return new if new != body else None
    return on_request(app, reformatted)


# == MCP ==============================================================================================================
@broken("MCP-TOOL-002", name="MCP-TOOL-002-ansi-escapes-stripped")
def ansi_escapes_stripped(app, facts):
    """ANSI escape sequences (colours `ESC[31m`, cursor moves, OSC titles, the C1 CSI U+009B) are removed from the
    tool result's text: `strip-ansi` on every text block, to keep terminal clients safe."""
    def stripped(result):
        for block in result.get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"] = ANSI.sub("", block["text"])
    return on_tool_results(app, stripped)


@broken("MCP-TOOL-004", name="MCP-TOOL-004-failure-with-empty-message-reported-success")
def empty_failure_reported_success(app, facts):
    """A run that fails with an empty message is sent as a success: `isError: false`, the text sent before the
    failure as the reply, no error (the tool wrapper's `isError: Boolean(run.errorMessage)`)."""
    def succeeded(result):
        content = result.get("content")
        first = content[0] if isinstance(content, list) and content else None
        text = first.get("text") if isinstance(first, dict) else None
        if result.get("isError") is True and text == "":
            done = result.get("structuredContent") if isinstance(result.get("structuredContent"), dict) else {}
            result.update(isError=False, content=[{"type": "text", "text": done.get("result", "")}],
                          structuredContent={"sessionId": done.get("sessionId")})
    return on_tool_results(app, succeeded)


@broken("MCP-PAUSE-003", name="MCP-PAUSE-003-url-mode-when-the-client-offers-both")
def url_mode_when_both_offered(app, facts):
    """A client declaring both `form` and `url` elicitation is asked in URL mode (a link to a page of the service, no
    `requestedSchema`) instead of for a form: the elicitation helper, written for an OAuth consent step, prefers URL
    mode whenever the client has it."""
    def as_url(result):
        requests = result.get("inputRequests") if result.get("resultType") == "input_required" else None
        for rid, req in requests.items() if isinstance(requests, dict) else []:
            params = req.get("params") if isinstance(req, dict) else None
            if isinstance(params, dict) and params.get("mode") == "form":
                req["params"] = {"mode": "url", "message": params.get("message"), "elicitationId": rid,
                                 "url": f"{facts['base_url']}/elicit/{rid}"}
    asked_by_url = on_tool_results(app, as_url)

    async def either(scope, receive, send):
        await (asked_by_url if scope.get(BOTH_MODES) else app)(scope, receive, send)

    def note(body, scope):
        caps = meta_of(body).get(CAPS)
        modes = caps.get("elicitation") if isinstance(caps, dict) else None
        scope[BOTH_MODES] = isinstance(modes, dict) and "form" in modes and "url" in modes
    return on_request(either, note, where="mcp")


@broken("MCP-SESS-004", name="MCP-SESS-004-transport-session-header-taken-as-key")
def transport_session_header_as_key(app, facts):
    """A `tools/call` without `session_id` but with an `Mcp-Session-Id` header (which a client of the stateful
    transport keeps sending) runs under the header's value as its key: calls carrying one header value share an
    instance instead of getting sessions of their own."""
    def keyed(body, scope):
        held = st.key_holder(body, scope)
        header = hdr(scope, "mcp-session-id")
        if body.get("method") != "tools/call" or held is None or "session_id" in held[0] or not is_session_key(header):
            return None
        held[0]["session_id"] = header
        return body
    return on_request(app, keyed, where="mcp")


@broken("INV-RES-010", name="INV-RES-010-agent-slug-under-access-tokens")
def agent_slug_under_access_tokens(app, facts):
    """The result's `agentId` comes from the caller's identity, not the path: on a run with the access token (whose
    grant names the agent by its slug, as the consent screen shows it) it is the agent's slug."""
    def slug(obj, scope, status, headers):
        secret = bearer_of(scope)
        cred = app.org.credential(secret) if secret else None
        agent = app.org.agents.get(obj.get("agentId")) if isinstance(obj, dict) else None
        if status == 200 and cred is not None and cred.kind == "access_token" and agent is not None:
            obj["agentId"] = agent.slug
        return obj
    return t.rewrite_json_response(app, slug, where="invoke")


# == authentication, metadata =========================================================================================
@broken("AUTH-KEY-004", name="AUTH-KEY-004-service-prefix-not-compared")
def service_prefix_not_compared(app, facts):
    """On invoke and AG-UI a key under another service prefix (`xyz_live_<the key's secret part>`: another service's
    key, a test key's prefix) is taken for the key: the lookup splits the bearer value at `_live_` / `_oat_` and
    compares the kind and the rest, never the prefix."""
    def same_secret(headers, scope):
        secret = bearer_of(scope)
        sent = KEY_FORM.match(secret) if secret is not None and app.org.credential(secret) is None else None
        if sent is None:
            return headers
        for cred in app.org.credentials.values():
            own = KEY_FORM.match(cred.secret)
            if own and own.group(2, 3) == sent.group(2, 3) and own.group(1) != sent.group(1):
                return t.with_header(headers, b"authorization", b"Bearer " + cred.secret.encode())
        return headers
    return t.rewrite_request_headers(app, same_secret, where=INVOKE_AGUI)


@broken("META-DOC-001", name="META-DOC-001-any-if-none-match-answered-304")
def any_if_none_match_304(app, facts):
    """A metadata GET with any If-None-Match (another document's validator, an older deployment's, a CDN's) is
    answered 304 Not Modified with no body instead of the document (which carries a weak ETag)."""
    def validated(raw, scope, status, headers):
        if status != 200:
            return raw
        etag = 'W/"' + hashlib.sha256(raw).hexdigest()[:16] + '"'
        headers = headers + [(b"etag", etag.encode())]
        sent = hdr(scope, "if-none-match")
        tags = [x.strip() for x in sent.split(",")] if sent is not None else []
        # a tag that matches may be answered 304 or 200 alike (RFC 9110 §13.1.2): only the others are wrong
        if sent is None or "*" in tags or etag in tags or etag[2:] in tags:
            return status, headers, raw
        return 304, t.without(headers, b"content-type"), b""
    return t.rewrite_body(app, validated, where="metadata")


@broken("AGUI-PROMPT-003", name="AGUI-PROMPT-003-result-is-the-last-text-message")
def result_of_the_last_text_message(app, facts):
    """RUN_FINISHED.result is the text of the run's last text message: a reply said before and after a tool call or
    a step (two messages) reports only its second piece."""
    def fn(event, obj, state, scope):
        if isinstance(obj, dict) and obj.get("type") == "TEXT_MESSAGE_START":
            state["last"] = []
        elif isinstance(obj, dict) and obj.get("type") == "TEXT_MESSAGE_CONTENT" and isinstance(obj.get("delta"), str):
            state.setdefault("last", []).append(obj["delta"])
        elif isinstance(obj, dict) and obj.get("type") == "RUN_FINISHED" and isinstance(obj.get("result"), str) \
                and "last" in state:
            obj["result"] = "".join(state["last"])
        return obj
    return t.rewrite_sse_json(app, fn, where="agui")


@broken("META-DOC-011", name="META-DOC-011-reload-answered-uncacheable")
def reload_answered_uncacheable(app, facts):
    """A metadata GET sent as a browser's reload (`Cache-Control: no-cache` or `Pragma: no-cache`) bypasses the
    response cache to a handler whose framework default is `Cache-Control: private, max-age=0`."""
    def fn(headers, scope, status):
        asked = b" ".join((t.header(list(scope.get("headers") or []), name) or b"").lower()
                          for name in (b"cache-control", b"pragma"))
        return t.with_header(headers, b"cache-control", b"private, max-age=0") \
            if status == 200 and b"no-cache" in asked else headers
    return t.rewrite_headers(app, fn, where="metadata")


@broken("INV-PASS-004", name="INV-PASS-004-content-parts-flattened")
def content_parts_flattened(app, facts):
    """Invoke joins a message's content parts into one string before the agent sees them (a chat API's adapter)."""
    def joined(m):
        if not (isinstance(m, dict) and isinstance(m.get("content"), list)):
            return m
        return {**m, "content": "".join(p.get("text", "") for p in m["content"] if isinstance(p, dict))}

    def rewrite(body, scope):
        msgs = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(msgs, list) or all(joined(m) is m for m in msgs):
            return None
        return {**body, "messages": [joined(m) for m in msgs]}
    return t.rewrite_request_json(app, rewrite, where="invoke")
