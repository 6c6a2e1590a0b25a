"""agui checks: sessions."""
from __future__ import annotations

from typing import Any

from conformance.vocab.constants import MAX_KEY
from conformance.engine import Recording
from conformance.outcomes import Blocked, Deviation, NotAssessed, judge_all, on, precondition
from conformance.registry import Step, check
from conformance.vocab import agent_readings
from conformance.vocab import protocols as p
from conformance.vocab.readers import got
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.values import caused, digits_only, length_cause
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import Run, judge_every, judge_reply, one_run, one_run_of, runs

GENERATED_THREAD = "AGUI-ID-005"     # without threadId, RUN_STARTED.threadId is a string of 1 to 256 characters
SAME_KEY_SAME_INSTANCE = "AGUI-SESS-002"
INVOKE_RESULT = "INV-RES-001"        # a plain invoke answers 200 with the invoke result
MCP_TEXT_RESULT = "MCP-TOOL-001"     # a tools/call answers 200 with one text block
MCP_EXACT_REPLY = "MCP-TOOL-002"     # its text is exactly the agent's reply


# The `count` each run of agui.session replies under the agent's contract: what tells how the agent counts.
COUNTS = {steps.FRESH_1: "1", steps.FRESH_2: "2", steps.GENERATED_1: "1", steps.GENERATED_2: "2",
          steps.GENERATED_OTHER: "1"}


def counts(r: Run, expected: str, zero_based: bool = False) -> None:
    """The `count` run replied `expected`, or what the agent's contract explains (`agent_readings.judge_count`)."""
    judge_reply(r, lambda text: agent_readings.judge_count(agent_readings.Count(text, (int(expected),), zero_based),
                                                           exchanges=(r.ex,)))


def counts_from_zero(rec: Recording, wanted: dict[Step, str]) -> bool:
    return agent_readings.counts_from_zero((agent_readings.reply_text("agui", ex), [int(n)])
                                           for label, n in wanted.items() for ex in rec.exchanges if ex.label == label)


def _replies(rec: Recording, wanted: dict[Step, str]) -> str | None:
    zero_based = counts_from_zero(rec, COUNTS)
    runs_ = [(one_run(rec, label), reply) for label, reply in wanted.items()]
    return agent_readings.read_all(lambda rule: judge_every(runs_, rule, exchange=lambda item: item[0].ex),
                                   lambda item: counts(*item, zero_based))


@check("AGUI-SESS-001", scenarios=["agui.session"])
def generated_thread_continues(session):
    """Runs `count` without threadId (reply 1), then with the threadId RUN_STARTED gave it (reply 2)."""
    first = one_run(session, steps.GENERATED_1)
    thread = first.started().get("threadId")
    if not isinstance(thread, str) or not 1 <= len(thread) <= 256:
        raise precondition(GENERATED_THREAD, first.ex, f"sent no threadId; RUN_STARTED.threadId "
                                                       f"{truncate(thread, 60, quoted=True)} is no session key to continue")
    try:
        return _replies(session, {steps.GENERATED_1: "1", steps.GENERATED_2: "2"})
    except Deviation as exc:
        if exc.exchanges[:1] != (session.get(steps.GENERATED_2),) or isinstance(exc, Blocked):
            raise
        fresh = _fresh_key_lost(session)
        if fresh is None:
            raise
        raise precondition(SAME_KEY_SAME_INSTANCE, (exc.exchanges[0], fresh.ex), f"{exc.message}; the fresh threadId "
                           f"did not reach its instance again either ({fresh.label} replied "
                           f"{truncate(fresh.text(), 60, quoted=True)}, expected '2')") from None


def _fresh_key_lost(session: Recording) -> Run | None:
    """The second run on the fresh threadId when it did not reach the first one's instance (AGUI-SESS-002's own
    deviation, in this very recording), or None. A generated threadId that does not continue either is then not a
    deviation of its own: no threadId does."""
    try:
        fresh = one_run(session, steps.FRESH_2)
        counts(fresh, "2", counts_from_zero(session, COUNTS))
    except Blocked:                          # not read: nothing to explain it by
        return None
    except Deviation as exc:
        return fresh if exc.exchanges[:1] == (fresh.ex,) else None
    except (AssertionError, NotAssessed):    # not read, or the agent's: nothing to explain it by
        return None
    return None


@check("AGUI-SESS-002", scenarios=["agui.session"])
def same_thread_same_instance(session):
    """Runs `count` twice with one fresh threadId; the replies are 1 then 2."""
    return _replies(session, {steps.FRESH_1: "1", steps.FRESH_2: "2"})


@check("GEN-SESS-002", scenarios=["agui.session"])
def fresh_key_starts_at_one(session):
    """Runs `count` on a fresh AG-UI threadId and on two generated ones; each replies 1 (a new instance)."""
    return _replies(session, {steps.FRESH_1: "1", steps.GENERATED_1: "1", steps.GENERATED_OTHER: "1"})


def _invoke_count(ex: Exchange) -> Any:
    if ex.status != 200:
        raise precondition(INVOKE_RESULT, ex, f"expected 200 with the invoke result, got {got(ex)}")
    try:
        body = ex.json()
    except AssertionError as exc:
        raise precondition(INVOKE_RESULT, ex, str(exc)) from None
    if not isinstance(body, dict) or not isinstance(body.get("result"), str):
        raise precondition(INVOKE_RESULT, ex, f"the invoke result is not an object with a string `result`: {got(ex)}")
    return body["result"].strip()    # as invoke's own count checks read it; whitespace around it is INV-RES-003's


def _mcp_count(ex: Exchange) -> Any:
    try:
        result = p.mcp_response(ex).get("result")
    except AssertionError as exc:
        raise precondition(MCP_TEXT_RESULT, ex, f"{exc}: {got(ex)}") from None
    if ex.status != 200 or not isinstance(result, dict) or not isinstance(result.get("content"), list):
        raise precondition(MCP_TEXT_RESULT, ex, f"expected 200 with a tools/call result holding `content`, got {got(ex)}")
    text = p.mcp_text(result)
    if not digits_only(text):     # as MCP's own count checks read it: digits alone, else MCP-TOOL-002's deviation
        raise precondition(MCP_EXACT_REPLY, ex, f"the `count` reply is {text!r}, not the agent's whole number")
    return text


@check("GEN-SESS-001", scenarios=["agui.cross_session"])
def one_key_across_protocols(rec):
    """Runs `count` with one fresh key as invoke sessionId, AG-UI threadId, MCP session_id; replies 1, 2, 3."""
    if rec.facts.get("no_mcp"):
        raise NotAssessed(rec.facts["no_mcp"])
    invoke, mcp = rec.get(steps.VIA_INVOKE), rec.get(steps.VIA_MCP)
    agui = one_run_of(rec, steps.VIA_AGUI, "2")
    key = rec.facts["key"]
    got_invoke = _invoke_count(invoke)
    zero_based = agent_readings.counts_from_zero([(got_invoke, [1]), (agent_readings.reply_text("agui", agui.ex), [2]),
                                                  (agent_readings.reply_text("mcp", mcp), [3])])

    def count(text: str, n: int, what: str, exchanges: tuple[Exchange, ...]) -> None:
        agent_readings.judge_count(agent_readings.Count(text, (n,), zero_based), what=what, exchanges=exchanges)

    def via_agui() -> None:
        try:
            judge_reply(agui, lambda text: count(text, 2, f"threadId {key!r} after invoke's 1", (agui.ex, invoke)))
        except Deviation:
            raise
        except AssertionError as exc:
            raise Deviation(str(exc), (agui.ex, invoke)) from None

    readings = [(invoke, lambda: count(got_invoke, 1, f"the fresh key {key!r} as sessionId", (invoke,))),
                (agui.ex, via_agui),
                (mcp, lambda: count(_mcp_count(mcp), 3, f"session_id {key!r} after invoke's 1 and AG-UI's 2",
                                    (mcp, invoke, agui.ex)))]
    return agent_readings.read_all(lambda rule: judge_all(readings, rule, exchange=lambda item: item[0]),
                                   lambda item: item[1]())


@check("AGUI-SESS-003", scenarios=["agui.key_lengths"])
def thread_id_bounds_accepted(rec):
    """Runs the plain prompt with threadIds of 1 and 256 characters; both stream and end with RUN_FINISHED."""
    def finishes(r: Run) -> None:
        with caused(length_cause(r.want.get("thread"), MAX_KEY, accepted=False) if _refused(r) else None):
            r.finished()
    return judge_every(runs(rec), finishes, nothing="no run of a bound threadId was recorded")


def _refused(r: Run) -> bool:
    """The run was turned away: a 4xx, or a stream that ended with RUN_ERROR (what a key's length may explain)."""
    if r.ex.status is not None and 400 <= r.ex.status < 500:
        return True
    try:
        return r.terminal()["type"] == "RUN_ERROR"
    except AssertionError:
        return False
