"""invoke checks: INV-STREAM and INV-TERM: framing and termination of every stream."""
from __future__ import annotations

from typing import Any

from conformance.outcomes import NotAssessed, joined, precondition
from conformance.vocab import same_integer
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.wire.sse import strict_json_loads
from conformance.checks.invoke._common import (CLOSE_WITHIN_S, TERMINAL, data_or_none, ending, frame_data, frames,
                                               name_of, named, objects, quoted, stream_rule, terminals)


@stream_rule("INV-STREAM-001")
def frames_are_named(ex: Exchange) -> None:
    """Streams each agent scenario; every frame has an `event:` field with a non-empty name."""
    bad = [f"frame {f.index}" for f in frames(ex) if not f.event]
    assert not bad, f"frames without an `event:` name: {joined(bad)}"


@stream_rule("INV-STREAM-002")
def frames_carry_json_object(ex: Exchange) -> None:
    """Streams each agent scenario; every frame has `data:` that parses (lines joined per SSE) as one JSON object."""
    bad = []
    for f in frames(ex):
        if not f.dispatched:
            bad.append(f"frame {f.index} {name_of(f)} has no `data:` line")
        elif data_or_none(f) is None:
            bad.append(f"frame {f.index} {name_of(f)} data is not one JSON object: {truncate(f.data, 120, count=True)!r}")
    assert not bad, joined(bad)


@stream_rule("INV-STREAM-003")
def frames_end_with_blank_line(ex: Exchange) -> None:
    """Streams each agent scenario; every frame, the last too, ends with a blank line, and no frame carries two events."""
    fs = frames(ex)
    st = ex.stream
    assert st.end != "eof_mid_block", \
        f"the stream ended inside a frame with no blank line after it: {truncate(st.pending.decode('utf-8', 'replace'), 200, count=True)!r}"
    for f in fs:
        lines = f.data.split("\n")
        if len(lines) > 1 and data_or_none(f) is None and all(isinstance(_loads_or_none(x), dict) for x in lines):
            raise AssertionError(f"frame {f.index} carries {len(lines)} events (one JSON object per `data:` line)")


def _loads_or_none(text: str) -> Any:
    try:
        return strict_json_loads(text)
    except ValueError:
        return None


@stream_rule("INV-STREAM-004")
def frames_carry_v1(ex: Exchange) -> None:
    """Streams each agent scenario; the data of every frame, `done` and `error` included, has `v` the integer 1."""
    bad = [f"frame {f.index} {name_of(f)} has v={quoted(d.get('v'), 60)}"
           for f, d in objects(ex) if not same_integer(d.get("v"), 1)]
    assert not bad, joined(bad)


@stream_rule("INV-STREAM-005")
def frames_carry_type(ex: Exchange) -> None:
    """Streams each agent scenario; the data of every frame has `type`, a string."""
    bad = [f"frame {f.index} {name_of(f)} has type={quoted(d.get('type'), 60)}"
           for f, d in objects(ex) if not isinstance(d.get("type"), str)]
    assert not bad, joined(bad)


@stream_rule("INV-STREAM-006")
def text_frames_carry_delta(ex: Exchange) -> None:
    """Streams each agent scenario; every frame named `text` has data with `type` `text` and `delta` a string."""
    texts = [(f, frame_data(ex, f)) for f in frames(ex) if f.event == "text"]
    bad = [f"frame {f.index}: {truncate(f.data, 120, count=True)!r}" for f, d in texts
           if isinstance(d.get("type"), str) and not (same_json(d.get("type"), "text") and isinstance(d.get("delta"), str))]
    assert not bad, "`text` frames must carry {v: 1, type: text, delta: <string>}: " + joined(bad)
    untyped(ex, [f for f, d in texts])


def untyped(ex: Exchange, fs: list) -> None:
    """Frames whose data has no string `type` broke INV-STREAM-005: what else they carry cannot be read as an event."""
    missing = [f"frame {f.index}" for f in fs if not isinstance(frame_data(ex, f).get("type"), str)]
    if missing:
        raise precondition("INV-STREAM-005", ex, f"frames without a string `type`: {joined(missing)}")


@stream_rule("INV-STREAM-007")
def type_matches_event_name(ex: Exchange) -> None:
    """Streams each agent scenario; the data's `type` equals the frame's `event:` name."""
    fs = named(ex)
    bad = [f"frame {f.index} is named {name_of(f)} but has type {quoted(d.get('type'), 60)}"
           for f, d in fs if isinstance(d.get("type"), str) and not same_json(d.get("type"), f.event)]
    assert not bad, joined(bad)
    untyped(ex, [f for f, _ in fs])


@stream_rule("INV-TERM-001")
def one_terminal_frame(ex: Exchange) -> None:
    """Streams each agent scenario; exactly one frame is named `done` or `error`."""
    found = [f"frame {f.index} {name_of(f)}" for f in terminals(ex)]
    assert len(found) == 1, f"expected exactly one `done` or `error` frame, found {len(found)}" + \
        (f": {joined(found)}" if found else f" ({ex.stream.end}; {len(frames(ex))} frames)")


@stream_rule("INV-TERM-002")
def terminal_is_last_and_closes(ex: Exchange) -> None:
    """Streams each agent scenario; the `done`/`error` frame is the last one and the server closes the stream after
    it."""
    fs = ending(ex)
    assert fs, f"the stream has no frame ({ex.stream.end})"
    last = fs[-1]
    assert last.event in TERMINAL, f"the last frame is {name_of(last)} (frame {last.index}), not `done` or `error`"
    st = ex.stream
    assert st.end == "eof", f"after the terminal frame the stream did not end cleanly: {st.end}" + \
        (f" ({ex.error})" if ex.error else "")


@stream_rule("INV-TERM-002", groups=("timing",))
def closes_soon_after_terminal(ex: Exchange) -> None:
    """Streams `say early`, `sleep 2`, `say late` on a lane of its own; the server closes the stream within 5 s of
    the terminal frame. Timed there alone: on the shared lane a busy machine delays the suite's reading, not the
    server's close."""
    fs = ending(ex)
    if not fs or fs[-1].event not in TERMINAL or ex.stream.end != "eof":
        raise NotAssessed("the stream did not end with its terminal frame (terminal_is_last_and_closes says how)")
    lag = (ex.stream.t_end or 0.0) - fs[-1].t
    assert lag <= CLOSE_WITHIN_S, f"the server closed the stream {lag:.1f} s after the terminal frame " \
                                  f"(expected within {CLOSE_WITHIN_S:g} s)"


@stream_rule("INV-TERM-006", groups=("runs",))
def error_frames_carry_message(ex: Exchange) -> None:
    """Streams each agent scenario (both failures included); every `error` frame's data has `message`, a string."""
    bad = [f"frame {f.index}: {truncate(f.data, 120, count=True)!r}" for f in frames(ex)
           if f.event == "error" and not isinstance(frame_data(ex, f).get("message"), str)]
    assert not bad, "`error` frames must carry `message` (a string): " + joined(bad)
