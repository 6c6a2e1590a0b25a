"""agui checks: framing. They read frames, never events: they are the roots the event readers name."""
from __future__ import annotations

from conformance.outcomes import judge_all
from conformance.registry import check
from conformance.vocab.readers import got, sent_header
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import agui as steps, inputs as input_steps
from conformance.checks.agui._common import STREAMS, answered_stream, frame_value, is_event, judge_every, streams


@check("AGUI-FRAME-001", scenarios=["agui.plain"])
def answers_event_stream(plain):
    """Sends the plain prompt with `Accept: text/event-stream` and with no Accept header; both answer 200 text/event-stream."""
    def streamed(ex: Exchange) -> None:
        assert answered_stream(ex), (f"{ex.method} {ex.url} (Accept {_sent_header(ex, 'accept')!r}): expected 200 "
                                     f"text/event-stream, got {got(ex)}")
    return judge_all([plain.get(label) for label in (steps.IDS, steps.BARE)], streamed)


@check("AGUI-FRAME-001", scenarios=["agui.input_forms"])
def content_type_forms_answer_event_stream(rec):
    """Sends the plain prompt with Content-Type `application/json; charset=utf-8` and `Application/JSON` (input
    classes content-type:parameter and :case); each answers 200 text/event-stream."""
    def streamed(ex: Exchange) -> None:
        assert answered_stream(ex), (f"{ex.method} {ex.url} (Content-Type {sent_header(ex, 'content-type')!r}): "
                                     f"expected 200 text/event-stream, got {got(ex)}")
    return judge_all(rec.labelled(input_steps.CONTENT_TYPE_FORMS), streamed)


def _frames(*recs) -> list[tuple]:
    """(run, frame) of every dispatched frame, and (run, None) for a stream that ended inside a frame."""
    streamed = streams(*recs)
    return [(r, f) for r in streamed for f in r.frames] + [(r, None) for r in streamed if r.stream.end == "eof_mid_block"]


@check("AGUI-FRAME-002", scenarios=STREAMS)
def frames_are_unnamed(*recs):
    """Runs every stream scenario; no frame carries a non-empty `event:` name (the spec's frames are unnamed `data:`)."""
    def unnamed(r):
        named = [f"frame {f.index} is named {f.event!r}: {truncate(f.data, 160, quoted=True)}" for f in r.frames if f.event]
        assert not named, "AG-UI frames are unnamed `data:` frames: " + "; ".join(named[:8])
    return judge_every([r for r in streams(*recs) if r.frames], unnamed, nothing="no SSE frame in any stream")


# AGUI-FRAME-003 and -004 judge the same frames, each leaving to the other the frames that are its deviation
# (judge_all leaves out an item blocked by a requirement that is judged on that very item).
@check("AGUI-FRAME-003", scenarios=STREAMS)
def frames_are_json_events(*recs):
    """Runs every stream scenario; every frame's data is one JSON object with a non-empty string `type`.
    A frame holding two JSON values or an unfinished one is AGUI-FRAME-004's alone."""
    def json_event(item):
        r, f = item
        value = frame_value(f, r.ex)
        assert is_event(value), (f"frame {f.index} is not a JSON object with a non-empty string `type`: "
                                 f"{truncate(f.data, 160, quoted=True)}")
    return judge_all([(r, f) for r, f in _frames(*recs) if f is not None], json_event, exchange=lambda item: item[0].ex,
                     nothing="no SSE frame in any stream")


@check("AGUI-FRAME-004", scenarios=STREAMS)
def one_event_per_frame(*recs):
    """Runs every stream scenario; each frame is blank-line terminated and holds exactly one whole JSON value.
    Data that is not JSON at all is AGUI-FRAME-003's alone."""
    def one_value(item):
        r, f = item
        if f is None:
            raise AssertionError(f"the stream ended inside a frame that no blank line closed: "
                                 f"{truncate(r.stream.pending.decode('utf-8', 'replace'), 160, quoted=True)}")
        frame_value(f, r.ex)
    return judge_all(_frames(*recs), one_value, exchange=lambda item: item[0].ex, nothing="no SSE frame in any stream")


def _sent_header(ex: Exchange, name: str) -> str:
    return next((v for k, v in ex.request_headers.items() if k.lower() == name), "(none)")
