"""invoke checks: INV-STREAM / INV-TERM: what particular runs stream."""
from __future__ import annotations


from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on, precondition
from conformance.registry import check
from conformance.vocab import silences
from conformance.vocab.constants import COMPLETED_RUNS
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import (assert_ends_with_error, delivered_early, ending, exact, expected_reply,
                                               frames, generated, judge_each, name_of, named, objects, quoted, runs_of,
                                               scenario_of, terminals, terminated, text_completed, text_of, whole_text)


@check("INV-STREAM-008", scenarios=["invoke.runs"])
def deltas_join_to_reply(rec: Recording) -> str | None:
    """Streams each agent scenario; the `text` deltas joined in order equal the reply (`hello, conformance` for the streamed reply)."""
    def rule(item: tuple[str, Exchange]) -> None:
        name, ex = item
        exact(ex, text_of(ex), expected_reply(rec, name))

    return judge_each(runs_of(rec, steps.RUN_SSE), rule)


@check("INV-STREAM-008", scenarios=["generated.round_trip"], supplementary=True)
def generated_deltas_exact(rec: Recording) -> str | None:
    """Streams generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json`; the deltas join to each exactly."""
    return judge_each(generated(rec, generated_steps.INVOKE_SSE), lambda item: exact(item[0], text_of(item[0]), item[1]))


@check("INV-STREAM-009", scenarios=["invoke.timing"])
def text_arrives_early(rec: Recording) -> None:
    """Streams `say early`, `sleep 2`, `say late`; the frame carrying `early` arrives at least 1 s before the terminal frame."""
    ex = rec.get(steps.TIMED_SSE)
    whole_text(ex, rec.facts["reply"])
    early = text_completed(ex, rec.facts["first"])
    ends = terminals(ex)
    if not ends:
        raise precondition("INV-TERM-001", ex, f"the stream has no `done` or `error` frame ({ex.stream.end})")
    with on(ex):
        delivered_early(early, ends[-1], rec.facts["sleep_s"])


def sse_run(rec: Recording, name: str) -> tuple[dict[str, Any], Exchange]:
    return scenario_of(rec, name), rec.get(steps.RUN_SSE.of(name))


@check("INV-STREAM-010", scenarios=["invoke.runs"])
def tool_call_start_names_tool(rec: Recording) -> None:
    """Streams the tool-call prompt (`tool lookup {"q":"x"}`, `say done`); a `tool_call_start` frame has `name` `lookup`."""
    s, ex = sse_run(rec, "tool_call")
    tool = s.get("tool")
    if tool is None:
        raise NotAssessed("the profile's tool_call scenario names no `tool`")
    starts = [d for f, d in named(ex) if f.event == "tool_call_start"]
    with on(ex):
        assert starts, f"no `tool_call_start` frame; frames: {[f.event for f in frames(ex)][:20]}"
        names = [d.get("name") for d in starts]
        assert any(same_json(n, tool) for n in names), f"`tool_call_start` must carry name {tool!r}; got {quoted(names)}"


@check("INV-STREAM-011", scenarios=["invoke.runs"])
def tool_call_start_precedes_text(rec: Recording) -> None:
    """Streams the tool-call prompt; the `tool_call_start` frame comes before the `text` frames carrying `done`."""
    s, ex = sse_run(rec, "tool_call")
    reply = s.get("reply")
    if not reply:
        raise NotAssessed("the profile's tool_call scenario names no reply")
    whole_text(ex, reply)
    fs = named(ex)
    start = next((i for i, (f, _) in enumerate(fs) if f.event == "tool_call_start"), None)
    with on(ex):
        assert start is not None, "no `tool_call_start` frame"
        after = text_of(ex, fs[start + 1:])
        assert after.endswith(reply), f"the reply {reply!r} must be streamed after the `tool_call_start` frame; " \
                                      f"the text after it is {truncate(after, 200, count=True)!r}"


def ends_with_done(fs: list) -> None:
    """A run that ends normally: its stream ends with `done` and has no `error` frame."""
    errors = [f.index for f in fs if f.event == "error"]
    assert not errors, f"a run that ends normally streamed `error` frame(s) {errors}"
    assert fs and fs[-1].event == "done", \
        f"expected the stream to end with `done`, it ends with {name_of(fs[-1]) if fs else 'no frame'}"


@check("INV-TERM-003", scenarios=["invoke.runs"])
def completed_stream_ends_done(rec: Recording) -> str:
    """Streams the runs that end normally; each ends with `done` and has no `error` frame."""
    note = judge_each(runs_of(rec, steps.RUN_SSE, COMPLETED_RUNS), lambda item: ends_with_done(ending(item[1])))
    return "; ".join(filter(None, (note, open_event_note(rec))))


# -- silences at every position of a run (conformance.vocab.silences) ------------------------------------------------
def silent_streams(rec: Recording) -> list[tuple[Exchange, silences.Silence]]:
    found = silences.held(rec)
    if not found:
        raise NotAssessed(f"scenario {rec.scenario} recorded no silent stream")
    return found


@check("INV-TERM-003", scenarios=["invoke.silences"], supplementary=True)
def silent_stream_ends_done(rec: Recording) -> str | None:
    """Streams runs that fall silent for 15.5 s at each position of a run (before the first output, after text, after a
    tool call, after a step); each ends with `done`, no `error` frame."""
    return judge_each(silent_streams(rec), lambda item: ends_with_done(terminated(item[0])))


@check("INV-STREAM-008", scenarios=["invoke.silences"], supplementary=True)
def text_after_silence(rec: Recording) -> str | None:
    """Streams runs that fall silent for 15.5 s at each position of a run; the `text` deltas join to the reply, the
    piece said after the silence included."""
    def rule(item: tuple[Exchange, silences.Silence]) -> None:
        ex, silence = item
        terminated(ex)
        exact(ex, text_of(ex), silence.reply)
    return judge_each(silent_streams(rec), rule)


def open_event_note(rec: Recording) -> str:
    """INV-OPEN-002/004 (reported, not judged): the event names and `done` keys seen."""
    seen: dict[str, set[str]] = {}
    for _, ex in runs_of(rec, steps.RUN_SSE):
        try:
            for f, d in objects(ex):
                seen.setdefault(str(f.event), set()).update(k for k in d if k not in ("v", "type"))
        except AssertionError:
            continue
    return "event names seen (data keys besides v/type): " + ", ".join(
        f"{n} ({', '.join(sorted(k)) or '-'})" for n, k in sorted(seen.items()))


@check("INV-TERM-004", scenarios=["invoke.runs"])
def failure_after_output_ends_error(rec: Recording) -> None:
    """Streams `say partial`, `fail boom`; status 200, `text` frames carrying `partial`, then an `error` frame, no `done`."""
    s, ex = sse_run(rec, "failure_after_output")
    assert_ends_with_error(ex)
    reply = s.get("reply")
    if reply:   # (no expected text in a custom profile: the frame order above is still judged)
        whole_text(ex, reply)
        before = text_of(ex, named(ex)[:-1])
        with on(ex):
            assert before == reply, \
                f"the text before the `error` frame must be {reply!r}, got {truncate(before, 200, count=True)!r}"


@check("INV-TERM-005", scenarios=["invoke.runs"])
def failure_before_output_ends_error(rec: Recording) -> None:
    """Streams `fail boom`; the answer is 200 (not a refusal) and the stream ends with an `error` frame, no `done`."""
    _, ex = sse_run(rec, "failure_before_output")
    assert_ends_with_error(ex)
