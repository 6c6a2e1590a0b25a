"""The schema checks over recorded traffic on canned recordings: a violation names the answer that has it, and an
answer that broke a more basic rule (a refusal sent as an event stream) fails no event requirement on top of it."""
from __future__ import annotations

from conformance import canned
from conformance.vocab.steps import access as steps
from conformance.vocab.traffic import exchange_violations
from tests.checks.test_auth_canned import access, answer, error, judge


def test_a_violation_names_each_answer_that_has_it():
    rec = access(no_credential=answer(steps.NO_CREDENTIAL, 401, error(request_id="zoo")),
                 unknown_key=answer(steps.UNKNOWN_KEY, 401, error(request_id="zoo")))
    status, exc = judge("schemas.gen_err_004_in_access_invoke", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL), rec.get(steps.UNKNOWN_KEY))
    assert str(exc).startswith(f"{steps.NO_CREDENTIAL}: ") and "requestId" in str(exc)
    assert judge("schemas.gen_err_002_in_access_invoke", rec)[0] == "passed"


def test_a_refusal_sent_as_a_stream_has_no_event_schema():
    frames = canned.sse_frames({"kind": "RUN_ERROR"})          # no `type`: an AG-UI event would break AGUI-FRAME-003
    refusal = answer(steps.NO_CREDENTIAL, 401, headers={"content-type": "text/event-stream"}, protocol="agui",
                     sse=frames)
    assert exchange_violations(refusal) == []
    streamed = answer(steps.NO_CREDENTIAL, 200, headers={"content-type": "text/event-stream"}, protocol="agui",
                      sse=frames)
    assert {v.requirement for v in exchange_violations(streamed)} == {"AGUI-FRAME-003"}
