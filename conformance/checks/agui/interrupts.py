"""agui checks: interrupt and resume."""
from __future__ import annotations

import json

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab.readers import error_of, stream_events
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import Run, TERMINAL, answered_stream, fail_all, one_run


@check("AGUI-INT-001", scenarios=["agui.interrupt"])
def question_pauses_run(rec):
    """Runs `ask What is your name?`; the stream ends with RUN_FINISHED whose outcome.type is `interrupt`, no RUN_ERROR."""
    r = one_run(rec, steps.ASK)
    end = r.terminal()
    outcome = end.get("outcome")
    assert end.get("type") == "RUN_FINISHED" and not r.of_type("RUN_ERROR") and isinstance(outcome, dict) \
        and outcome.get("type") == "interrupt", (
        f"{r.where}: expected RUN_FINISHED with outcome.type 'interrupt', got {truncate(end, 300, quoted=True)} (events {r.types()})")
    return f"interrupts listed (AGUI-OPEN-003, not judged): {truncate(outcome.get('interrupts'), 300, quoted=True)}"


def resumed_run(rec: Recording, requirement: str) -> Run:
    """The resumed run, as judged for `requirement`.

    The resume was built only from what the paused run showed (or the profile's shape), so a refusal is evidence:
    `invalid_request` says a resume without messages was not taken as one (AGUI-INT-003); any other refusal, or
    no stream, says the paused run did not continue (AGUI-INT-002). Each is judged on its own requirement only;
    the others are not assessed with that reason. Nothing sent (nothing to answer): not assessed, with why."""
    if not any(e.label == steps.RESUME for e in rec.exchanges):
        raise NotAssessed(rec.facts.get("no_resume") or f"scenario {rec.scenario} sent no resume")
    ex = rec.get(steps.RESUME)
    if answered_stream(ex):
        return one_run(rec, steps.RESUME)
    code = (error_of(ex) or {}).get('code')
    refused = describe_answer(ex)
    if code == "invalid_request":
        assert requirement != "AGUI-INT-003", (
            f"{rec.scenario} [resume]: a request with `resume` and no `messages` was refused with invalid_request "
            f"({refused}); sent {truncate(_sent_body(ex), 300, quoted=True)}")
        raise NotAssessed(f"the resume was refused with invalid_request ({refused}): judged by AGUI-INT-003")
    if requirement == "AGUI-INT-002":
        raise AssertionError(
            f"{rec.scenario} [resume]: the run paused on threadId {rec.facts.get('thread')!r} listing interrupts "
            f"{truncate(rec.facts.get('interrupts'), 200, quoted=True)}; the resume built from them "
            f"({rec.facts.get('resume_basis')}) was sent as {truncate(_sent_body(ex), 300, quoted=True)}; expected the paused run to "
            f"continue (200 event stream), got {refused}: {truncate(ex.body.decode('utf-8', 'replace'), 300, quoted=True)}. "
            f"(A server that takes another resume shape can name it with the profile entry `[resume] agui`.)")
    raise NotAssessed(f"the resume was not answered with a stream ({refused}): judged by AGUI-INT-002")


def _sent_body(ex: Exchange) -> Any:
    try:
        return json.loads(ex.request_body or b"null")
    except ValueError:
        return ex.request_body


@check("AGUI-INT-002", scenarios=["agui.interrupt"])
def resume_continues_run(rec):
    """Answers the paused run with `resume` built from the interrupts it listed (payload {"name":"Ada"}); the run continues."""
    r = resumed_run(rec, "AGUI-INT-002")
    end = r.terminal()
    outcome = end.get("outcome")
    problems = []
    if end.get("type") != "RUN_FINISHED" or not isinstance(outcome, dict) or outcome.get("type") != "success":
        problems.append(f"{r.where}: the resumed run ended with {truncate(end, 300, quoted=True)}, expected RUN_FINISHED with "
                        f"outcome.type 'success'")
    if r.want.get("reply") is not None and r.text() != r.want["reply"]:
        problems.append(f"{r.where}: the resumed run replied {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)} "
                        f"(the answer, then the rest of the script)")
    fail_all(problems)
    return f"resume sent as {rec.facts.get('resume_basis')} (the spec does not show the shape)"


@check("AGUI-INT-003", scenarios=["agui.interrupt"])
def resume_without_messages_accepted(rec):
    """Sends a request with `resume` and no `messages`; it is not refused with `invalid_request`: 200 with a stream."""
    resumed_run(rec, "AGUI-INT-003")


@check("AGUI-INT-004", scenarios=["agui.interrupt"])
def resume_keeps_thread(rec):
    """Resumes on the paused run's threadId; the resumed run's RUN_STARTED.threadId equals it."""
    r = resumed_run(rec, "AGUI-INT-004")
    got = r.first("RUN_STARTED").get("threadId")
    assert got == rec.facts["thread"], (f"{r.where}: resumed on threadId {rec.facts['thread']!r}, RUN_STARTED.threadId "
                                        f"is {truncate(got, 80, quoted=True)}")


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
