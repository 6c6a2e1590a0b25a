"""MCP checks: tools/call results."""
from __future__ import annotations

from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, judge_all, on
from conformance.registry import SCENARIOS, check, rule
from conformance.vocab.values import digits_only
from conformance.vocab.steps import inputs as input_steps, mcp as steps
from conformance.vocab.readers import got
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import (AFFINITY_SCENARIOS, CONTINUED, LEGACY_CALLS, MODERN, RESUMED, answered,
                                            as_json, finished, labels, reply_text, response, result_of, resumed_with,
                                            round_trip_runs, text_block)


CALLS = (steps.CALL, steps.CALL_TOOL)   # the plain-reply and tool-call prompts, both with Mcp-Name
FAILURES = (steps.FAIL_AFTER, steps.FAIL_BEFORE)
FAILED_RUN = "MCP-TOOL-004"             # a failed run answers a result, not a JSON-RPC error


def calls(rec: Recording) -> list[Exchange]:
    return [ex for _, ex in labels(rec, *CALLS)]


@check("MCP-TOOL-001", scenarios=MODERN)
def one_text_block(rec: Recording):
    """Sends tools/call without a progress token; 200, `result.content` is exactly one `{type: text, text}` block."""
    return judge_all(calls(rec), reply_text)


# The same rule on every other call whose reply a check reads (`reply_text`): it is the root of those readings.
REPLIES_READ = {   # scenario: (the calls whose reply is read, the requirement that says they are served, in words)
    "mcp.legacy": (lambda rec: (steps.CALL,), LEGACY_CALLS, "the 2025-11-25 call"),
    "mcp.sessions": (lambda rec: steps.MCP_SESSIONS, None, "the `count` calls"),
}


def replies_read(scenario: str):
    read, root, _ = REPLIES_READ[scenario]

    def fn(rec: Recording):
        return judge_all([ex for ex in rec.exchanges if ex.label in read(rec)], lambda ex: reply_text(ex, root),
                         nothing=f"{rec.scenario} recorded no tools/call")
    return fn


rule(replies_read, over=REPLIES_READ, requirements="MCP-TOOL-001", scenarios=lambda scn: [scn],
     name=lambda scn: f"one_text_block_{scn.split('.')[1]}", supplementary=lambda scn: scn in AFFINITY_SCENARIOS,
     doc=lambda scn: f"The result of {REPLIES_READ[scn][2]} in {scn} holds exactly one `{{type: text, text}}` block.")

# A paused run's continuation is a finished run's result too: MCP-TOOL-001 and MCP-TOOL-003 judge it (and are the
# roots of MCP-PAUSE-002/004's readings of its text and resultType); a continuation that pauses again is no
# finished run, and is MCP-PAUSE-002/004's alone.
CONTINUATIONS = {   # scenario: (the call the run continued on, the requirement that says it continues, in words)
    "mcp.pause_text": (resumed_with, RESUMED, "the resume of a client that cannot elicit"),
    "mcp.pause_elicit": (lambda rec: steps.RETRY, CONTINUED, "the retry of a client that can elicit"),
}


def continued(scenario: str, judge: Callable[[Exchange, str], Any]):
    pick, root, _ = CONTINUATIONS[scenario]

    def fn(rec: Recording):
        ex = rec.get(pick(rec))
        finished(ex, root)
        with on(ex):
            judge(ex, root)
    return fn


def is_complete(ex: Exchange, root: str) -> None:
    rt = finished(ex, root).get("resultType")
    assert rt == "complete", f"`resultType` is {as_json(rt)}, expected \"complete\""


rule(lambda scn: continued(scn, reply_text), over=CONTINUATIONS, requirements="MCP-TOOL-001",
     scenarios=lambda scn: [scn], name=lambda scn: f"one_text_block_{scn.split('.')[1]}",
     doc=lambda scn: f"The result of {CONTINUATIONS[scn][2]} holds exactly one `{{type: text, text}}` block.")
rule(lambda scn: continued(scn, is_complete), over=CONTINUATIONS, requirements="MCP-TOOL-003",
     scenarios=lambda scn: [scn], name=lambda scn: f"result_type_complete_{scn.split('.')[1]}",
     doc=lambda scn: f"The result of {CONTINUATIONS[scn][2]}, when the run finished, has `resultType` \"complete\".")


def replies_are(labels_: tuple[str, ...], root: str | None = None):
    """MCP-TOOL-002 over a scenario's calls whose expected reply the profile gives (`facts["replies"]`)."""
    def fn(rec: Recording):
        replies = rec.facts.get("replies", {})

        def is_reply(ex: Exchange) -> None:
            if replies.get(ex.label) is None:
                raise NotAssessed("the profile gives no expected reply for these prompts")
            text = reply_text(ex, root)
            assert text == replies[ex.label], f"expected {replies[ex.label]!r}, got {truncate(text, quoted=True)}"
        return judge_all([ex for ex in rec.exchanges if ex.label in labels_], is_reply)
    return fn


@check("MCP-TOOL-002", scenarios=MODERN)
def text_is_reply(rec: Recording):
    """The text block of the plain-reply and tool-call prompts equals their reply exactly."""
    return replies_are(CALLS)(rec)


@check("MCP-TOOL-002", scenarios=["mcp.legacy"])
def legacy_text_is_reply(rec: Recording):
    """The text block of the 2025-11-25 call equals the plain reply exactly (MCP-VER-006 reads it through this)."""
    return replies_are((steps.CALL,), LEGACY_CALLS)(rec)


@check("MCP-TOOL-002", scenarios=["mcp.sessions"], supplementary=True)
def count_text_is_reply(rec: Recording):
    """The text block of each `count` call is the agent's reply exactly: a whole number in digits and nothing else
    (which number is the sessions' business)."""
    def whole_number(ex: Exchange) -> None:
        text = reply_text(ex)
        assert digits_only(text), f"the `count` reply is {text!r}, expected the agent's whole number"
    return judge_all([ex for ex in rec.exchanges if ex.label in steps.MCP_SESSIONS], whole_number)


if "generated.round_trip" in SCENARIOS:  # the lead's shared generated-text scenario, when present
    ROUND_TRIP_RESULT = "MCP-TOOL-002"   # a round trip's call that is not answered with a result: this check's

    def round_trip_reply(ex: Exchange) -> str:
        answered(ex)                                  # not HTTP 200: the call was not served, MCP-VER-001's
        return reply_text(ex, ROUND_TRIP_RESULT)      # not one text block: MCP-TOOL-001's

    @check("MCP-TOOL-002", scenarios=["generated.round_trip"], supplementary=True)
    def generated_text_round_trip(rec: Recording):
        """Sends generated texts as `say-json` prompts over MCP; each text block equals its text exactly."""
        texts = rec.facts.get("texts") or []

        def round_trip(run: tuple[int, Exchange]) -> None:
            i, ex = run
            text = round_trip_reply(ex)
            sent = texts[i] if 0 <= i < len(texts) else None
            assert text == sent, f"sent {truncate(sent, 120, quoted=True)}, got {truncate(text, 120, quoted=True)}"
        return judge_all(round_trip_runs(rec), round_trip, exchange=lambda run: run[1],
                         nothing="the generated round trip sent no tools/call over MCP")

    @check("MCP-TOOL-001", scenarios=["generated.round_trip"], supplementary=True)
    def one_text_block_round_trip(rec: Recording):
        """The result of each generated round trip call over MCP holds exactly one `{type: text, text}` block."""
        return judge_all([ex for _, ex in round_trip_runs(rec)], round_trip_reply,
                         nothing="the generated round trip sent no tools/call over MCP")


@check("MCP-TOOL-003", scenarios=MODERN)
def result_type_complete(rec: Recording):
    """A finished run's result has `resultType` "complete"."""
    def complete(ex: Exchange) -> None:
        rt = result_of(ex).get("resultType")
        assert rt == "complete", f"`resultType` is {as_json(rt)}, expected \"complete\""
    return judge_all(calls(rec), complete)


def not_error(ex: Exchange, run: str = "finished") -> None:
    """a run that ends normally (or pauses: `run`) has `isError` absent or false."""
    flag = result_of(ex).get("isError", False)
    assert flag is False, f"a {run} run has `isError` {as_json(flag)}: `isError` is `true` when the run fails"


@check("MCP-TOOL-005", scenarios=MODERN)
def success_is_not_error(rec: Recording):
    """A run that ends normally has `isError` absent or false."""
    return judge_all(calls(rec), not_error)


@check("MCP-TOOL-004", scenarios=["mcp.failures"])
def failure_is_tool_result(rec: Recording):
    """Sends the two failing prompts; each answers 200 with a `result` (no JSON-RPC error) whose `isError` is true
    (an answer that is not HTTP 200 with a JSON-RPC response is MCP-VER-001's, judged on these calls too)."""
    def failed_run(ex: Exchange) -> None:
        result = result_of(ex, error_root=FAILED_RUN)
        assert result.get("isError") is True, f"`isError` is {as_json(result.get('isError'))}, expected true"
    return judge_all([ex for _, ex in labels(rec, *FAILURES)], failed_run)


@check("MCP-TOOL-006", scenarios=["mcp.failures"])
def failure_has_content(rec: Recording):
    """A failed run's result still has `content` with one text block (upstream CallToolResult needs it)."""
    ex = rec.get(steps.FAIL_AFTER)
    result = result_of(ex, error_root=FAILED_RUN)
    with on(ex):
        text_block(result)


NO_TOKEN_FORMS = {   # media type: the form MCP's Streamable HTTP gives it (the server chooses, the client reads both)
    "application/json": "one application/json response",
    "text/event-stream": "an event stream ending with the response",
}


@check("MCP-PROG-011", scenarios=MODERN)
def no_token_one_json_body(rec: Recording):
    """Sends tools/call without a progress token (Accept lists both types); one application/json response or an
    event stream ending with the response, as the server chooses (the form is noted)."""
    ex = rec.get(steps.CALL)
    response(ex)    # a stream that does not end with the response was not served: MCP-VER-001's
    with on(ex):
        return f"{in_two_forms(ex)} (the server's choice)"


def in_two_forms(ex: Exchange, target: Any = None) -> str:
    """The call was answered in one of MCP's two forms (`NO_TOKEN_FORMS`): which one."""
    assert ex.content_type in NO_TOKEN_FORMS, \
        f"expected application/json or text/event-stream (MCP's two forms), got {got(ex)}"
    return f"answered as {NO_TOKEN_FORMS[ex.content_type]}"


@check("MCP-SESS-005", scenarios=["mcp.input_forms"])
def stateless_input_forms(rec: Recording):
    """Sends tools/list with no initialize, with a falsy JSON-RPC id (0, "") and with Content-Type in other
    legitimate forms (input classes jsonrpc-id:falsy, content-type:*); each answers with a result."""
    return judge_all([ex for family in (input_steps.ID_FORMS, input_steps.CONTENT_TYPE_FORMS)
                      for ex in rec.labelled(family)], result_of)


@check("MCP-SESS-005", scenarios=MODERN)
def stateless(rec: Recording):
    """Sends tools/list and tools/call with no prior initialize and no Mcp-Session-Id; both answer with results
    (the tools/call is MCP-VER-001's: a call it blocks is left out here)."""
    return judge_all([rec.get(steps.LIST), rec.get(steps.CALL)], result_of)
