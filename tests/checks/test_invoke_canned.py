"""Tolerance rules of the invoke and generated-input checks, on canned recordings (no server).

Each rule is proven both ways: the legitimate form passes (`1.0` for an integer, `application/problem+json`
for an error body), the contradicting form fails (`"1"`, `text/plain`).
"""
from __future__ import annotations

import pytest

from conformance import canned, vocab
from conformance.checks.invoke.passthrough import messages_reach_agent
from conformance.checks.invoke.refusals import streaming_refusal_is_json
from conformance.checks.invoke.results import duration_is_integer, events_carry_v1, version_is_integer
from conformance.checks.invoke.streams import closes_soon_after_terminal, frames_carry_v1, terminal_is_last_and_closes
from conformance.outcomes import Blocked, Deviation, NotAssessed, judging
from conformance.vocab import fuzzing as fuzz
from conformance.vocab.steps import invoke as steps

ERROR = {"error": {"code": "not_found", "message": "no such agent", "requestId": "req_1"}}


def result(**fields):
    body = {"status": "completed", "result": "hi", "events": [{"v": 1, "type": "step"}], "sessionId": "s",
            "agentId": "agt_canned", "versionNumber": 3, "requestId": "req_9", "durationMs": 12, **fields}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=steps.RUN_JSON.of("plain_reply"))


@pytest.mark.parametrize("value, ok", [(1, True), (1.0, True), (35.0, True), (1.5, False), ("1", False),
                                       (True, False), (None, False)])
def test_json_integers_are_judged_by_value(value, ok):
    assert vocab.is_json_integer(value) is ok


@pytest.mark.parametrize("ct, ok", [("application/json", True), ("application/json; charset=utf-8", True),
                                    ('application/JSON; charset="utf-8"', True), ("application/problem+json", True),
                                    ("application/vnd.api+json", True), ("text/plain", False),
                                    ("text/event-stream", False), ("application/+json", False), (None, False)])
def test_json_media_types_include_plus_json(ct, ok):
    assert vocab.is_json_media_type(ct) is ok


@pytest.mark.parametrize("rule, field", [(version_is_integer, "versionNumber"),
                                         (duration_is_integer, "durationMs")])
def test_integer_fields_written_as_floats_pass_and_strings_fail(rule, field):
    rec = canned.recording("invoke.runs", [])
    rule("plain_reply", result(**{field: 35.0}), rec)
    with pytest.raises(AssertionError, match=field):
        rule("plain_reply", result(**{field: "35"}), rec)


def test_event_v_as_float_passes_and_as_string_fails():
    rec = canned.recording("invoke.runs", [])
    events_carry_v1("plain_reply", result(events=[{"v": 1.0, "type": "step"}]), rec)
    with pytest.raises(AssertionError, match="v: 1"):
        events_carry_v1("plain_reply", result(events=[{"v": "1", "type": "step"}]), rec)


def _stream(v):
    frames = canned.sse_frames({"v": v, "type": "text", "delta": "hi"}, event="text") + \
        canned.sse_frames({"v": v, "type": "done"}, event="done", start=0.5)
    return canned.exchange(200, {"content-type": "text/event-stream"}, sse=frames, label=steps.RUN_SSE.of("plain_reply"))


def test_stream_v_as_float_passes_and_as_string_fails():
    frames_carry_v1(_stream(1.0))
    with pytest.raises(AssertionError, match='v="1"'):
        frames_carry_v1(_stream("1"))


def _refusal(ct: str, body=ERROR, status=404, label=steps.STREAM_NO_AGENT):
    return canned.exchange(status, {"content-type": ct}, body=body, label=label)


@pytest.mark.parametrize("ct", ["application/json", "application/problem+json",
                                "application/problem+json; charset=utf-8"])
def test_streaming_refusal_as_any_json_type_passes(ct):
    streaming_refusal_is_json(canned.recording("invoke.refusals", [_refusal(ct)]))


def test_streaming_refusal_as_a_stream_fails():
    with judging(["INV-ERR-001"]), pytest.raises(Deviation, match="not an event stream") as info:
        streaming_refusal_is_json(canned.recording("invoke.refusals", [_refusal("text/event-stream")]))
    assert not isinstance(info.value, Blocked) and [ex.label for ex in info.value.exchanges] == [steps.STREAM_NO_AGENT]


def test_streaming_refusal_as_another_type_is_every_refusals_deviation():
    """text/plain is not JSON for any refusal: GEN-ERR-001's deviation, which blocks INV-ERR-001 (never passes it)."""
    with judging(["INV-ERR-001"]), pytest.raises(Blocked, match="sent as JSON") as info:
        streaming_refusal_is_json(canned.recording("invoke.refusals", [_refusal("text/plain")]))
    assert info.value.root == "GEN-ERR-001"


def test_messages_refused_with_the_error_body_is_not_assessed_never_info():
    body = {"error": {"code": "validation_failed", "message": "bad items", "requestId": "req_2", "details": {}}}
    rec = canned.recording("invoke.messages", [_refusal("application/problem+json", body, 422, steps.MESSAGES)],
                           facts={"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(NotAssessed, match="not shown"):
        messages_reach_agent(rec)


def test_messages_refused_without_the_error_body_fails():
    rec = canned.recording("invoke.messages", [_refusal("text/plain", b"no", 400, steps.MESSAGES)],
                           facts={"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(AssertionError, match="not the error body"):
        messages_reach_agent(rec)


# -- generated negatives: several broken rules accept any of their codes -----------------------------
def test_a_negative_breaking_an_unstated_rule_too_accepts_any_code():
    body = {"prompt": "x", "stream": "yes", "messages": 5}       # stream (validation_failed) and messages (not stated)
    defects = fuzz.invoke_defects(body)
    assert [d[0] for d in defects] == ["INV-ERR-003"]
    assert fuzz.expected_code(defects, fuzz.other_broken_fields("invoke", body, defects)) is None
    only = {"prompt": "x", "stream": "yes"}
    d2 = fuzz.invoke_defects(only)
    assert fuzz.expected_code(d2, fuzz.other_broken_fields("invoke", only, d2)) == "validation_failed"


def test_a_negative_breaking_two_stated_rules_accepts_either_code():
    body = {"threadId": "", "runId": "r"}                           # no user message (invalid_request) + empty key
    defects = fuzz.agui_defects(body)
    assert {d[0] for d in defects} == {"AGUI-ERR-001", "AGUI-SESS-004"}
    assert fuzz.expected_code(defects, fuzz.other_broken_fields("agui", body, defects)) is None


def _closed_late(label: str):
    """A stream whose body ends 8 s after its `done` frame (an empty chunk at 8.5 s is the end of the body)."""
    frames = canned.sse_frames({"v": 1, "type": "text", "delta": "hi"}, event="text") + \
        canned.sse_frames({"v": 1, "type": "done"}, event="done", start=0.5) + [(8.5, b"")]
    return canned.exchange(200, {"content-type": "text/event-stream"}, sse=frames, label=label)


def test_a_stream_closed_late_fails_where_the_delay_is_the_servers_alone():
    """The close is timed on the stream recorded on a lane of its own; on the shared lane a busy machine can delay
    the suite's reading by seconds, so there only the end itself is judged."""
    terminal_is_last_and_closes(_closed_late(steps.RUN_SSE.of("plain_reply")))
    with pytest.raises(AssertionError, match="8.0 s after the terminal frame"):
        closes_soon_after_terminal(_closed_late(steps.TIMED_SSE))
