"""invoke checks: INV-SESS: sessions."""
from __future__ import annotations

from typing import Callable

from conformance.vocab.constants import MAX_KEY
from conformance.engine import Recording
from conformance.outcomes import Deviation, NotAssessed
from conformance.registry import Step, check, rule
from conformance.vocab import agent_readings
from conformance.vocab.readers import request_json as sent
from conformance.vocab.steps import invoke as steps
from conformance.vocab.values import caused, differs, length_cause, same_json
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import (accepted, count_is, counts_from_zero, is_event_stream, judge_each, quoted, refused,
                                               run_status, session_key_of)



@check("INV-SESS-001", scenarios=["invoke.selection", "invoke.sessions"])
def generated_session_ids(rec: Recording, sessions: Recording) -> str | None:
    """Sends invokes without `sessionId`; each result has a generated `sessionId` of 1 to 256 characters, no two equal."""
    first: dict[str, Exchange] = {}

    def rule(ex: Exchange) -> None:
        sid = session_key_of(ex)
        if sid in first:    # the repeat shows the deviation, the first holder of the key comes next
            raise Deviation(f"sent without `sessionId` like {first[sid].label}, got the same generated {sid!r}",
                            (ex, first[sid]))
        first[sid] = ex

    candidates = [ex for ex in rec.exchanges if ex.status == 200 and not is_event_stream(ex)] \
        + sessions.labelled(steps.GENERATED_1)
    note = judge_each(candidates, rule)
    if len(first) < 2:
        raise NotAssessed(f"fewer than two JSON results without `sessionId` to compare ({len(first)})")
    return note


# The `count` each run of invoke.sessions replies under the agent's contract: what tells how the agent counts.
COUNTS = {steps.COUNT_1: 1, steps.COUNT_2: 2, steps.COUNT_OTHER: 1, steps.GENERATED_1: 1, steps.GENERATED_2: 2}


@check("INV-SESS-002", scenarios=["invoke.sessions"])
def same_key_same_instance(rec: Recording) -> str | None:
    """Sends `count` twice with one fresh `sessionId`; the replies are 1 then 2."""
    first = rec.get(steps.COUNT_1)
    return counted(rec, [(first, 1, "the first run on a fresh key", ()),
                         (rec.get(steps.COUNT_2), 2, f"the second run on the key of {first.label} reaches the same "
                                                     f"instance", (first,))])


def counted(rec: Recording, runs: list[tuple[Exchange, int, str, tuple[Exchange, ...]]], **evidence) -> str | None:
    """Every (call, count the contract gives, why, earlier calls) read (`count_is`), the agent's way of counting
    learnt from every count of the recording."""
    zero_based = counts_from_zero(rec, COUNTS)
    return agent_readings.read_all(lambda rule: judge_each(runs, rule), lambda run: count_is(
        run[0], run[1], run[2], *run[3], zero_based=zero_based, **evidence))


@check("GEN-SESS-002", scenarios=["invoke.sessions"])
def other_key_new_instance(rec: Recording) -> str | None:
    """Sends `count` on a fresh key after two runs on another key; the reply is 1 (a different key, a new instance)."""
    return counted(rec, [(rec.get(steps.COUNT_OTHER), 1, "a fresh key after two runs on another key", ())],
                   others=((rec.facts["key"], 2),))


@check("INV-SESS-004", scenarios=["invoke.sessions"])
def generated_key_reaches_instance(rec: Recording) -> str | None:
    """Sends `count` without `sessionId`, then `count` with the `sessionId` returned; the replies are 1 then 2."""
    first = rec.get(steps.GENERATED_1)
    return counted(rec, [(first, 1, "the first run on a generated key", ()),
                         (rec.get(steps.GENERATED_2), 2, f"the key {session_key_of(first)!r} returned by "
                                                         f"{first.label} reaches the same instance", (first,))])


def session_echoed(ex: Exchange) -> None:
    key = (sent(ex) or {}).get("sessionId")
    got = session_key_of(ex)
    assert same_json(got, key), f"sent sessionId, the result carries another: {differs(key, got)}"


def session_echo(scenario: str, family: Step | None) -> Callable[[Recording], str | None]:
    def fn(rec: Recording) -> str | None:
        results = rec.labelled(family) if family is not None else rec.exchanges
        exchanges = [ex for ex in results if isinstance((sent(ex) or {}).get("sessionId"), str)]
        if not exchanges:
            raise NotAssessed(f"scenario {scenario} sent no `sessionId` without streaming")
        return judge_each(exchanges, session_echoed)

    return fn


# scenario: the step family of its JSON results (None: every exchange is one)
SESSION_ECHOES = {"invoke.runs": steps.RUN_JSON, "invoke.sessions": None}
rule(lambda scn: session_echo(scn, SESSION_ECHOES[scn]), over=SESSION_ECHOES, requirements="INV-SESS-003",
     scenarios=lambda scn: [scn], name=lambda scn: f"session_id_echoed__{scn.split('.')[-1]}",
     supplementary=lambda scn: scn == "invoke.sessions",   # `count` runs: extra evidence beside the mapped runs
     doc="Sends invokes with a `sessionId` without streaming; each result's `sessionId` equals the one sent.")


@check("INV-SESS-005", scenarios=["invoke.key_lengths"])
def key_lengths_accepted(rec: Recording) -> str | None:
    """Sends the plain reply with a `sessionId` of 1 and of 256 characters; both complete (200, `completed`)."""
    def rule(ex: Exchange) -> None:
        key = (sent(ex) or {}).get("sessionId", "")
        with caused(length_cause(key, MAX_KEY, accepted=False)):    # refused: the unit that puts it outside
            accepted(ex, f"a {len(key)}-character sessionId")
        status = run_status(ex)
        assert same_json(status, "completed"), f"a {len(key)}-character sessionId must be accepted; status {quoted(status)}"

    return judge_each([rec.get(steps.KEY_1), rec.get(steps.KEY_256)], rule)


@check("INV-SESS-006", scenarios=["invoke.refusals"])
def key_lengths_refused(rec: Recording) -> str | None:
    """Sends `sessionId` of 257 characters and empty; both are refused with a 4xx and `validation_failed`."""
    def rule(ex: Exchange) -> None:
        key = (sent(ex) or {}).get("sessionId")
        with caused(length_cause(key, MAX_KEY, accepted=True) if 200 <= (ex.status or 0) < 300 else None):
            refused(ex, "validation_failed")

    return judge_each([rec.get(steps.KEY_257), rec.get(steps.KEY_EMPTY)], rule)
