"""MCP checks: paused runs."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, judge_all, on, precondition
from conformance.registry import check
from conformance.vocab import agent_readings, protocols as p, silences
from conformance.vocab.readers import got
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import (CONTINUED, FINISHED, RESUMED, answered, as_json, asked_for_form,
                                            continues_to, is_resumed_reply, reply_text, result_of, resumed_reply,
                                            resumed_with)

ASKED_FOR_FORM = "MCP-PAUSE-003"   # what the eliciting client's question is answered with is MCP-PAUSE-003's alone


@check("MCP-PAUSE-001", scenarios=["mcp.pause_text"])
def question_as_text(rec: Recording):
    """Sends the question prompt from a client without elicitation; 200 with a result whose text holds the question."""
    question = rec.facts.get("question")
    if question is None:
        raise NotAssessed("the profile gives no question text")
    ex = rec.get(steps.ASK)
    result = result_of(ex)
    with on(ex):
        content = result.get("content")
        text = p.mcp_text(result) if isinstance(content, list) else ""
        assert question in text, f"the result text {truncate(text, quoted=True)} lacks the question {question!r}"


@check("MCP-PAUSE-002", scenarios=["mcp.pause_text"])
def resume_continues(rec: Recording):
    """Repeats the call with the session_id and `arguments.resume` {"name": "Ada"}; the run continues to the reply
    `answer: {"name":"Ada"}thanks`, `resultType` complete. (A question that was not served paused nothing: there
    is no run to resume, MCP-VER-001's.)"""
    result_of(rec.get(steps.ASK))
    ex = rec.get(resumed_with(rec))
    continuation(rec, ex, RESUMED, rec.facts["answer"])


@check("MCP-PAUSE-002", scenarios=["mcp.pause_falsy"])
def falsy_resume_continues(rec: Recording):
    """Repeats the paused call with `arguments.resume` false, 0 or "" (input class resume:falsy); the run continues
    to `answer: <the value>thanks`, `resultType` complete."""
    return resume_continues(rec)


@check("MCP-PAUSE-002", scenarios=["mcp.silences"], supplementary=True)
def resume_continues_through_silence(rec: Recording):
    """A call that pauses at once (the question as text) is resumed by a call with `arguments.resume` {"name": "Ada"}
    and a progress token; the run goes on with the answer and falls silent for 15.5 s, and continues to the reply
    `answer: {"name":"Ada"}late`, `resultType` complete."""
    held = [(ex, s) for ex, s in silences.held(rec) if s.resumed]
    if not held:
        raise NotAssessed("; ".join((rec.facts.get("unsent") or {}).values()) or "no resumed silent call was sent")
    return judge_all(held, lambda item: continuation(rec, item[0], RESUMED, silences.ANSWER, item[1]),
                     exchange=lambda item: item[0])


def continuation(rec: Recording, ex: Exchange, root: str, answer: Any, silence: Any = None) -> None:
    """A paused run continued on `ex`: not asked again, the reply that of a run resumed with `answer` (as the agent's
    contract lets it be written: `is_resumed_reply`; after a silence, `silence.parts`). Its text block and
    resultType are MCP-TOOL-001's and MCP-TOOL-003's (judged on this call), the roots of those readings."""
    result = result_of(ex, root)
    with on(ex):
        assert result.get("resultType") != "input_required", \
            f"the server asked again instead of continuing the paused run: {truncate(result)}"
        text = reply_text(ex, root)
        if silence is not None:
            if text != silence.reply and not agent_readings.reads_as(text, silence.parts, ex):
                continues_to(ex, text, silence.reply)
        elif not is_resumed_reply(rec, text, answer, ex):
            continues_to(ex, text, resumed_reply(rec, answer))
    if result.get("resultType") != "complete":
        raise precondition(FINISHED, ex, f"`resultType` is {as_json(result.get('resultType'))}, expected "
                                         f"\"complete\"")


@check("MCP-PAUSE-003", scenarios=["mcp.pause_elicit"])
def eliciting_client_gets_form(rec: Recording):
    """Sends the question prompt declaring form elicitation; the answer asks for a form (an elicitation/create request
    in form mode with a requested schema), it is neither a finished result nor an `input_required` without a form."""
    ex = rec.get(steps.ASK)
    how = asked_for_form(ex)
    if how:
        return f"asked by {how}"
    answered(ex)                             # not HTTP 200: the call was not served, MCP-VER-001's
    answer = result_of(ex, ASKED_FOR_FORM)   # an error, or no JSON-RPC result, fails here
    kind = answer.get("resultType", "complete")
    with on(ex):
        assert kind != "complete", f"expected a request for a form, got a finished result {got(ex)}"
        assert kind != "input_required", \
            f"the result is input_required but asks for no form: `inputRequests` holds no elicitation/create " \
            f"request with a `requestedSchema` (form mode): {got(ex)}"
    raise NotAssessed(f"the answer is neither a finished result nor a form request the suite recognises "
                      f"(resultType {kind!r}; the spec does not show the form's shape, MCP-OPEN-001): {got(ex)}")


@check("MCP-PAUSE-004", scenarios=["mcp.pause_elicit"])
def retry_continues(rec: Recording):
    """Retries the call with the form answered (inputResponses + requestState, upstream 2026-07-28 shape); the paused
    run continues: the reply is `answer: <canonical content>` then the rest of the run (`thanks`), `resultType`
    complete. Asked again, or a reply that is not the continuation, fails."""
    if not rec.facts.get("form"):
        raise NotAssessed("no form request in the upstream 2026-07-28 shape (InputRequiredResult with an "
                          "elicitation/create form) was received, so the suite could not answer it (MCP-OPEN-001)")
    answers = list(rec.facts.get("answers", {}).values())
    continuation(rec, rec.get(steps.RETRY), CONTINUED, answers[0] if len(answers) == 1 else answers)
    return "form and retry in the upstream 2026-07-28 shape (the spec does not show them)"
