"""Broken MCP servers: the reference server with exactly one deviation each, named after the MCP requirement it
breaks. Shared helpers for zoo_auth.py and zoo_metadata.py live here too."""
from __future__ import annotations

import secrets
from typing import Any, Callable

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken

MODERN, LEGACY = "2026-07-28", "2025-11-25"


# -- helpers ----------------------------------------------------------------------------------
def hdr(scope: dict, name: str) -> str | None:
    value = t.header(list(scope.get("headers") or []), name)
    return value.decode("latin-1") if value is not None else None


def bearer_of(scope: dict) -> str | None:
    auth = hdr(scope, "authorization") or ""
    return auth[7:].strip() if auth.lower().startswith("bearer ") else None


def agent_of(scope: dict) -> str:
    parts = scope.get("path", "").split("/")
    return parts[parts.index("agents") + 1] if "agents" in parts else ""


def mcp_where(*, method: str | None = None, version: str | None = None, test: Callable[[dict], bool] | None = None):
    def where(scope: dict) -> bool:
        if t.path_kind(scope.get("path", "")) != "mcp":
            return False
        if method is not None and hdr(scope, "mcp-method") != method:
            return False
        if version is not None and hdr(scope, "mcp-protocol-version") != version:
            return False
        return test(scope) if test else True
    return where


def rpc_error(code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": None, "error": err}


def set_headers(scope: dict, changes: dict[str, str | None]) -> None:
    """Changes the request headers in place (seen by the app behind a request rewriter)."""
    headers = scope.setdefault("headers", [])
    keep = [(k, v) for k, v in headers if k.decode("latin-1").lower() not in changes]
    keep += [(k.encode(), v.encode()) for k, v in changes.items() if v is not None]
    headers[:] = keep


def swap_bearer(app, fn: Callable[[str | None, dict], str | None], where=None):
    """Replaces the Authorization header: fn(bearer credential or None, scope) -> new credential, or None: unchanged."""
    def change(headers, scope):
        new = fn(bearer_of(scope), scope)
        if new is None:
            return headers
        return t.with_header(headers, b"authorization", f"Bearer {new}".encode())
    return t.rewrite_request_headers(app, change, where=where)


def reroute_agent(app, fn: Callable[[str], str | None], where=None):
    """Routes a request to another agent id: fn(agent id in the path) -> new id, or None: unchanged."""
    async def middleware(scope, receive, send):
        if t.matches(scope, where):
            old = agent_of(scope)
            new = fn(old) if old else None
            if new:
                path = scope["path"].replace(f"/agents/{old}/", f"/agents/{new}/")
                scope = dict(scope, path=path, raw_path=path.encode())
        await app(scope, receive, send)
    return middleware


def on_results(app, fn: Callable[[dict[str, Any]], Any], where="mcp"):
    """fn(result) mutates every JSON-RPC result object of a JSON answer."""
    def rewrite(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("result"), dict):
            fn(obj["result"])
        return obj
    return t.rewrite_json_response(app, rewrite, where=where)


def on_errors(app, fn: Callable[[dict[str, Any], int], Any], where="mcp"):
    """fn(error, status) mutates every JSON-RPC error object; it may return a new status."""
    return t.rewrite_error(app, fn, where)


def on_request(app, fn: Callable[[dict[str, Any], dict], Any], where="mcp"):
    """fn(body, scope) mutates the request JSON object (and may change scope headers in place)."""
    def rewrite(body, scope):
        if isinstance(body, dict):
            fn(body, scope)
            return body
        return None
    return t.rewrite_request_json(app, rewrite, where=where)


def on_stream(app, fn: Callable[[str | None, Any, dict], Any]):
    """fn(event, obj, state) over every JSON frame of an MCP event stream."""
    return t.rewrite_sse_json(app, lambda event, obj, state, scope: fn(event, obj, state), where="mcp")


def meta_of(body: dict) -> dict:
    params = body.get("params") if isinstance(body.get("params"), dict) else {}
    return params.get("_meta") if isinstance(params.get("_meta"), dict) else {}


def is_progress(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("method") == "notifications/progress"


# -- versions ---------------------------------------------------------------------------------
@broken("MCP-VER-001", name="MCP-VER-001-refuses-modern-tools-call")
def modern_refused(app, facts):
    """A 2026-07-28 tools/call carrying Mcp-Name is refused as an unsupported version (the server wants initialize)."""
    return t.respond(app, 400, rpc_error(-32022, "Unsupported protocol version.", {"supported": [LEGACY],
                                                                                   "requested": MODERN}),
                     where=mcp_where(method="tools/call", version=MODERN, test=lambda s: hdr(s, "mcp-name") is not None))


@broken("MCP-VER-002", name="MCP-VER-002-unknown-version-code-32009")
def unknown_version_other_code(app, facts):
    """An unknown version is refused with -32009 (the spec's 'version not supported') instead of -32022."""
    def change(err, status):
        data = err.get("data") or {}
        if err.get("code") == -32022 and data.get("requested") not in data.get("supported", []):
            err["code"] = -32009
    return on_errors(app, change)


@broken("MCP-VER-003", name="MCP-VER-003-supported-lacks-2026")
def supported_lacks_modern(app, facts):
    """The -32022 data lists only 2025-11-25 as supported."""
    def change(err, status):
        if isinstance(err.get("data"), dict) and "supported" in err["data"]:
            err["data"]["supported"] = [LEGACY]
    return on_errors(app, change)


@broken("MCP-VER-004", name="MCP-VER-004-no-data-requested")
def no_requested(app, facts):
    """A -32022 without `data.requested`."""
    return on_errors(app, lambda err, status: isinstance(err.get("data"), dict) and err["data"].pop("requested", None))


@broken("MCP-VER-005", name="MCP-VER-005-initialize-names-other-version")
def initialize_other_version(app, facts):
    """The initialize result names protocolVersion 2025-06-18."""
    return on_results(app, lambda r: "serverInfo" in r and r.update(protocolVersion="2025-06-18"))


@broken("MCP-VER-006", name="MCP-VER-006-legacy-calls-refused")
def legacy_refused(app, facts):
    """After initialize, requests with MCP-Protocol-Version 2025-11-25 are refused with 400/-32022."""
    return t.respond(app, 400, rpc_error(-32022, "Unsupported protocol version.", {"supported": [MODERN],
                                                                                   "requested": LEGACY}),
                     where=mcp_where(version=LEGACY))


@broken("MCP-VER-007", name="MCP-VER-007-initialize-negotiates")
def initialize_negotiates(app, facts):
    """initialize with an unknown version negotiates (upstream behaviour) instead of refusing with -32022."""
    def change(body, scope):
        params = body.get("params")
        if body.get("method") == "initialize" and isinstance(params, dict):
            params["protocolVersion"] = LEGACY
    return on_request(app, change)


# -- mirrored headers -------------------------------------------------------------------------
@broken("MCP-HDR-001", name="MCP-HDR-001-version-mismatch-accepted")
def version_mismatch_accepted(app, facts):
    """A header version that differs from the `_meta` version is accepted (the header wins)."""
    def change(body, scope):
        meta, header = meta_of(body), hdr(scope, "mcp-protocol-version")
        if header and "io.modelcontextprotocol/protocolVersion" in meta:
            meta["io.modelcontextprotocol/protocolVersion"] = header
    return on_request(app, change)


@broken("MCP-HDR-002", name="MCP-HDR-002-method-mismatch-code-32020")
def method_mismatch_upstream_code(app, facts):
    """A Mcp-Method that does not match the body is refused with upstream's -32020 instead of -32022."""
    return on_errors(app, lambda err, status: "Mcp-Method" in str(err.get("message")) and err.update(code=-32020))


@broken("MCP-HDR-003", name="MCP-HDR-003-name-mismatch-accepted")
def name_mismatch_accepted(app, facts):
    """A Mcp-Name that differs from params.name is ignored."""
    def change(body, scope):
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        if hdr(scope, "mcp-name") not in (None, params.get("name")):
            set_headers(scope, {"mcp-name": None})
    return on_request(app, change)


@broken("MCP-HDR-004", name="MCP-HDR-004-mcp-name-required")
def mcp_name_required(app, facts):
    """A tools/call without Mcp-Name is refused (upstream 2026-07-28 requires it; the spec does not)."""
    return t.respond(app, 400, rpc_error(-32022, "Mcp-Name is required.", {"supported": [MODERN], "requested": MODERN}),
                     where=mcp_where(method="tools/call", version=MODERN, test=lambda s: hdr(s, "mcp-name") is None))


@broken("MCP-HDR-005", name="MCP-HDR-005-missing-method-header-accepted")
def missing_method_accepted(app, facts):
    """A request without Mcp-Method is served (the body's method is used)."""
    def change(body, scope):
        if hdr(scope, "mcp-method") is None and isinstance(body.get("method"), str):
            set_headers(scope, {"mcp-method": body["method"]})
    return on_request(app, change)


@broken("MCP-HDR-007", name="MCP-HDR-007-missing-version-header-accepted")
def missing_version_accepted(app, facts):
    """A request without MCP-Protocol-Version is served when `_meta` names a version."""
    def change(body, scope):
        version = meta_of(body).get("io.modelcontextprotocol/protocolVersion")
        if hdr(scope, "mcp-protocol-version") is None and isinstance(version, str):
            set_headers(scope, {"mcp-protocol-version": version})
    return on_request(app, change)


# -- methods and the tool ---------------------------------------------------------------------
@broken("MCP-METH-001", name="MCP-METH-001-no-server-discover")
def no_discover(app, facts):
    """server/discover answers 404 -32601 (method not found)."""
    return t.respond(app, 404, rpc_error(-32601, "Method not found: server/discover"),
                     where=mcp_where(method="server/discover"))


@broken("MCP-METH-002", name="MCP-METH-002-two-tools")
def two_tools(app, facts):
    """tools/list lists a second tool."""
    def change(r):
        if isinstance(r.get("tools"), list) and r["tools"]:
            r["tools"].append(dict(r["tools"][0], name=r["tools"][0]["name"] + "_stream"))
    return on_results(app, change)


def renamed_tool(app, facts, new_name: Callable[[str], str]):
    """The tool is listed under another name; calls under that name reach it."""
    real = "ask_" + facts["agent_slug"].replace("-", "_")
    alias = new_name(facts["agent_slug"])

    def listed(r):
        for tool in r.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name") == real:
                tool["name"] = alias

    def called(body, scope):
        params = body.get("params")
        if isinstance(params, dict) and params.get("name") == alias:
            params["name"] = real
        if hdr(scope, "mcp-name") == alias:
            set_headers(scope, {"mcp-name": real})
    return on_results(on_request(app, called), listed)


@broken("MCP-METH-003", name="MCP-METH-003-hyphen-kept")
def hyphen_kept(app, facts):
    """The tool is named `ask_` + the slug with its hyphens kept."""
    return renamed_tool(app, facts, lambda slug: "ask_" + slug)


@broken("MCP-METH-004", name="MCP-METH-004-name-not-from-slug")
def name_not_from_slug(app, facts):
    """The tool is named after the agent's display name, not its slug."""
    return renamed_tool(app, facts, lambda slug: "ask_conformance_agent_v2")


@broken("MCP-METH-005", name="MCP-METH-005-integer-id-as-string")
def id_type_changed(app, facts):
    """Integer request ids come back as strings."""
    def change(obj, scope, status, headers):
        if isinstance(obj, dict) and isinstance(obj.get("id"), int):
            obj["id"] = str(obj["id"])
        return obj
    return t.rewrite_json_response(app, change, where="mcp")


# -- the audited SHOULDs: only what MCP rules out warns ---------------------------------------------------------
@broken("MCP-METH-007", name="MCP-METH-007-unknown-tool-as-tool-result")
def unknown_tool_as_result(app, facts):
    """An unknown tool is answered as a tool result with isError true (a protocol error in MCP)."""
    def change(obj, scope, status, headers):
        error = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(error, dict) and str(error.get("message", "")).startswith("Unknown tool"):
            result = {"content": [{"type": "text", "text": error["message"]}], "isError": True,
                      "resultType": "complete"}
            return 200, headers, {"jsonrpc": "2.0", "id": obj.get("id"), "result": result}
        return obj
    return t.rewrite_json_response(app, change, where="mcp")


@broken("MCP-METH-009", name="MCP-METH-009-runs-without-prompt")
def runs_without_prompt(app, facts):
    """A tools/call without `arguments.prompt` (nor `resume`) runs the agent on an empty prompt."""
    def change(body, scope):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if body.get("method") == "tools/call" and isinstance(args, dict) and "prompt" not in args \
                and "resume" not in args:
            args["prompt"] = ""
    return on_request(app, change)


@broken("MCP-PROG-011", name="MCP-PROG-011-answer-as-text-plain")
def answer_as_text_plain(app, facts):
    """A tools/call without a progress token is answered as `text/plain` (neither of MCP's two forms)."""
    def change(headers, scope, status):
        if status == 200 and t.media_type(headers) == "application/json" and hdr(scope, "mcp-method") == "tools/call":
            return t.with_header(headers, b"content-type", b"text/plain; charset=utf-8")
        return headers
    return t.rewrite_headers(app, change, where="mcp")


@broken("MCP-HDR-006", name="MCP-HDR-006-missing-header-code-32600")
def missing_header_32600(app, facts):
    """A request missing Mcp-Method or MCP-Protocol-Version is refused 400 with -32600 (neither -32022 nor -32020)."""
    def missing(scope: dict) -> bool:
        return hdr(scope, "mcp-method") is None or hdr(scope, "mcp-protocol-version") is None
    return on_errors(app, lambda error, status: error.get("code") == -32022 and error.update(code=-32600),
                     where=mcp_where(test=missing))


# -- results ----------------------------------------------------------------------------------
def on_call_results(app, fn):
    return on_results(app, lambda r: "content" in r and fn(r))


@broken("MCP-TOOL-001", name="MCP-TOOL-001-two-blocks")
def two_blocks(app, facts):
    """The reply comes as two text blocks (the second empty)."""
    return on_call_results(app, lambda r: r["content"].append({"type": "text", "text": ""}))


@broken("MCP-TOOL-002", name="MCP-TOOL-002-trailing-newline")
def trailing_newline(app, facts):
    """The text block has a newline appended to the reply."""
    return on_call_results(app, lambda r: [b.update(text=b["text"] + "\n") for b in r["content"]])


@broken("MCP-TOOL-003", name="MCP-TOOL-003-result-type-completed")
def result_type_completed(app, facts):
    """A finished run has resultType `completed`."""
    return on_call_results(app, lambda r: r.update(resultType="completed"))


@broken("MCP-TOOL-004", name="MCP-TOOL-004-failure-as-jsonrpc-error")
def failure_as_error(app, facts):
    """A failed run answers a JSON-RPC error (-32603) instead of a result with isError."""
    def change(obj, scope, status, headers):
        result = obj.get("result") if isinstance(obj, dict) else None
        if isinstance(result, dict) and result.get("isError") is True:
            return {"jsonrpc": "2.0", "id": obj.get("id"), "error": {"code": -32603, "message": "boom"}}
        return obj
    return t.rewrite_json_response(app, change, where="mcp")


@broken("MCP-TOOL-005", name="MCP-TOOL-005-is-error-string")
def is_error_string(app, facts):
    """A finished run carries `isError: "false"` (a string)."""
    return on_call_results(app, lambda r: r.get("isError") is False and r.update(isError="false"))


# -- sessions ---------------------------------------------------------------------------------
@broken("MCP-SESS-001", name="MCP-SESS-001-no-structured-content")
def no_structured(app, facts):
    """The result has no structuredContent."""
    return on_call_results(app, lambda r: r.pop("structuredContent", None))


@broken("MCP-SESS-002", name="MCP-SESS-002-session-ignored")
def session_ignored(app, facts):
    """Every call starts a new instance: the session_id is replaced by a fresh one (and echoed back as sent)."""
    def change(body, scope):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and isinstance(args.get("session_id"), str) and "prompt" in args:
            scope.setdefault("zoo", {})["sid"] = args["session_id"]
            args["session_id"] = "fresh-" + secrets.token_hex(6)

    def echo(obj, scope, status, headers):
        sid = scope.get("zoo", {}).get("sid")
        sc = (obj.get("result") or {}).get("structuredContent") if isinstance(obj, dict) else None
        if sid and isinstance(sc, dict):
            sc["sessionId"] = sid
        return obj
    return t.rewrite_json_response(on_request(app, change), echo, where="mcp")


@broken("MCP-SESS-003", name="MCP-SESS-003-session-not-echoed")
def session_prefixed(app, facts):
    """structuredContent.sessionId is the given session_id with a prefix."""
    return on_call_results(app, lambda r: isinstance(r.get("structuredContent"), dict)
                           and r["structuredContent"].update(sessionId="s:" + r["structuredContent"]["sessionId"]))


@broken("MCP-SESS-004", name="MCP-SESS-004-generated-session-unknown")
def generated_unusable(app, facts):
    """A generated sessionId is reported, but not the one the run used."""
    def change(r):
        sc = r.get("structuredContent")
        if isinstance(sc, dict) and str(sc.get("sessionId", "")).startswith("ses_"):
            sc["sessionId"] = "ses_" + secrets.token_hex(8)
    return on_call_results(app, change)


@broken("MCP-SESS-005", name="MCP-SESS-005-needs-session-header")
def needs_session(app, facts):
    """Requests other than initialize need an Mcp-Session-Id (a stateful server)."""
    return t.respond(app, 400, rpc_error(-32600, "Bad Request: Mcp-Session-Id header is required"),
                     where=mcp_where(test=lambda s: hdr(s, "mcp-session-id") is None
                                     and hdr(s, "mcp-method") not in ("initialize", None)))


# -- progress streams -------------------------------------------------------------------------
@broken("MCP-PROG-001", name="MCP-PROG-001-token-ignored")
def token_ignored(app, facts):
    """The progress token is ignored: one JSON body instead of a stream."""
    return on_request(app, lambda body, scope: meta_of(body).pop("progressToken", None))


@broken("MCP-PROG-002", name="MCP-PROG-002-frames-named-progress")
def frames_named_progress(app, facts):
    """Progress frames are `event: progress` instead of `event: message`."""
    return on_stream(app, lambda event, obj, state: ("progress", obj) if is_progress(obj) else obj)


@broken("MCP-PROG-003", name="MCP-PROG-003-response-not-last")
def response_not_last(app, facts):
    """One more progress notification follows the response."""
    def fn(event, obj, state):
        if is_progress(obj):
            state["last"] = obj
            return obj
        if isinstance(obj, dict) and "result" in obj and state.get("last"):
            return [(event, obj), (event, state["last"])]
        return obj
    return on_stream(app, fn)


@broken("MCP-PROG-004", name="MCP-PROG-004-log-notification")
def log_notification(app, facts):
    """A notifications/message log frame precedes the response."""
    def fn(event, obj, state):
        if isinstance(obj, dict) and "result" in obj:
            log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "done"}}
            return [(event, log), (event, obj)]
        return obj
    return on_stream(app, fn)


def on_progress_params(app, fn):
    def change(event, obj, state):
        if is_progress(obj) and isinstance(obj.get("params"), dict):
            fn(obj["params"])
        return obj
    return on_stream(app, change)


@broken("MCP-PROG-005", name="MCP-PROG-005-token-stringified")
def token_stringified(app, facts):
    """An integer progress token comes back as a string."""
    return on_progress_params(app, lambda p: isinstance(p.get("progressToken"), int)
                              and p.update(progressToken=str(p["progressToken"])))


@broken("MCP-PROG-006", name="MCP-PROG-006-progress-string")
def progress_string(app, facts):
    """`progress` is a string."""
    return on_progress_params(app, lambda p: p.update(progress=str(p.get("progress"))))


@broken("MCP-PROG-007", name="MCP-PROG-007-no-message")
def no_message(app, facts):
    """Progress notifications carry no `message`."""
    return on_progress_params(app, lambda p: p.pop("message", None))


@broken("MCP-PROG-008", name="MCP-PROG-008-streamed-result-incomplete")
def streamed_result_incomplete(app, facts):
    """The result at the end of a stream lacks resultType."""
    def fn(event, obj, state):
        if isinstance(obj, dict) and isinstance(obj.get("result"), dict):
            obj["result"].pop("resultType", None)
        return obj
    return on_stream(app, fn)


# -- paused runs ------------------------------------------------------------------------------
@broken("MCP-PAUSE-001", name="MCP-PAUSE-001-question-not-shown")
def question_hidden(app, facts):
    """A client that cannot elicit gets `paused` instead of the question."""
    return on_call_results(app, lambda r: (r.get("structuredContent") or {}).get("awaitingResume")
                           and r.update(content=[{"type": "text", "text": "paused"}]))


@broken("MCP-PAUSE-002", name="MCP-PAUSE-002-resume-wrapped")
def resume_wrapped(app, facts):
    """The `resume` argument reaches the agent wrapped in {"value": …}."""
    def change(body, scope):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and "resume" in args:
            args["resume"] = {"value": args["resume"]}
    return on_request(app, change)


@broken("MCP-PAUSE-003", name="MCP-PAUSE-003-never-elicits")
def never_elicits(app, facts):
    """Clients that can elicit get the question as text too (elicitation capability ignored)."""
    def change(body, scope):
        caps = meta_of(body).get("io.modelcontextprotocol/clientCapabilities")
        if isinstance(caps, dict):
            caps.pop("elicitation", None)
    return on_request(app, change)


@broken("MCP-PAUSE-003", name="MCP-PAUSE-003-input-required-without-form")
def input_required_without_form(app, facts):
    """An eliciting client gets `resultType: input_required` but no form: `inputRequests` is left out."""
    return on_results(app, lambda r: r.get("resultType") == "input_required" and r.pop("inputRequests", None))


@broken("MCP-PAUSE-004", name="MCP-PAUSE-004-retry-restarts-run")
def retry_restarts_run(app, facts):
    """The retry with the form answered does not continue the paused run: the answer is dropped and the call runs
    its prompt afresh (so the question is asked again)."""
    def change(body, scope):
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        if "inputResponses" in params:
            params.pop("inputResponses", None)
            params.pop("requestState", None)
    return on_request(app, change)


@broken("MCP-PAUSE-004", name="MCP-PAUSE-004-form-answer-dropped")
def form_answer_dropped(app, facts):
    """On the retry, the agent gets an empty object instead of the form's content."""
    def change(body, scope):
        responses = (body.get("params") or {}).get("inputResponses") if isinstance(body.get("params"), dict) else None
        for response in (responses or {}).values():
            if isinstance(response, dict) and "content" in response:
                response["content"] = {}
    return on_request(app, change)


# -- refusals ---------------------------------------------------------------------------------
@broken("MCP-ERR-001", name="MCP-ERR-001-refusals-answer-200")
def refusals_200(app, facts):
    """MCP refusals answer HTTP 200 with the JSON-RPC error (status not kept)."""
    return on_errors(app, lambda err, status: 200 if status >= 400 else None)


@broken("MCP-ERR-001", name="MCP-ERR-001-error-without-jsonrpc")
def error_without_jsonrpc(app, facts):
    """MCP refusal bodies lack `jsonrpc`."""
    def change(obj, scope, status, headers):
        if isinstance(obj, dict) and "error" in obj:
            obj.pop("jsonrpc", None)
        return obj
    return t.rewrite_json_response(app, change, where="mcp")


@broken("MCP-ERR-002", name="MCP-ERR-002-unknown-agent-403")
def unknown_agent_403(app, facts):
    """An unknown agent answers 403 instead of 404."""
    known = {facts["agent_id"], facts.get("other_agent_id"), facts.get("undeployed_agent_id")}
    return on_errors(app, lambda err, status: 403 if status == 404 else None,
                     where=mcp_where(test=lambda s: agent_of(s) not in known))


@broken("MCP-ERR-003", name="MCP-ERR-003-retry-after-http-date",
        config={"rate_limit_burst": 8, "rate_limit_per_second": 2.0})
def retry_after_date(app, facts):
    """A 429 carries Retry-After as an HTTP-date instead of whole seconds."""
    def change(headers, scope, status):
        if status == 429:
            return t.with_header(headers, b"retry-after", b"Wed, 21 Oct 2099 07:28:00 GMT")
        return headers
    return t.rewrite_headers(app, change, where="mcp")

