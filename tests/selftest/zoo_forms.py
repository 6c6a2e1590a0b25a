"""Broken servers that are right on every request of a form, and wrong on another form of the same request, or on a
run of another shape: what the run meets only because it sends those forms (`vocab.forms`) and runs of those shapes
(a tool call before a failure, a long reply, a paused MCP run's question as text, a reply that starts like an error).

The forms: an AG-UI conversation that ends in a system message or in two user messages; a run without a threadId;
forwarded state with camelCase keys; extra data over 4 KB that is no object; a repeated call byte for byte the first;
a request with a content type other than JSON; a credential in another form (a JWT) or in another header
(`X-API-Key`); an agent id in another letter case; an MCP notification without a credential, an `Mcp-Session-Id`, a
description request whose `_meta` version differs from its header, a version newer than the service speaks; a
metadata GET with a query string.
"""
from __future__ import annotations

import contextvars
import dataclasses
import hashlib
import html
import re
import time
from typing import Any, Callable

from conformance.server import agui as ref_agui
from conformance.server import invoke as ref_invoke
from conformance.server.agent import Interpreter
from conformance.server.app import Service
from conformance.server.asgi import Request
from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken
from tests.selftest.zoo_agui import on_request
from tests.selftest.zoo_auth import INVOKE_AGUI
from tests.selftest.zoo_inputs import FORWARDED, on_json
from tests.selftest.zoo_mcp import LEGACY, MODERN, bearer_of, hdr, meta_of, reroute_agent, rpc_error, set_headers
from tests.selftest.zoo_silences import pings_dropped

VERSION = "io.modelcontextprotocol/protocolVersion"
NO_THREAD = "conformance.zoo.forms.no-thread"   # scope key: the AG-UI request left threadId out
PROMPT = contextvars.ContextVar("conformance.zoo.forms.prompt", default=None)   # the prompt run instead


# -- helpers -------------------------------------------------------------------------------------------------------
def runs(app, body: Any) -> bool:
    """An invoke body the reference accepts: it starts a run."""
    return isinstance(body, dict) and not ref_invoke.validate(app, body)


def streamed(scope: dict, body: dict) -> bool:
    """Whether the reference answers this invoke as a stream (`stream`, else Accept)."""
    return body["stream"] is True if "stream" in body else Request(scope, None).accepts("text/event-stream")


def agui_runs(body: Any) -> bool:
    """An AG-UI body the reference accepts (a valid request with a prompt or a resume)."""
    if not isinstance(body, dict):
        return False
    errors, prompt, entries = ref_agui.validate(body)
    return not errors and (prompt is not None or bool(entries))


def posted(*kinds: str, test: Callable[[dict], bool] = lambda scope: True):
    """`where`: POST requests of `kinds` that pass `test(scope)`."""
    return lambda scope: t.path_kind(scope.get("path", "")) in kinds and scope.get("method") == "POST" and test(scope)


def answered(app, where, answer: Callable[[Any, dict], tuple[int, Any] | None]):
    """Requests of `where` for which `answer(body, scope)` (body: the parsed JSON, or None) gives `(status, JSON)`
    get that answer; the app never sees them."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, where):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        out = answer(body if ok else None, scope)
        if out is None:
            return await app(scope, t._replay(raw, pending, receive), send)
        out_raw = t._dumps(out[1])
        await send({"type": "http.response.start", "status": out[0], "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(out_raw)).encode())]})
        await send({"type": "http.response.body", "body": out_raw, "more_body": False})
    return middleware


def on_tool_results(app, fn: Callable[[dict], Any]):
    """fn(result) mutates every JSON-RPC result of MCP, answered as JSON or as the last frame of a stream."""
    def each(obj):
        if isinstance(obj, dict) and isinstance(obj.get("result"), dict):
            fn(obj["result"])
        return obj
    return t.rewrite_sse_json(on_json(app, "mcp", each), lambda event, obj, state, scope: each(obj), where="mcp")


def text_of(result: dict) -> str:
    return "".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))


def prompted(app, pick: Callable[[dict], str | None]):
    """An AG-UI run for whose request `pick(body)` gives a text runs that text as its prompt (the messages still reach
    the agent as sent)."""
    agent = app.interpreter

    class Prompted(Interpreter):
        def parse(self, prompt):
            other = PROMPT.get()
            return agent.parse(other if other is not None else prompt)

        def steps(self, script, ctx, start=0):
            return agent.steps(script, ctx, start)

        def resumed_steps(self, paused, answer):
            return agent.resumed_steps(paused, answer)
    app.interpreter = Prompted()

    def note(body, scope):
        PROMPT.set(pick(body) if agui_runs(body) and body.get("resume") is None else None)
    return on_request(app, note)


def extra_data_unchecked(app, skipped: Callable[[dict, dict], bool]):
    """Invoke requests for which `skipped(scope, body)` holds are not held to the extra data field's 4 KB limit (every
    other field is checked)."""
    field = app.config.extra_data_field
    loose = Service(dataclasses.replace(app.config, max_extra_bytes=10 ** 12), app.org, app.facts)

    async def middleware(scope, receive, send):
        if not t.matches(scope, "invoke"):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        errors = ref_invoke.validate(app, body) if ok and isinstance(body, dict) and field in body else []
        over = errors and all(f == field for f, _ in errors) and skipped(scope, body)
        await (loose if over else app)(scope, t._replay(raw, pending, receive), send)
    return middleware


# == invoke ===========================================================================================================
@broken("INV-STREAM-008", name="INV-STREAM-008-deltas-cut-on-byte-boundaries")
def deltas_cut_on_bytes(app, facts):
    """A `text` frame's delta longer than 512 UTF-8 bytes is sent as several frames cut every 512 bytes, each cut
    decoded on its own: a character across a cut becomes U+FFFD."""
    def cut(event, obj, state, scope):
        raw = obj.get("delta", "").encode("utf-8", "surrogatepass") if event == "text" and isinstance(obj, dict) \
            and isinstance(obj.get("delta"), str) else b""
        if len(raw) <= 512:
            return obj
        return [{**obj, "delta": raw[i:i + 512].decode("utf-8", "replace")} for i in range(0, len(raw), 512)]
    return t.rewrite_sse_json(app, cut, where="invoke")


@broken("INV-RES-014", name="INV-RES-014-failure-after-a-tool-call-reported-completed")
def failure_after_tool_completed(app, facts):
    """A JSON invoke whose run fails after it called a tool is reported `completed`, without `error`."""
    def completed(obj):
        called = any(isinstance(e, dict) and e.get("type") in ("tool_call_start", "tool_result")
                     for e in obj.get("events") or [])
        if obj.get("status") == "failed" and called:
            obj["status"] = "completed"
            obj.pop("error", None)
    return on_json(app, "invoke", completed)


@broken("INV-LIM-004", name="INV-LIM-004-limit-checked-on-objects-only")
def limit_on_objects_only(app, facts):
    """The 4 KB limit of the extra data field is checked on an object only: an array or a string of any size runs."""
    field = app.config.extra_data_field
    return extra_data_unchecked(app, lambda scope, body: not isinstance(body[field], dict))


@broken("INV-LIM-004", name="INV-LIM-004-extra-data-unchecked-on-streams")
def extra_unchecked_on_streams(app, facts):
    """The 4 KB limit of the extra data field is checked on JSON invokes only: a streamed one of any size runs."""
    return extra_data_unchecked(app, streamed)


@broken("INV-RES-005", name="INV-RES-005-events-capped-at-ten")
def events_capped(app, facts):
    """The JSON result's `events` holds at most ten events (the run log read with its default page size)."""
    return on_json(app, "invoke", lambda obj: isinstance(obj.get("events"), list)
                   and obj.update(events=obj["events"][:10]))


@broken("INV-SESS-002", name="INV-SESS-002-identical-bodies-deduplicated")
def identical_bodies_deduplicated(app, facts):
    """A JSON invoke byte for byte the same as one answered less than 5 s before (same credential) gets that answer
    again and never reaches the agent."""
    # "Calls with the same session key reach the same running instance": a second `count` says 1 again.
    answers: dict[str, tuple[float, list, bytes]] = {}

    async def middleware(scope, receive, send):
        if not t.matches(scope, "invoke"):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        if not ok or not runs(app, body) or streamed(scope, body):
            return await app(scope, t._replay(raw, pending, receive), send)
        key = hashlib.sha256("\0".join((hdr(scope, "authorization") or "", scope["path"])).encode() + b"\0"
                             + raw).hexdigest()
        hit = answers.get(key)
        if hit is not None and time.monotonic() - hit[0] < 5.0:
            await send({"type": "http.response.start", "status": 200, "headers": hit[1]})
            await send({"type": "http.response.body", "body": hit[2], "more_body": False})
            return
        start: dict = {}
        chunks: list[bytes] = []

        async def keep(msg):
            if msg["type"] == "http.response.start":
                start.update(msg)
            elif msg["type"] == "http.response.body":
                chunks.append(msg.get("body", b""))
                if not msg.get("more_body", False) and start.get("status") == 200:
                    answers[key] = (time.monotonic(), list(start.get("headers") or []), b"".join(chunks))
            await send(msg)
        await app(scope, t._replay(raw, pending, receive), keep)
    return middleware


# == AG-UI ============================================================================================================
@broken("AGUI-PROMPT-001", name="AGUI-PROMPT-001-trailing-system-message-read-as-prompt")
def trailing_system_prompt(app, facts):
    """The prompt is the text of the last message that is not the assistant's: a system message sent after the last
    user message runs."""
    def pick(body):
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        last = next((m for m in reversed(messages) if m.get("role") != "assistant"), None)
        user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        return last["content"] if last is not user and isinstance(last.get("content"), str) else None
    return prompted(app, pick)


@broken("AGUI-PROMPT-001", name="AGUI-PROMPT-001-consecutive-user-messages-merged")
def consecutive_users_merged(app, facts):
    """When the messages end with several user messages in a row, their texts joined by a newline are the prompt
    (LangChain's `merge_message_runs`), not the last one's."""
    def pick(body):
        tail: list[dict] = []
        for m in reversed(body.get("messages") or []):
            if not (isinstance(m, dict) and m.get("role") == "user"):
                break
            tail.insert(0, m)
        texts = [m.get("content") for m in tail]
        return "\n".join(texts) if len(texts) > 1 and all(isinstance(x, str) for x in texts) else None
    return prompted(app, pick)


@broken("AGUI-PASS-001", name="AGUI-PASS-001-nested-keys-decamelized")
def nested_keys_decamelized(app, facts):
    """The keys of every object inside `tools`, `state`, `context` and `forwardedProps` reach the agent in snake_case
    (`humps.decamelize`: `userName` becomes `user_name`)."""
    def snake(value):
        if isinstance(value, list):
            return [snake(v) for v in value]
        if isinstance(value, dict):
            return {re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", k).lower() if k != k.lower() else k: snake(v)
                    for k, v in value.items()}
        return value

    def rewrite(body, scope):
        new = {k: snake(v) if k in FORWARDED else v for k, v in body.items()}
        return new if new != body else None
    return on_request(app, rewrite)


@broken("AGUI-PING-001", name="AGUI-PING-001-no-pings-on-generated-threads")
def no_pings_without_thread(app, facts):
    """A run that left `threadId` out (the service generates it) gets no `: ping` however long the agent is
    silent: the keep-alive is registered under the request's threadId."""
    def note(body, scope):
        scope[NO_THREAD] = "threadId" not in body
    return on_request(pings_dropped(app, lambda block, state, scope: bool(scope.get(NO_THREAD))), note)


# == MCP ==============================================================================================================
@broken("MCP-TOOL-002", name="MCP-TOOL-002-text-html-escaped")
def text_html_escaped(app, facts):
    """The tool result's text is HTML-escaped (`<`, `>` and `&` as entities), for UIs that render tool output."""
    def escape(result):
        for block in result.get("content") or []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"] = html.escape(block["text"], quote=False)
    return on_tool_results(app, escape)


@broken("MCP-TOOL-005", name="MCP-TOOL-005-question-flagged-as-error")
def question_flagged_as_error(app, facts):
    """A paused run's question, sent as text to a client that cannot elicit, is a tool result with `isError: true`."""
    # "`isError` | `true` when the run fails": a paused run has not failed.
    def flag(result):
        if isinstance(result.get("structuredContent"), dict) and result["structuredContent"].get("awaitingResume"):
            result["isError"] = True
    return on_tool_results(app, flag)


@broken("MCP-TOOL-005", name="MCP-TOOL-005-error-looking-reply-flagged")
def error_looking_reply_flagged(app, facts):
    """A run that ends normally with a reply beginning with the word `error` is sent with `isError: true` (the
    result flagged by its text)."""
    def flag(result):
        paused = isinstance(result.get("structuredContent"), dict) and result["structuredContent"].get("awaitingResume")
        if "content" in result and not paused and re.match(r"\s*error\b", text_of(result), re.I):
            result["isError"] = True
    return on_tool_results(app, flag)


@broken("MCP-SESS-005", name="MCP-SESS-005-unknown-session-header-refused")
def session_header_refused(app, facts):
    """A request other than initialize carrying an `Mcp-Session-Id` (which this server never issues) is answered 404
    "Session not found" (the SDK's stateful transport)."""
    # "Stateless: every request is answered on its own."
    def refuse(body, scope):
        if hdr(scope, "mcp-session-id") is None or (isinstance(body, dict) and body.get("method") == "initialize"):
            return None
        refusal = rpc_error(-32001, "Session not found")
        refusal["id"] = body.get("id") if isinstance(body, dict) and isinstance(body.get("id"), (str, int)) else None
        return 404, refusal
    return answered(app, posted("mcp"), refuse)


@broken("MCP-HDR-001", name="MCP-HDR-001-version-mismatch-unchecked-on-the-description")
def mismatch_unchecked_on_description(app, facts):
    """`tools/list` and `server/discover` never compare their `_meta` version with `MCP-Protocol-Version` (a
    description cached by the header's version); tools/call still does."""
    def align(body, scope):
        meta, header = meta_of(body), hdr(scope, "mcp-protocol-version")
        mismatched = body.get("method") in ("tools/list", "server/discover") and header in (MODERN, LEGACY) \
            and meta.get(VERSION) in (MODERN, LEGACY) and meta[VERSION] != header
        return declaring(body, meta, header) if mismatched else None
    return on_request(app, align, where="mcp")


def declaring(body: dict, meta: dict, version: str) -> dict:
    """The request `body` (whose `_meta` is `meta`) declaring `version` instead."""
    meta[VERSION] = version
    return body


@broken("MCP-VER-002", name="MCP-VER-002-newer-versions-served-as-latest")
def newer_versions_served(app, facts):
    """A request declaring a dated version newer than 2026-07-28 (header and `_meta` alike) is served as 2026-07-28
    instead of refused (the client's version capped at the latest); older unknown ones are still refused."""
    def cap(body, scope):
        header, meta = hdr(scope, "mcp-protocol-version") or "", meta_of(body)
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", header) or header <= MODERN or body.get("method") == "initialize" \
                or meta.get(VERSION, header) != header:
            return None
        set_headers(scope, {"mcp-protocol-version": MODERN})   # the app sees the changed headers
        return declaring(body, meta, MODERN) if VERSION in meta else None
    return on_request(app, cap, where="mcp")


# == authentication, agents, metadata, rate limits ====================================================================
@broken("AUTH-MCP-005", name="AUTH-MCP-005-foreign-credential-form-answered-400")
def foreign_form_400(app, facts):
    """An MCP bearer value in none of the service's own forms (`<svc>_live_…`, `<svc>_oat_…`), such as a JWT, is
    refused as a malformed request: 400 -32600 without a challenge."""
    svc = facts["api_key"].split("_live_", 1)[0]

    def foreign(scope):
        cred = bearer_of(scope)
        return bool(cred) and not cred.startswith((f"{svc}_live_", f"{svc}_oat_"))
    return t.respond(app, 400, rpc_error(-32600, "Malformed bearer token."), where=posted("mcp", test=foreign))


@broken("AUTH-MCP-003", name="AUTH-MCP-003-notifications-acknowledged-before-auth")
def notifications_before_auth(app, facts):
    """A JSON-RPC notification (no `id`) is acknowledged 202 before the credential is checked: without a usable
    credential it gets 202, not 401."""
    def usable(scope):
        cred = app.org.credential(bearer_of(scope) or "")
        return cred is not None and cred.usable()

    async def middleware(scope, receive, send):
        if not t.matches(scope, posted("mcp")) or usable(scope):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        if ok and isinstance(body, dict) and body.get("jsonrpc") == "2.0" and "id" not in body \
                and isinstance(body.get("method"), str):
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await app(scope, t._replay(raw, pending, receive), send)
    return middleware


@broken("AUTH-KEY-006", name="AUTH-KEY-006-token-scheme-accepted")
def token_scheme_accepted(app, facts):
    """Invoke and AG-UI take the `Token` scheme as well as `Bearer` (`Token <key>` or `Token token="<key>"`, as
    Rails' `authenticate_with_http_token` reads it)."""
    scheme = re.compile(r'^Token\s+(?:token="?([^",\s]+)"?|([^\s,]+))\s*$', re.I)

    def read(headers, scope):
        m = scheme.match((t.header(headers, b"authorization") or b"").decode("latin-1"))
        return t.with_header(headers, b"authorization", f"Bearer {m.group(1) or m.group(2)}") if m else headers
    return t.rewrite_request_headers(app, read, where=INVOKE_AGUI)


@broken("AUTH-KEY-002", name="AUTH-KEY-002-key-read-from-x-api-key")
def key_from_x_api_key(app, facts):
    """Invoke and AG-UI without Authorization read the key from an `X-API-Key` (or `apikey`) header (an API
    gateway's key-auth plugin)."""
    def read(headers, scope):
        key = t.header(headers, b"x-api-key") or t.header(headers, b"apikey")
        if t.header(headers, b"authorization") is not None or key is None:
            return headers
        return headers + [(b"authorization", b"Bearer " + key.strip())]
    return t.rewrite_request_headers(app, read, where=INVOKE_AGUI)


@broken("GEN-AGENT-005", name="GEN-AGENT-005-agent-ids-matched-without-case")
def agent_ids_without_case(app, facts):
    """A path agentId that differs from an agent's id only in letter case reaches that agent (a case-insensitive
    collation), on every operation."""
    def same(agent):
        alike = [a for a in app.org.agents if a.lower() == agent.lower()]
        return alike[0] if agent not in app.org.agents and len(alike) == 1 else None
    return reroute_agent(app, same, where=lambda scope: t.path_kind(scope.get("path", "")) is not None)


@broken("META-DOC-002", name="META-DOC-002-resource-keeps-the-query")
def resource_keeps_query(app, facts):
    """A metadata GET with a query string names the MCP URL with that query as `resource` (the well-known prefix
    removed from the whole request URL)."""
    def keep(obj, scope, status, headers):
        query = (scope.get("query_string") or b"").decode("latin-1")
        if status == 200 and query and isinstance(obj, dict) and isinstance(obj.get("resource"), str):
            obj["resource"] += "?" + query
        return obj
    return t.rewrite_json_response(app, keep, where="metadata")


@broken("GEN-ERR-001", name="GEN-ERR-001-unsupported-media-type-as-text")
def media_type_as_text(app, facts):
    """An invoke or AG-UI request whose Content-Type is not JSON is answered by the framework's body parser: 415
    `text/plain` "Unsupported Media Type", not the error body."""
    def not_json(scope):
        return (hdr(scope, "content-type") or "").split(";", 1)[0].strip().lower() != "application/json"
    return t.respond(app, 415, b"Unsupported Media Type", [(b"content-type", b"text/plain; charset=utf-8")],
                     where=posted("invoke", "agui", test=not_json))


@broken("GEN-RATE-002", name="GEN-RATE-002-header-doubled-on-event-streams")
def remaining_doubled_on_streams(app, facts):
    """An event stream carries `X-RateLimit-Remaining` twice (the gateway adds its own to what it cannot buffer),
    which a client reads as `9998, 9998`."""
    def doubled(headers, scope, status):
        value = t.header(headers, "x-ratelimit-remaining")
        if value is None or t.media_type(headers) != "text/event-stream":
            return headers
        return headers + [(b"x-ratelimit-remaining", value)]
    return t.rewrite_headers(app, doubled, where=("invoke", "agui", "mcp"))
