"""agui checks: interrupt and resume."""
from __future__ import annotations

import json

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on, precondition
from conformance.registry import check
from conformance.vocab import agent_readings
from conformance.vocab.readers import error_of, stream_events
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import (RESUME_CONTINUES, RESUME_WITHOUT_MESSAGES, THREAD_ECHOED, Run, TERMINAL,
                                             answered_stream, judge_reply, one_run, streamed_by)


@check("AGUI-INT-001", scenarios=["agui.interrupt"])
def question_pauses_run(rec):
    """Runs `ask What is your name?`; the stream ends with RUN_FINISHED whose outcome.type is `interrupt`, no RUN_ERROR."""
    r = one_run(rec, steps.ASK)
    with on(r.ex):
        end = r.terminal()
        outcome = end.get("outcome")
        assert end["type"] == "RUN_FINISHED" and not r.of_type("RUN_ERROR") and isinstance(outcome, dict) \
            and outcome.get("type") == "interrupt", (
            f"expected RUN_FINISHED with outcome.type 'interrupt', got {truncate(end, 300, quoted=True)} (events {r.types()})")
    return f"interrupts listed (AGUI-OPEN-003, not judged): {truncate(outcome.get('interrupts'), 300, quoted=True)}"


def resumed_run(rec: Recording) -> Run:
    """The resumed run.

    The resume was built only from what the paused run showed (or the profile's shape), so a refusal is evidence:
    `invalid_request` says a resume without messages was not taken as one (AGUI-INT-003); any other refusal, or
    no stream, says the paused run did not continue (AGUI-INT-002). Each is a precondition: that requirement's
    check fails on it, the others are blocked by it. Nothing sent (nothing to answer): not assessed, with why."""
    if not any(e.label == steps.RESUME for e in rec.exchanges):
        raise NotAssessed(rec.facts.get("no_resume") or f"scenario {rec.scenario} sent no resume")
    ex = rec.get(steps.RESUME)
    if answered_stream(ex):
        return one_run(rec, steps.RESUME)
    refused = describe_answer(ex)
    if streamed_by(ex) == RESUME_WITHOUT_MESSAGES:
        sent = truncate(_sent_body(ex), 300, quoted=True)
        raise precondition(RESUME_WITHOUT_MESSAGES, ex, f"a request with `resume` and no `messages` was refused with "
                                                        f"invalid_request ({refused}); sent {sent}")
    raise precondition(RESUME_CONTINUES, ex,
                       f"the run paused on threadId {rec.facts.get('thread')!r} listing interrupts "
                       f"{truncate(rec.facts.get('interrupts'), 200, quoted=True)}; the resume built from them "
                       f"({rec.facts.get('resume_basis')}) was sent as {truncate(_sent_body(ex), 300, quoted=True)}; expected "
                       f"the paused run to continue (200 event stream), got {refused}: "
                       f"{truncate(ex.body.decode('utf-8', 'replace'), 300, quoted=True)}. (A server that takes another "
                       f"resume shape can name it with the profile entry `[resume] agui`.)")


def _sent_body(ex: Exchange) -> Any:
    try:
        return json.loads(ex.request_body or b"null")
    except ValueError:
        return ex.request_body


@check("AGUI-INT-002", scenarios=["agui.interrupt"])
def resume_continues_run(rec):
    """Answers the paused run with `resume` built from the interrupts it listed (payload {"name":"Ada"}); the run continues."""
    r = resumed_run(rec)
    with on(r.ex):
        assert r.outcome_type() == "success", (f"the resumed run paused again: {truncate(r.finished(), 300, quoted=True)}, "
                                               f"expected RUN_FINISHED with outcome.type 'success'")
        if r.want.get("reply") is not None:
            judge_reply(r, lambda text: _resumed(rec, r, text))
    return f"resume sent as {rec.facts.get('resume_basis')} (the spec does not show the shape)"


def _resumed(rec: Recording, r: Run, got: str) -> None:
    """The resumed run's reply: the answer, then the rest of the script, as the agent's contract lets the answer be
    written (`agent_readings.resumed_as_profiled`)."""
    want = r.want["reply"]
    if got == want or agent_readings.resumed_as_profiled(got, rec.facts, rec.facts.get("answer"), exchange=r.ex):
        return
    raise AssertionError(f"the resumed run replied {truncate(got, 160, quoted=True)}, expected "
                         f"{truncate(want, 160, quoted=True)} (the answer, then the rest of the script)")


@check("AGUI-INT-003", scenarios=["agui.interrupt"])
def resume_without_messages_accepted(rec):
    """Sends a request with `resume` and no `messages`; it is not refused with `invalid_request`: 200 with a stream."""
    resumed_run(rec)


@check("AGUI-INT-004", scenarios=["agui.interrupt"])
def resume_keeps_thread(rec):
    """Resumes on the paused run's threadId; the resumed run's RUN_STARTED.threadId equals it. The resume sends that
    threadId, so a RUN_STARTED that does not echo it broke AGUI-ID-001 on this exchange."""
    r = resumed_run(rec)
    got, paused = r.started().get("threadId"), rec.facts["thread"]
    if not same_json(got, paused):
        raise precondition(THREAD_ECHOED, r.ex, f"the resume was sent on threadId {paused!r}, RUN_STARTED.threadId is "
                                                f"{truncate(got, 80, quoted=True)}")


def describe_answer(ex: Exchange) -> str:
    if ex.status is None:
        return f"no response ({ex.error})"
    if ex.stream is not None:
        events = stream_events(ex)
        end = next((e for e in reversed(events) if e.get("type") in TERMINAL), None)
        outcome = end.get("outcome") if isinstance(end, dict) else None
        detail = (end.get("type") if end else "no terminal event") + (
            f" ({outcome.get('type')})" if isinstance(outcome, dict) else "")
        return f"{ex.status} stream ending {detail}"
    return f"{ex.status} {(error_of(ex) or {}).get('code') or ex.header('content-type')}"


@check("AGUI-INT-002", scenarios=["agui.resume_open"], supplementary=True)
def open_resume_cases(rec):
    """Reports (does not judge) answers to an unknown interrupt, an empty `resume`, and a stale repeated resume.

    Not assessed, never info: what it reports is open (AGUI-OPEN-003), and an info must not satisfy a MUST.
    Supplementary, so that reporting it never keeps AGUI-INT-002 from being judged by its own checks."""
    if rec.facts.get("no_resume"):
        raise NotAssessed(rec.facts["no_resume"])
    seen = {label: describe_answer(rec.get(label))
            for label in (steps.UNKNOWN_INTERRUPT, steps.EMPTY_RESUME, steps.ANSWER, steps.STALE_ANSWER)}
    raise NotAssessed("reported, not judged: the spec leaves partial and stale resumes open (AGUI-OPEN-003); seen: "
                      + "; ".join(f"{k}: {v}" for k, v in seen.items()))
