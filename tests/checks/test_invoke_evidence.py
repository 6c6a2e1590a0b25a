"""A failure of an invoke check proves itself, and one fault is one failure (canned recordings, no server).

* A failure is a `Deviation` naming the exchange(s) that broke the rule, the one that shows the deviation first,
  and its message starts with that exchange's step label.
* A reader that cannot read an exchange because it broke a more basic rule (ROOT) raises a precondition: the
  checks of other requirements are `Blocked` by ROOT, ROOT's own checks fail with a plain `Deviation`.
  `judge` runs a check as the engine does, inside `outcomes.judging(<its requirements>)`.
"""
from __future__ import annotations

import dataclasses

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, Deviation, judging
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.steps import invoke as steps

registry.load_all()
JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}
ERROR = {"error": {"code": "validation_failed", "message": "bad", "requestId": "req_1", "details": {}}}


def judge(check_id: str, *recs):
    check = registry.CHECKS[check_id]
    with judging(check.requirements):
        return check.fn(*recs)


def failure(check_id: str, *recs) -> Deviation:
    """The Deviation a check raises (never a Blocked)."""
    with pytest.raises(Deviation) as info:
        judge(check_id, *recs)
    assert not isinstance(info.value, Blocked), info.value
    return info.value


def blocked(check_id: str, *recs) -> Blocked:
    with pytest.raises(Blocked) as info:
        judge(check_id, *recs)
    return info.value


def result(label: str, http: int = 200, headers=JSON, request: dict | None = None, **fields):
    body = {"status": "completed", "result": "conformance", "events": [], "sessionId": "s-" + label,
            "agentId": "agt_canned", "versionNumber": 3, "requestId": "req_" + label, "durationMs": 12, **fields}
    return canned.exchange(http, headers, body=body, label=label,
                           request_body=request or {"prompt": "say conformance", "sessionId": "s-" + label})


def stream(label: str, *chunks: bytes, status: int = 200, headers=SSE):
    done = b'event: done\ndata: {"v": 1, "type": "done"}\n\n'
    frames = [b'event: text\ndata: {"v": 1, "type": "text", "delta": "conformance"}\n\n', done] \
        if not chunks else list(chunks)
    return canned.exchange(status, headers, sse=[(0.01 * i, c) for i, c in enumerate(frames)], label=label,
                           request_body={"prompt": "say conformance", "stream": True})


def runs(*exchanges, names=("plain_reply",)):
    return canned.recording("invoke.runs", exchanges,
                            facts={"scenarios": {n: {"reply": "conformance"} for n in names}, "skipped": {}})


def names_of(exc: Deviation) -> list[str]:
    return [ex.label for ex in exc.exchanges]


def starts_with_label(exc: Deviation) -> bool:
    return str(exc).startswith(f"{exc.exchanges[0].label}: ")


# -- a failure names the exchange that broke the rule ------------------------------------------------------------
def test_a_json_result_failure_names_its_exchange_only():
    ok, bad = result(steps.RUN_JSON.of("plain_reply")), result(steps.RUN_JSON.of("step"), agentId="agt_other")
    exc = failure("invoke.agent_id_is_path", runs(ok, bad, names=("plain_reply", "step")))
    assert names_of(exc) == [bad.label] and starts_with_label(exc)


def test_equal_request_ids_name_the_repeat_first_then_the_first_holder():
    first = result(steps.RUN_JSON.of("plain_reply"), requestId="req_same")
    repeat = result(steps.RUN_JSON.of("step"), requestId="req_same")
    exc = failure("invoke.request_ids_differ", runs(first, repeat, names=("plain_reply", "step")))
    assert names_of(exc) == [repeat.label, first.label] and starts_with_label(exc)


def test_equal_generated_session_ids_name_the_repeat_first():
    a = result(steps.NO_STREAM_NO_ACCEPT, sessionId="default")
    b = result(steps.NO_STREAM_ACCEPT_JSON, sessionId="default")
    sessions = canned.recording("invoke.sessions", [result(steps.GENERATED_1, sessionId="other")])
    exc = failure("invoke.generated_session_ids", canned.recording("invoke.selection", [a, b]), sessions)
    assert names_of(exc) == [b.label, a.label] and starts_with_label(exc)


def count(label: str, reply: str):
    return result(label, result=reply)


def test_a_session_that_did_not_hold_names_the_second_count_then_the_first():
    first, second = count(steps.COUNT_1, "1"), count(steps.COUNT_2, "1")
    exc = failure("invoke.same_key_same_instance", canned.recording("invoke.sessions", [first, second]))
    assert names_of(exc) == [second.label, first.label] and starts_with_label(exc)


def test_a_refusal_that_ran_names_the_count_then_the_refusal():
    refusal = canned.exchange(400, JSON, body=ERROR, label=steps.PROMPT_NUMBER)
    proof = count(steps.AFTER.of(steps.PROMPT_NUMBER), "2")
    rec = canned.recording("invoke.refusals", [refusal, proof], facts={
        "no_run": {steps.PROMPT_NUMBER: {"count_label": proof.label, "session": "k"}}})
    exc = failure("invoke.refusal_starts_no_run__refusals", rec)
    assert names_of(exc) == [proof.label, refusal.label] and starts_with_label(exc)


def test_a_stream_failure_names_each_stream_that_broke_the_rule():
    good = stream(steps.RUN_SSE.of("plain_reply"))
    bad = stream(steps.RUN_SSE.of("step"), b'event: text\ndata: {"v": "1", "type": "text", "delta": "x"}\n\n',
                 b'event: done\ndata: {"v": 1, "type": "done"}\n\n')
    exc = failure("invoke.frames_carry_v1__runs", runs(good, bad, names=("plain_reply", "step")))
    assert names_of(exc) == [bad.label] and starts_with_label(exc)


def test_a_bad_rate_limit_header_names_the_answers_that_carried_it():
    plain = result(steps.RUN_JSON.of("plain_reply"), headers={**JSON, "x-ratelimit-remaining": "7"})
    bad = result(steps.RUN_JSON.of("step"), headers={**JSON, "x-ratelimit-remaining": "unlimited"})
    empty = canned.recording("invoke.selection", [])
    exc = failure("invoke.rate_limit_remaining_is_count", runs(plain, bad), empty, empty)
    assert names_of(exc) == [bad.label] and starts_with_label(exc) and "'unlimited'" in str(exc)


def test_no_message_repeats_the_label_deviation_adds():
    bad = result(steps.RUN_JSON.of("plain_reply"), versionNumber="3")
    exc = failure("invoke.version_is_integer", runs(bad))
    assert str(exc).count(bad.label) == 1, str(exc)


# -- a precondition: blocked for another requirement's check, a failure for its root's own ---------------------------
def test_a_result_that_is_not_200_blocks_the_result_checks_by_inv_res_001():
    broken = result(steps.RUN_JSON.of("plain_reply"), http=500)
    assert blocked("invoke.status_completed", runs(broken)).root == "INV-RES-001"
    assert blocked("invoke.session_id_is_key", runs(broken)).root == "INV-RES-001"
    exc = failure("invoke.result_is_json_200", runs(broken))
    assert names_of(exc) == [broken.label] and starts_with_label(exc)


def test_a_stream_where_a_result_was_asked_blocks_by_the_selection_rule_of_what_was_sent():
    streamed = stream(steps.PARAMS)
    streamed.request_body = b'{"prompt": "echo params", "stream": false}'
    rec = canned.recording("invoke.params", [streamed], facts={"params": {"x": 1}})
    assert blocked("invoke.unknown_fields_reach_params", rec).root == "INV-SEL-004"
    run = stream(steps.RUN_JSON.of("plain_reply"))
    run.request_body = b'{"prompt": "say conformance"}'
    assert blocked("invoke.result_is_json_200", runs(run)).root == "INV-SEL-003"
    selection = canned.recording("invoke.selection", [stream(steps.STREAM_FALSE_NO_ACCEPT)])
    failure("invoke.stream_false_is_json", selection)


def test_a_json_answer_to_stream_true_blocks_the_stream_checks_by_inv_sel_001():
    answered_json = result(steps.RUN_SSE.of("plain_reply"), request={"prompt": "say conformance", "stream": True})
    for check_id in ("invoke.frames_carry_v1__runs", "invoke.one_terminal_frame__runs",
                     "invoke.deltas_join_to_reply", "invoke.completed_stream_ends_done"):
        assert blocked(check_id, runs(answered_json)).root == "INV-SEL-001", check_id
    exc = failure("invoke.stream_true_answers_stream__runs", runs(answered_json))
    assert names_of(exc) == [answered_json.label] and starts_with_label(exc)


def test_a_frame_without_json_data_blocks_the_frame_readers_by_inv_stream_002():
    bad = stream(steps.RUN_SSE.of("plain_reply"), b"event: text\ndata: delta=conformance\n\n",
                 b'event: done\ndata: {"v": 1, "type": "done"}\n\n')
    for check_id in ("invoke.frames_carry_v1__runs", "invoke.text_frames_carry_delta__runs",
                     "invoke.deltas_join_to_reply"):
        assert blocked(check_id, runs(bad)).root == "INV-STREAM-002", check_id
    judge("invoke.error_frames_carry_message__runs", runs(bad))      # reads only `error` frames: none here
    assert names_of(failure("invoke.frames_carry_json_object__runs", runs(bad))) == [bad.label]


def test_a_stream_ending_inside_its_last_frame_blocks_the_end_readers_by_inv_stream_003():
    cut = stream(steps.RUN_SSE.of("plain_reply"),
                 b'event: text\ndata: {"v": 1, "type": "text", "delta": "conformance"}\n\n',
                 b'event: done\ndata: {"v": 1, "type": "done"}\n')
    for check_id in ("invoke.one_terminal_frame__runs", "invoke.terminal_is_last_and_closes__runs",
                     "invoke.completed_stream_ends_done"):
        assert blocked(check_id, runs(cut)).root == "INV-STREAM-003", check_id
    judge("invoke.deltas_join_to_reply", runs(cut))                  # the text frames are all there
    assert names_of(failure("invoke.frames_end_with_blank_line__runs", runs(cut))) == [cut.label]


def refusals(*exchanges):
    return canned.recording("invoke.refusals", exchanges, facts={"refusals": [ex.label for ex in exchanges]})


@pytest.mark.parametrize("status, headers, body, root", [
    (500, JSON, ERROR, "GEN-ERR-001"),                                              # not a 4xx
    (400, {"content-type": "text/plain"}, b"bad prompt", "GEN-ERR-001"),            # not the error body
    (400, JSON, {"error": {"message": "bad", "requestId": "req_1"}}, "GEN-ERR-002"),  # no code
    (400, JSON, {"error": {"code": "validation_failed", "message": "m", "requestId": "req_1"}}, "GEN-ERR-005"),
])
def test_a_refusal_without_the_error_body_blocks_the_refusal_checks_by_its_rule(status, headers, body, root):
    rec = refusals(canned.exchange(status, headers, body=body, label=steps.PROMPT_NUMBER))
    assert blocked("invoke.prompt_not_string_refused", rec).root == root
    own = {"GEN-ERR-001": "invoke.refusal_is_4xx_error_body__refusals", "GEN-ERR-002": "invoke.error_code_is_string__refusals",
           "GEN-ERR-005": "invoke.validation_failed_has_details__refusals"}[root]
    exc = failure(own, rec)
    assert names_of(exc) == [steps.PROMPT_NUMBER] and starts_with_label(exc)


def test_a_request_that_was_not_refused_is_the_checks_own_failure():
    ran = result(steps.PROMPT_NUMBER, request={"prompt": 42})
    exc = failure("invoke.prompt_not_string_refused", refusals(ran))
    assert names_of(exc) == [ran.label] and "expected a refusal" in str(exc)


def test_an_error_body_check_leaves_out_refusals_without_the_error_body():
    good = canned.exchange(400, JSON, body=ERROR, label=steps.PROMPT_NUMBER)
    plain = canned.exchange(400, {"content-type": "text/plain"}, body=b"no", label=steps.STREAM_STRING)
    exc = blocked("invoke.error_code_is_string__refusals", refusals(good, plain))   # never a pass on `good` alone
    assert exc.root == "GEN-ERR-001" and names_of(exc) == [steps.STREAM_STRING]
    assert blocked("invoke.error_code_is_string__refusals", refusals(plain)).root == "GEN-ERR-001"


def test_an_over_long_session_key_blocks_the_session_checks_by_inv_res_009():
    long_key = "k" * 300
    padded = result(steps.RUN_JSON.of("plain_reply"), sessionId=long_key,
                    request={"prompt": "say conformance", "sessionId": long_key[:256]})
    assert blocked("invoke.session_id_echoed__runs", runs(padded)).root == "INV-RES-009"
    assert names_of(failure("invoke.session_id_is_key", runs(padded))) == [padded.label]


def test_a_failed_run_not_reported_failed_blocks_its_error_object_by_inv_res_014():
    completed = result(steps.RUN_JSON.of("failure_before_output"), status="completed")
    rec = runs(completed, names=("failure_before_output",))
    assert blocked("invoke.failed_run_has_error", rec).root == "INV-RES-014"
    assert names_of(failure("invoke.failed_run_is_200_failed", rec)) == [completed.label]


def test_extra_data_accepted_blocks_its_code_by_inv_lim_004_and_refused_blocks_its_pass_through_by_inv_lim_003():
    facts = {"field": "data", "inside": {"a": 1}, "refusals": [steps.EXTRA_8KB]}
    accepted_8kb = result(steps.EXTRA_8KB)
    rec = canned.recording("invoke.extra_data", [accepted_8kb], facts=facts)
    assert blocked("invoke.extra_data_outside_is_validation_failed", rec).root == "INV-LIM-004"
    assert names_of(failure("invoke.extra_data_outside_refused", rec)) == [accepted_8kb.label]
    refused_2kb = canned.exchange(413, JSON, body=ERROR, label=steps.EXTRA_2KB)
    rec = canned.recording("invoke.extra_data", [refused_2kb], facts=facts)
    assert blocked("invoke.extra_data_reaches_params", rec).root == "INV-LIM-003"
    assert names_of(failure("invoke.extra_data_inside_accepted", rec)) == [refused_2kb.label]


def test_a_body_limit_refusal_is_the_size_checks_own_failure_not_a_result_precondition():
    refused_half = canned.exchange(413, JSON, body=ERROR, label=steps.HALF_MB)
    exc = failure("invoke.half_megabyte_accepted", canned.recording("invoke.big_body", [refused_half]))
    assert names_of(exc) == [refused_half.label] and "must be accepted" in str(exc)


def test_generated_streams_are_judged_by_inv_sel_001_too():
    answered_json = result(generated_steps.INVOKE_SSE.of(0), request={"prompt": "say-json", "stream": True})
    rec = canned.recording("generated.round_trip", [answered_json], facts={"texts": ["x"]})
    assert names_of(failure("invoke.stream_true_answers_stream__generated", rec)) == [answered_json.label]
    assert blocked("invoke.generated_deltas_exact", rec).root == "INV-SEL-001"


def test_a_status_outside_the_run_states_blocks_by_inv_res_002():
    rec = canned.recording("invoke.key_lengths", [result(steps.KEY_1, status="success"),
                                                  result(steps.KEY_256, status="success")])
    assert blocked("invoke.key_lengths_accepted", rec).root == "INV-RES-002"
    half = canned.recording("invoke.key_lengths", [result(steps.KEY_1, status="success"), result(steps.KEY_256)])
    assert blocked("invoke.key_lengths_accepted", half).root == "INV-RES-002"   # never a pass on the other key
    assert names_of(failure("invoke.status_completed", runs(result(steps.RUN_JSON.of("plain_reply"),
                                                                   status="success")))) == [steps.RUN_JSON.of("plain_reply")]
    failed = result(steps.RUN_JSON.of("failure_before_output"), status="error")
    assert blocked("invoke.failed_run_is_200_failed", runs(failed, names=("failure_before_output",))).root == "INV-RES-002"


def test_a_count_on_another_session_than_the_key_sent_blocks_by_inv_sess_003():
    first = result(steps.COUNT_1, result="1", request={"prompt": "count", "sessionId": "k"}, sessionId="k")
    second = result(steps.COUNT_2, result="1", request={"prompt": "count", "sessionId": "k"}, sessionId="k-other")
    rec = canned.recording("invoke.sessions", [first, second])
    exc = blocked("invoke.same_key_same_instance", rec)
    assert exc.root == "INV-SESS-003" and names_of(exc) == [second.label, first.label]
    assert names_of(failure("invoke.session_id_echoed__sessions", rec)) == [second.label]


TEXT = b'event: text\ndata: {"v": 1, "type": "text", "delta": "conformance"}\n\n'
DONE = b'event: done\ndata: {"v": 1, "type": "done"}\n\n'


def test_an_unnamed_frame_blocks_the_text_readers_by_inv_stream_001():
    unnamed = stream(steps.RUN_SSE.of("plain_reply"), b'data: {"v": 1, "type": "text", "delta": "conformance"}\n\n',
                     DONE)
    assert blocked("invoke.deltas_join_to_reply", runs(unnamed)).root == "INV-STREAM-001"
    assert names_of(failure("invoke.frames_are_named__runs", runs(unnamed))) == [unnamed.label]


def test_a_text_frame_without_delta_or_type_blocks_by_inv_stream_006_and_005():
    no_delta = stream(steps.RUN_SSE.of("plain_reply"),
                      b'event: text\ndata: {"v": 1, "type": "text", "content": "conformance"}\n\n', DONE)
    assert blocked("invoke.deltas_join_to_reply", runs(no_delta)).root == "INV-STREAM-006"
    assert names_of(failure("invoke.text_frames_carry_delta__runs", runs(no_delta))) == [no_delta.label]
    no_type = stream(steps.RUN_SSE.of("plain_reply"), b'event: text\ndata: {"v": 1, "delta": "conformance"}\n\n', DONE)
    assert blocked("invoke.text_frames_carry_delta__runs", runs(no_type)).root == "INV-STREAM-005"
    assert blocked("invoke.type_matches_event_name__runs", runs(no_type)).root == "INV-STREAM-005"
    assert names_of(failure("invoke.frames_carry_type__runs", runs(no_type))) == [no_type.label]


def test_a_stream_missing_text_blocks_the_text_order_checks_by_inv_stream_008():
    start = b'event: tool_call_start\ndata: {"v": 1, "type": "tool_call_start", "name": "lookup"}\n\n'
    tool = stream(steps.RUN_SSE.of("tool_call"), start, DONE)
    rec = canned.recording("invoke.runs", [tool], facts={"scenarios": {"tool_call": {"reply": "done", "tool": "lookup"}},
                                                          "skipped": {}})
    assert blocked("invoke.tool_call_start_precedes_text", rec).root == "INV-STREAM-008"
    assert names_of(failure("invoke.deltas_join_to_reply", rec)) == [tool.label]


def test_a_cleartext_base_url_blocks_the_cleartext_probe_by_gen_base_001():
    target = dataclasses.replace(canned.DEFAULT_TARGET, base_url="http://127.0.0.1:9")
    probe = result(steps.CLEARTEXT)
    rec = canned.recording("invoke.cleartext", [probe], facts={"url": "http://127.0.0.1:9"}, target=target)
    assert blocked("invoke.cleartext_never_served", rec).root == "GEN-BASE-001"
    plain = canned.recording("invoke.runs", [result(steps.RUN_JSON.of("plain_reply"))], target=target,
                             facts={"scenarios": {"plain_reply": {"reply": "conformance"}}, "skipped": {}})
    assert names_of(failure("invoke.served_over_tls", plain)) == [steps.RUN_JSON.of("plain_reply")]


def test_a_refusal_as_a_stream_of_a_streaming_request_is_inv_err_001s_and_as_text_every_refusals():
    as_sse = canned.exchange(404, SSE, body=b"event: error\ndata: {}\n\n", label=steps.STREAM_NO_AGENT,
                             request_headers={"Accept": "text/event-stream"},
                             request_body={"prompt": "say conformance", "stream": True})
    assert blocked("invoke.refusal_is_4xx_error_body__refusals", refusals(as_sse)).root == "INV-ERR-001"
    assert names_of(failure("invoke.streaming_refusal_is_json", refusals(as_sse))) == [as_sse.label]
    as_text = canned.exchange(404, {"content-type": "text/plain"}, body=ERROR, label=steps.STREAM_NO_AGENT)
    assert blocked("invoke.streaming_refusal_is_json", refusals(as_text)).root == "GEN-ERR-001"
    assert names_of(failure("invoke.refusal_is_4xx_error_body__refusals", refusals(as_text))) == [as_text.label]


# -- GEN-BASE-002: the cleartext probe carries a decoy; the API answering it over cleartext is the deviation -----
CLEAR_URL = "http://server.test:443/v1/agents/agt_canned/invoke"
CLEAR_FACTS = {"url": CLEAR_URL, "sent": "the plain reply with a decoy credential"}
DECOY_REFUSED = {"error": {"code": "unauthenticated", "message": "invalid API key", "requestId": "req_9"}}


def cleartext(clear, over_https=None):
    twin = over_https or canned.exchange(401, JSON, body=DECOY_REFUSED, label=steps.DECOY_OVER_HTTPS)
    return canned.recording("invoke.cleartext", [clear, twin], facts=CLEAR_FACTS)


@pytest.mark.parametrize("clear", [
    canned.exchange(None, label=steps.CLEARTEXT, url=CLEAR_URL, error="connection closed: TLS port"),
    canned.exchange(400, {"content-type": "text/html"}, body="The plain HTTP request was sent to HTTPS port",
                    label=steps.CLEARTEXT, url=CLEAR_URL),
    canned.exchange(301, {"location": "https://server.test/v1/agents/agt_canned/invoke"}, label=steps.CLEARTEXT,
                    url=CLEAR_URL),
    canned.exchange(403, JSON, body={"error": {"code": "https_required", "message": "use https"}},
                    label=steps.CLEARTEXT, url=CLEAR_URL),
], ids=["connection-fails", "400-from-the-tls-port", "redirect", "another-4xx"])
def test_cleartext_turned_away_passes_and_says_what_was_sent(clear):
    assert "decoy" in judge("invoke.cleartext_never_served", cleartext(clear))


def test_cleartext_answered_with_the_apis_own_refusal_fails_naming_both_exchanges():
    clear = canned.exchange(401, JSON, body=DECOY_REFUSED, label=steps.CLEARTEXT, url=CLEAR_URL)
    exc = failure("invoke.cleartext_never_served", cleartext(clear))
    assert names_of(exc) == [steps.CLEARTEXT, steps.DECOY_OVER_HTTPS] and starts_with_label(exc)


def test_cleartext_answered_2xx_fails():
    exc = failure("invoke.cleartext_never_served", cleartext(result(steps.CLEARTEXT)))
    assert names_of(exc) == [steps.CLEARTEXT]


def test_a_decoy_the_api_does_not_refuse_leaves_the_cleartext_probe_not_assessed():
    from conformance.outcomes import NotAssessed
    clear = canned.exchange(401, JSON, body=DECOY_REFUSED, label=steps.CLEARTEXT, url=CLEAR_URL)
    with pytest.raises(NotAssessed):
        judge("invoke.cleartext_never_served", cleartext(clear, result(steps.DECOY_OVER_HTTPS)))

