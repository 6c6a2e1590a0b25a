"""One deviation, one failure, proven on canned recordings: every AG-UI failure names the exchange(s) that broke
the rule (in order, its message starting with the first one's label), and a reading that meets a more basic
deviation is blocked by that requirement for every other check while the requirement's own check fails on it.
The engine is simulated with `outcomes.judging` (tests.checks.test_agui_canned.check)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from conformance import canned
from conformance.outcomes import Blocked, Deviation, NotAssessed
from conformance.vocab.steps import access, agui as steps
from tests.checks.test_agui_canned import AGUI_URL, SSE, THREAD, check, data, interrupt_rec, reply_events, stream

JSON = {"content-type": "application/json"}


def frames(events: list[dict]) -> list[tuple[float, bytes]]:
    return [(i * 0.01, data(e)) for i, e in enumerate(events)]


def rec_of(scenario: str, runs: dict, **facts):
    """A recording of several runs: {label: (exchange, expectation)}."""
    return canned.recording(scenario, [ex for ex, _ in runs.values()],
                            facts={"runs": {label: want for label, (_, want) in runs.items()}, **facts})


def want(reply: str | None = "conformance", kind: str = "success", thread: str | None = None, run: str | None = None):
    return {"kind": kind, "reply": reply, "thread": thread, "run": run}


def plain(ids_events: list[dict], bare_events: list[dict] | None = None):
    bare_events = reply_events("conformance") if bare_events is None else bare_events
    return rec_of("agui.plain", {steps.IDS: (stream(steps.IDS, frames(ids_events)), want(thread=THREAD, run="r1")),
                                 steps.BARE: (stream(steps.BARE, frames(bare_events)), want())})


def failed(name: str, *recs) -> Deviation:
    """The Deviation the check raised: a failure of its own rule, not a block."""
    with pytest.raises(Deviation) as caught:
        check(name)(*recs)
    assert not isinstance(caught.value, Blocked), caught.value
    return caught.value


def blocked(name: str, *recs) -> Blocked:
    with pytest.raises(Blocked) as caught:
        check(name)(*recs)
    return caught.value


# -- a failure names its exchanges ----------------------------------------------------------------
def test_a_failure_on_several_runs_names_each_in_order():
    no_start = reply_events("conformance")[1:]
    rec = plain(no_start, no_start)
    dev = failed("run_started_first", rec)
    assert dev.exchanges == (rec.get(steps.IDS), rec.get(steps.BARE))
    assert dev.message.startswith("ids: expected RUN_STARTED first") and "; bare: expected RUN_STARTED" in dev.message


def test_only_the_run_that_broke_the_rule_is_named():
    wrong = [dict(e, threadId="other") if e["type"] == "RUN_STARTED" else e for e in reply_events("conformance")]
    rec = plain(wrong)
    dev = failed("thread_id_echoed_on_start", rec)
    assert dev.exchanges == (rec.get(steps.IDS),) and dev.message.startswith("ids: sent threadId")


# -- every run streams (AGUI-FRAME-001) -----------------------------------------------------------
def text_plain_rec():
    body = b"".join(chunk for _, chunk in frames(reply_events("conformance")))
    answers = {label: canned.exchange(200, {"content-type": "text/plain"}, body=body, label=label, url=AGUI_URL)
               for label in (steps.IDS, steps.BARE)}
    return rec_of("agui.plain", {label: (ex, want()) for label, ex in answers.items()})


def test_a_run_that_did_not_stream_fails_frame_001_and_blocks_the_rest():
    rec = text_plain_rec()
    dev = failed("answers_event_stream", rec)
    assert dev.exchanges == (rec.get(steps.IDS), rec.get(steps.BARE)) and dev.message.startswith("ids: ")
    for name in ("run_started_first", "deltas_join_to_reply", "frames_are_json_events", "normal_outcome_success"):
        found = blocked(name, rec)
        assert found.root == "AGUI-FRAME-001" and found.exchanges[0] is rec.get(steps.IDS), name


def test_a_check_never_passes_over_a_run_it_owns_and_could_not_read():
    """The 256-character threadId refused while the 1-character one streams: AGUI-SESS-003 is blocked by
    AGUI-FRAME-001, never passed; the report fails it when AGUI-FRAME-001 itself passed."""
    refused = canned.exchange(400, JSON, label=steps.THREAD_256, url=AGUI_URL,
                              body={"error": {"code": "validation_failed", "message": "too long", "requestId": "req_1"}})
    rec = rec_of("agui.key_lengths", {steps.THREAD_1: (stream(steps.THREAD_1, frames(reply_events("conformance"))), want()),
                                      steps.THREAD_256: (refused, want())})
    found = blocked("thread_id_bounds_accepted", rec)
    assert found.root == "AGUI-FRAME-001" and found.exchanges == (refused,)


# -- frames that are not one JSON event (AGUI-FRAME-003/004) ---------------------------------------
def merged_frames_rec():
    """TEXT_MESSAGE_START and the first CONTENT share one frame (two data lines, two JSON values)."""
    events = reply_events("conformance")
    chunks = frames(events[:1]) + [(0.02, data(events[1])[:-1] + data(events[2]))] + frames(events[3:])
    return rec_of("agui.plain", {steps.IDS: (stream(steps.IDS, chunks), want(thread=THREAD, run="r1"))})


def test_two_events_in_one_frame_fail_frame_004_alone():
    rec = merged_frames_rec()
    dev = failed("one_event_per_frame", rec)
    assert dev.exchanges == (rec.get(steps.IDS),) and "more follows its first JSON value" in dev.message
    for name in ("frames_are_json_events", "deltas_join_to_reply", "content_belongs_to_started_message", "run_started_first"):
        assert blocked(name, rec).root == "AGUI-FRAME-004", name


def test_an_event_split_across_frames_is_frame_004():
    events = reply_events("conformance")
    whole = data(events[1]).decode()
    half = len("data: ") + 20
    chunks = frames(events[:1]) + [(0.02, whole[:half].encode() + b"\n\n"), (0.03, b"data: " + whole[half:].encode())] \
        + [(0.04 + i * 0.01, data(e)) for i, e in enumerate(events[2:])]
    rec = rec_of("agui.plain", {steps.IDS: (stream(steps.IDS, chunks), want(thread=THREAD, run="r1"))})
    assert "unfinished JSON value" in failed("one_event_per_frame", rec).message
    assert blocked("one_terminal_event", rec).root == "AGUI-FRAME-004"


def test_a_typeless_object_is_frame_003_and_hides_nothing():
    events = reply_events("conformance")
    rec = plain(events[:1] + [{"heartbeat": True}] + events[1:])
    assert "non-empty string `type`" in failed("frames_are_json_events", rec).message
    for name in ("run_started_first", "deltas_join_to_reply", "events_validate_upstream"):
        check(name)(rec)


# -- order ---------------------------------------------------------------------------------------
def test_no_run_started_fails_order_001_alone():
    rec = plain(reply_events("conformance")[1:])
    assert failed("run_started_first", rec).exchanges == (rec.get(steps.IDS),)
    for name in ("thread_id_echoed_on_start", "run_id_echoed_on_start", "finish_thread_matches_start"):
        assert blocked(name, rec).root == "AGUI-ORDER-001", name


def test_a_normal_run_ending_with_run_error_fails_order_004_alone():
    error_end = reply_events("conformance")[:-1] + [{"type": "RUN_ERROR", "message": "done"}]
    rec = plain(error_end)
    assert failed("normal_run_finishes", rec).exchanges == (rec.get(steps.IDS),)
    for name in ("normal_outcome_success", "finished_result_is_reply", "run_id_echoed_on_finish"):
        assert blocked(name, rec).root == "AGUI-ORDER-004", name


def test_an_event_after_the_terminal_one_fails_order_003_not_the_failure_checks():
    events = reply_events("partial")[:-1] + [{"type": "RUN_ERROR", "message": "boom"}, {"type": "CUSTOM", "name": "x"}]
    rec = rec_of("agui.fail_after", {steps.FAIL_AFTER: (stream(steps.FAIL_AFTER, frames(events)),
                                                        want("partial", kind="error"))})
    assert failed("terminal_event_is_last", rec).exchanges == (rec.get(steps.FAIL_AFTER),)
    assert blocked("failure_after_output", rec).root == "AGUI-ORDER-003"


# -- the reply the deltas carry (AGUI-ORDER-006) ------------------------------------------------------
def session_rec(reply_of: dict):
    """`count` runs on one fresh threadId; reply_of: label -> (deltas, RUN_FINISHED.result)."""
    def answer(label, deltas, result):
        events = reply_events(deltas, thread="k")
        events[-1]["result"] = result
        return stream(label, frames(events))
    return rec_of("agui.session", {label: (answer(label, *texts), want(expected, thread="k"))
                                   for label, (texts, expected) in reply_of.items()})


def test_deltas_that_lost_the_reply_block_the_readers_of_the_reply():
    rec = session_rec({steps.FRESH_1: (("", "1"), "1"), steps.FRESH_2: (("2", "2"), "2")})
    found = blocked("same_thread_same_instance", rec)
    assert found.root == "AGUI-ORDER-006" and found.exchanges == (rec.get(steps.FRESH_1),)


def test_a_wrong_result_alone_does_not_touch_the_readers_of_the_reply():
    rec = session_rec({steps.FRESH_1: (("1", ""), "1"), steps.FRESH_2: (("2", ""), "2")})
    check("same_thread_same_instance")(rec)


def test_a_reply_wrong_both_ways_is_the_readers_own_failure():
    rec = session_rec({steps.FRESH_1: (("1", "1"), "1"), steps.FRESH_2: (("1", "1"), "2")})
    dev = failed("same_thread_same_instance", rec)
    assert dev.exchanges == (rec.get(steps.FRESH_2),) and dev.message.startswith("fresh-2: `count` replied '1'")


# -- refusals (AGUI-ERR-005) ------------------------------------------------------------------------
def error_body(code: str) -> dict:
    return {"error": {"code": code, "message": "refused", "requestId": "req_1",
                      **({"details": {"field": "invalid"}} if code == "validation_failed" else {})}}


STATUS = {"not_found": 404, "unauthenticated": 401}
ACCESS_CODES = {access.NO_CREDENTIAL: "unauthenticated", access.UNKNOWN_KEY: "unauthenticated",
                access.UNKNOWN_AGENT: "not_found"}


def _refused(scenario: str, codes: dict, answers: dict):
    exchanges = [answers.get(label) or canned.exchange(STATUS.get(code, 400), JSON, body=error_body(code), label=label)
                 for label, code in codes.items()]
    return canned.recording(scenario, exchanges, facts={})


def refusals_rec(answers: dict):
    """agui.refusals with every step refused correctly, but for `answers` (label -> exchange)."""
    codes = {steps.NO_MESSAGES: "invalid_request", steps.EMPTY_MESSAGES: "invalid_request",
             steps.ASSISTANT_ONLY: "invalid_request", steps.THREAD_257: "validation_failed",
             steps.THREAD_EMPTY: "validation_failed", steps.HUGE_BODY: "validation_failed",
             steps.INVOKE_SESSION_257: "validation_failed"}
    return _refused("agui.refusals", codes, answers)


def access_rec(protocol: str, answers: dict | None = None):
    """access.agui or access.invoke with its credential and addressing refusals answered correctly, but `answers`."""
    return _refused(f"access.{protocol}", ACCESS_CODES, answers or {})


def refusal_recs(refusals: dict | None = None, agui: dict | None = None, invoke: dict | None = None):
    """What AGUI-ERR-004 reads: agui.refusals, access.agui, access.invoke."""
    return refusals_rec(refusals or {}), access_rec("agui", agui), access_rec("invoke", invoke)


def sse_refusal(label):
    return canned.exchange(400, SSE, label=label, url=AGUI_URL,
                           sse=[(0.0, data({"type": "RUN_ERROR", "message": "refused", "code": "invalid_request"}))])


def test_a_refusal_as_an_event_stream_fails_err_005_alone():
    rec = refusals_rec({steps.NO_MESSAGES: sse_refusal(steps.NO_MESSAGES)})
    dev = failed("refusals_are_error_bodies", rec, access_rec("agui"))
    assert dev.exchanges == (rec.get(steps.NO_MESSAGES),) and dev.message.startswith("no-messages: the 400 refusal is an event stream")
    assert blocked("refused_without_messages", rec).root == "AGUI-ERR-005"


def test_a_credential_refusal_as_an_event_stream_fails_err_005():
    """access.agui asks for the event stream as an AG-UI client does: its refusals are AGUI-ERR-005's evidence too."""
    streamed = dataclasses.replace(sse_refusal(access.NO_CREDENTIAL), status=401)
    agui = access_rec("agui", {access.NO_CREDENTIAL: streamed})
    dev = failed("refusals_are_error_bodies", refusals_rec({}), agui)
    assert dev.exchanges == (streamed,) and dev.message.startswith("no-credential: the 401 refusal is an event stream")


def test_a_request_that_ran_fails_its_own_requirement_and_not_err_005():
    ran = stream(steps.NO_MESSAGES, frames(reply_events("conformance")))
    rec = refusals_rec({steps.NO_MESSAGES: ran})
    assert failed("refused_without_messages", rec).exchanges == (ran,)
    assert check("refusals_are_error_bodies")(rec, access_rec("agui")) is None


def test_a_refusal_with_another_code_names_its_exchange():
    wrong = canned.exchange(400, JSON, body=error_body("invalid_request"), label=steps.THREAD_EMPTY)
    rec = refusals_rec({steps.THREAD_EMPTY: wrong})
    dev = failed("refused_thread_id_out_of_bounds", rec)
    assert dev.exchanges == (wrong,)
    assert dev.message.startswith("thread-empty: status 400 with error.code 'invalid_request', expected 'validation_failed'")


def test_agui_and_invoke_refusals_compared_name_both_exchanges():
    agui = canned.exchange(403, JSON, body=error_body("not_found"), label=access.UNKNOWN_AGENT)
    recs = refusal_recs(agui={access.UNKNOWN_AGENT: agui})
    dev = failed("refusals_match_invoke", *recs)
    assert dev.exchanges == (agui, recs[2].get(access.UNKNOWN_AGENT))


@pytest.mark.parametrize("invoke_answer,root", [
    (canned.exchange(500, JSON, body=error_body("internal")), "GEN-ERR-001"),
    (canned.exchange(200, JSON, body={"status": "completed", "result": "conformance"}), "AUTH-KEY-002"),
    (canned.exchange(401, SSE, sse=[(0.0, b"event: error\ndata: {}\n\n")]), "INV-ERR-001"),
    (canned.exchange(401, JSON, body={"error": {"message": "no code"}}), "GEN-ERR-002")])
def test_an_invoke_answer_that_is_no_refusal_blocks_the_comparison(invoke_answer, root):
    answer = dataclasses.replace(invoke_answer, label=access.NO_CREDENTIAL)
    found = blocked("refusals_match_invoke", *refusal_recs(invoke={access.NO_CREDENTIAL: answer}))
    assert found.root == root and found.exchanges == (answer,)


# -- the resume, sessions across protocols ----------------------------------------------------------
def test_a_resumed_run_on_another_thread_is_id_001s_deviation():
    resumed = stream(steps.RESUME, frames(reply_events('answer: {"name":"Ada"}thanks', thread="elsewhere")))
    rec = interrupt_rec(resumed)
    found = blocked("resume_keeps_thread", rec)
    assert found.root == "AGUI-ID-001" and found.exchanges[0].label == steps.RESUME


def cross_rec(mcp_reply: str):
    invoke = canned.exchange(200, JSON, body={"status": "completed", "result": "1"}, label=steps.VIA_INVOKE)
    agui = stream(steps.VIA_AGUI, frames(reply_events("2", thread="key-1")))
    mcp = canned.exchange(200, JSON, label=steps.VIA_MCP, body={"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": mcp_reply}]}})
    return canned.recording("agui.cross_session", [invoke, agui, mcp], facts={"key": "key-1"})


def test_one_key_across_protocols_names_the_protocol_that_reached_another_instance():
    assert check("one_key_across_protocols")(cross_rec("3")) is None
    rec = cross_rec("1")
    dev = failed("one_key_across_protocols", rec)
    assert dev.exchanges[0] is rec.get(steps.VIA_MCP) and dev.message.startswith("mcp: ")


# -- one reading per value ------------------------------------------------------------------------
@pytest.mark.parametrize("sent,echoed,passes", [(True, 1, False), (True, True, True), (42, 42.0, True), (42, "42", False)])
def test_pass_through_compares_json_values_not_python_ones(sent, echoed, passes):
    """`true` is not 1 and 1 is not "1"; 42 and 42.0 are one JSON number."""
    reply = json.dumps({"x_value": echoed})
    rec = canned.recording("agui.params", [stream(steps.ECHO_PARAMS, frames(reply_events(reply)))],
                           facts={"runs": {steps.ECHO_PARAMS: want(None)}, "forwarded": {}, "unknown": {"x_value": sent}})
    if passes:
        assert check("unknown_fields_reach_params")(rec) is None
    else:
        message = failed("unknown_fields_reach_params", rec).message
        assert message.startswith("echo-params: sent x_value, the agent's params hold it changed: difference: "
                                  f"params.x_value: {json.dumps(sent)} (")
        assert f"→ {json.dumps(echoed)} (" in message      # the type change named on both sides


def test_nothing_streamed_is_not_passed():
    rec = canned.recording("agui.plain", [], facts={"runs": {}})
    with pytest.raises(NotAssessed):
        check("run_started_first")(rec)


def generated_session_rec(generated_2: str, fresh_2: str):
    """agui.session: the generated threadId's second run replies `generated_2`, the fresh one's `fresh_2`."""
    replies = {steps.GENERATED_1: "1", steps.GENERATED_2: generated_2, steps.GENERATED_OTHER: "1",
               steps.FRESH_1: "1", steps.FRESH_2: fresh_2}
    return rec_of("agui.session", {label: (stream(label, frames(reply_events(text, thread="thr_gen"))), want(expected))
                                   for (label, text), expected in zip(replies.items(), ("1", "2", "1", "1", "2"))})


def test_a_generated_thread_that_does_not_continue_fails_sess_001():
    rec = generated_session_rec("1", "2")
    assert failed("generated_thread_continues", rec).exchanges == (rec.get(steps.GENERATED_2),)


def test_no_thread_continuing_at_all_is_sess_002s_deviation():
    """When the fresh threadId does not continue either, the generated one not continuing is the same deviation."""
    rec = generated_session_rec("1", "1")
    found = blocked("generated_thread_continues", rec)
    assert found.root == "AGUI-SESS-002" and found.exchanges == (rec.get(steps.GENERATED_2), rec.get(steps.FRESH_2))
    assert failed("same_thread_same_instance", rec).exchanges == (rec.get(steps.FRESH_2),)
