"""One deviation, one failure, and a failure proves itself (MCP checks on canned recordings, judged as the engine
does: `outcomes.judging` set to the check's requirements).

- a failure is a `Deviation` naming the exchange(s) that broke the rule, in order, its message starting with the
  first one's step label (once);
- an exchange that broke a more basic rule blocks the checks of the other requirements (`Blocked` by that root),
  and is a plain failure for the root's own checks;
- a blocked reading never hides a deviation: the root's own checks fail on the very exchange that blocked.
"""
from __future__ import annotations

from typing import Any, Iterable

import pytest

from conformance import canned, registry
from conformance.judging import assess
from conformance.outcomes import Blocked, Deviation, NotAssessed, Observation, judging
from conformance.vocab.constants import UNKNOWN_VERSION
from conformance.vocab.steps import mcp as steps
from conformance.wire.redact import Redactor
from tests.checks.test_mcp_canned import MCP_URL, TOOL, progress_rec, rpc_exchange, tool_result

CHECKS = registry.load_all()


def judged(check_id: str, *recs) -> Any:
    """The check's note, or the exception it raised, judged as the engine judges it."""
    c = CHECKS[check_id]
    try:
        with judging(c.requirements):
            return c.fn(*recs)
    except (AssertionError, NotAssessed, Observation) as exc:
        return exc


def deviation(check_id: str, *recs) -> Deviation:
    got = judged(check_id, *recs)
    assert isinstance(got, Deviation) and not isinstance(got, Blocked), (check_id, got)
    return got


def blocked(check_id: str, *recs) -> Blocked:
    got = judged(check_id, *recs)
    assert isinstance(got, Blocked), (check_id, got)
    return got


def passed(check_id: str, *recs) -> None:
    got = judged(check_id, *recs)
    assert not isinstance(got, BaseException), (check_id, got)


def labels_of(exc: Deviation) -> list[str]:
    return [ex.label for ex in exc.exchanges]


def starts_with_label_once(exc: Deviation) -> None:
    first = exc.exchanges[0].label
    assert exc.message.startswith(f"{first}: ") and not exc.message.startswith(f"{first}: {first}"), exc.message


# -- recordings ------------------------------------------------------------------------------------------------
def result(rid: Any, **changes: Any) -> dict[str, Any]:
    body = tool_result(rid, "conformance")
    body["result"].update(changes)
    return body


REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request"}}


def modern(call: tuple[int, Any] | None = None, call_tool: tuple[int, Any] | None = None, *,
           tools: list[Any] | None = None, list_id: Any = 2):
    """mcp.modern with the plain and tool calls answered (status, body) as given (default: correct)."""
    call = call or (200, tool_result("call-3", "conformance"))
    call_tool = call_tool or (200, tool_result(4, "done"))
    tools = tools if tools is not None else [{"name": TOOL, "inputSchema": {
        "type": "object", "properties": {"prompt": {"type": "string"}}}}]
    return canned.recording("mcp.modern", [
        rpc_exchange(steps.DISCOVER, "disc-1", "server/discover", 200,
                     {"jsonrpc": "2.0", "id": "disc-1", "result": {"capabilities": {"tools": {}}}}),
        rpc_exchange(steps.LIST, 2, "tools/list", 200, {"jsonrpc": "2.0", "id": list_id, "result": {"tools": tools}}),
        rpc_exchange(steps.CALL, "call-3", "tools/call", *call),
        rpc_exchange(steps.CALL_TOOL, 4, "tools/call", *call_tool),
        rpc_exchange(steps.CALL_NONAME, 5, "tools/call", 200, tool_result(5, "conformance"), name=None),
    ], facts={"tool": TOOL, "replies": {steps.CALL: "conformance", steps.CALL_TOOL: "done"}})


VERSION_ERROR = {"jsonrpc": "2.0", "id": None, "error": {
    "code": -32022, "message": "Unsupported protocol version.",
    "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": UNKNOWN_VERSION}}}


def refusals(**answers: tuple[int, Any]):
    """mcp.refusals: the version refusals correct unless given as `version_unknown=(status, body)` etc."""
    def answer(label: str, method: str = "tools/call"):
        status, body = answers.get(label.replace("-", "_"), (400, VERSION_ERROR))
        return rpc_exchange(label, label, method, status, body)
    return canned.recording("mcp.refusals", [answer(steps.VERSION_UNKNOWN),
                                             answer(steps.INITIALIZE_UNKNOWN, "initialize"),
                                             answer(steps.VERSION_MISMATCH)])


def sessions(replies: Iterable[str], generated: str = "ses_1"):
    calls = []
    for n, (label, reply) in enumerate(zip(steps.MCP_SESSIONS, replies), 1):
        body = tool_result(n, reply)
        body["result"]["structuredContent"] = {"sessionId": generated if label.startswith("generated") else "given"}
        calls.append(rpc_exchange(label, n, "tools/call", 200, body))
    return canned.recording("mcp.sessions", calls, facts={"session": "given"})


# -- a failure names the exchange that broke the rule ----------------------------------------------------------
def test_failure_names_the_exchange_and_starts_with_its_label():
    rec = modern(call_tool=(200, result(4, resultType="completed")))
    exc = deviation("mcp.result_type_complete", rec)
    assert labels_of(exc) == [steps.CALL_TOOL]
    starts_with_label_once(exc)


def test_failure_on_several_exchanges_names_each_in_order():
    rec = modern(call=(200, result("call-3", isError="false")), call_tool=(200, result(4, isError="false")))
    exc = deviation("mcp.success_is_not_error", rec)
    assert labels_of(exc) == [steps.CALL, steps.CALL_TOOL]
    starts_with_label_once(exc)
    assert f"; {steps.CALL_TOOL}: " in exc.message


def test_reader_messages_start_with_the_label_once():
    rec = modern(call=(400, REFUSED), call_tool=(400, REFUSED))
    exc = deviation("mcp.modern_call_served", rec)
    assert labels_of(exc) == [steps.CALL, steps.CALL_TOOL]
    starts_with_label_once(exc)
    assert "expected HTTP 200" in exc.message


# -- a precondition: Blocked for the others, a failure for the root's own check -----------------------------------
def test_call_not_served_blocks_the_result_checks():
    rec = modern(call=(400, REFUSED), call_tool=(400, REFUSED))
    for check_id in ("mcp.one_text_block", "mcp.text_is_reply", "mcp.result_type_complete",
                     "mcp.success_is_not_error"):
        exc = blocked(check_id, rec)
        assert exc.root == "MCP-VER-001" and labels_of(exc) == [steps.CALL, steps.CALL_TOOL], (check_id, exc)
    assert labels_of(deviation("mcp.modern_call_served", rec)) == [steps.CALL, steps.CALL_TOOL]


def test_a_blocked_exchange_blocks_the_check_never_a_pass_on_the_rest():
    rec = modern(call_tool=(500, REFUSED))
    exc = blocked("mcp.result_type_complete", rec)                # the other call is fine; this one was not served
    assert exc.root == "MCP-VER-001" and labels_of(exc) == [steps.CALL_TOOL]
    assert labels_of(deviation("mcp.modern_call_served", rec)) == [steps.CALL_TOOL]


def test_tools_list_not_one_tool_blocks_the_name_checks():
    rec = modern(tools=[{"name": TOOL}, {"name": "ask_other"}])
    assert labels_of(deviation("mcp.exactly_one_tool", rec)) == [steps.LIST]
    for check_id in ("mcp.tool_name_form", "mcp.tool_name_from_slug", "mcp.tool_matches_upstream"):
        assert blocked(check_id, rec).root == "MCP-METH-002", check_id


def test_tool_name_with_hyphen_blocks_the_slug_check():
    rec = modern(tools=[{"name": "ask_conformance-agent"}])
    assert labels_of(deviation("mcp.tool_name_form", rec)) == [steps.LIST]
    assert blocked("mcp.tool_name_from_slug", rec).root == "MCP-METH-003"


def test_refusal_without_json_rpc_body_is_mcp_err_001s_failure_alone():
    rec = refusals(version_unknown=(400, "Bad Request"))
    exc = deviation("mcp.refusal_body_mcp_refusals", rec)
    assert labels_of(exc) == [steps.VERSION_UNKNOWN]
    for check_id in ("mcp.unknown_version_refused", "mcp.unknown_version_echoes_requested"):
        assert blocked(check_id, rec).root == "MCP-ERR-001", check_id


@pytest.mark.parametrize("status, body", [
    (200, VERSION_ERROR),       # the refusal lost its status
    (500, VERSION_ERROR),       # not a 4xx
    (None, b""),                # no response at all
])
def test_refusal_that_did_not_keep_a_4xx_blocks_by_mcp_err_001(status, body):
    rec = refusals(version_unknown=(status, body))
    assert blocked("mcp.unknown_version_refused", rec).root == "MCP-ERR-001"
    assert labels_of(deviation("mcp.refusal_body_mcp_refusals", rec)) == [steps.VERSION_UNKNOWN]


def test_wrong_code_fails_the_refusal_and_blocks_what_reads_its_data():
    wrong = {**VERSION_ERROR, "error": {**VERSION_ERROR["error"], "code": -32009}}
    rec = refusals(version_unknown=(400, wrong))
    assert labels_of(deviation("mcp.unknown_version_refused", rec)) == [steps.VERSION_UNKNOWN]
    assert blocked("mcp.unknown_version_echoes_requested", rec).root == "MCP-VER-002"
    exc = blocked("mcp.unknown_version_lists_supported", rec)  # the initialize refusal is fine, this one is VER-002's
    assert exc.root == "MCP-VER-002" and labels_of(exc) == [steps.VERSION_UNKNOWN]
    passed("mcp.refusal_body_mcp_refusals", rec)


def test_supported_versions_are_judged_once_on_both_refusals():
    lacking = {**VERSION_ERROR, "error": {**VERSION_ERROR["error"], "data": {"supported": ["2025-11-25"],
                                                                          "requested": UNKNOWN_VERSION}}}
    rec = refusals(version_unknown=(400, lacking), initialize_unknown=(400, lacking))
    assert labels_of(deviation("mcp.unknown_version_lists_supported", rec)) == [steps.VERSION_UNKNOWN,
                                                                                steps.INITIALIZE_UNKNOWN]
    assert blocked("mcp.unknown_initialize_version_refused", rec).root == "MCP-VER-003"


def test_token_ignored_blocks_every_stream_reading():
    def json_answer(label: str):
        ex = progress_rec().get(label)
        return canned.exchange(200, {"content-type": "application/json"}, body=tool_result(ex.label, "hello"),
                               label=label, url=MCP_URL, request_body=ex.request_body)
    rec = canned.recording("mcp.progress", [json_answer(label) for label in steps.MCP_PROGRESS],
                           facts=progress_rec().facts)
    assert labels_of(deviation("mcp.token_gets_stream", rec)) == list(steps.MCP_PROGRESS)
    for check_id in ("mcp.frames_are_messages", "mcp.response_is_last", "mcp.others_are_progress",
                     "mcp.token_echoed", "mcp.progress_is_number", "mcp.message_is_string"):
        assert blocked(check_id, rec).root == "MCP-PROG-001", check_id


def test_response_not_last_fails_only_mcp_prog_003():
    correct = progress_rec()

    def late_notification(ex):
        frames = [f.json() for f in ex.stream.dispatched]
        late = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": correct.facts["tokens"][ex.label], "progress": 9, "message": "late"}}
        return canned.exchange(200, {"content-type": "text/event-stream"}, label=ex.label, url=MCP_URL,
                               sse=canned.sse_frames(*frames, late, event="message"), request_body=ex.request_body)
    rec = canned.recording("mcp.progress", [late_notification(ex) for ex in correct.exchanges], facts=correct.facts)
    assert labels_of(deviation("mcp.response_is_last", rec)) == list(steps.MCP_PROGRESS)
    assert blocked("mcp.streamed_result_complete", rec).root == "MCP-PROG-003"
    passed("mcp.others_are_progress", rec)


def test_session_ignored_blocks_the_generated_session_check():
    rec = sessions(["1", "1", "1", "1"])
    exc = deviation("mcp.same_session_same_instance", rec)
    assert labels_of(exc) == [steps.GIVEN_2, steps.GIVEN_1]     # the second call is the one that forgot
    assert blocked("mcp.generated_session_reaches_instance", rec).root == "MCP-SESS-002"
    generated_lost = deviation("mcp.generated_session_reaches_instance", sessions(["1", "2", "1", "1"]))
    assert labels_of(generated_lost) == [steps.GENERATED_2, steps.GENERATED_1]


def test_two_text_blocks_fail_mcp_tool_001_alone():
    body = tool_result(1, "1")
    body["result"]["content"].append({"type": "text", "text": ""})
    rec = sessions(["1", "2", "1", "2"])
    rec.exchanges[0] = rpc_exchange(steps.GIVEN_1, 1, "tools/call", 200, body)
    assert labels_of(deviation("mcp.one_text_block_sessions", rec)) == [steps.GIVEN_1]
    assert blocked("mcp.same_session_same_instance", rec).root == "MCP-TOOL-001"


def test_altered_count_reply_is_mcp_tool_002s_not_the_sessions():
    rec = sessions(["1\n", "2\n", "1\n", "2\n"])
    assert labels_of(deviation("mcp.count_text_is_reply", rec)) == list(steps.MCP_SESSIONS)
    for check_id in ("mcp.same_session_same_instance", "mcp.generated_session_reaches_instance"):
        assert blocked(check_id, rec).root == "MCP-TOOL-002", check_id


def pause_text(resume: dict[str, Any]):
    ask = {"content": [{"type": "text", "text": "What is your name?"}], "resultType": "complete"}
    return canned.recording("mcp.pause_text", [
        rpc_exchange(steps.ASK, 1, "tools/call", 200, {"jsonrpc": "2.0", "id": 1, "result": ask}),
        rpc_exchange(steps.RESUME, 2, "tools/call", 200, {"jsonrpc": "2.0", "id": 2, "result": resume}),
    ], facts={"question": "What is your name?", "suffix": "thanks", "answer": {"name": "Ada"}})


CONTINUATION = [{"type": "text", "text": 'answer: {"name":"Ada"}thanks'}]


def test_continuation_result_type_is_mcp_tool_003s():
    rec = pause_text({"content": CONTINUATION, "resultType": "completed"})
    assert labels_of(deviation("mcp.result_type_complete_pause_text", rec)) == [steps.RESUME]
    assert blocked("mcp.resume_continues", rec).root == "MCP-TOOL-003"
    passed("mcp.one_text_block_pause_text", rec)


def test_asked_again_is_mcp_pause_002s_alone():
    rec = pause_text({"resultType": "input_required", "inputRequests": {}})
    assert labels_of(deviation("mcp.resume_continues", rec)) == [steps.RESUME]
    for check_id in ("mcp.result_type_complete_pause_text", "mcp.one_text_block_pause_text"):
        assert isinstance(judged(check_id, rec), NotAssessed), check_id
    passed("mcp.modern_call_served_pause_text", rec)


def test_resume_refused_is_mcp_pause_002s_not_mcp_ver_001s():
    """A server may refuse a resume it finds no paused run for: not a call the spec says is served."""
    rec = pause_text({})
    rec.exchanges[1] = rpc_exchange(steps.RESUME, 2, "tools/call", 400, {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32602, "message": "No paused run on this session_id."}})
    assert labels_of(deviation("mcp.resume_continues", rec)) == [steps.RESUME]
    passed("mcp.modern_call_served_pause_text", rec)
    assert blocked("mcp.one_text_block_pause_text", rec).root == "MCP-PAUSE-002"


def test_question_not_served_leaves_no_run_to_resume():
    rec = pause_text({})
    rec.exchanges[0] = rpc_exchange(steps.ASK, 1, "tools/call", 400, REFUSED)
    rec.exchanges[1] = rpc_exchange(steps.RESUME, 2, "tools/call", 400, REFUSED)
    assert labels_of(deviation("mcp.modern_call_served_pause_text", rec)) == [steps.ASK]
    for check_id in ("mcp.question_as_text", "mcp.resume_continues"):
        assert blocked(check_id, rec).root == "MCP-VER-001", check_id


def test_http_date_retry_after_is_gen_rate_003s():
    limited = canned.exchange(429, {"content-type": "application/json", "retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"},
                              body={"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "slow down"}},
                              label=steps.BURST.of(3), url=MCP_URL)
    rec = canned.recording("mcp.rate_limit", [limited], facts={"sent": 4})
    assert labels_of(deviation("mcp.probed_429_has_retry_after", rec)) == [steps.BURST.of(3)]
    assert blocked("mcp.rate_limited", rec).root == "GEN-RATE-003"


# -- one reading per value: JSON-RPC ids compared as JSON values ----------------------------------------------
@pytest.mark.parametrize("returned, ok", [(2, True), (2.0, True), ("2", False), (True, False), (None, False)])
def test_ids_compared_as_json_values(returned, ok):
    """JSON has one number type: the id 2 sent comes back as 2 or 2.0 alike (`same_json`); "2" or null is another."""
    rec = modern(list_id=returned)
    if ok:
        passed("mcp.ids_kept_modern", rec)
    else:
        assert labels_of(deviation("mcp.ids_kept_modern", rec)) == [steps.LIST]


# -- no blocked reading hides a deviation -------------------------------------------------------------------------
BROKEN = {
    "call not served": lambda: modern(call=(400, REFUSED), call_tool=(500, REFUSED)),
    "one call not served": lambda: modern(call_tool=(400, REFUSED)),
    "two tools": lambda: modern(tools=[{"name": TOOL}, {"name": "ask_x"}]),
    "refusal body": lambda: refusals(version_unknown=(400, "nope"), initialize_unknown=(200, VERSION_ERROR)),
    "sessions": lambda: sessions(["1", "1", "1", "1"]),
    "count reply altered": lambda: sessions(["1\n", "2\n", "1\n", "2\n"]),
    "continuation": lambda: pause_text({"content": CONTINUATION * 2, "resultType": "completed"}),
}


@pytest.mark.parametrize("name", BROKEN)
def test_every_block_is_a_failure_of_its_root_on_the_same_exchange(name):
    rec = BROKEN[name]()
    mine = [c for c in CHECKS.values() if c.module.endswith(".mcp") or c.id.startswith("mcp.")]
    for c in mine:
        if tuple(c.scenarios) != (rec.scenario,):
            continue
        got = judged(c.id, rec)
        if not isinstance(got, Blocked):
            continue
        roots = [r for r in mine if got.root in r.requirements and rec.scenario in r.scenarios]
        failures = [judged(r.id, rec) for r in roots]
        named = {id(ex) for f in failures if isinstance(f, Deviation) and not isinstance(f, Blocked)
                 for ex in f.exchanges}
        assert all(id(ex) in named for ex in got.exchanges), (c.id, got.root, got, failures)


def test_resume_that_differs_only_in_form_is_mcp_tool_002s():
    rec = pause_text({"content": [{"type": "text", "text": 'answer: {"name":"Ada"}thanks\n'}], "resultType": "complete"})
    assert blocked("mcp.resume_continues", rec).root == "MCP-TOOL-002"
    rec = pause_text({"content": [{"type": "text", "text": "What is your name?"}], "resultType": "complete"})
    assert labels_of(deviation("mcp.resume_continues", rec)) == [steps.RESUME]    # asked again: its own failure


# -- the very refusal of the basic call: blocked by the rule that call broke (judging.same_refusal) -------------
class Source:
    """The run's recordings as `judging.assess` reads them."""

    def __init__(self, *recs):
        self.recs = {rec.scenario: rec for rec in recs}
        self.preflight, self.preflight_error, self.redactor = canned.recording("preflight", []), None, Redactor()

    def recording(self, name: str):
        return self.recs.get(name) or NotAssessed(f"{name} was not run")


def test_a_step_given_the_basic_calls_refusal_is_blocked_by_its_rule():
    """The unknown version answered with the very refusal the plain tools/call got: blocked by MCP-VER-001 (the
    server refuses before reading the version); a refusal of its own is the step's failure."""
    same = Source(modern(call=(400, REFUSED)), refusals(version_unknown=(400, REFUSED)))
    result = assess(same, CHECKS["mcp.unknown_version_refused"])
    assert (result.status, result.blocked_by) == ("blocked", "MCP-VER-001"), result
    assert [e["label"] for e in result.evidence[:2]] == [steps.VERSION_UNKNOWN, steps.CALL]
    assert assess(same, CHECKS["mcp.modern_call_served"]).status == "failed"        # the root's own check
    own = Source(modern(call=(400, VERSION_ERROR)), refusals(version_unknown=(400, REFUSED)))
    result = assess(own, CHECKS["mcp.unknown_version_refused"])
    assert result.status == "failed" and result.evidence[0]["label"] == steps.VERSION_UNKNOWN, result
