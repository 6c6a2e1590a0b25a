"""agui checks: order."""
from __future__ import annotations

from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.checks.agui._common import (STREAMS, TERMINAL, Run, frame_value, is_event, judge_every, needs_events,
                                             round_trips, runs, streams, text_diff)


@check("AGUI-ORDER-001", scenarios=STREAMS)
def run_started_first(*recs):
    """Runs every stream scenario; the first event is RUN_STARTED and it occurs once."""
    def started_first(r: Run) -> None:
        types = [e["type"] for e in needs_events(r)]
        assert types[0] == "RUN_STARTED" and types.count("RUN_STARTED") == 1, \
            f"expected RUN_STARTED first and once, got {r.types()}"
    return judge_every(streams(*recs), started_first)


@check("AGUI-ORDER-002", scenarios=STREAMS)
def one_terminal_event(*recs):
    """Runs every stream scenario (success, failure, interrupt); exactly one RUN_FINISHED or RUN_ERROR in total."""
    def one_terminal(r: Run) -> None:
        needs_events(r)
        count = len(r.of_type(*TERMINAL))
        assert count == 1, f"expected exactly one RUN_FINISHED or RUN_ERROR, got {count}: {r.types()}"
    return judge_every(streams(*recs), one_terminal)


@check("AGUI-ORDER-003", scenarios=STREAMS)
def terminal_event_is_last(*recs):
    """Runs every stream scenario; RUN_FINISHED/RUN_ERROR is the last frame and the body ends after it (comments aside)."""
    def terminal_last(r: Run) -> None:
        needs_events(r)
        r.terminal()
        values = [frame_value(f, r.ex) for f in r.frames]     # each one JSON value: `r.events` read them
        last = max(i for i, v in enumerate(values) if is_event(v) and v["type"] in TERMINAL)
        after = r.frames[last + 1:]
        assert not after, (f"{len(after)} frame(s) after the terminal event: "
                           + ", ".join(truncate(f.data, 60, quoted=True) for f in after[:3]))
        assert r.stream.end == "eof" and not r.ex.error, (
            f"the body did not end after the terminal event (stream end {r.stream.end!r}"
            f"{', ' + r.ex.error if r.ex.error else ''})")
    return judge_every(streams(*recs), terminal_last)


def finished(end: dict) -> None:
    """a run that ends normally ends with RUN_FINISHED, not RUN_ERROR (`end`: its terminal event)."""
    assert end["type"] == "RUN_FINISHED", f"a normal run ended with {end['type']}: {truncate(end, 160, quoted=True)}"


@check("AGUI-ORDER-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_run_finishes(*recs):
    """Runs prompts that end normally (plain, chunks, tool, step); each ends with RUN_FINISHED, not RUN_ERROR."""
    def finishes(r: Run) -> None:
        needs_events(r)
        finished(r.terminal())
    return judge_every(streams(*recs, kinds=["success"]), finishes)


def _is_text_or_run(type_: str) -> bool:
    return type_.startswith(("RUN_", "TEXT_MESSAGE_"))


def tool_or_step_inside(r: Run) -> list[str]:
    """The types of the events between RUN_STARTED and the terminal event that are no run or text event (the
    tool call and step events, whose names are AGUI-OPEN-002's); AssertionError when there are none."""
    start, end = r.started(), r.terminal()
    events = r.events
    inside = events[next(i for i, e in enumerate(events) if e is start) + 1:
                    next(i for i, e in enumerate(events) if e is end)]
    others = sorted({e["type"] for e in inside if not _is_text_or_run(e["type"])})
    assert others, f"expected a tool or step event between RUN_STARTED and the terminal event, got {r.types()}"
    return others


@check("AGUI-ORDER-005", scenarios=["agui.tool", "agui.step"])
def tool_and_step_events_between(*recs):
    """Runs the tool-call and step prompts; some event other than RUN_*/TEXT_MESSAGE_* lies between start and end."""
    seen: dict[str, list[str]] = {}

    def inside(r: Run) -> None:
        seen[r.label] = tool_or_step_inside(r)
    judge_every(runs(*recs), inside, nothing="no run of the tool-call or step prompt was recorded")
    return "types seen (not judged, AGUI-OPEN-002): " + "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items())


@check("AGUI-ORDER-006", scenarios=["agui.plain", "agui.streamed"])
def deltas_join_to_reply(*recs):
    """Runs the plain and chunked prompts; the TEXT_MESSAGE_CONTENT deltas joined in order equal the reply."""
    def deltas_are_reply(r: Run) -> None:
        assert r.text() == r.want["reply"], \
            f"deltas joined are {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)}"
    return judge_every(runs(*recs, keep=lambda w: w.get("reply") is not None), deltas_are_reply,
                      nothing="no run of a prompt with a known reply was recorded")


@check("AGUI-ORDER-006", scenarios=["generated.round_trip"], supplementary=True)
def round_trip_deltas(rec):
    """Sends generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json`; deltas join to each exactly."""
    def deltas_are_text(item: tuple[Run, str]) -> None:
        r, text = item
        assert r.text() == text, f"the deltas differ from the generated text: {text_diff(r.text(), text)}"
    return judge_every(round_trips(rec), deltas_are_text, exchange=lambda item: item[0].ex)
