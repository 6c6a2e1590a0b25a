"""invoke checks over sequences: every invoke call of the chains, overlaps and long runs (conformance.vocab.sequences)
judged under the requirement its expectation names, as extra evidence beside the scripted checks (supplementary).

The readings are the scripted checks' own: the reply of a JSON result (`result`) or of a stream (the `text` deltas),
the `sessionId` of a result, `durationMs`. A long run also gives `durationMs` a bound from above: the run lies inside
the exchange, so it cannot have lasted longer than the suite waited for its answer (plus slack for clocks)."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on
from conformance.registry import rule
from conformance.vocab import is_json_integer, sequences
from conformance.vocab.readers import request_json
from conformance.vocab.sequences import Played
from conformance.vocab.values import same_json
from conformance.checks.invoke._common import asked_for_stream, assert_ends_with_error, exact, named, quoted, \
    reply_of, result_of, run_status, session_key_of, text_of

# judged apart: the scenarios of invoke alone, and the one crossing protocols (--protocols may leave it out)
GROUPS = {"sequences": ["invoke.chain", "invoke.together", "invoke.slow_run"], "cross": [sequences.CROSS],
          "histories": [sequences.HISTORIES]}
DURATION_FLOOR = 0.5     # a run that slept S seconds reports at least half of S (INV-RES-013 probes 2 s at 1500 ms)
DURATION_SLACK_MS = 2000  # over the time the suite waited for the answer: clocks, and rounding up to the second


def text(move: Played) -> str:
    """The run's reply: the `text` deltas of a stream asked for, else the result's `result`."""
    return text_of(move.ex) if asked_for_stream(move.ex) else reply_of(move.ex)


def count_text(move: Played) -> str:
    if move.expect["kind"] == "failed":     # the text sent before the failure: the count, then what followed it
        return sequences.count_part(move, text(move))
    return text(move).strip()    # as invoke's own `count` checks read it


def reply_exact(move: Played) -> None:
    exact(move.ex, text(move), move.expect["reply"])


def key_echoed(move: Played) -> None:
    sent = (request_json(move.ex) or {}).get("sessionId")
    got = session_key_of(move.ex)
    with on(move.ex):
        assert same_json(got, sent), f"{move.what()}: sent sessionId {sent!r}, the result carries {quoted(got, 80)}"


def duration_bounded(move: Played) -> None:
    """`durationMs` is a non-negative integer no longer than the exchange took, and for a run that slept S seconds
    at least half of S."""
    ex = move.ex
    got = result_of(ex).get("durationMs")
    if ex.t_end is None:
        raise NotAssessed(f"{ex.label}: the exchange's duration was not recorded")
    slept_ms = move.expect.get("slept", 0) * 1000
    ceiling = round(ex.t_end * 1000) + DURATION_SLACK_MS
    with on(ex):
        assert is_json_integer(got) and got >= 0, f"`durationMs` is not a non-negative integer: {quoted(got)}"
        assert got >= slept_ms * DURATION_FLOOR, \
            f"{move.what()}: the run slept {slept_ms / 1000:g} s, so `durationMs` must be at least " \
            f"{slept_ms * DURATION_FLOOR:.0f}; got {got}"
        assert got <= ceiling, \
            f"{move.what()}: `durationMs` is {got}, but the whole exchange took {ex.t_end * 1000:.0f} ms: the run " \
            f"cannot have lasted longer than the suite waited for its answer (bound {ceiling} ms)"


def failed(move: Played) -> None:
    """The run failed as the spec says a failure arrives: a JSON result with `status` `failed`; a stream ending with
    an `error` frame (no `done`) after the text sent before the failure."""
    ex = move.ex
    if not asked_for_stream(ex):
        status = run_status(ex)
        with on(ex):
            assert same_json(status, "failed"), f"{move.what()}: the run failed, the result's status is {quoted(status)}"
        return
    assert_ends_with_error(ex)
    before = text_of(ex, named(ex)[:-1])
    with on(ex):
        assert sequences.before_failure(move, before), f"{move.what()}: the text before the `error` frame is " \
                                               f"{quoted(before, 120)}, expected {quoted(move.expect['reply'], 120)}"


def partial(move: Played) -> None:
    """A failed JSON result's `result` is the text sent before the failure."""
    got = reply_of(move.ex)
    with on(move.ex):
        assert sequences.before_failure(move, got), f"{move.what()}: a failed run's `result` is the text sent before the " \
                                            f"failure, {quoted(move.expect['reply'], 120)}; got {quoted(got, 120)}"


def events_in_order(move: Played) -> None:
    """The run's steps and tool call leave their events in the order the run made them: every event that names one
    comes before every event that names the next (the types and fields of these events are not shown, so an event
    is read as naming one when one of its string values is that name and none is another's)."""
    events = result_of(move.ex).get("events")
    names = move.expect["order"]
    at = {name: [i for i, e in enumerate(events if isinstance(events, list) else []) if _names(e) & set(names)
                 == {name}] for name in names}
    found = [name for name in names if at[name]]
    if len(found) < 2:
        raise NotAssessed(f"{move.ex.label}: the elements of `events` do not name the run's steps and tool call "
                          f"({', '.join(map(repr, names))}) by their names, so their order cannot be read")
    with on(move.ex):
        for first, then in zip(found, found[1:]):
            assert max(at[first]) < min(at[then]), \
                f"{move.what()}: the run made {' then '.join(map(repr, names))}, but in `events` {then!r} comes " \
                f"before {first!r} ends: {quoted(events, 400)}"


def _names(value: object) -> set[str]:
    """The string values anywhere in a JSON value."""
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return set().union(*(_names(v) for v in items))


JUDGES = {"reply": reply_exact, "events": events_in_order, "messages": lambda move: sequences.messages_reached(move, text(move)), "echo": key_echoed,
          "duration": duration_bounded, "failed": failed, "partial": partial}


def moves_rule(requirement: str):
    def fn(*recs: Recording) -> str | None:
        return sequences.judge_moves(recs, "invoke", requirement, JUDGES, count_text)
    return fn


for _args in sequences.rules_over_moves("invoke", GROUPS, moves_rule):
    rule(**_args)
