"""MCP checks: sessions."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import Blocked, Deviation, NotAssessed, judge_all, on, precondition
from conformance.registry import check
from conformance.vocab import agent_readings
from conformance.vocab.values import differs, digits_only, same_json
from conformance.vocab.steps import mcp as steps
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import EXACT_REPLY, reply_text, result_of, structured_session

GENERATED = "MCP-SESS-001"   # a call without session_id reports the generated one: what MCP-SESS-004 follows
AFFINITY = "MCP-SESS-002"    # calls with the same session key reach one instance


def count_reply(rec: Recording, label: str) -> tuple[Exchange, str, dict[str, Any]]:
    """The exchange, reply and result of a `count` call. The agent replies the count in digits: other text is not
    its reply exactly (MCP-TOOL-002, which judges it on these calls), and says nothing of the session."""
    ex = rec.get(label)
    text = reply_text(ex)
    if not digits_only(text):
        raise precondition(EXACT_REPLY, ex, f"the `count` reply is {text!r}, not the agent's whole number")
    return ex, text, result_of(ex)


@check("MCP-SESS-001", scenarios=["mcp.sessions"])
def session_generated(rec: Recording):
    """Sends tools/call without `session_id`; `structuredContent.sessionId` is a string of 1 to 256 characters."""
    ex = rec.get(steps.GENERATED_1)
    result = result_of(ex)
    with on(ex):
        structured_session(result)


# The `count` each call of mcp.sessions replies under the agent's contract: what tells how the agent counts.
COUNTS = {steps.GIVEN_1: 1, steps.GIVEN_2: 2, steps.GENERATED_1: 1, steps.GENERATED_2: 2}


def counts_from_zero(rec: Recording) -> bool:
    return agent_readings.counts_from_zero((agent_readings.reply_text("mcp", ex), [COUNTS[ex.label]])
                                           for ex in rec.exchanges if ex.label in COUNTS)


def counted(text: str, n: int, zero_based: bool, what: str, *exchanges: Exchange) -> None:
    agent_readings.judge_count(agent_readings.Count(text, (n,), zero_based), what=what, exchanges=exchanges)


@check("MCP-SESS-002", scenarios=["mcp.sessions"])
def same_session_same_instance(rec: Recording):
    """Sends `count` twice with the same fresh session_id; the replies are 1 then 2."""
    zero_based = counts_from_zero(rec)
    first, one, _ = count_reply(rec, steps.GIVEN_1)
    second, two, _ = count_reply(rec, steps.GIVEN_2)
    calls = [(first, one, 1, "the first call on a fresh session_id", ()),
             (second, two, 2, f"the second call on the session_id of {first.label}", (first,))]
    return agent_readings.read_all(lambda rule: judge_all(calls, rule, exchange=lambda c: c[0]),
                                   lambda c: counted(c[1], c[2], zero_based, c[3], c[0], *c[4]))


def _given_reach_one_instance(rec: Recording) -> bool:
    """MCP-SESS-002's reading of this recording: False only when the given session_id did not reach one instance."""
    try:
        same_session_same_instance(rec)
    except Blocked:
        return True
    except Deviation:
        return False
    except NotAssessed:      # the agent's count hides it: nothing to explain by
        return True
    return True


@check("MCP-SESS-004", scenarios=["mcp.sessions"])
def generated_session_reaches_instance(rec: Recording):
    """`count` without session_id replies 1; `count` on the returned sessionId replies 2 (when even a given
    session_id does not reach one instance, MCP-SESS-002, nothing is learnt of the generated one)."""
    zero_based = counts_from_zero(rec)
    first, one, result = count_reply(rec, steps.GENERATED_1)
    try:
        structured_session(result)
    except AssertionError as exc:
        raise precondition(GENERATED, first, f"no generated session to follow: {exc}") from None
    second, two, _ = count_reply(rec, steps.GENERATED_2)

    def continued() -> None:
        try:
            counted(two, 2, zero_based, "count on the generated sessionId", second, first)
        except Blocked:
            raise
        except Deviation as exc:
            if not _given_reach_one_instance(rec):
                given = [rec.get(label) for label in (steps.GIVEN_1, steps.GIVEN_2)]
                raise precondition(AFFINITY, given, f"{exc.message}; two `count` calls on a given session_id did "
                                                    f"not reach one instance either: no session reaches one "
                                                    f"instance") from None
            raise

    readings = [(first, lambda: counted(one, 1, zero_based, "count without session_id", first)), (second, continued)]
    return agent_readings.read_all(lambda rule: judge_all(readings, rule, exchange=lambda item: item[0]),
                                   lambda item: item[1]())


@check("MCP-SESS-003", scenarios=["mcp.sessions"])
def session_echoed(rec: Recording):
    """With `arguments.session_id`, `structuredContent.sessionId` equals it."""
    def echoed(ex: Exchange) -> None:
        sid, key = structured_session(result_of(ex)), rec.facts["session"]
        assert same_json(sid, key), f"sent session_id, structuredContent.sessionId is another: {differs(key, sid)}"
    return judge_all([rec.get(steps.GIVEN_1), rec.get(steps.GIVEN_2)], echoed)
