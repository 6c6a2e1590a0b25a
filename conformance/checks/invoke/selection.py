"""invoke checks: INV-SEL: selection of streaming."""
from __future__ import annotations


from conformance.engine import Recording
from conformance.outcomes import NotAssessed, Observation, on, precondition
from conformance.registry import check
from conformance.vocab import requests as rq
from conformance.vocab.readers import sent_header
from conformance.vocab.steps import inputs as input_steps, invoke as steps
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import (failed_before_output, is_event_stream, is_json_answer, judge_each,
                                              result_of, stream_rule, what)


def assert_stream(ex: Exchange, why: str) -> None:
    with on(ex):
        assert is_event_stream(ex), f"{why} must select server-sent events (200, text/event-stream); got {what(ex)}"


def assert_json_result(ex: Exchange, why: str) -> None:
    """One JSON result: an event stream is this rule's deviation; a result that is not 200 with a JSON object, or
    not sent as JSON, is INV-RES-001's (the rule of every non-streaming result)."""
    with on(ex):
        assert not is_event_stream(ex), f"{why} must answer one JSON body (200, application/json), not a stream"
    result_of(ex)
    if not is_json_answer(ex):
        raise precondition("INV-RES-001", ex, f"expected the invoke result with Content-Type application/json, "
                                              f"got {what(ex)}")


@check("INV-SEL-001", scenarios=["invoke.selection"])
def stream_true_selects_sse(rec: Recording) -> None:
    """Sends `stream: true` without an Accept header; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get(steps.STREAM_TRUE_NO_ACCEPT), "`stream: true` (no Accept header)")


@stream_rule("INV-SEL-001")
def stream_true_answers_stream(ex: Exchange) -> None:
    """Streams each agent scenario with `stream: true` (or, by seed, `Accept: text/event-stream` alone: INV-SEL-002's);
    every answer is a 200 `text/event-stream` (what every stream check reads)."""
    if rq.invoke_mode(ex) != "stream-field":
        raise NotAssessed(f"{ex.label} selected its stream by Accept alone (INV-SEL-002's)")
    failed_before_output(ex)
    assert is_event_stream(ex), f"`stream: true` must answer a 200 `text/event-stream`, got {what(ex)}"


@stream_rule("INV-SEL-002")
def accept_answers_stream(ex: Exchange) -> None:
    """Streams each agent scenario selected, by seed, by `Accept: text/event-stream` alone; every such answer is a
    200 `text/event-stream` (what every stream check reads: a refusal here is this rule's, not each reader's)."""
    if rq.invoke_mode(ex) != "accept":
        raise NotAssessed(f"{ex.label} selected its stream by `stream: true` (INV-SEL-001's)")
    failed_before_output(ex)
    assert is_event_stream(ex), f"`Accept: text/event-stream` (no `stream` field) must answer a 200 " \
                                f"`text/event-stream`, got {what(ex)}"


@check("INV-SEL-002", scenarios=["invoke.selection"])
def accept_selects_sse(rec: Recording) -> None:
    """Sends `Accept: text/event-stream` without a `stream` field; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get(steps.ACCEPT_SSE_NO_STREAM), "`Accept: text/event-stream` (no `stream` field)")


@check("INV-SEL-002", scenarios=["invoke.input_forms"])
def accept_forms_select_sse(rec: Recording) -> str | None:
    """Sends no `stream` field with Accept naming only the event stream in other legitimate forms
    (`Text/Event-Stream`, `text/event-stream;q=1`: input classes accept:case and accept:weight); each answer is a
    200 `text/event-stream`."""
    return judge_each(rec.labelled(input_steps.ACCEPT_FORMS),
                      lambda ex: assert_stream(ex, f"`Accept: {sent_header(ex, 'accept')}` (no `stream` field)"))


@check("INV-SEL-003", scenarios=["invoke.selection"])
def default_is_json(rec: Recording) -> str | None:
    """Sends no `stream` field, with no Accept header and with `Accept: application/json`; both answer one JSON result."""
    cases = [(rec.get(steps.NO_STREAM_NO_ACCEPT), "no `stream` field and no Accept header"),
             (rec.get(steps.NO_STREAM_ACCEPT_JSON), "no `stream` field and `Accept: application/json`")]
    return judge_each(cases, lambda case: assert_json_result(*case))


@check("INV-SEL-004", scenarios=["invoke.selection"])
def stream_false_is_json(rec: Recording) -> None:
    """Sends `stream: false` without an Accept header; the answer is one JSON result, not a stream."""
    assert_json_result(rec.get(steps.STREAM_FALSE_NO_ACCEPT), "`stream: false` (no Accept header)")


@check("INV-SEL-005", scenarios=["invoke.selection"])
def stream_false_with_accept_sse(rec: Recording) -> None:
    """Sends `stream: false` with `Accept: text/event-stream`; reports which form came back (the spec conflicts)."""
    ex = rec.get(steps.STREAM_FALSE_ACCEPT_SSE)
    if is_event_stream(ex):
        form = "an event stream (the Accept header won)"
    elif ex.status == 200 and is_json_answer(ex):
        form = "one JSON result (the `stream` field won)"
    else:
        form = f"neither form: {what(ex)}"
    raise Observation(f"`stream: false` with `Accept: text/event-stream` answered {form}")
