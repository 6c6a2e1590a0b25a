"""The AG-UI tolerance rules, proven on canned recordings (no server): ping forms, blocks that dispatch nothing,
a refused resume against a pause that listed nothing to answer, and checks with nothing to look at."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, Deviation, NotAssessed, judging
from conformance.scenarios.agui import build_resume
from conformance.target import Profile
from conformance.vocab.steps import agui as steps

THREAD = "thr-canned"
AGUI_URL = "https://server.test/v1/agents/agt_canned/agui"
SSE = {"content-type": "text/event-stream"}
INTERRUPTS = [{"id": "int-1", "reason": "question", "message": "What is your name?"}]


def check(name: str):
    """The check's function, judged as the engine judges it (`outcomes.JUDGING` holds its requirements)."""
    found = registry.load_all()[f"agui.{name}"]

    def judged(*recs):
        with judging(found.requirements):
            return found.fn(*recs)
    return judged


def data(obj) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def reply_events(text: str, *, outcome=None, thread: str = THREAD) -> list[dict]:
    return [{"type": "RUN_STARTED", "threadId": thread, "runId": "r1"},
            *([{"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
               {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": text},
               {"type": "TEXT_MESSAGE_END", "messageId": "m1"}] if text else []),
            {"type": "RUN_FINISHED", "threadId": thread, "runId": "r1", "result": text,
             "outcome": outcome or {"type": "success"}}]


def stream(label: registry.Step, chunks: list[tuple[float, bytes]]):
    return canned.exchange(200, SSE, sse=chunks, label=label, url=AGUI_URL)


def run_rec(scenario: str, label: registry.Step, chunks, *, kind: str = "success", reply: str | None = None, **facts):
    want = {"kind": kind, "reply": reply, "thread": None, "run": None}
    return canned.recording(scenario, [stream(label, chunks)], facts={"runs": {label: want}, **facts})


# -- pings --------------------------------------------------------------------------------------------
def silence(comment: bytes | None, at: float = 15.0):
    """`sleep 16` then `say awake`: RUN_STARTED at 0 s, the comment line at `at`, the reply at 16 s."""
    events = reply_events("awake")
    chunks = [(0.0, data(events[0]))]
    if comment is not None:
        chunks.append((at, comment + b"\n\n"))
    chunks += [(16.0 + i * 0.01, data(e)) for i, e in enumerate(events[1:])]
    return run_rec("agui.silence", steps.SILENCE, chunks, reply="awake", silent_seconds=16)


@pytest.mark.parametrize("comment", [b": ping", b": ping - 2026-11-22 21:59:45.008900+00:00", b":ping"])
def test_ping_forms_that_begin_with_ping_pass_the_must(comment):
    assert check("ping_during_silence")(silence(comment)) is None


@pytest.mark.parametrize("comment", [b": keepalive", b": heartbeat ping", None])
def test_a_comment_that_is_not_a_ping_fails_the_must(comment):
    with pytest.raises(AssertionError, match="beginning with 'ping'"):
        check("ping_during_silence")(silence(comment))


def test_a_ping_well_outside_the_interval_fails():
    """A ping 20 s after the last frame (well outside 15 s + 1.5 s tolerance) fails, however it is spelt."""
    rec = silence(b": ping", at=20.0)
    rec.exchanges[0] = stream(steps.SILENCE, sorted(
        [(0.0, data(reply_events("awake")[0])), (20.0, b": ping\n\n")]
        + [(21.0 + i * 0.01, data(e)) for i, e in enumerate(reply_events("awake")[1:])]))
    with pytest.raises(AssertionError, match="20.0 s passed"):
        check("ping_during_silence")(rec)


def test_only_the_exact_form_passes_the_should():
    assert check("ping_is_exactly_colon_ping")(silence(b": ping")) is None
    for comment in (b": ping - 2026-11-22 21:59:45.008900+00:00", b":ping"):
        with pytest.raises(AssertionError, match="the spec's form is ': ping'"):
            check("ping_is_exactly_colon_ping")(silence(comment))


def test_the_should_is_not_assessed_without_a_ping():
    with pytest.raises(NotAssessed):
        check("ping_is_exactly_colon_ping")(silence(b": keepalive"))


# -- blocks that dispatch nothing ------------------------------------------------------------------------
STREAM_CHECKS = ["frames_are_unnamed", "frames_are_json_events", "one_event_per_frame", "run_started_first",
                 "one_terminal_event", "terminal_event_is_last", "normal_run_finishes", "finish_thread_matches_start",
                 "message_start_role_assistant", "content_belongs_to_started_message",
                 "messages_ended_before_finish", "text_message_lifecycle", "events_validate_upstream",
                 "normal_outcome_success", "finished_result_is_reply", "deltas_join_to_reply"]


def undispatched_blocks_rec():
    """A standalone `retry:` block before the first event, an `id:`-only block, an `event:`-only block and a
    comment-only block between events, a comment after the last: WHATWG clients dispatch none of them."""
    events = reply_events("conformance")
    chunks = [(0.0, b"retry: 3000\n\n"), (0.01, b"id: 0\n\n"), (0.02, data(events[0])),
              (0.03, b"event: ignored\n\n"), (0.04, b": a comment\n: another\n\n"),
              *[(0.05 + i * 0.01, data(e)) for i, e in enumerate(events[1:])], (0.2, b": bye\n\n")]
    return run_rec("agui.plain", steps.IDS, chunks, reply="conformance")


@pytest.mark.parametrize("name", STREAM_CHECKS)
def test_blocks_that_dispatch_nothing_are_ignored(name):
    check(name)(undispatched_blocks_rec())


# -- nothing to look at ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["frames_are_unnamed", "frames_are_json_events", "run_started_first",
                                  "one_terminal_event", "message_start_role_assistant", "text_message_lifecycle",
                                  "events_validate_upstream"])
def test_an_empty_stream_is_not_assessed(name):
    rec = run_rec("agui.plain", steps.IDS, [(0.0, b": only a comment\n\n")], reply="conformance")
    with pytest.raises(NotAssessed):
        check(name)(rec)


def test_only_non_json_frames_fail_framing_and_nothing_else():
    """A frame that is not JSON fails AGUI-FRAME-003; every check that reads the events is blocked by it."""
    rec = run_rec("agui.plain", steps.IDS, [(0.0, b"data: not json\n\n"), (0.1, b"data: [1, 2]\n\n")],
                  reply="conformance")
    with pytest.raises(Deviation) as failed:
        check("frames_are_json_events")(rec)
    assert not isinstance(failed.value, Blocked) and failed.value.exchanges == (rec.get(steps.IDS),)
    for name in ("run_started_first", "one_terminal_event", "events_validate_upstream"):
        with pytest.raises(Blocked) as blocked:
            check(name)(rec)
        assert blocked.value.root == "AGUI-FRAME-003" and blocked.value.exchanges == (rec.get(steps.IDS),)


def test_no_run_recorded_is_not_assessed():
    rec = canned.recording("agui.plain", [], facts={"runs": {}})
    for name in ("frames_are_unnamed", "run_started_first", "events_validate_upstream",
                 "tool_and_step_events_between", "last_user_message_is_prompt", "deltas_join_to_reply"):
        with pytest.raises(NotAssessed):
            check(name)(rec)


# -- resume --------------------------------------------------------------------------------------------
def ctx_with(profile: Profile = Profile()):
    return SimpleNamespace(target=dataclasses.replace(canned.DEFAULT_TARGET, profile=profile))


def test_resume_answers_only_the_listed_ids_and_never_sends_null():
    interrupts = [{"id": "a", "reason": "q"}, {"reason": "no id"}, {"id": None}, {"id": "b"}]
    resume, how = build_resume(ctx_with(), interrupts, {"name": "Ada"})
    assert resume == [{"interruptId": "a", "status": "resolved", "payload": {"name": "Ada"}},
                      {"interruptId": "b", "status": "resolved", "payload": {"name": "Ada"}}]
    assert "null" not in json.dumps(resume) and "AG-UI 1.0" in how


def test_nothing_listed_builds_no_resume_and_names_the_profile_entry():
    resume, why = build_resume(ctx_with(), [{"reason": "question"}], {"name": "Ada"})
    assert resume is None and "[resume] agui" in why


def test_the_profile_shape_is_filled_in():
    answer = {"name": "Ada"}
    plain = Profile(resume={"agui": {"answer": "$payload"}})
    assert build_resume(ctx_with(plain), [], answer)[0] == {"answer": answer}
    listed = Profile(resume={"agui": [{"id": "$interruptId", "value": "$payload"}]})
    assert build_resume(ctx_with(listed), [{"id": "x"}, {"id": "y"}], answer)[0] == [
        {"id": "x", "value": answer}, {"id": "y", "value": answer}]
    resume, why = build_resume(ctx_with(listed), [], answer)
    assert resume is None and "$interruptId" in why


def test_profile_resume_entry_is_parsed(tmp_path):
    path = tmp_path / "profile.toml"
    path.write_text('[resume]\nagui = \'{"answer": "$payload"}\'\n')
    assert Profile.load(str(path)).resume == {"agui": {"answer": "$payload"}}
    path.write_text('[resume]\nagui = [{ interruptId = "$interruptId", status = "resolved", payload = "$payload" }]\n')
    assert Profile.load(str(path)).resume["agui"][0]["interruptId"] == "$interruptId"
    path.write_text('[resume]\nagui = \'{not json\'\n')
    with pytest.raises(ValueError, match="not JSON"):
        Profile.load(str(path))


def interrupt_rec(resume_answer=None, *, listed=INTERRUPTS):
    """The question run (paused, listing `listed`) and, when given, the answer to the resume built from it."""
    outcome = {"type": "interrupt", **({"interrupts": listed} if listed is not None else {})}
    ask = stream(steps.ASK, [(i * 0.01, data(e)) for i, e in enumerate(reply_events("", outcome=outcome))])
    facts = {"runs": {steps.ASK: {"kind": "interrupt", "reply": None, "thread": THREAD, "run": None}},
             "thread": THREAD, "interrupts": listed or [], "answer": {"name": "Ada"}}
    exchanges = [ask]
    if resume_answer is None:
        facts["no_resume"] = build_resume(ctx_with(), listed or [], {"name": "Ada"})[1]
    else:
        resume, how = build_resume(ctx_with(), listed, {"name": "Ada"})
        facts.update(resume_sent=resume, resume_basis=how)
        facts["runs"][steps.RESUME] = {"kind": "success", "reply": "answer: {\"name\":\"Ada\"}thanks", "thread": THREAD,
                                   "run": None}
        exchanges.append(dataclasses.replace(resume_answer, label=steps.RESUME,
                                             request_body=json.dumps({"threadId": THREAD, "resume": resume}).encode()))
    return canned.recording("agui.interrupt", exchanges, facts=facts)


def refusal(status: int, code: str):
    return canned.exchange(status, {"content-type": "application/json"}, url=AGUI_URL, body={
        "error": {"code": code, "message": "no paused run on this threadId", "requestId": "req_1",
                  **({"details": {"resume": "no paused run"}} if code == "validation_failed" else {})}})


@pytest.mark.parametrize("status,code", [(400, "validation_failed"), (404, "not_found"), (409, "conflict")])
def test_a_refused_resume_of_a_listed_interrupt_fails_int_002_only(status, code):
    rec = interrupt_rec(refusal(status, code))
    with pytest.raises(Deviation, match=f"got {status} {code}") as failed:
        check("resume_continues_run")(rec)
    assert not isinstance(failed.value, Blocked) and failed.value.exchanges == (rec.get(steps.RESUME),)
    for other in ("resume_without_messages_accepted", "resume_keeps_thread"):
        with pytest.raises(Blocked) as blocked:
            check(other)(rec)
        assert blocked.value.root == "AGUI-INT-002" and blocked.value.exchanges == (rec.get(steps.RESUME),)
    # the framing and order checks judge only what streamed: the refused resume is no evidence for them
    for name in ("frames_are_unnamed", "run_started_first", "one_terminal_event", "terminal_event_is_last",
                 "finish_thread_matches_start", "events_validate_upstream"):
        check(name)(rec)
    assert check("question_pauses_run")(rec)


def test_a_resume_refused_as_invalid_request_fails_int_003_only():
    rec = interrupt_rec(refusal(400, "invalid_request"))
    with pytest.raises(Deviation, match="invalid_request") as failed:
        check("resume_without_messages_accepted")(rec)
    assert not isinstance(failed.value, Blocked) and failed.value.message.startswith("resume: ")
    for other in ("resume_continues_run", "resume_keeps_thread"):
        with pytest.raises(Blocked) as blocked:
            check(other)(rec)
        assert blocked.value.root == "AGUI-INT-003"


@pytest.mark.parametrize("listed", [None, [], [{"reason": "question", "message": "What is your name?"}]])
def test_a_pause_that_lists_nothing_to_answer_is_not_assessed(listed):
    rec = interrupt_rec(listed=listed)
    for name in ("resume_continues_run", "resume_without_messages_accepted", "resume_keeps_thread"):
        with pytest.raises(NotAssessed, match=r"\[resume\] agui"):
            check(name)(rec)


def test_open_resume_cases_never_count_as_evidence():
    labels = (steps.UNKNOWN_INTERRUPT, steps.EMPTY_RESUME, steps.ANSWER, steps.STALE_ANSWER)
    rec = canned.recording("agui.resume_open", [dataclasses.replace(refusal(400, "validation_failed"), label=label)
                                                for label in labels], facts={})
    with pytest.raises(NotAssessed, match="reported, not judged"):
        check("open_resume_cases")(rec)


def test_a_run_that_did_not_stream_is_its_resumes_deviation_when_it_resumes():
    """A refused resume is the resume rule's deviation wherever it is read (a silence's pings, its frames), not
    AGUI-FRAME-001's, which the service kept on every other run; a resume without messages refused as
    `invalid_request` is the rule that it needs none."""
    from conformance.checks.agui._common import streamed_by

    def refused(body, code="validation_failed"):
        return canned.exchange(400, {"content-type": "application/json"}, url="https://server.test/v1/agents/a/agui",
                               body={"error": {"code": code, "message": "no", "requestId": "req_1"}},
                               request_body=body)

    assert streamed_by(refused({"threadId": "t", "messages": []})) == "AGUI-FRAME-001"
    assert streamed_by(refused({"threadId": "t", "resume": [{"interruptId": "i", "payload": {}}],
                                "messages": [{"id": "m", "role": "user", "content": "x"}]})) == "AGUI-INT-002"
    assert streamed_by(refused({"threadId": "t", "resume": []}, "invalid_request")) == "AGUI-INT-003"
