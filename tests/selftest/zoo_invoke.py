"""Broken servers for the invoke checks (and the error-body, transport and rate-limit rules invoke shows).

Each is the reference server with exactly one deviation, named after the requirement it breaks.
GEN-BASE-001/002 cannot be bent by ASGI middleware (TLS sits below it), so their wrap functions
start a listener beside the reference server and point `facts["base_url"]` at it: a cleartext-only
service, and a port that speaks both TLS and cleartext. The listeners are daemon threads, stopped
at interpreter exit.
"""
from __future__ import annotations

import asyncio
import atexit
import email.utils
import json
import socket
import threading
import uuid
from typing import Any

import uvicorn

from tests.selftest import asgi_tools as t
from tests.selftest.fronts import port_of, serve_both
from tests.selftest.zoo import broken


# -- small helpers -------------------------------------------------------------------------------------
def _result(fn):
    """A JSON-response rewrite that lets `fn(obj)` change invoke results (200 bodies with `status`) in place."""
    def rewrite(obj, scope, status, headers):
        if status == 200 and isinstance(obj, dict) and "status" in obj:
            fn(obj)
        return obj
    return rewrite


def _refusal(fn):
    """A JSON-response rewrite that lets `fn(error)` change invoke refusals (4xx bodies with `error`) in place."""
    def rewrite(obj, scope, status, headers):
        if 400 <= status < 500 and isinstance(obj, dict) and isinstance(obj.get("error"), dict):
            fn(obj["error"])
        return obj
    return rewrite


def _accepts_sse(scope) -> bool:
    return b"text/event-stream" in (t.header(scope.get("headers") or [], "accept") or b"")


def _request(fn):
    """A request-JSON rewrite applied to invoke bodies that are objects."""
    def rewrite(body, scope):
        if isinstance(body, dict):
            fn(body, scope)
            return body
        return None
    return rewrite


# -- GEN-BASE: listeners beside the reference server ------------------------------------------------------
def _serve_plain(app) -> int:
    """Serves `app` over cleartext HTTP on a free loopback port (a daemon thread); returns the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None, log_level="error",
                                           access_log=False, ws="none"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="zoo-plain-http").start()
    atexit.register(lambda: setattr(server, "should_exit", True))
    return sock.getsockname()[1]


@broken("GEN-BASE-001", name="GEN-BASE-001-cleartext-only")
def cleartext_only(app, facts):
    """The service is offered over cleartext http:// (its base URL), not HTTPS."""
    facts["base_url"] = f"http://127.0.0.1:{_serve_plain(app)}"
    return app


@broken("GEN-BASE-002", name="GEN-BASE-002-port-also-speaks-cleartext")
def port_also_speaks_cleartext(app, facts):
    """The https port also answers cleartext HTTP requests, running the agent."""
    both = serve_both(port_of(facts["base_url"]), _serve_plain(app))
    facts["base_url"] = f"https://127.0.0.1:{both}"
    return app


@broken("GEN-BASE-002", name="GEN-BASE-002-cleartext-gateway-adds-the-key")
def cleartext_gateway_adds_the_key(app, facts):
    """The https port also answers cleartext, through a gateway that authenticates every request with the
    organization's key itself: any credential, or none, runs the agent."""
    gateway = t.rewrite_request_headers(
        app, lambda headers, scope: t.with_header(headers, "authorization", f"Bearer {facts['api_key']}"))
    both = serve_both(port_of(facts["base_url"]), _serve_plain(gateway))
    facts["base_url"] = f"https://127.0.0.1:{both}"
    return app


@broken("GEN-BASE-003", name="GEN-BASE-003-invoke-only-with-trailing-slash")
def invoke_only_with_trailing_slash(app, facts):
    """Invoke is served at `/v1/agents/{id}/invoke/`; the exact path answers 404."""
    async def mw(scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if t.path_kind(path) == "invoke":
            scope = dict(scope, path=path.replace("/invoke", "/invoke-missing"))
        elif path.endswith("/invoke/"):
            scope = dict(scope, path=path[:-1])
        await app(scope, receive, send)
    return mw


# -- GEN-ERR: the error body ---------------------------------------------------------------------------------
@broken("GEN-ERR-001", name="GEN-ERR-001-invoke-refusals-answer-500")
def refusals_500(app, facts):
    """Invoke refusals are answered with status 500 (same error body) instead of a 4xx."""
    return t.replace_status(app, lambda old, scope: 500 if 400 <= old < 500 else old, where="invoke")


@broken("GEN-ERR-002", name="GEN-ERR-002-no-error-code")
def no_error_code(app, facts):
    """Invoke refusal bodies lack `error.code`."""
    return t.rewrite_json_response(app, _refusal(lambda err: err.pop("code", None)), where="invoke")


@broken("GEN-ERR-003", name="GEN-ERR-003-error-message-null")
def error_message_null(app, facts):
    """Invoke refusal bodies carry `error.message: null`."""
    return t.rewrite_json_response(app, _refusal(lambda err: err.update(message=None)), where="invoke")


@broken("GEN-ERR-004", name="GEN-ERR-004-request-id-without-prefix")
def request_id_without_prefix(app, facts):
    """Invoke refusal bodies carry `error.requestId` without the `req_` prefix."""
    def fn(err):
        if isinstance(err.get("requestId"), str):
            err["requestId"] = err["requestId"].removeprefix("req_")
    return t.rewrite_json_response(app, _refusal(fn), where="invoke")


@broken("GEN-ERR-005", name="GEN-ERR-005-validation-failed-without-details")
def validation_without_details(app, facts):
    """Invoke `validation_failed` refusals carry no `error.details`."""
    def fn(err):
        if err.get("code") == "validation_failed":
            err.pop("details", None)
    return t.rewrite_json_response(app, _refusal(fn), where="invoke")


@broken("GEN-ERR-005", name="GEN-ERR-005-details-a-list-when-several-fields-fail")
def details_a_list_for_several(app, facts):
    """An invoke with more than one invalid field is refused `validation_failed` with `details` a list, one item per
    field (a validator that collects every error); one invalid field still gets an object."""
    def mark(body, scope):
        if isinstance(body, dict):
            bad = [name for name, ok in (("prompt", isinstance(body.get("prompt"), str)),
                                         ("stream", isinstance(body.get("stream", False), bool))) if not ok]
            scope.setdefault("state", {})["invalid_fields"] = bad
        return body

    def fn(obj, scope, status, headers):
        bad = (scope.get("state") or {}).get("invalid_fields") or []
        err = obj.get("error") if isinstance(obj, dict) else None
        if 400 <= status < 500 and isinstance(err, dict) and err.get("code") == "validation_failed" and len(bad) > 1:
            err["details"] = [{"field": name, "reason": "invalid type"} for name in bad]
        return obj
    return t.rewrite_request_json(t.rewrite_json_response(app, fn, where="invoke"), mark, where="invoke")


# -- GEN-RATE ------------------------------------------------------------------------------------------------
@broken("GEN-RATE-002", name="GEN-RATE-002-remaining-not-a-count")
def remaining_not_a_count(app, facts):
    """Invoke answers carry `X-RateLimit-Remaining: unlimited`."""
    return t.rewrite_headers(app, lambda h, scope, status: t.with_header(h, "x-ratelimit-remaining", "unlimited")
                             if t.header(h, "x-ratelimit-remaining") is not None else h, where="invoke")


@broken("GEN-RATE-003", name="GEN-RATE-003-retry-after-http-date",
        config={"rate_limit_burst": 5, "rate_limit_per_second": 5.0})
def retry_after_http_date(app, facts):
    """A small rate limit whose 429s carry `Retry-After` as an HTTP date, not whole seconds."""
    def fn(headers, scope, status):
        if status == 429:
            return t.with_header(headers, "retry-after", email.utils.formatdate(usegmt=True))
        return headers
    return t.rewrite_headers(app, fn)


# -- INV-SEL: selection of streaming ---------------------------------------------------------------------------
@broken("INV-SEL-001", name="INV-SEL-001-stream-true-ignored-without-accept")
def stream_true_needs_accept(app, facts):
    """`stream: true` streams only together with `Accept: text/event-stream`."""
    def fn(body, scope):
        if body.get("stream") is True and not _accepts_sse(scope):
            body["stream"] = False
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SEL-001", name="INV-SEL-001-accept-json-overrides-stream-true")
def accept_json_overrides_stream_true(app, facts):
    """`stream: true` is ignored when Accept names JSON and not the event stream (content negotiation read before
    the body's field, which the spec says decides)."""
    def fn(body, scope):
        accept = (t.header(scope.get("headers") or [], "accept") or b"").lower()
        if body.get("stream") is True and b"application/json" in accept and b"text/event-stream" not in accept:
            body["stream"] = False
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SEL-002", name="INV-SEL-002-accept-ignored")
def accept_ignored(app, facts):
    """Without a `stream` field the answer is JSON whatever the Accept header says."""
    def fn(body, scope):
        body.setdefault("stream", False)
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SEL-003", name="INV-SEL-003-streams-by-default")
def streams_by_default(app, facts):
    """Without a `stream` field and without an Accept header the answer is a stream."""
    def fn(body, scope):
        if "stream" not in body and t.header(scope.get("headers") or [], "accept") is None:
            body["stream"] = True
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SEL-004", name="INV-SEL-004-stream-false-streams")
def stream_false_streams(app, facts):
    """`stream: false` streams (the field's presence is read as a request to stream)."""
    def fn(body, scope):
        if body.get("stream") is False:
            body["stream"] = True
    return t.rewrite_request_json(app, _request(fn), where="invoke")


# -- INV-RES: the result body -------------------------------------------------------------------------------------
def _set(**fields):
    return lambda obj: obj.update(fields)


RESULT_DEVIATIONS: list[tuple[str, str, str, Any]] = [
    ("INV-RES-002", "status-success", "A completed run reports `status: success`.",
     lambda o: o.update(status="success") if o["status"] == "completed" else None),
    ("INV-RES-003", "result-trailing-newline", "`result` gets a trailing newline.",
     lambda o: o.update(result=o["result"] + "\n") if o["status"] == "completed" and isinstance(o.get("result"), str) else None),
    ("INV-RES-004", "result-normalises-crlf", "`result` turns CRLF and CR into LF.",
     lambda o: o.update(result=o["result"].replace("\r\n", "\n").replace("\r", "\n")) if isinstance(o.get("result"), str) else None),
    ("INV-RES-005", "events-missing", "The result has no `events` array.", lambda o: o.pop("events", None)),
    ("INV-RES-006", "text-in-events", "`events` also holds the reply as a `text` event.",
     lambda o: o["events"].append({"v": 1, "type": "text", "delta": o["result"]}) if o.get("result") else None),
    ("INV-RES-007", "event-v-string", "Events in `events` carry `v: \"1\"`.",
     lambda o: [e.update(v="1") for e in o["events"]]),
    ("INV-RES-008", "event-without-type", "Events in `events` carry `kind` instead of `type`.",
     lambda o: [e.update(kind=e.pop("type")) for e in o["events"]]),
    ("INV-RES-009", "session-id-300-chars", "`sessionId` in the result is padded to 300 characters.",
     lambda o: o.update(sessionId=(o["sessionId"] + "x" * 300)[:300])),
    ("INV-RES-010", "agent-id-other", "`agentId` names another agent.", _set(agentId="agt_someone_else")),
    ("INV-RES-011", "version-string", "`versionNumber` is a string.",
     lambda o: o.update(versionNumber=str(o.get("versionNumber")))),
    ("INV-RES-011", "version-fractional", "`versionNumber` has a fraction (3 → 3.5): a number, not an integer.",
     lambda o: o.update(versionNumber=o["versionNumber"] + 0.5) if isinstance(o.get("versionNumber"), int) else None),
    ("INV-RES-013", "duration-string", "`durationMs` is a string of digits (\"35\"), not a JSON integer.",
     lambda o: o.update(durationMs=str(o["durationMs"])) if "durationMs" in o else None),
    ("INV-RES-012", "request-id-constant", "Every result carries the same `requestId`.", _set(requestId="req_constant")),
    ("INV-RES-013", "duration-in-seconds", "`durationMs` holds whole seconds.",
     lambda o: o.update(durationMs=round(o["durationMs"] / 1000)) if isinstance(o.get("durationMs"), int) else None),
    ("INV-RES-015", "failed-without-error", "A failed result has no `error` object.",
     lambda o: o.pop("error", None)),
    ("INV-RES-016", "failed-result-empty", "A failed result's `result` drops the text sent before the failure.",
     lambda o: o.update(result="") if o["status"] == "failed" else None),
]


def _register_result_deviations() -> None:
    for rid, slug, doc, fn in RESULT_DEVIATIONS:
        def wrap(app, facts, fn=fn):
            return t.rewrite_json_response(app, _result(fn), where="invoke")

        wrap.__doc__ = doc
        broken(rid, name=f"{rid}-{slug}")(wrap)


_register_result_deviations()


SENT_KEY = "zoo.sent-session-key"


@broken("INV-RES-012", name="INV-RES-012-request-id-per-session")
def request_id_per_session(app, facts):
    """A call that sends its own `sessionId` gets a `requestId` made from the key (a tracing id taken from the
    conversation): every call on one session names the same request identifier."""
    import hashlib

    def note(body, scope):
        if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
            scope[SENT_KEY] = body["sessionId"]

    def change(obj, scope, status, headers):
        key = scope.get(SENT_KEY)
        if key is not None and status == 200 and isinstance(obj, dict) and "requestId" in obj:
            obj["requestId"] = "req_" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        return obj
    return t.rewrite_request_json(t.rewrite_json_response(app, change, where="invoke"), note, where="invoke")


@broken("INV-RES-001", name="INV-RES-001-text-plain-result")
def text_plain_result(app, facts):
    """The invoke result is sent as `text/plain`."""
    def fn(headers, scope, status):
        if status == 200 and t.media_type(headers) == "application/json":
            return t.with_header(headers, "content-type", "text/plain; charset=utf-8")
        return headers
    return t.rewrite_headers(app, fn, where="invoke")


@broken("INV-RES-014", name="INV-RES-014-failed-run-answers-500")
def failed_run_500(app, facts):
    """A failed run's result is sent with status 500."""
    def fn(obj, scope, status, headers):
        if status == 200 and isinstance(obj, dict) and obj.get("status") == "failed":
            return 500, headers, obj
        return obj
    return t.rewrite_json_response(app, fn, where="invoke")


# -- INV-STREAM: framing ---------------------------------------------------------------------------------------------
def _sse(fn):
    """rewrite_sse_json over invoke streams: fn(event, obj, state) -> obj | (event, obj) | [..] | None."""
    return lambda app, facts: t.rewrite_sse_json(app, lambda e, o, state, scope: fn(e, o, state), where="invoke")


def _text_only(fn):
    def rewrite(event, obj, state):
        return fn(event, obj, state) if event == "text" else obj
    return rewrite


STREAM_DEVIATIONS: list[tuple[str, str, str, Any]] = [
    ("INV-STREAM-001", "text-frames-unnamed", "`text` frames have no `event:` line.",
     _text_only(lambda e, o, s: (None, o))),
    ("INV-STREAM-004", "text-v-string", "`text` frames carry `v: \"1\"`.",
     _text_only(lambda e, o, s: {**o, "v": "1"})),
    ("INV-STREAM-005", "text-without-type", "`text` frames' data has no `type`.",
     _text_only(lambda e, o, s: {k: v for k, v in o.items() if k != "type"})),
    ("INV-STREAM-006", "text-content-not-delta", "`text` frames carry `content` instead of `delta`.",
     _text_only(lambda e, o, s: {**{k: v for k, v in o.items() if k != "delta"}, "content": o.get("delta")})),
    ("INV-STREAM-008", "first-text-frame-dropped", "The first `text` frame of each stream is not sent.",
     _text_only(lambda e, o, s: o if s.get("seen") else s.update(seen=True))),
    ("INV-STREAM-010", "tool-name-generic", "`tool_call_start` carries `name: tool`.",
     lambda e, o, s: {**o, "name": "tool"} if e == "tool_call_start" else o),
    ("INV-TERM-001", "done-twice", "A completed stream ends with two `done` frames.",
     lambda e, o, s: [o, o] if e == "done" else o),
    ("INV-TERM-003", "completed-ends-error", "A completed stream ends with `error` instead of `done`.",
     lambda e, o, s: ("error", {"v": 1, "type": "error", "message": "done"}) if e == "done" else o),
    ("INV-TERM-006", "error-without-message", "`error` frames carry `reason` instead of `message`.",
     lambda e, o, s: {**{k: v for k, v in o.items() if k != "message"}, "reason": o.get("message")}
     if e == "error" else o),
]


def _register_stream_deviations() -> None:
    for rid, slug, doc, fn in STREAM_DEVIATIONS:
        wrap = _sse(fn)
        wrap.__doc__ = doc
        broken(rid, name=f"{rid}-{slug}")(wrap)


_register_stream_deviations()


@broken("INV-STREAM-002", name="INV-STREAM-002-text-data-not-json")
def text_data_not_json(app, facts):
    """`text` frames carry the delta as plain text, not JSON."""
    def fn(block, state, scope):
        if block is None:
            return None
        event, obj = t.sse_json(block)
        if event == "text" and isinstance(obj, dict):
            return b"event: text\ndata: delta=" + json.dumps(obj.get("delta"))[1:-1].encode() + b"\n\n"
        return block
    return t.rewrite_sse(app, fn, where="invoke")


@broken("INV-STREAM-003", name="INV-STREAM-003-last-frame-unterminated")
def last_frame_unterminated(app, facts):
    """The terminal frame is not followed by a blank line."""
    def fn(block, state, scope):
        if block is None:
            return None
        event, _ = t.sse_json(block)
        return block[:-1] if event in ("done", "error") and block.endswith(b"\n\n") else block
    return t.rewrite_sse(app, fn, where="invoke")


@broken("INV-STREAM-011", name="INV-STREAM-011-tool-frames-after-text")
def tool_frames_after_text(app, facts):
    """Tool frames are held back and sent after the text, just before the terminal frame."""
    def fn(block, state, scope):
        if block is None:
            return None
        event, _ = t.sse_json(block)
        if event in ("tool_call_start", "tool_result"):
            state.setdefault("held", []).append(block)
            return None
        if event in ("done", "error"):
            return state.pop("held", []) + [block]
        return block
    return t.rewrite_sse(app, fn, where="invoke")


@broken("INV-TERM-002", name="INV-TERM-002-stream-held-open")
def stream_held_open(app, facts):
    """The stream stays open 8 s after the terminal frame."""
    async def mw(scope, receive, send):
        if scope["type"] != "http" or t.path_kind(scope.get("path", "")) != "invoke":
            return await app(scope, receive, send)
        streaming = False

        async def held(message):
            nonlocal streaming
            if message["type"] == "http.response.start":
                streaming = t.media_type(message.get("headers") or []) == "text/event-stream"
            elif message["type"] == "http.response.body" and streaming and not message.get("more_body", False):
                await send(dict(message, more_body=True))
                await asyncio.sleep(8)
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await app(scope, receive, held)
    return mw


@broken("INV-TERM-004", name="INV-TERM-004-failed-stream-drops-text")
def failed_stream_drops_text(app, facts):
    """A stream whose run fails withholds its text: only the `error` frame is sent."""
    def fn(block, state, scope):
        if block is None:
            return None
        event, _ = t.sse_json(block)
        if event == "text":
            state.setdefault("text", []).append(block)
            return None
        if event == "done":
            return state.pop("text", []) + [block]
        return block
    return t.rewrite_sse(app, fn, where="invoke")


@broken("INV-TERM-005", name="INV-TERM-005-silent-failure-ends-done")
def silent_failure_ends_done(app, facts):
    """A run that fails before any output ends its stream with `done`."""
    def fn(event, obj, state, scope):
        if event == "text":
            state["text"] = True
        if event == "error" and not state.get("text"):
            return "done", {"v": 1, "type": "done", "status": "completed"}
        return obj
    return t.rewrite_sse_json(app, fn, where="invoke")


@broken("INV-TERM-005", name="INV-TERM-005-early-failure-answered-500")
def early_failure_answered_500(app, facts):
    """A streamed run that fails before any output is answered HTTP 500 with the error body: the stream's 200 is held
    back until the first output, and the failure comes first."""
    def streamed_failure(body, scope) -> bool:
        prompt = body.get("prompt") if isinstance(body, dict) else None
        streams = isinstance(body, dict) and (body.get("stream") is True
                                              or "stream" not in body and _accepts_sse(scope))
        return streams and isinstance(prompt, str) and prompt.lstrip().startswith("fail")
    refused = t.respond(app, 500, {"error": {"code": "agent_failed", "message": "the run failed",
                                             "requestId": "req_failed_early"}},
                        where=lambda scope: scope.get("failed_early", False))

    async def mark(scope, receive, send):
        if not t.matches(scope, "invoke"):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        early = bool(ok and streamed_failure(body, scope))
        await refused(dict(scope, failed_early=early), t._replay(raw, pending, receive), send)
    return mark


# -- INV-SESS: sessions ------------------------------------------------------------------------------------------------
@broken("INV-SESS-001", name="INV-SESS-001-one-default-session")
def one_default_session(app, facts):
    """Every invoke without `sessionId` uses the same session `default`."""
    return t.rewrite_request_json(app, _request(lambda b, s: b.setdefault("sessionId", "default")), where="invoke")


@broken("INV-SESS-002", name="INV-SESS-002-new-instance-per-call")
def new_instance_per_call(app, facts):
    """Every call starts a new instance (the session key is made unique per call)."""
    def fn(body, scope):
        if isinstance(body.get("sessionId"), str):
            body["sessionId"] = (body["sessionId"] + "-" + uuid.uuid4().hex)[-256:]
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SESS-003", name="INV-SESS-003-result-session-rewritten")
def result_session_rewritten(app, facts):
    """The result's `sessionId` is a new identifier, not the one sent."""
    return t.rewrite_json_response(app, _result(lambda o: o.update(sessionId="ses_" + uuid.uuid4().hex)),
                                   where="invoke")


@broken("INV-SESS-004", name="INV-SESS-004-generated-key-not-the-used-one")
def generated_key_not_used(app, facts):
    """A generated session key in the result is not the key the run used."""
    def fn(obj):
        if isinstance(obj.get("sessionId"), str) and obj["sessionId"].startswith("ses_"):
            obj["sessionId"] = "ses_" + uuid.uuid4().hex
    return t.rewrite_json_response(app, _result(fn), where="invoke")


@broken("INV-SESS-005", name="INV-SESS-005-256-refused")
def key_256_refused(app, facts):
    """A 256-character `sessionId` is refused (the bound is applied as 255)."""
    def fn(body, scope):
        if isinstance(body.get("sessionId"), str) and len(body["sessionId"]) == 256:
            body["sessionId"] += "x"
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-SESS-006", name="INV-SESS-006-long-keys-truncated")
def long_keys_truncated(app, facts):
    """A `sessionId` over 256 characters is truncated and accepted."""
    def fn(body, scope):
        if isinstance(body.get("sessionId"), str) and len(body["sessionId"]) > 256:
            body["sessionId"] = body["sessionId"][:256]
    return t.rewrite_request_json(app, _request(fn), where="invoke")


# -- INV-PASS: pass-through -----------------------------------------------------------------------------------------------
@broken("INV-PASS-001", name="INV-PASS-001-null-fields-dropped")
def null_fields_dropped(app, facts):
    """Unknown fields whose value is null do not reach `params`."""
    def fn(body, scope):
        for key in [k for k, v in body.items() if v is None]:
            del body[key]
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-PASS-003", name="INV-PASS-003-extra-data-stringified")
def extra_data_stringified(app, facts):
    """The extra data field reaches `params` as a JSON string, not as the value sent."""
    field = facts["extra_data_field"]

    def fn(body, scope):
        if field in body and not isinstance(body[field], str):
            body[field] = json.dumps(body[field], separators=(",", ":"))
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-PASS-004", name="INV-PASS-004-messages-dropped")
def messages_dropped(app, facts):
    """`messages` never reaches the agent."""
    return t.rewrite_request_json(app, _request(lambda b, s: b.pop("messages", None)), where="invoke")


@broken("INV-PASS-004", name="INV-PASS-004-messages-4xx-without-error-body")
def messages_refused_without_error_body(app, facts):
    """An invoke carrying `messages` is answered 400 `text/plain` "bad messages" (not the error body)."""
    def mark(body, scope):
        scope["zoo.messages"] = isinstance(body, dict) and "messages" in body

    def answer(raw, scope, status, headers):
        if scope.get("zoo.messages"):
            return 400, t.with_header(headers, "content-type", "text/plain; charset=utf-8"), b"bad messages"
        return raw
    return t.rewrite_request_json(t.rewrite_body(app, answer, where="invoke"), mark, where="invoke")


# -- INV-LIM: limits ---------------------------------------------------------------------------------------------------------
broken.config_only("INV-LIM-001", name="INV-LIM-001-body-limit-400k", max_body_bytes=400_000,
                   doc="Request bodies over 400 kB are refused (0.5 MB is inside the spec's 1 MB).")
broken.config_only("INV-LIM-002", name="INV-LIM-002-body-limit-3m", max_body_bytes=3_000_000,
                   doc="Request bodies up to 3 MB are accepted.")
broken.config_only("INV-LIM-003", name="INV-LIM-003-extra-limit-1k", max_extra_bytes=1_000,
                   doc="Extra data over 1 kB is refused (2 KB is inside the spec's 4 KB).")
broken.config_only("INV-LIM-004", name="INV-LIM-004-extra-limit-16k", max_extra_bytes=16_000,
                   doc="Extra data up to 16 kB is accepted.")


# -- INV-ERR: refusals -------------------------------------------------------------------------------------------------------
@broken("INV-ERR-001", name="INV-ERR-001-streaming-refusal-as-sse")
def streaming_refusal_as_sse(app, facts):
    """A refusal of a request that accepts event streams is sent as a `text/event-stream` error frame."""
    def fn(obj, scope, status, headers):
        if 400 <= status < 500 and _accepts_sse(scope):
            frame = b"event: error\ndata: " + json.dumps({"v": 1, "type": "error", **obj.get("error", {})}).encode()
            return status, t.with_header(headers, "content-type", "text/event-stream"), frame + b"\n\n"
        return obj
    return t.rewrite_json_response(app, fn, where="invoke")


@broken("INV-ERR-001", name="INV-ERR-001-streaming-refusal-as-text-plain")
def streaming_refusal_as_text(app, facts):
    """A refusal of a request that accepts event streams keeps the error body but is sent as `text/plain`."""
    def fn(headers, scope, status):
        if 400 <= status < 500 and _accepts_sse(scope):
            return t.with_header(headers, "content-type", "text/plain; charset=utf-8")
        return headers
    return t.rewrite_headers(app, fn, where="invoke")


@broken("INV-ERR-002", name="INV-ERR-002-prompt-coerced-to-string")
def prompt_coerced(app, facts):
    """A non-string `prompt` is turned into a string and run."""
    def fn(body, scope):
        if "prompt" in body and not isinstance(body["prompt"], str):
            body["prompt"] = json.dumps(body["prompt"])
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-ERR-003", name="INV-ERR-003-stream-truthiness")
def stream_truthiness(app, facts):
    """A non-boolean `stream` is read by its truthiness."""
    def fn(body, scope):
        if "stream" in body and not isinstance(body["stream"], bool):
            body["stream"] = bool(body["stream"])
    return t.rewrite_request_json(app, _request(fn), where="invoke")


@broken("INV-ERR-004", name="INV-ERR-004-missing-prompt-is-empty")
def missing_prompt_empty(app, facts):
    """A missing `prompt` is run as the empty prompt."""
    return t.rewrite_request_json(app, _request(lambda b, s: b.setdefault("prompt", "")), where="invoke")


@broken("INV-ERR-005", name="INV-ERR-005-array-body-first-item")
def array_body_first_item(app, facts):
    """A JSON array body is run as its first item."""
    def fn(body, scope):
        if isinstance(body, list) and body and isinstance(body[0], dict):
            return body[0]
        return None
    return t.rewrite_request_json(app, fn, where="invoke")


@broken("INV-ERR-006", name="INV-ERR-006-runs-before-validating")
def runs_before_validating(app, facts):
    """An invoke with a non-string `prompt` first runs the agent on its session, then is refused."""
    async def discard(message):
        return None

    async def never():
        await asyncio.Event().wait()

    async def mw(scope, receive, send):
        if scope["type"] != "http" or t.path_kind(scope.get("path", "")) != "invoke":
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        ok, body = t._loads(raw)
        if ok and isinstance(body, dict) and "prompt" in body and not isinstance(body["prompt"], str) \
                and isinstance(body.get("sessionId"), str):
            shadow = json.dumps({"prompt": "say shadow", "sessionId": body["sessionId"]}).encode()
            headers = t.with_header(list(scope.get("headers") or []), b"content-length", str(len(shadow)).encode())
            await app(dict(scope, headers=headers), t._replay(shadow, None, never), discard)
        await app(scope, t._replay(raw, pending, receive), send)
    return mw


@broken("INV-STREAM-002", name="INV-STREAM-002-long-data-lines-wrapped")
def long_data_lines_wrapped(app, facts):
    """An SSE writer that caps its lines: a `data:` line over 1,024 bytes goes as several `data:` lines of 512
    characters, which a reader joins with newlines inside the JSON string."""
    def fn(block, state, scope):
        if block is None:
            return None
        lines = block.decode("utf-8", "surrogatepass").split("\n")
        out = []
        for line in lines:
            if line.startswith("data: ") and len(line.encode("utf-8", "surrogatepass")) > 1024:
                value = line[len("data: "):]
                out += ["data: " + value[i:i + 512] for i in range(0, len(value), 512)]
            else:
                out.append(line)
        return "\n".join(out).encode("utf-8", "surrogatepass")
    return t.rewrite_sse(app, fn, where="invoke")
