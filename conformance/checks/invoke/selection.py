"""invoke checks: INV-SEL: selection of streaming."""
from __future__ import annotations


from conformance.engine import Recording
from conformance.outcomes import Observation
from conformance.registry import check
from conformance.vocab.steps import invoke as steps
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import is_json_answer, result_of, what


def is_stream(ex: Exchange) -> bool:
    return ex.status == 200 and ex.content_type == "text/event-stream"


def assert_stream(ex: Exchange, why: str) -> None:
    assert is_stream(ex), f"{ex.label}: {why} must select server-sent events (200, text/event-stream); got {what(ex)}"


def assert_json_result(ex: Exchange, why: str) -> None:
    assert ex.status == 200 and is_json_answer(ex), \
        f"{ex.label}: {why} must answer one JSON body (200, application/json); got {what(ex)}"
    result_of(ex)


@check("INV-SEL-001", scenarios=["invoke.selection"])
def stream_true_selects_sse(rec: Recording) -> None:
    """Sends `stream: true` without an Accept header; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get(steps.STREAM_TRUE_NO_ACCEPT), "`stream: true` (no Accept header)")


@check("INV-SEL-002", scenarios=["invoke.selection"])
def accept_selects_sse(rec: Recording) -> None:
    """Sends `Accept: text/event-stream` without a `stream` field; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get(steps.ACCEPT_SSE_NO_STREAM), "`Accept: text/event-stream` (no `stream` field)")


@check("INV-SEL-003", scenarios=["invoke.selection"])
def default_is_json(rec: Recording) -> None:
    """Sends no `stream` field, with no Accept header and with `Accept: application/json`; both answer one JSON result."""
    assert_json_result(rec.get(steps.NO_STREAM_NO_ACCEPT), "no `stream` field and no Accept header")
    assert_json_result(rec.get(steps.NO_STREAM_ACCEPT_JSON), "no `stream` field and `Accept: application/json`")


@check("INV-SEL-004", scenarios=["invoke.selection"])
def stream_false_is_json(rec: Recording) -> None:
    """Sends `stream: false` without an Accept header; the answer is one JSON result, not a stream."""
    assert_json_result(rec.get(steps.STREAM_FALSE_NO_ACCEPT), "`stream: false` (no Accept header)")


@check("INV-SEL-005", scenarios=["invoke.selection"])
def stream_false_with_accept_sse(rec: Recording) -> None:
    """Sends `stream: false` with `Accept: text/event-stream`; reports which form came back (the spec conflicts)."""
    ex = rec.get(steps.STREAM_FALSE_ACCEPT_SSE)
    if is_stream(ex):
        form = "an event stream (the Accept header won)"
    elif ex.status == 200 and is_json_answer(ex):
        form = "one JSON result (the `stream` field won)"
    else:
        form = f"neither form: {what(ex)}"
    raise Observation(f"`stream: false` with `Accept: text/event-stream` answered {form}")
