"""MCP checks over sequences: every MCP call of the chains, overlaps and long runs (conformance.vocab.sequences)
judged under the requirement its expectation names, as extra evidence beside the scripted checks (supplementary).

The readings are the scripted checks' own (`_common`). One choice the spec leaves open is read both ways: the result
that ends a resumed run holds "the reply" (`result.content`), which may be the whole reply of the run (the text from
before its questions included) or what the run added after the last question; with no text before the question,
as in the scripted pause scenarios, the two are one."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import Deviation, on, precondition
from conformance.registry import rule
from conformance.vocab import protocols as p
from conformance.vocab import sequences
from conformance.vocab.readers import request_json
from conformance.vocab.sequences import HANDSHAKE, MODERN_CALLS, NAME_OPTIONAL, Played
from conformance.vocab.text import truncate
from conformance.vocab.values import digits_only, json_or_none
from conformance.checks.mcp._common import (EXACT_REPLY, FINISHED, as_json, asked_for_form, continues_to, reply_text,
                                            response, response_last, result_of, structured_session, text_block)

# judged apart: the scenarios of MCP alone, and the one crossing protocols (--protocols may leave it out)
GROUPS = {"sequences": ["mcp.chain", "mcp.together", "mcp.slow_run"], "cross": [sequences.CROSS],
          "histories": [sequences.HISTORIES]}
FAILED_RUN = "MCP-TOOL-004"     # a failed run answers a result, not a JSON-RPC error


def result(move: Played, root: str | None = None) -> dict:
    return result_of(move.ex, root)


def reply(move: Played, root: str | None = None) -> str:
    """The text block of a call's result (the final response of a progress stream)."""
    res = result(move, root)
    try:
        return text_block(res)
    except AssertionError as exc:
        raise precondition("MCP-TOOL-001", move.ex, str(exc)) from None


def count_text(move: Played) -> str | None:
    """The `count` reply; None for a run raced by a resume that did not complete with one. Text other than the
    agent's whole number is not its reply exactly (MCP-TOOL-002)."""
    if move.expect.get("if_completed") and not completed(move):
        return None
    text = reply(move)
    if not digits_only(text):
        raise precondition(EXACT_REPLY, move.ex, f"the `count` reply is {text!r}, not the agent's whole number")
    return text


def completed(move: Played) -> bool:
    try:
        res = result_of(move.ex)
    except AssertionError:
        return False
    return res.get("isError") is not True and res.get("resultType", "complete") == "complete"


def served(move: Played) -> None:
    """Answered 200 with a JSON-RPC result (the requirement that says so is the root of every other reading);
    `initialize` agrees on 2025-11-25."""
    rule_id = next(r for a, r in move.expect["judged"] if a == "served")
    if rule_id in (MODERN_CALLS, NAME_OPTIONAL):    # a result or a JSON-RPC error: the run's other readings say which
        response(move.ex, rule_id)
        return
    res = result(move, rule_id)
    if rule_id == HANDSHAKE:
        with on(move.ex):
            assert res.get("protocolVersion") == p.MCP_LEGACY_VERSION, \
                f"initialize agreed on {as_json(res.get('protocolVersion'))}, expected \"{p.MCP_LEGACY_VERSION}\""


def key_echoed(move: Played) -> None:
    sent = ((request_json(move.ex) or {}).get("params") or {}).get("arguments", {}).get("session_id")
    with on(move.ex):
        got = structured_session(result(move))
        assert got == sent, f"{move.what()}: sent session_id {sent!r}, `structuredContent.sessionId` is {got!r}"


def asks(move: Played, question: str) -> None:
    """The run paused on `question`: an eliciting client is asked for a form, any other client gets the question as
    text."""
    if "elicit" in move.noted["move"]["form"].split("+"):
        with on(move.ex):
            assert asked_for_form(move.ex), \
                f"{move.what()}: expected a request for a form (the run asks {question!r}), got {truncate(result(move))}"
        return
    text = p.mcp_text(result(move))
    with on(move.ex):
        assert question in text, f"{move.what()}: the result text {truncate(text, quoted=True)} lacks the question " \
                                 f"{question!r}"


def paused_on_question(move: Played) -> None:
    asks(move, move.expect["question"])


def resumed(move: Played) -> None:
    """The paused run continued: it asks its next question, or it finishes with the text it added (alone, or after
    the text from before its questions), `resultType` complete."""
    expect = move.expect
    if expect["then"] == "pause":
        asks(move, expect["question"])
        return
    res = result(move)
    with on(move.ex):
        assert res.get("resultType") != "input_required", \
            f"{move.what()}: the server asked again instead of continuing the paused run: {truncate(res)}"
    text = reply(move)
    if not sequences.resumed_as_expected(move, text, whole=True):
        continues_to(move.ex, text, expect["reply"])
    if res.get("resultType") != "complete":
        raise precondition(FINISHED, move.ex, f"`resultType` is {as_json(res.get('resultType'))}, expected "
                                              f"\"complete\"")


def generated_key_returned(move: Played) -> None:
    """The resume that first sent back a key the service generated in the call that paused found the paused run;
    refused while resumes of keys the suite gave continued, the key names no run (`sequences.given_resumes_continued`).
    Otherwise a refusal is the resume's own (what the answer broke blocks this reading)."""
    if not _refused(move):
        return
    if sequences.given_resumes_continued(move):
        raise Deviation(f"{move.what()}: expected the paused run to continue, got {move.ex.status}: "
                        f"{truncate(move.ex.body.decode('utf-8', 'replace'), 300)} ({sequences.RETURNED_KEY})",
                        [move.ex])
    result(move)


def _refused(move: Played) -> bool:
    """Answered with an HTTP error, or a JSON body holding a JSON-RPC error."""
    body = json_or_none(move.ex.body) if move.ex.stream is None else None
    return move.ex.status is not None and (move.ex.status != 200 or (isinstance(body, dict) and "error" in body))


def reply_exact(move: Played) -> None:
    """A long run's reply, exactly; over a progress stream, the final response holds the same result."""
    res = result(move)
    text = reply(move)
    with on(move.ex):
        assert text == move.expect["reply"], f"{move.what()}: expected {move.expect['reply']!r}, got " \
                                             f"{truncate(text, quoted=True)}"
        assert res.get("resultType", "complete") == "complete", f"`resultType` is {as_json(res.get('resultType'))}"


def failed(move: Played) -> None:
    """A failed run is a tool result with `isError` true, not a JSON-RPC error."""
    res = result_of(move.ex, error_root=FAILED_RUN)
    with on(move.ex):
        assert res.get("isError") is True, f"{move.what()}: the run failed, `isError` is {as_json(res.get('isError'))}"


JUDGES = {"served": served, "echo": key_echoed, "pause": paused_on_question, "resume": resumed,
          "returned": generated_key_returned,
          "reply": reply_exact, "stream": lambda move: response_last(move.ex), "failed": failed}


def moves_rule(requirement: str):
    def fn(*recs: Recording) -> str | None:
        return sequences.judge_moves(recs, "mcp", requirement, JUDGES, count_text)
    return fn


for _args in sequences.rules_over_moves("mcp", GROUPS, moves_rule):
    rule(**_args)
