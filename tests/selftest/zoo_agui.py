"""Broken servers for the AG-UI checks (and GEN-SESS-001): the reference server with exactly one deviation each,
named after the requirement it breaks. ``tests/selftest/test_zoo.py`` certifies each on its requirement.
"""
from __future__ import annotations

import secrets
from typing import Any, Callable

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken

# Keys the middlewares leave in the request scope for the response side (the scope object is shared).
RESUMED = "conformance.zoo.resume"
EMPTY_MESSAGES = "conformance.zoo.empty_messages"


def on_events(app, fn: Callable[[dict, dict, dict], Any]):
    """Rewrite every AG-UI event: fn(event, state, scope) -> event | [events] | None (drop)."""
    def each(name, obj, state, scope):
        return fn(obj, state, scope) if isinstance(obj, dict) else obj
    return t.rewrite_sse_json(app, each, where="agui")


def on_type(app, type_: str, fn: Callable[[dict], Any]):
    """Rewrite the events of one type: fn(event) -> event | [events] | None."""
    return on_events(app, lambda ev, state, scope: fn(ev) if ev.get("type") == type_ else ev)


def on_request(app, fn: Callable[[dict, dict], Any], where: str = "agui"):
    """Rewrite the request JSON object: fn(body, scope) -> body | None (keep)."""
    return t.rewrite_request_json(app, lambda body, scope: fn(body, scope) if isinstance(body, dict) else None,
                                  where=where)


def setting(key: str, value: Any) -> Callable[[dict], dict]:
    def apply(ev: dict) -> dict:
        ev[key] = value(ev) if callable(value) else value
        return ev
    return apply


# -- framing -----------------------------------------------------------------------------------
@broken("AGUI-FRAME-001", name="AGUI-FRAME-001-text-plain")
def text_plain(app, facts):
    """The AG-UI stream is labelled `text/plain` instead of `text/event-stream`."""
    def rewrite(headers, scope, status):
        if t.media_type(headers) == "text/event-stream":
            return t.with_header(headers, b"content-type", b"text/plain; charset=utf-8")
        return headers
    return t.rewrite_headers(app, rewrite, where="agui")


@broken("AGUI-FRAME-002", name="AGUI-FRAME-002-named-frames")
def named_frames(app, facts):
    """Every AG-UI frame carries `event: <type>` (as invoke's frames do)."""
    return t.rewrite_sse_json(app, lambda name, obj, state, scope: (str(obj.get("type", "x")).lower(), obj)
                              if isinstance(obj, dict) else obj, where="agui")


@broken("AGUI-FRAME-003", name="AGUI-FRAME-003-untyped-heartbeat-frame")
def untyped_frame(app, facts):
    """A `{"heartbeat": true}` frame without `type` follows RUN_STARTED."""
    return on_type(app, "RUN_STARTED", lambda ev: [ev, {"heartbeat": True}])


@broken("AGUI-FRAME-004", name="AGUI-FRAME-004-two-events-in-one-frame")
def two_events_per_frame(app, facts):
    """TEXT_MESSAGE_START and the first TEXT_MESSAGE_CONTENT share one frame (two data lines, two JSON values)."""
    def rewrite(block, state, scope):
        if block is None:
            return state.pop("held", None)
        _, obj = t.sse_json(block)
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "TEXT_MESSAGE_START":
            state["held"] = block
            return None
        if "held" in state:
            head = state.pop("held").rstrip(b"\n")
            return head + b"\n" + block if kind == "TEXT_MESSAGE_CONTENT" else [head + b"\n\n", block]
        return block
    return t.rewrite_sse(app, rewrite, where="agui")


# -- order ---------------------------------------------------------------------------------------
@broken("AGUI-ORDER-001", name="AGUI-ORDER-001-no-run-started")
def no_run_started(app, facts):
    """The stream starts with the message events: RUN_STARTED is never sent."""
    return on_type(app, "RUN_STARTED", lambda ev: None)


@broken("AGUI-ORDER-002", name="AGUI-ORDER-002-run-finished-twice")
def finished_twice(app, facts):
    """RUN_FINISHED is sent twice."""
    return on_type(app, "RUN_FINISHED", lambda ev: [ev, dict(ev)])


@broken("AGUI-ORDER-003", name="AGUI-ORDER-003-event-after-terminal")
def event_after_terminal(app, facts):
    """A CUSTOM event follows the terminal RUN_FINISHED / RUN_ERROR."""
    trailer = {"type": "CUSTOM", "name": "trailer", "value": {}}
    return on_events(app, lambda ev, state, scope: [ev, dict(trailer)] if ev.get("type") in ("RUN_FINISHED", "RUN_ERROR")
                     else ev)


@broken("AGUI-ORDER-004", name="AGUI-ORDER-004-success-ends-with-run-error")
def success_as_error(app, facts):
    """A run that ends normally ends with RUN_ERROR (message `done`) instead of RUN_FINISHED."""
    def rewrite(ev):
        outcome = ev.get("outcome")
        if isinstance(outcome, dict) and outcome.get("type") == "success":
            return {"type": "RUN_ERROR", "message": "done"}
        return ev
    return on_type(app, "RUN_FINISHED", rewrite)


@broken("AGUI-ORDER-005", name="AGUI-ORDER-005-tool-and-step-events-dropped")
def tool_step_dropped(app, facts):
    """Tool call and step events are not streamed."""
    return on_events(app, lambda ev, state, scope: None if str(ev.get("type")).startswith(("TOOL_CALL_", "STEP_"))
                     else ev)


@broken("AGUI-ORDER-006", name="AGUI-ORDER-006-last-delta-dropped")
def last_delta_dropped(app, facts):
    """The last TEXT_MESSAGE_CONTENT of each message is not sent (RUN_FINISHED.result is still whole)."""
    def rewrite(ev, state, scope):
        kind = ev.get("type")
        if kind == "TEXT_MESSAGE_CONTENT":
            held, state["held"] = state.get("held"), ev
            return held
        if kind == "TEXT_MESSAGE_END":
            state.pop("held", None)
        return ev
    return on_events(app, rewrite)


# -- ids --------------------------------------------------------------------------------------------
def _both(app, field: str, change: Callable[[Any], Any], types=("RUN_STARTED", "RUN_FINISHED")):
    return on_events(app, lambda ev, state, scope: setting(field, lambda e: change(e.get(field)))(ev)
                     if ev.get("type") in types else ev)


@broken("AGUI-ID-001", name="AGUI-ID-001-thread-id-replaced")
def thread_replaced(app, facts):
    """RUN_STARTED and RUN_FINISHED report `srv-` + the threadId instead of the threadId sent."""
    return _both(app, "threadId", lambda v: f"srv-{str(v)[:40]}")


@broken("AGUI-ID-002", name="AGUI-ID-002-run-id-not-echoed-on-start")
def run_not_echoed_start(app, facts):
    """RUN_STARTED carries a run id of the server's own instead of the runId sent."""
    return _both(app, "runId", lambda v: "run_server_own", types=("RUN_STARTED",))


@broken("AGUI-ID-003", name="AGUI-ID-003-run-id-not-echoed-on-finish")
def run_not_echoed_finish(app, facts):
    """RUN_FINISHED carries a run id of the server's own instead of the runId sent."""
    return _both(app, "runId", lambda v: "run_server_own", types=("RUN_FINISHED",))


@broken("AGUI-ID-004", name="AGUI-ID-004-finish-thread-differs")
def finish_thread_differs(app, facts):
    """RUN_FINISHED.threadId differs from RUN_STARTED.threadId."""
    return _both(app, "threadId", lambda v: f"{v}-finished", types=("RUN_FINISHED",))


@broken("AGUI-ID-005", name="AGUI-ID-005-generated-thread-id-300-chars")
def generated_thread_too_long(app, facts):
    """A generated threadId is reported 300 characters long."""
    return _both(app, "threadId", lambda v: (v + "-" * 300)[:300] if str(v).startswith("thr_") else v)


@broken("AGUI-ID-006", name="AGUI-ID-006-generated-run-id-empty")
def generated_run_empty(app, facts):
    """A generated runId is reported as the empty string."""
    return _both(app, "runId", lambda v: "" if str(v).startswith("run_") else v)


@broken("AGUI-ID-007", name="AGUI-ID-007-message-start-without-role")
def start_without_role(app, facts):
    """TEXT_MESSAGE_START leaves out `role` (upstream reads that as assistant; the spec lists role `assistant`)."""
    return on_type(app, "TEXT_MESSAGE_START", lambda ev: {k: v for k, v in ev.items() if k != "role"})


@broken("AGUI-ID-008", name="AGUI-ID-008-content-for-unknown-message")
def content_unknown_message(app, facts):
    """TEXT_MESSAGE_CONTENT names a messageId no TEXT_MESSAGE_START announced."""
    return on_type(app, "TEXT_MESSAGE_CONTENT", setting("messageId", lambda ev: f"{ev.get('messageId')}-other"))


# -- sessions ------------------------------------------------------------------------------------
@broken("AGUI-SESS-001", name="AGUI-SESS-001-generated-thread-reported-wrong")
def generated_thread_wrong(app, facts):
    """The threadId reported for a generated session is not that session's key (a new one each time)."""
    def rewrite(ev, state, scope):
        if ev.get("type") in ("RUN_STARTED", "RUN_FINISHED") and str(ev.get("threadId")).startswith("thr_"):
            ev["threadId"] = state.setdefault("reported", f"thr_{secrets.token_hex(8)}")
        return ev
    return on_events(app, rewrite)


@broken("AGUI-SESS-002", name="AGUI-SESS-002-thread-reaches-new-instance")
def thread_new_instance(app, facts):
    """Every run reaches a new instance although the threadId is the same (ids are still echoed)."""
    marker = "~zoo~"

    def fresh(body, scope):
        tid = body.get("threadId")
        if isinstance(tid, str) and 0 < len(tid) <= 200:
            return {**body, "threadId": tid + marker + secrets.token_hex(4)}
        return None

    inner = on_request(app, fresh)
    return _both(inner, "threadId", lambda v: v.split(marker)[0] if isinstance(v, str) else v)


@broken("AGUI-SESS-003", name="AGUI-SESS-003-256-char-thread-refused")
def long_thread_refused(app, facts):
    """A threadId of more than 200 characters is refused with validation_failed."""
    return on_request(app, lambda body, scope: {**body, "threadId": body["threadId"] + "x" * 100}
                      if isinstance(body.get("threadId"), str) and len(body["threadId"]) > 200 else None)


@broken("AGUI-SESS-004", name="AGUI-SESS-004-257-char-thread-truncated")
def long_thread_truncated(app, facts):
    """A threadId over 256 characters is cut to 256 and the run streams instead of being refused."""
    return on_request(app, lambda body, scope: {**body, "threadId": body["threadId"][:256]}
                      if isinstance(body.get("threadId"), str) and len(body["threadId"]) > 256 else None)


@broken("GEN-SESS-001", name="GEN-SESS-001-mcp-session-separate")
def mcp_session_separate(app, facts):
    """MCP `session_id` keys a session of its own, apart from invoke `sessionId` and AG-UI `threadId`."""
    def rewrite(body, scope):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and isinstance(args.get("session_id"), str):
            args["session_id"] = "mcp-" + args["session_id"][:200]
            return body
        return None
    return on_request(app, rewrite, where="mcp")


# -- prompt and result ------------------------------------------------------------------------------
def _users(messages: Any) -> list[dict]:
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "user"] if isinstance(messages, list) else []


@broken("AGUI-PROMPT-001", name="AGUI-PROMPT-001-first-user-message-runs")
def first_user_runs(app, facts):
    """The first user message is the prompt, not the last (the list is otherwise passed as sent)."""
    def rewrite(body, scope):
        users = _users(body.get("messages"))
        if len(users) > 1:
            users[-1]["content"] = users[0].get("content")
            return body
        return None
    return on_request(app, rewrite)


@broken("AGUI-PROMPT-002", name="AGUI-PROMPT-002-only-last-message-reaches-agent")
def only_last_message(app, facts):
    """The agent receives only the last user message, not the whole list."""
    def rewrite(body, scope):
        users = _users(body.get("messages"))
        return {**body, "messages": users[-1:]} if len(body.get("messages") or []) > 1 and users else None
    return on_request(app, rewrite)


@broken("AGUI-PROMPT-002", name="AGUI-PROMPT-002-message-members-beyond-the-model-dropped")
def members_beyond_the_model_dropped(app, facts):
    """Messages are bound to an {id, role, content} model: a user's `name`, an assistant's `toolCalls` and a tool
    message's `toolCallId` never reach the agent (the list is otherwise passed as sent)."""
    def rewrite(body, scope):
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not any(isinstance(m, dict) and set(m) - {"id", "role", "content"}
                                                 for m in msgs):
            return None
        return {**body, "messages": [{k: v for k, v in m.items() if k in ("id", "role", "content")}
                                     if isinstance(m, dict) else m for m in msgs]}
    return on_request(app, rewrite)


@broken("AGUI-PROMPT-003", name="AGUI-PROMPT-003-result-empty")
def result_empty(app, facts):
    """RUN_FINISHED.result is the empty string."""
    return on_type(app, "RUN_FINISHED", setting("result", ""))


@broken("AGUI-PROMPT-004", name="AGUI-PROMPT-004-success-outcome-left-out")
def outcome_left_out(app, facts):
    """A run that ends normally has no `outcome` on RUN_FINISHED (upstream reads absence as success)."""
    def rewrite(ev):
        outcome = ev.get("outcome")
        return {k: v for k, v in ev.items() if k != "outcome"} if isinstance(outcome, dict) and \
            outcome.get("type") == "success" else ev
    return on_type(app, "RUN_FINISHED", rewrite)


# -- pass-through --------------------------------------------------------------------------------
KNOWN = {"threadId", "runId", "messages", "resume", "tools", "state", "context", "forwardedProps"}


@broken("AGUI-PASS-001", name="AGUI-PASS-001-state-dropped")
def state_dropped(app, facts):
    """`state` does not reach the agent."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items() if k != "state"} if "state" in body
                      else None)


@broken("AGUI-PASS-002", name="AGUI-PASS-002-unknown-fields-dropped")
def unknown_dropped(app, facts):
    """Unknown top-level fields do not reach the agent."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items() if k in KNOWN})


# -- pings ------------------------------------------------------------------------------------------
PING_BLOCK = b": ping\n\n"

broken.config_only("AGUI-PING-001", ping_interval=30.0, name="AGUI-PING-001-ping-every-30s",
                   doc="The `: ping` comes every 30 s instead of every 15 s.")


@broken("AGUI-PING-001", name="AGUI-PING-001-keepalive-instead-of-ping")
def keepalive_comment(app, facts):
    """The keep-alive comment is `: keepalive`, not `: ping`."""
    return t.rewrite_sse(app, lambda block, state, scope: b": keepalive\n\n" if block == PING_BLOCK else block,
                         where="agui")


@broken("AGUI-PING-003", name="AGUI-PING-003-sse-starlette-ping")
def sse_starlette_ping(app, facts):
    """The keep-alive comment is sse-starlette's `: ping - <timestamp>`, not exactly `: ping` (SHOULD)."""
    from datetime import datetime, timezone

    return t.rewrite_sse(app, lambda block, state, scope: f": ping - {datetime.now(timezone.utc)}\n\n".encode()
                         if block == PING_BLOCK else block, where="agui")


@broken("AGUI-PING-001", name="AGUI-PING-001-never-pings")
def never_pings(app, facts):
    """No keep-alive comment is ever sent."""
    return t.rewrite_sse(app, lambda block, state, scope: None if block == PING_BLOCK else block, where="agui")


@broken("AGUI-PING-002", name="AGUI-PING-002-pings-only-once")
def pings_once(app, facts):
    """Only the first `: ping` of a stream is sent; later ones are dropped."""
    def rewrite(block, state, scope):
        if block == PING_BLOCK:
            state["pings"] = state.get("pings", 0) + 1
            return block if state["pings"] == 1 else None
        return block
    return t.rewrite_sse(app, rewrite, where="agui")


# -- failures ------------------------------------------------------------------------------------
def _error_to_finished(after_text: bool):
    def rewrite(ev, state, scope):
        if ev.get("type") == "RUN_STARTED":
            state["ids"] = {"threadId": ev.get("threadId"), "runId": ev.get("runId")}
        if ev.get("type") == "TEXT_MESSAGE_CONTENT":
            state["text"] = True
        if ev.get("type") == "RUN_ERROR" and bool(state.get("text")) == after_text:
            return {"type": "RUN_FINISHED", **state.get("ids", {}), "result": "", "outcome": {"type": "success"}}
        return ev
    return rewrite


@broken("AGUI-FAIL-001", name="AGUI-FAIL-001-failure-after-output-finishes")
def failure_after_output_finishes(app, facts):
    """A run that fails after sending text ends with RUN_FINISHED (success) instead of RUN_ERROR."""
    return on_events(app, _error_to_finished(after_text=True))


@broken("AGUI-FAIL-002", name="AGUI-FAIL-002-failure-before-output-finishes")
def failure_before_output_finishes(app, facts):
    """A run that fails before any text ends with RUN_FINISHED (success) instead of RUN_ERROR."""
    return on_events(app, _error_to_finished(after_text=False))


@broken("AGUI-FAIL-003", name="AGUI-FAIL-003-run-error-message-renamed")
def error_message_renamed(app, facts):
    """RUN_ERROR carries `error` instead of `message`."""
    return on_type(app, "RUN_ERROR", lambda ev: {("error" if k == "message" else k): v for k, v in ev.items()})


# -- interrupt and resume -----------------------------------------------------------------------------
@broken("AGUI-INT-001", name="AGUI-INT-001-pause-reported-as-success")
def pause_as_success(app, facts):
    """A paused run's RUN_FINISHED says outcome.type `success` (the interrupts are still listed)."""
    def rewrite(ev):
        outcome = ev.get("outcome")
        if isinstance(outcome, dict) and outcome.get("type") == "interrupt":
            outcome["type"] = "success"
        return ev
    return on_type(app, "RUN_FINISHED", rewrite)


@broken("AGUI-INT-002", name="AGUI-INT-002-answer-lost")
def answer_lost(app, facts):
    """The resumed run continues, but the agent gets null instead of the answer's payload."""
    def rewrite(body, scope):
        resume = body.get("resume")
        if isinstance(resume, list) and resume:
            body["resume"] = [{**e, "payload": None} if isinstance(e, dict) else e for e in resume]
            return body
        return None
    return on_request(app, rewrite)


def _lose_paused_state(app):
    """Resumes reach a thread with no paused run (the paused state is lost): the server refuses them with 400
    validation_failed. The request is marked so a response rewrite can tell the refusal of a resume apart."""
    def lose(body, scope):
        if body.get("resume") and isinstance(body.get("threadId"), str):
            scope[RESUMED] = True
            return {**body, "threadId": body["threadId"][:200] + "-lost"}
        return None
    return on_request(app, lose)


@broken("AGUI-INT-002", name="AGUI-INT-002-paused-state-lost-400")
def paused_state_lost_400(app, facts):
    """The paused run is lost: a correct resume of it is refused with 400 validation_failed."""
    return _lose_paused_state(app)


@broken("AGUI-INT-002", name="AGUI-INT-002-paused-state-lost-404")
def paused_state_lost_404(app, facts):
    """The paused run is lost: a correct resume of it is refused with 404 not_found."""
    def not_found(obj, scope, status, headers):
        err = _error(obj)
        if scope.get(RESUMED) and err:
            err.update(code="not_found", message="No paused run on this thread.")
            err.pop("details", None)
            return 404, headers, obj
        return obj
    return t.rewrite_json_response(_lose_paused_state(app), not_found, where="agui")


@broken("AGUI-INT-003", name="AGUI-INT-003-resume-needs-messages")
def resume_needs_messages(app, facts):
    """A request with `resume` but no `messages` is refused with invalid_request."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items() if k != "resume"}
                      if "resume" in body and not body.get("messages") else None)


@broken("AGUI-INT-004", name="AGUI-INT-004-resumed-run-new-thread")
def resumed_new_thread(app, facts):
    """The resumed run reports a threadId other than the paused run's."""
    def mark(body, scope):
        if body.get("resume"):
            scope[RESUMED] = True
        return None

    def rewrite(ev, state, scope):
        if scope.get(RESUMED) and ev.get("type") in ("RUN_STARTED", "RUN_FINISHED"):
            ev["threadId"] = f"{ev.get('threadId')}-resumed"
        return ev
    return on_events(on_request(app, mark), rewrite)


# -- refusals -------------------------------------------------------------------------------------
def _error(obj: Any) -> dict | None:
    return obj.get("error") if isinstance(obj, dict) and isinstance(obj.get("error"), dict) else None


@broken("AGUI-ERR-001", name="AGUI-ERR-001-no-messages-runs-default-prompt")
def no_messages_runs(app, facts):
    """A request with neither messages nor resume runs a default prompt instead of being refused."""
    return on_request(app, lambda body, scope: {**body, "messages": [
        {"id": "d1", "role": "user", "content": "say conformance"}]}
        if "messages" not in body and "resume" not in body else None)


@broken("AGUI-ERR-002", name="AGUI-ERR-002-empty-messages-validation-failed")
def empty_messages_code(app, facts):
    """`messages: []` is refused with validation_failed instead of invalid_request."""
    def mark(body, scope):
        if body.get("messages") == [] and not body.get("resume"):
            scope[EMPTY_MESSAGES] = True
        return None

    def rewrite(obj, scope, status, headers):
        err = _error(obj)
        if scope.get(EMPTY_MESSAGES) and err and err.get("code") == "invalid_request":
            err["code"] = "validation_failed"
            err["details"] = {"messages": "must not be empty"}
        return obj
    return t.rewrite_json_response(on_request(app, mark), rewrite, where="agui")


@broken("AGUI-ERR-003", name="AGUI-ERR-003-assistant-message-taken-as-prompt")
def assistant_as_prompt(app, facts):
    """Without a user message, the last assistant message is taken as the prompt instead of a refusal."""
    def rewrite(body, scope):
        messages = body.get("messages")
        if isinstance(messages, list) and messages and not _users(messages) and isinstance(messages[-1], dict):
            messages[-1] = {**messages[-1], "role": "user"}
            return body
        return None
    return on_request(app, rewrite)


@broken("AGUI-ERR-004", name="AGUI-ERR-004-agui-unknown-agent-403")
def unknown_agent_403(app, facts):
    """AG-UI answers an unknown agent with 403 (invoke keeps its 404)."""
    def rewrite(obj, scope, status, headers):
        err = _error(obj)
        return (403, headers, obj) if err and err.get("code") == "not_found" else obj
    return t.rewrite_json_response(app, rewrite, where="agui")


@broken("AGUI-ERR-005", name="AGUI-ERR-005-refusal-as-event-stream")
def refusal_as_stream(app, facts):
    """AG-UI refusals keep their 4xx status but come as an event stream holding RUN_ERROR."""
    def rewrite(obj, scope, status, headers):
        err = _error(obj)
        if not err:
            return obj
        body = t.make_block({"type": "RUN_ERROR", "message": str(err.get("message")), "code": err.get("code")})
        return status, t.with_header(headers, b"content-type", b"text/event-stream"), body
    return t.rewrite_json_response(app, rewrite, where="agui")


# -- limits -------------------------------------------------------------------------------------
broken.config_only("AGUI-LIM-001", max_body_bytes=400_000, name="AGUI-LIM-001-half-megabyte-refused",
                   doc="Request bodies over 400 kB are refused (a 0.5 MB body is too).")
broken.config_only("AGUI-LIM-002", max_body_bytes=4_000_000, name="AGUI-LIM-002-two-megabytes-accepted",
                   doc="Request bodies up to 4 MB are accepted (a 2 MB body runs).")


@broken("AGUI-COMPAT-005", name="AGUI-COMPAT-005-last-step-left-open")
def last_step_left_open(app, facts):
    """A step is finished when the next event comes: a step that is the run's last event before RUN_FINISHED is
    never finished (its STEP_FINISHED held back, then dropped)."""
    def fn(event, obj, state, scope):
        if not isinstance(obj, dict):
            return obj
        held = state.pop("held", None)
        if obj.get("type") == "STEP_FINISHED":
            state["held"] = obj
            return [held] if held is not None else None
        if held is not None and obj.get("type") != "RUN_FINISHED":
            return [held, obj]
        return obj
    return t.rewrite_sse_json(app, fn, where="agui")
