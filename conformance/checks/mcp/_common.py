"""What the MCP check modules share: constants and readers of JSON-RPC answers, refusals and streams.

A reader that cannot read an answer because the exchange broke a more basic rule raises `precondition(ROOT, …)`:
a plain Deviation for ROOT's own checks, `Blocked` by ROOT for every other check. Each ROOT below is judged by its
own checks on every exchange it is the root of, so a blocked check never hides a deviation:

- the request was not served (not HTTP 200, not a JSON-RPC response, an error where a result was expected): the
  requirement that says this request is served, `served_by(ex)` (MCP-VER-001 for a 2026-07-28 tools/call);
- the result of a call without a progress token whose reply is read does not hold one text block (MCP-TOOL-001),
  or its text is not the agent's reply exactly (MCP-TOOL-002);
- a progress stream that is no event stream (MCP-PROG-001), holds no JSON frame (MCP-PROG-002), or does not end
  with the result (MCP-PROG-003);
- a refusal that lost its 4xx or whose body is not a JSON-RPC error body (MCP-ERR-001); one that is not the refusal
  (status, code) its requirement asks for: that requirement.
"""
from __future__ import annotations

import json
from typing import Any

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import Deviation, NotAssessed, precondition
from conformance.vocab import agent_readings
from conformance.vocab import protocols as p
from conformance.vocab.readers import frame_json, got, request_json, sent_header
from conformance.vocab.steps import generated as generated_steps, mcp as steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_integer, same_json
from conformance.wire.exchange import Exchange
from conformance.wire.sdk import CLOSED_BY_CLIENT
from conformance.wire.sse import SSEEvent

MODERN = ["mcp.modern"]
# The `count` calls: a rule judged on every call reads them as extra evidence (supplementary) beside the calls of
# the prompts any agent can map, so an agent of the team's own is judged without them.
AFFINITY_SCENARIOS = ("mcp.sessions",)
REFUSALS = ["mcp.refusals"]
NO_NAME = steps.CALL_NONAME   # judged by MCP-HDR-004 alone: the other checks use calls that carry Mcp-Name
UPSTREAM_NOTE = "follows the spec's -32022; upstream MCP 2026-07-28 uses -32020 (HeaderMismatch) here"

# the roots of the readers (each judged by its own checks on every exchange it is the root of)
MODERN_CALL = "MCP-VER-001"        # a 2026-07-28 tools/call answers 200 with a JSON-RPC result
LEGACY_HANDSHAKE = "MCP-VER-005"   # initialize (2025-11-25) answers 200 with a result
LEGACY_CALLS = "MCP-VER-006"       # after initialize, 2025-11-25 requests answer 200 with results
DISCOVERY = "MCP-METH-001"         # server/discover answers 200 with a result
STATELESS = "MCP-SESS-005"         # tools/list without initialize answers 200 with a result
NAME_OPTIONAL = "MCP-HDR-004"      # a tools/call without Mcp-Name answers 200 with a result
PROGRESS_STREAM = "MCP-PROG-001"   # a progress token gets an event stream
PROGRESS_FRAMES = "MCP-PROG-002"   # its frames hold JSON objects
PROGRESS_RESULT = "MCP-PROG-003"   # its last frame is the result
REFUSAL_BODY = "MCP-ERR-001"       # a refusal keeps its 4xx, with a JSON-RPC error body
ONE_TEXT_BLOCK = "MCP-TOOL-001"    # the result of a call without a progress token holds one text block
RESUMED = "MCP-PAUSE-002"          # the resume of a paused run is answered with its continuation
CONTINUED = "MCP-PAUSE-004"        # so is the retry of an eliciting client, with the form answered
FINISHED = "MCP-TOOL-003"          # a finished run's result has resultType "complete"
EXACT_REPLY = "MCP-TOOL-002"       # the text block holds the agent's reply exactly

# Refusals whose HTTP status the spec's table does not give (it only lists -32601 and -32602 among "other codes",
# and -32005 without a condition): a JSON-RPC error under 200 is no lost status there.
STATUS_OPEN = frozenset({steps.UNSUPPORTED_METHOD, steps.UNKNOWN_TOOL, steps.NO_PROMPT, steps.CONTENT_TYPE})


def as_json(value: Any) -> str:
    """A value as JSON text, for messages where its type matters (an id `2` and an id `"2"` differ)."""
    return truncate(json.dumps(value, ensure_ascii=False, default=repr))


# -- what was sent ----------------------------------------------------------------------------
def sent_id(ex: Exchange) -> Any:
    body = request_json(ex)
    return body.get("id") if isinstance(body, dict) else None


def sent_progress_token(ex: Exchange) -> bool:
    body = request_json(ex)
    params = body.get("params") if isinstance(body, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and "progressToken" in meta


def served_by(ex: Exchange) -> str:
    """The requirement that says this request is answered HTTP 200 with a JSON-RPC result."""
    body = request_json(ex)
    method = body.get("method") if isinstance(body, dict) else None
    if method == "initialize":
        return LEGACY_HANDSHAKE
    if sent_header(ex, "mcp-session-id") is not None:     # a session the stateless service never issued
        return STATELESS
    resumed = resumes(body)
    if resumed is not None:     # on either handshake: a resume is served by continuing its paused run
        return resumed
    if sent_header(ex, "mcp-protocol-version") == p.MCP_LEGACY_VERSION:
        return LEGACY_CALLS
    if method == "server/discover":
        return DISCOVERY
    if method == "tools/list":
        return STATELESS
    if method == "tools/call" and sent_header(ex, "mcp-name") is None:
        return NAME_OPTIONAL
    return MODERN_CALL


def resumes(body: Any) -> str | None:
    """The rule that says a tools/call answering a paused run is served: an eliciting client's retry (`requestState`)
    CONTINUED, a call with a `resume` argument (whatever its value) RESUMED; None for any other request."""
    params = body.get("params") if isinstance(body, dict) and body.get("method") == "tools/call" else None
    if not isinstance(params, dict):
        return None
    if "requestState" in params:
        return CONTINUED
    return RESUMED if isinstance(params.get("arguments"), dict) and "resume" in params["arguments"] else None


# -- reading answers --------------------------------------------------------------------------
def frames(ex: Exchange) -> list[SSEEvent]:
    """The frames of an event stream that a client dispatches (WHATWG): a block without data (such as a lone
    `retry:` or `id:`) dispatches nothing and is no frame."""
    return ex.stream.dispatched if ex.stream is not None else []


def body_json(ex: Exchange) -> Any:
    """The JSON body; AssertionError saying why not (without the request line: the step label says which)."""
    try:
        return ex.json()
    except AssertionError as exc:
        raise AssertionError(str(exc).removeprefix(f"{ex.method} {ex.url}: ")) from None


def messages(ex: Exchange) -> list[Any]:
    """The JSON-RPC messages of an answer: the one JSON body, or the JSON data of every dispatched frame (a frame
    whose data is not JSON is MCP-PROG-002's to judge, not a message). AssertionError when a body is not JSON."""
    if ex.stream is None:
        return [body_json(ex)]
    return [value for ok, value in map(frame_json, frames(ex)) if ok]


def final_message(ex: Exchange) -> Any:
    """The message that answers the request: the one JSON body, or the last JSON frame of a stream (MCP lets a server
    answer any request either way, errors included). AssertionError when there is none."""
    msgs = messages(ex)
    if not msgs:
        raise AssertionError(f"the stream holds no frame with JSON data ({len(frames(ex))} dispatched frame(s))")
    return msgs[-1]


def is_response(msg: Any) -> bool:
    return isinstance(msg, dict) and ("result" in msg or "error" in msg)


def answered(ex: Exchange, root: str | None = None) -> None:
    """The request was answered HTTP 200; otherwise it was not served (`root`, by default `served_by(ex)`)."""
    if ex.status != 200:
        raise precondition(root or served_by(ex), ex, f"expected HTTP 200 with a JSON-RPC response, got {got(ex)}")


def response(ex: Exchange, root: str | None = None) -> dict[str, Any]:
    """The JSON-RPC response of a 200 answer: the one JSON body, or the last message of a stream. Otherwise the
    request was not served (`root`, by default `served_by(ex)`), or a progress stream broke its framing."""
    root = root or served_by(ex)
    answered(ex, root)
    progress = ex.stream is not None and sent_progress_token(ex)
    try:
        msgs = messages(ex)
    except AssertionError as exc:
        raise precondition(root, ex, f"expected a JSON-RPC response: {exc}") from None
    if not msgs:
        raise precondition(PROGRESS_FRAMES if progress else root, ex,
                           f"the stream holds no frame with JSON data ({len(frames(ex))} dispatched frame(s))")
    if not is_response(msgs[-1]):
        where = "the last frame" if ex.stream is not None else "the body"
        raise precondition(PROGRESS_RESULT if progress else root, ex,
                           f"{where} is not a JSON-RPC response (no `result` or `error`): {truncate(msgs[-1])}")
    return msgs[-1]


def result_of(ex: Exchange, root: str | None = None, *, error_root: str | None = None) -> dict[str, Any]:
    """`result` of the JSON-RPC response (see `response`). A JSON-RPC error where a result was expected breaks
    `error_root` (by default what the response's shape breaks: the request's root, or MCP-PROG-003 for a progress
    stream, whose last frame must be the result)."""
    msg = response(ex, root)
    progress = ex.stream is not None and sent_progress_token(ex)
    error_root = error_root or (PROGRESS_RESULT if progress else root or served_by(ex))
    if "error" in msg:
        raise precondition(error_root, ex, f"expected a JSON-RPC result, got the error {truncate(msg.get('error'))}")
    if not isinstance(msg.get("result"), dict):
        raise precondition(error_root, ex, f"`result` is not an object: {truncate(msg)}")
    return msg["result"]


def finished(ex: Exchange, root: str | None = None) -> dict[str, Any]:
    """The result of a call whose run finished (see `result_of`); NotAssessed when it paused (again) instead: a
    run asking a question is no finished run."""
    result = result_of(ex, root)
    if result.get("resultType") == "input_required":
        raise NotAssessed(f"{ex.label}: the run paused instead of finishing")
    return result


def text_block(result: dict[str, Any]) -> str:
    content = result.get("content")
    assert isinstance(content, list) and len(content) == 1, \
        f"`result.content` must be an array of exactly one block, got {truncate(content)}"
    block = content[0]
    assert isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str), \
        f"the content block must be {{type: \"text\", text: <string>}}, got {truncate(block)}"
    return block["text"]


def reply_text(ex: Exchange, root: str | None = None) -> str:
    """The reply of a tools/call answered without a progress token: its result's one text block. Content that is
    not one text block breaks MCP-TOOL-001, which judges every call whose reply a check reads this way."""
    result = result_of(ex, root)
    try:
        return text_block(result)
    except AssertionError as exc:
        raise precondition(ONE_TEXT_BLOCK, ex, str(exc)) from None


def continues_to(ex: Exchange, text: str, expected: str) -> None:
    """The reply a step read, `text`, is `expected`. A text that differs from it only in form (whitespace around it,
    cut short, or with more after it) broke MCP-TOOL-002 (the text block holds the reply exactly), the reading every
    check of a reply relies on; any other text is the step's own failure."""
    if text == expected:
        return
    message = f"{ex.label}: expected {expected!r}, got {truncate(text, quoted=True)}"
    if text.strip() == expected.strip() or (expected and expected in text) or (text and expected.startswith(text)):
        raise precondition(EXACT_REPLY, ex, message)
    raise Deviation(message, ex)


def structured_session(result: dict[str, Any]) -> str:
    sc = result.get("structuredContent")
    sid = sc.get("sessionId") if isinstance(sc, dict) else None
    assert isinstance(sid, str) and 1 <= len(sid) <= 256, \
        f"`result.structuredContent.sessionId` must be a string of 1 to 256 characters, got {truncate(sc)}"
    return sid


# -- reading refusals -------------------------------------------------------------------------
def error_answer(ex: Exchange) -> dict[str, Any] | None:
    """The answer's final message when it is a JSON object with `error` and no `result` (a JSON-RPC error, well formed
    or not, as the one body or the last frame of a stream)."""
    try:
        body = final_message(ex)
    except AssertionError:
        return None
    return body if isinstance(body, dict) and "error" in body and "result" not in body else None


def refusal(ex: Exchange, root: str, *, status: int | None = None, code: int | None = None,
            in_band: bool = False) -> dict[str, Any]:
    """The JSON-RPC error body of a request the spec refuses. `root` is the requirement that says it is refused
    (a 4xx, or `status`, and `code` when given): not so, the exchange broke `root`. A refusal that did not keep a
    4xx (no response, a JSON-RPC error under 2xx, a 5xx) or whose body is not a JSON-RPC error body broke
    MCP-ERR-001 (which judges every step of mcp.refusals).
    `in_band`: the check also takes a JSON-RPC error under 2xx (the spec gives no status for this one)."""
    want = f"HTTP {status or '4xx'}" + (f" with code {code}" if code is not None else "")
    if ex.status is None:
        raise precondition(REFUSAL_BODY, ex, f"expected a refusal ({want}), got {got(ex)}")
    if 200 <= ex.status < 300:
        if error_answer(ex) is None:
            raise precondition(root, ex, f"expected a refusal ({want}); the request was served: {got(ex)}")
        if not in_band:
            lost = REFUSAL_BODY if ex.label not in STATUS_OPEN else root
            raise precondition(lost, ex, f"expected {want}; a JSON-RPC error under HTTP {ex.status} is a refusal "
                                         f"that lost its status: {got(ex)}")
    elif not 400 <= ex.status < 500:
        raise precondition(REFUSAL_BODY, ex, f"a refusal must keep a 4xx status, got {got(ex)}")
    elif status is not None and ex.status != status:
        raise precondition(root, ex, f"expected {want}, got {got(ex)}")
    body = rpc_error_body(ex, REFUSAL_BODY)
    if code is not None and not same_integer(body["error"]["code"], code):
        raise precondition(root, ex, f"expected {want}, got code {as_json(body['error']['code'])}: {got(ex)}")
    return body


def rpc_error_body(ex: Exchange, root: str = REFUSAL_BODY) -> dict[str, Any]:
    """The JSON-RPC error body (jsonrpc, id possibly null, integer code, string message, no `result`): the one body,
    or the last frame of a stream."""
    try:
        body = final_message(ex)
    except AssertionError as exc:
        raise precondition(root, ex, f"the refusal's body is not a JSON-RPC error body: {exc}") from None
    problems = schemas.errors("mcp-error", body)
    if problems:
        raise precondition(root, ex, f"the body is not a JSON-RPC error body ({'; '.join(problems[:3])}): {got(ex)}")
    if "result" in body:
        raise precondition(root, ex, f"a refusal carries both `error` and `result`: {got(ex)}")
    return body


# -- recordings -------------------------------------------------------------------------------
def resumed_reply(rec: Recording, value: Any) -> str:
    """The whole reply of a run resumed with `value` (`protocols.resumed_reply` of what the scenario noted)."""
    expected = p.resumed_reply(rec.facts, value)
    if expected is None:
        raise NotAssessed("the profile's question_and_resume gives no reply after a resume (`reply_after_resume` "
                          "or `reply_after_resume_suffix`)")
    return expected


def is_resumed_reply(rec: Recording, text: str, value: Any, ex: Exchange) -> bool:
    """`text` is the reply of a run resumed with `value`: `resumed_reply`, or what the agent's contract lets it be
    (the answer written in another form: `agent_readings.resumed_as_profiled`)."""
    return text == resumed_reply(rec, value) or agent_readings.resumed_as_profiled(text, rec.facts, value, exchange=ex)


def resumed_with(rec: Recording) -> str:
    """The pause_text call the run continued on: `resume`, or, when that got no result, the same call with the
    prompt again (the spec does not say whether `prompt` goes along with `resume`)."""
    return steps.RESUME_WITH_PROMPT if any(ex.label == steps.RESUME_WITH_PROMPT for ex in rec.exchanges) \
        else steps.RESUME


def round_trip_runs(rec: Recording) -> list[tuple[int, Exchange]]:
    """(i, exchange) of the generated round trip's MCP runs `mcp-<i>` (a lookup in that family is no run)."""
    return generated_steps.MCP.members(rec.labelled(generated_steps.MCP))


def labels(rec: Recording, *names: str) -> list[tuple[str, Exchange]]:
    return [(n, rec.get(n)) for n in names]


# -- progress streams and forms (read by several check modules) ---------------------------------------------
def stream_of(ex: Exchange) -> list[SSEEvent]:
    """The dispatched frames of a progress stream. Not HTTP 200: the call was not served (`served_by`: MCP-VER-001,
    or a resume's own rule); not an event stream: MCP-PROG-001."""
    if ex.status != 200:
        raise precondition(served_by(ex), ex, f"expected HTTP 200 with an event stream, got {got(ex)}")
    if ex.stream is None:
        raise precondition(PROGRESS_STREAM, ex, f"expected a text/event-stream answer, got {got(ex)}")
    return frames(ex)


def stream_messages(ex: Exchange) -> list[Any]:
    """The JSON messages of a progress stream (data that is not JSON is MCP-PROG-002's finding; a stream with no
    JSON frame at all gives nothing to read)."""
    dispatched = stream_of(ex)
    out = messages(ex)
    if not out:
        raise precondition(PROGRESS_FRAMES, ex, f"the stream has no frame with JSON data "
                                                f"({len(dispatched)} dispatched frame(s))")
    return out


def response_last(ex: Exchange) -> None:
    """The progress stream's last frame is the JSON-RPC response to the request's id, once, and the body ends after it
    (MCP-PROG-003)."""
    msgs = stream_messages(ex)
    want = sent_id(ex)
    answers = [i for i, m in enumerate(msgs) if is_response(m)]
    assert answers, f"no JSON-RPC response among {len(msgs)} frames"
    assert answers == [len(msgs) - 1], \
        f"the response is frame {[i + 1 for i in answers]} of {len(msgs)}; it must be the last, once"
    final = msgs[-1]
    assert same_json(final.get("id"), want) and "result" in final, \
        f"the last frame is {truncate(final)}, expected the result for id {as_json(want)}"
    items, dispatched = ex.stream.items, frames(ex)
    tail = [i for i in items[items.index(dispatched[-1]) + 1:]
            if isinstance(i, SSEEvent) and i.dispatched]  # comments and data-less blocks are no frames
    assert not tail, f"{len(tail)} frame(s) follow the response " \
                     f"(first: {truncate(tail[0].raw.decode('utf-8', 'replace'), 80)})"
    if ex.stream.end == CLOSED_BY_CLIENT and not ex.error:
        return      # the official client stopped reading at its response: whether the body ended there is not seen
    assert ex.stream.end == "eof" and not ex.error, \
        f"the stream did not end cleanly after the response (end: {ex.stream.end}; {ex.error or ''})"


def is_form_request(request: Any) -> bool:
    """An `elicitation/create` request asking for a form: form mode (or no mode) and a requested schema object."""
    params = request.get("params") if isinstance(request, dict) else None
    return isinstance(request, dict) and request.get("method") == "elicitation/create" \
        and isinstance(params, dict) and params.get("mode", "form") == "form" \
        and isinstance(params.get("requestedSchema"), dict)


def asked_for_form(ex: Exchange) -> str | None:
    """How an eliciting client was asked for a form: an upstream InputRequiredResult whose inputRequests hold a form
    elicitation, or a form elicitation/create request in the stream."""
    try:
        msgs = messages(ex) if ex.status == 200 else []
    except AssertionError:       # not JSON: no form; MCP-PAUSE-003 judges the answer
        return None
    if any(is_form_request(m) and "id" in m for m in msgs):
        return "a form elicitation/create request in the stream"
    last = msgs[-1] if msgs else None
    result = last.get("result") if isinstance(last, dict) else None
    requests = result.get("inputRequests") if isinstance(result, dict) else None
    if isinstance(requests, dict) and any(is_form_request(r) for r in requests.values()):
        return "an input_required result with a form elicitation (upstream 2026-07-28 multi round-trip)"
    return None
