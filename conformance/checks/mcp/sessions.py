"""MCP checks: sessions."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import Deviation, judge_all, on, precondition
from conformance.registry import check
from conformance.vocab.values import digits_only
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


@check("MCP-SESS-002", scenarios=["mcp.sessions"])
def same_session_same_instance(rec: Recording):
    """Sends `count` twice with the same fresh session_id; the replies are 1 then 2."""
    first, one, _ = count_reply(rec, steps.GIVEN_1)
    second, two, _ = count_reply(rec, steps.GIVEN_2)
    if [one, two] != ["1", "2"]:
        wrong_first = (first, second) if one != "1" else (second, first)
        raise Deviation(f"two `count` calls on one session_id replied {[one, two]}, expected ['1', '2']", wrong_first)


@check("MCP-SESS-003", scenarios=["mcp.sessions"])
def session_echoed(rec: Recording):
    """With `arguments.session_id`, `structuredContent.sessionId` equals it."""
    def echoed(ex: Exchange) -> None:
        sid = structured_session(result_of(ex))
        assert sid == rec.facts["session"], f"sessionId {sid!r}, expected {rec.facts['session']!r}"
    return judge_all([rec.get(steps.GIVEN_1), rec.get(steps.GIVEN_2)], echoed)


@check("MCP-SESS-004", scenarios=["mcp.sessions"])
def generated_session_reaches_instance(rec: Recording):
    """`count` without session_id replies 1; `count` on the returned sessionId replies 2 (when even a given
    session_id does not reach one instance, MCP-SESS-002, nothing is learnt of the generated one)."""
    first, one, result = count_reply(rec, steps.GENERATED_1)
    try:
        structured_session(result)
    except AssertionError as exc:
        raise precondition(GENERATED, first, f"no generated session to follow: {exc}") from None
    with on(first):
        assert one == "1", f"count without session_id replied {one!r}, expected '1'"
    second, two, _ = count_reply(rec, steps.GENERATED_2)
    if two != "2":
        given = [count_reply(rec, label) for label in (steps.GIVEN_1, steps.GIVEN_2)]
        replies = [text for _, text, _ in given]
        if replies != ["1", "2"]:
            raise precondition(AFFINITY, [ex for ex, _, _ in given], f"two `count` calls on a given session_id "
                                                                     f"replied {replies} too: no session reaches "
                                                                     f"one instance")
        raise Deviation(f"count on the generated sessionId replied {two!r}, expected '2'", (second, first))
