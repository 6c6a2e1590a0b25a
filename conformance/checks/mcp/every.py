"""MCP rules over every exchange (`conformance.exchange_rules`), whatever scenario sent it: a request the spec says must be answered is answered 200 with a JSON-RPC response
holding its id and a result, a tools/call names its session key and a progress token gets a stream of progress
notifications ending with the result; a request whose headers do not match its body, or that declares a version the
service does not speak, is refused 400 with -32022; a refused credential, on any method and in any form, is a 401
with its challenge; every refusal keeps its 4xx with a JSON-RPC error body.
"""
from __future__ import annotations

from typing import Any

from conformance.checks.mcp._common import (DISCOVERY, ONE_TEXT_BLOCK, as_json, error_answer, final_message,
                                            is_response, refusal, response_last, rpc_error_body, served_by,
                                            structured_session, text_block, PROGRESS_RESULT)
from conformance.checks.mcp.methods import fits_upstream
from conformance.checks.mcp.results import in_two_forms, not_error
from conformance.checks.mcp.progress import framed, increases, only_progress, progresses
from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import Deviation, NotAssessed, Observation, precondition
from conformance.vocab import replies, requests as rq
from conformance.vocab.refusals import unlisted_refusal
from conformance.vocab.challenges import challenge_params, metadata_url, same_url
from conformance.vocab.fuzzing import SAFE_INTEGER
from conformance.vocab.constants import (JSONRPC_INVALID_REQUEST, MCP_DESCRIBING, MCP_LISTED_CODES, SCOPE,
                                          UNSUPPORTED_VERSION)
from conformance.vocab.protocols import META_VERSION, MCP_VERSION
from conformance.vocab.readers import got
from conformance.vocab.text import truncate
from conformance.vocab.values import differs, same_json
from conformance.wire.exchange import Exchange

MCP = ("mcp",)


def problems(ex: Exchange, target: Any) -> list[str]:
    return rq.problems(ex, target)


def answered(ex: Exchange) -> bool:
    return ex.status not in rq.NOT_JUDGED_STATUSES


def must_answer(ex: Exchange, target: Any) -> bool:
    return answered(ex) and not problems(ex, target)


def by(requirement: str):
    """The requests `served_by` names `requirement` for (the one that says this request is answered)."""
    return lambda ex, target: must_answer(ex, target) and served_by(ex) == requirement


METHOD_NOT_FOUND = -32601


def describing_refusal(ex: Exchange, target: Any) -> bool:
    """A 2026-07-28 `server/discover` or `tools/list`, right but for its credential or its agent: refused for that,
    never for its method."""
    found = rq.problems(ex, target)
    return bool(found) and set(found) <= {"credential", "agent"} and rq.rpc_method(ex) in MCP_DESCRIBING \
        and (rq.header(ex, "mcp-protocol-version") or "").strip() == MCP_VERSION


def method_found(ex: Exchange, target: Any) -> None:
    """not answered -32601 (method not found): a method the spec supports is there whatever else the request did
    wrong (a service that answers so has no such method: its refusals for other problems show it too)."""
    error = (error_answer(ex) or {}).get("error")
    code = error.get("code") if isinstance(error, dict) else None
    assert not same_json(code, METHOD_NOT_FOUND), (
        f"{rq.rpc_method(ex)} answered {ex.status} with {METHOD_NOT_FOUND} (method not found), a method the spec "
        f"supports: {got(ex)}")


def answered_with_result(ex: Exchange, target: Any) -> None:
    """answered 200 with a JSON-RPC result (the one body, or the last frame of a stream)."""
    if ex.status is not None and 400 <= ex.status < 500:
        try:
            code = rpc_error_body(ex)["error"]["code"]
        except AssertionError:
            code = None
        if unlisted_refusal(ex, code, (*MCP_LISTED_CODES, None)):
            raise Observation(f"refused {ex.status} with code {as_json(code)}, a condition the spec does not list")
    assert ex.status == 200, f"a valid {rq.rpc_method(ex)} must be answered 200 with a JSON-RPC result, got {got(ex)}"
    msg = final_message(ex)
    if not is_response(msg) and ex.stream is not None and rq.sends_progress_token(ex):
        raise precondition(PROGRESS_RESULT, ex, f"the progress stream's last frame is no JSON-RPC response: "
                                                f"{truncate(msg)}")
    assert is_response(msg) and "result" in msg, \
        f"expected a JSON-RPC result, got {truncate(msg)}"


def id_echoed(ex: Exchange, target: Any) -> None:
    msg = final_message(ex)
    sent, back = rq.rpc(ex).get("id"), msg.get("id")
    kept = same_json(back, sent) and (isinstance(back, str) == isinstance(sent, str))
    assert same_json(msg.get("jsonrpc"), "2.0"), f"the response has jsonrpc {as_json(msg.get('jsonrpc'))}, not \"2.0\""
    assert kept, f"the response's id is not the request's: {differs(sent, back, 'id')}"


def refused_with_id(ex: Exchange, target: Any) -> bool:
    """A refusal (4xx) of a JSON-RPC request with an id every reader reads alike (a string, or an integer within
    ±(2^53−1), RFC 8259 §6: a generated case may send another), whose body is a JSON-RPC error carrying an `id`."""
    sent = rq.rpc(ex)
    if not (is_refusal(ex, target) and rq.has_id(ex) and sent.get("jsonrpc") == "2.0"
            and (isinstance(sent["id"], str) or abs(sent["id"]) <= SAFE_INTEGER)):
        return False
    try:
        msg = final_message(ex)
    except AssertionError:
        return False
    return isinstance(msg, dict) and "error" in msg and "id" in msg


def error_id_echoed(ex: Exchange, target: Any) -> None:
    """An error response is a JSON-RPC response: its id is the request's, or null where the server could not read it
    (JSON-RPC 2.0 §5)."""
    sent, back = rq.rpc(ex).get("id"), final_message(ex).get("id")
    if back is not None:
        assert same_json(back, sent) and isinstance(back, str) == isinstance(sent, str), \
            f"the error response's id is neither the request's nor null: {differs(sent, back, 'id')}"


def answered_200_response(ex: Exchange, target: Any) -> bool:
    if not (ex.status == 200 and rq.has_id(ex) and rq.rpc(ex).get("jsonrpc") == "2.0"):
        return False
    try:
        return is_response(final_message(ex))
    except AssertionError:
        return False


def session_echoed(ex: Exchange, target: Any) -> None:
    sent = rq.tool_arguments(ex)["session_id"]
    result = final_message(ex)["result"]
    sc = result.get("structuredContent")
    got_key = sc.get("sessionId") if isinstance(sc, dict) else None
    assert got_key == sent, f"sent session_id, structuredContent.sessionId is another: {differs(sent, got_key)}"


def carries_key(ex: Exchange, target: Any) -> bool:
    if not (must_answer(ex, target) and rq.rpc_method(ex) == "tools/call" and "session_id" in rq.tool_arguments(ex)
            and ex.status == 200):
        return False
    try:
        msg = final_message(ex)
    except AssertionError:
        return False
    result = msg.get("result") if isinstance(msg, dict) else None
    return isinstance(result, dict) and result.get("resultType") != "input_required" and "structuredContent" in result


def generated_key(ex: Exchange, target: Any) -> None:
    structured_session(final_message(ex)["result"])


def no_key(ex: Exchange, target: Any) -> bool:
    if not (must_answer(ex, target) and rq.rpc_method(ex) == "tools/call" and "session_id" not in
            rq.tool_arguments(ex) and ex.status == 200):
        return False
    try:
        result = final_message(ex).get("result")
    except AssertionError:
        return False
    return isinstance(result, dict) and result.get("resultType") != "input_required"


def progress_call(ex: Exchange, target: Any) -> bool:
    return must_answer(ex, target) and rq.rpc_method(ex) == "tools/call" and rq.sends_progress_token(ex)


def is_progress_stream(ex: Exchange, target: Any) -> bool:
    return progress_call(ex, target) and ex.status == 200 and ex.content_type == "text/event-stream"


def gets_stream(ex: Exchange, target: Any) -> None:
    if ex.status != 200:
        raise precondition(served_by(ex), ex, f"expected HTTP 200 with text/event-stream, got {got(ex)}")
    assert ex.content_type == "text/event-stream", f"a call with a progress token must get a stream, got {got(ex)}"


def call_without_token(ex: Exchange, target: Any) -> bool:
    accept = (rq.header(ex, "accept") or "").lower()
    return must_answer(ex, target) and rq.rpc_method(ex) == "tools/call" and not rq.sends_progress_token(ex) \
        and ex.status == 200 and "application/json" in accept and "text/event-stream" in accept


def progress_fields(ex: Exchange, target: Any) -> None:
    msgs = [m for m in _messages(ex) if isinstance(m, dict) and m.get("method") == "notifications/progress"]
    token = rq.progress_token(ex)
    for n, msg in enumerate(msgs, 1):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        back = params.get("progressToken")
        assert same_json(back, token) and isinstance(back, str) == isinstance(token, str), \
            f"notification {n}: progressToken {as_json(back)}, expected {as_json(token)}"


def _messages(ex: Exchange) -> list[Any]:
    from conformance.checks.mcp._common import messages
    return messages(ex)


def mismatch(kind: str):
    """A 2026-07-28 request, otherwise valid, whose headers do not match its body in `kind`."""
    def applies(ex: Exchange, target: Any) -> bool:
        why = rq.headers_match(ex)
        return answered(ex) and problems(ex, target) == ["headers"] and bool(why) and why.startswith(kind)
    return applies


def refused_version(requirement: str):
    def judge(ex: Exchange, target: Any) -> None:
        refusal(ex, requirement, status=400, code=UNSUPPORTED_VERSION)
    return judge


def unsupported(ex: Exchange, target: Any) -> bool:
    """Declares one version the service does not speak, in the header and in `_meta` alike."""
    version = rq.header(ex, "mcp-protocol-version")
    meta = rq.meta(ex).get(META_VERSION)
    rest = [p for p in problems(ex, target) if p != "version"]
    return answered(ex) and rest == [] and version is not None and version.strip() not in rq.SUPPORTED_VERSIONS \
        and (meta is None or meta == version.strip()) and rq.rpc_method(ex) != "initialize"


def initialize_unsupported(ex: Exchange, target: Any) -> bool:
    params = rq.rpc(ex).get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return answered(ex) and rq.rpc_method(ex) == "initialize" and rq.header(ex, "mcp-protocol-version") is None \
        and isinstance(version, str) and version not in rq.SUPPORTED_VERSIONS and problems(ex, target) == ["version"]


def credential_is(*kinds: str):
    """A request refused for its credential alone: otherwise one the service answers, or a notification (no id: the
    401 holds whatever the message, a notification's 202 too)."""
    def applies(ex: Exchange, target: Any) -> bool:
        found = problems(ex, target)
        return answered(ex) and rq.credential(ex) in kinds and (found == ["credential"] or (
            found == ["credential", "jsonrpc"] and rq.is_notification(ex)))
    return applies


def status_401(ex: Exchange, target: Any) -> None:
    assert ex.status == 401, f"a refused credential must be answered 401, got {got(ex)}"


def is_401(ex: Exchange, target: Any) -> bool:
    return ex.status == 401


def challenge(ex: Exchange, target: Any) -> None:
    params = challenge_params(ex)
    expected = metadata_url(target, rq.path_agent(ex))
    rm, scope = params.get("resource_metadata"), params.get("scope")
    assert same_url(rm, expected), f"resource_metadata is {rm!r}, expected {expected!r}"
    assert scope == SCOPE, f"scope is {scope!r}, expected {SCOPE!r}"


def code_32600(ex: Exchange, target: Any) -> None:
    body = rpc_error_body(ex)
    assert same_json(body["error"]["code"], JSONRPC_INVALID_REQUEST), \
        f"expected error.code {JSONRPC_INVALID_REQUEST}, got {as_json(body['error']['code'])}"


#: the problems of a request the spec's table of MCP refusals gives a status for (400, 401, 404)
GIVEN_STATUS = frozenset({"version", "headers", "credential", "agent"})


def is_refusal(ex: Exchange, target: Any) -> bool:
    return ex.status is not None and 400 <= ex.status < 500 and ex.status not in rq.NOT_JUDGED_STATUSES


def error_body(ex: Exchange, target: Any) -> None:
    rpc_error_body(ex)


def refused_under_2xx(ex: Exchange, target: Any) -> bool:
    """A JSON-RPC error under a 2xx to a request whose problems the spec gives a status for: a refusal that lost it."""
    found = problems(ex, target)
    return ex.status is not None and 200 <= ex.status < 300 and bool(found) and set(found) <= GIVEN_STATUS \
        and error_answer(ex) is not None


def status_lost(ex: Exchange, target: Any) -> None:
    raise Deviation(f"a JSON-RPC error under HTTP {ex.status}; a refusal must keep its 4xx status: {got(ex)}", [ex])


def addressed_to(*where: str):
    return lambda ex, target: answered(ex) and rq.addressed(ex, target) in where and problems(ex, target) == ["agent"]


def refused_status(status: int | None, code: int | None = None, root: str = "MCP-ERR-001"):
    def judge(ex: Exchange, target: Any) -> None:
        refusal(ex, root, status=status, code=code)
    return judge


def listed_tools(ex: Exchange, target: Any) -> bool:
    """A tools/list answered 200 with a JSON-RPC result."""
    if rq.rpc_method(ex) != "tools/list" or ex.status != 200 or rq.addressed(ex, target) != "agent":
        return False
    try:
        msg = final_message(ex)
    except AssertionError:
        return False
    return isinstance(msg, dict) and isinstance(msg.get("result"), dict)


def one_tool(ex: Exchange, target: Any) -> None:
    tools = final_message(ex)["result"].get("tools")
    assert isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict), \
        f"`result.tools` must be an array of exactly one tool object, got {truncate(tools)}"


def the_one_tool(ex: Exchange) -> dict[str, Any]:
    tools = final_message(ex)["result"].get("tools")
    if not (isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict)):
        raise precondition("MCP-METH-002", ex, f"`result.tools` is not one tool object: {truncate(tools)}")
    return tools[0]


def tool_named(ex: Exchange) -> str:
    return the_one_tool(ex).get("name")


def name_form(ex: Exchange, target: Any) -> None:
    name = tool_named(ex)
    assert isinstance(name, str) and name.startswith("ask_") and len(name) > 4 and "-" not in name, \
        f"the tool is named {truncate(name)}; expected `ask_` + the slug with hyphens replaced by underscores"


def name_from_slug(ex: Exchange, target: Any) -> None:
    from conformance.vocab.protocols import slug_tool_name
    expected, name = slug_tool_name(target.agent_slug), tool_named(ex)
    assert name == expected, f"the tool is not named after --agent-slug: {differs(expected, name)}"


def text_is_reply(ex: Exchange, target: Any) -> None:
    """the one text block of a completed call's result is the agent's reply."""
    result = final_message(ex).get("result")
    if not isinstance(result, dict) or result.get("isError") is not False and result.get("isError") is not None:
        raise NotAssessed(f"{ex.label}: the run failed (`isError`), so its text is not the reply")
    try:
        text = text_block(result)
    except AssertionError as exc:
        raise precondition(ONE_TEXT_BLOCK, ex, str(exc)) from None
    replies.known(ex, target).judge(text, "the text block")


def streams_reply(ex: Exchange, target: Any) -> bool:
    """A progress stream of the profile's streamed-reply prompt (a reply the agent sends in pieces)."""
    prompt = rq.scenario_prompt(target, "streamed_reply")
    return bool(prompt) and is_progress_stream(ex, target) and replies.prompt_of(ex) == prompt


def streamed_reply_call(ex: Exchange, target: Any) -> bool:
    """A progress stream of a call whose prompt says its reply (it can neither fail nor pause)."""
    return is_progress_stream(ex, target) and cannot_fail(ex, target)


def streamed_result_complete(ex: Exchange, target: Any) -> None:
    """the stream's final response holds the result a call without a token gets: `resultType` complete, the reply
    its text block."""
    kind = final_message(ex)["result"].get("resultType")
    assert kind == "complete", f"the stream's final result has `resultType` {as_json(kind)}, expected \"complete\""
    text_is_reply(ex, target)


def failed_run(ex: Exchange, target: Any) -> bool:
    """A tools/call the service answered with a result whose run failed (`isError: true`)."""
    if not (must_answer(ex, target) and rq.rpc_method(ex) == "tools/call" and answered_200_response(ex, target)):
        return False
    result = final_message(ex).get("result")
    return isinstance(result, dict) and result.get("isError") is True


def cannot_fail(ex: Exchange, target: Any) -> bool:
    """A tools/call of a prompt that says its reply (it cannot fail nor pause), answered with a result."""
    if not says_reply(ex, target):
        return False
    result = final_message(ex).get("result")
    return isinstance(result, dict) and result.get("resultType") != "input_required"


def pauses(ex: Exchange, target: Any) -> bool:
    """A tools/call of the conformance agent whose prompt asks a question and says no failure, answered with a
    result: the run pauses (a form or the question as text), and a pause is no failure."""
    return replies.by_the_conformance_agent(target) and replies.pauses_without_failing(replies.prompt_of(ex)) \
        and must_answer(ex, target) and answered_200_response(ex, target) \
        and isinstance(final_message(ex).get("result"), dict)


def failure_has_text(ex: Exchange, target: Any) -> None:
    """the failed run's result has `content` with one text block."""
    text_block(final_message(ex)["result"])


def says_reply(ex: Exchange, target: Any) -> bool:
    return must_answer(ex, target) and answered_200_response(ex, target) and replies.known(ex, target) is not None


register(
    ExchangeRule("MCP-TOOL-002", "text_is_reply", MCP, says_reply, text_is_reply,
                 doc="every tools/call whose prompt says its reply (docs/agent.md) answers it as its text block, "
                     "whatever else the request carried."),
    ExchangeRule("MCP-METH-002", "exactly_one_tool", MCP, listed_tools, one_tool,
                 doc="every tools/list lists exactly one tool."),
    ExchangeRule("MCP-METH-003", "tool_name_form", MCP, listed_tools, name_form,
                 doc="the tool listed is named `ask_…` without a hyphen."),
    ExchangeRule("MCP-CLIENT-002", "tool_matches_upstream", MCP, listed_tools,
                 lambda ex, target: fits_upstream(the_one_tool(ex)),
                 doc="the tool listed is one the official client reads, whatever the request carried."),
    ExchangeRule("MCP-METH-004", "tool_name_from_slug", MCP,
                 lambda ex, target: bool(getattr(target, "agent_slug", None)) and listed_tools(ex, target),
                 name_from_slug, doc="the tool listed is `ask_` + the slug, hyphens as underscores."),
    ExchangeRule("MCP-ERR-001", "refusal_is_rpc_error", MCP, is_refusal, error_body, basic=True, refusals=True,
                 doc="every MCP refusal keeps its 4xx with a JSON-RPC error body."),
    ExchangeRule("MCP-ERR-001", "refusal_keeps_its_status", MCP, refused_under_2xx, status_lost, refusals=True,
                 doc="no refusal the spec gives a status for is a JSON-RPC error under a 2xx (read after the "
                     "rules of what was refused: one refusal so answered is theirs too)."),
    ExchangeRule(DISCOVERY, "method_found", MCP, describing_refusal, method_found, basic=True,
                 doc="server/discover and tools/list are never answered -32601 (method not found), whatever else "
                     "the request did wrong (its credential, its agent)."),
    *(ExchangeRule(rid, "answered_with_result", MCP, by(rid), answered_with_result, basic=True,
                   doc="a valid request of its kind is answered 200 with a JSON-RPC result, however it was written.")
      for rid in ("MCP-VER-001", "MCP-VER-005", "MCP-VER-006", "MCP-METH-001", "MCP-SESS-005", "MCP-HDR-004")),
    ExchangeRule("MCP-PROG-001", "token_gets_stream", MCP, progress_call, gets_stream, basic=True,
                 doc="a tools/call with a progress token gets an event stream."),
    ExchangeRule("MCP-PROG-002", "frames_are_messages", MCP, is_progress_stream, lambda ex, t: framed(ex),
                 doc="every frame of a progress stream is `event: message` with a JSON object."),
    ExchangeRule("MCP-PROG-003", "response_is_last", MCP, is_progress_stream, lambda ex, t: response_last(ex),
                 basic=True, doc="the response is the last frame, once."),
    ExchangeRule("MCP-PROG-011", "two_forms_without_a_token", MCP, call_without_token, in_two_forms,
                 doc="every tools/call without a progress token (Accept lists both types) answered 200 is one "
                     "application/json response or an event stream."),
    ExchangeRule("MCP-TOOL-005", "normal_run_not_error", MCP, cannot_fail, lambda ex, t: not_error(ex),
                 doc="every tools/call whose prompt says its reply has `isError` absent or false."),
    ExchangeRule("MCP-TOOL-005", "paused_run_not_error", MCP, pauses, lambda ex, t: not_error(ex, "paused"),
                 doc="every tools/call whose run pauses on a question (the question as text, or a form) has "
                     "`isError` absent or false: the run has not failed."),
    ExchangeRule("MCP-TOOL-006", "failed_run_has_content", MCP, failed_run,
                 failure_has_text,
                 doc="every failed run's result (`isError: true`) still has `content` with one text block."),
    ExchangeRule("MCP-PROG-004", "others_are_progress", MCP, is_progress_stream, lambda ex, t: only_progress(ex),
                 doc="in every progress stream, every frame before the response is a progress notification."),
    ExchangeRule("MCP-PROG-009", "streamed_reply_progresses", MCP, streams_reply, lambda ex, t: progresses(ex),
                 doc="every progress stream of the streamed-reply prompt has a progress notification before the "
                     "result."),
    ExchangeRule("MCP-PROG-010", "progress_increases", MCP, is_progress_stream, lambda ex, t: increases(ex),
                 doc="in every progress stream, `params.progress` strictly increases."),
    ExchangeRule("MCP-PROG-005", "token_echoed", MCP, is_progress_stream, progress_fields,
                 doc="every progress notification carries the token sent, its type kept."),
    ExchangeRule("MCP-METH-005", "id_echoed", MCP, answered_200_response, id_echoed,
                 doc="the response carries jsonrpc 2.0 and the request's id, its type kept."),
    ExchangeRule("MCP-METH-005", "error_id_echoed", MCP, refused_with_id, error_id_echoed,
                 doc="a refusal's error response carries the request's id, its type kept, or null."),
    ExchangeRule("MCP-PROG-008", "streamed_result_complete", MCP, streamed_reply_call, streamed_result_complete,
                 doc="every progress stream of a prompt that says its reply ends with the result a call without a "
                     "token gets: `resultType` complete, the reply its text block."),
    ExchangeRule("MCP-SESS-003", "session_id_echoed", MCP, carries_key, session_echoed,
                 doc="structuredContent.sessionId equals the session_id sent, exactly."),
    ExchangeRule("MCP-SESS-001", "session_id_generated", MCP, no_key, generated_key,
                 doc="without session_id, structuredContent.sessionId is a key of 1 to 256 characters."),
    ExchangeRule("MCP-HDR-002", "method_header_mismatch", MCP, mismatch("Mcp-Method"),
                 refused_version("MCP-HDR-002"), doc="Mcp-Method other than the body's method (compared exactly): "
                                                     "400 with -32022."),
    ExchangeRule("MCP-HDR-003", "name_header_mismatch", MCP, mismatch("Mcp-Name"), refused_version("MCP-HDR-003"),
                 doc="Mcp-Name other than params.name (compared exactly): 400 with -32022."),
    ExchangeRule("MCP-HDR-001", "version_header_mismatch", MCP, mismatch("MCP-Protocol-Version"),
                 refused_version("MCP-HDR-001"), doc="MCP-Protocol-Version other than the _meta version: 400 with "
                                                     "-32022."),
    ExchangeRule("MCP-VER-002", "unsupported_version_refused", MCP, unsupported, refused_version("MCP-VER-002"),
                 doc="a version the service does not speak: 400 with -32022, on any method."),
    ExchangeRule("MCP-VER-007", "initialize_unsupported_refused", MCP, initialize_unsupported,
                 refused_version("MCP-VER-007"), doc="initialize with an unsupported protocolVersion: 400 with -32022."),
    ExchangeRule("AUTH-MCP-003", "no_credential_401", MCP, credential_is("none"), status_401,
                 doc="no Authorization header: 401, on any method, in any form."),
    ExchangeRule("AUTH-MCP-004", "empty_bearer_401", MCP, credential_is("empty"), status_401,
                 doc="an empty bearer value: 401."),
    ExchangeRule("AUTH-MCP-005", "unknown_credential_401", MCP, credential_is("unknown"), status_401,
                 doc="an unknown credential: 401."),
    ExchangeRule("AUTH-MCP-006", "revoked_key_401", MCP, credential_is("revoked"), status_401,
                 doc="the revoked key: 401."),
    ExchangeRule("AUTH-MCP-007", "expired_token_401", MCP, credential_is("expired"), status_401,
                 doc="the expired token: 401."),
    ExchangeRule("AUTH-MCP-008", "challenge_on_401", MCP, is_401, challenge,
                 doc="every 401 carries the Bearer challenge naming the agent's metadata URL and the scope."),
    ExchangeRule("AUTH-MCP-009", "code_on_401", MCP, is_401, code_32600, doc="every 401 has error.code -32600."),
    ExchangeRule("AUTH-MCP-002", "token_on_other_agent_404", MCP,
                 lambda ex, target: answered(ex) and rq.credential(ex) == "access-token"
                 and rq.addressed(ex, target) == "other" and problems(ex, target) == ["agent"],
                 refused_status(404, JSONRPC_INVALID_REQUEST, "AUTH-MCP-002"),
                 doc="the access token on another agent: 404 with -32600."),
    ExchangeRule("GEN-AGENT-001", "malformed_agent_refused", MCP, addressed_to("malformed"),
                 refused_status(None, None, "GEN-AGENT-001"), doc="an agentId without `agt_`: a 4xx JSON-RPC error."),
    ExchangeRule("GEN-AGENT-004", "undeployed_agent_404", MCP, addressed_to("undeployed"),
                 refused_status(404, None, "GEN-AGENT-004"), doc="the undeployed agent: 404."),
    ExchangeRule("MCP-ERR-002", "unknown_agent_404", MCP, addressed_to("unknown"),
                 refused_status(404, JSONRPC_INVALID_REQUEST, "MCP-ERR-002"),
                 doc="an agent that does not exist: 404 with -32600."),
)
