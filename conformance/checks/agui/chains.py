"""agui checks over sequences: every AG-UI run of the chains, overlaps and long runs (conformance.vocab.sequences)
judged under the requirement its expectation names, as extra evidence beside the scripted checks (supplementary).

Each run is also listed in `facts["runs"]`, so the rules the scripted checks apply to every stream (framing, order,
ids, lifecycles) apply to these runs too: the same check functions, registered again over the sequence scenarios."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import Blocked, Deviation, on, precondition
from conformance.registry import rule
from conformance.vocab import sequences
from conformance.vocab.sequences import Played
from conformance.vocab.text import truncate
from conformance.vocab.values import digits_only, same_json
from conformance.checks.agui._common import (DELTAS_CARRY_REPLY, RESUME_CONTINUES, RESUME_WITHOUT_MESSAGES, STREAMS,
                                             THREAD_ECHOED, Run, answered_stream, ends_with_error, judge_reply,
                                             one_run_of, register_again, streamed_by)

# judged apart: the scenarios of AG-UI alone, and the one crossing protocols (--protocols may leave it out)
GROUPS = {"sequences": ["agui.chain", "agui.together", "agui.slow_run"], "cross": [sequences.CROSS],
          "histories": [sequences.HISTORIES]}
# The rules over every stream, and the id rules of ids.py (they read the threadId / runId a run sent or left out),
# on the runs of the AG-UI scenarios (the chains' overlaps call a tool and take steps too: the lifecycles read them).
ID_CHECKS = ("agui.thread_id_echoed_on_start", "agui.run_id_echoed_on_start", "agui.run_id_echoed_on_finish",
             "agui.generated_thread_ids", "agui.generated_run_id")


def run_of(move: Played) -> Run:
    want = move.rec.facts.get("runs", {}).get(move.ex.label)
    return Run(move.rec, move.ex.label, move.ex, want) if want else one_run_of(move.rec, move.ex.label, "")


def count_text(move: Played) -> str | None:
    """The `count` reply of a run that ends normally (the content deltas; RUN_FINISHED.result holding it while the
    deltas lost it is AGUI-ORDER-006's deviation); None for a run raced by a resume that did not end normally."""
    r = run_of(move)
    if move.expect.get("if_completed") and not (answered_stream(r.ex) and r.of_type("RUN_FINISHED")):
        return None
    if move.expect["kind"] in ("failed", "pause"):   # the text before the failure or the question: the count first
        return sequences.count_part(move, r.text())
    result = r.finished().get("result")
    text = r.text()
    if not digits_only(text) and isinstance(result, str) and digits_only(result):
        raise precondition(DELTAS_CARRY_REPLY, r.ex, f"the content deltas join to {truncate(text, 60, quoted=True)} "
                                                     f"while RUN_FINISHED.result is {result!r}")
    return text


def paused_run(move: Played) -> None:
    """The run ends with RUN_FINISHED whose outcome.type is `interrupt`, and no RUN_ERROR."""
    r = run_of(move)
    with on(r.ex):
        end = r.terminal()
        outcome = end.get("outcome")
        if not (isinstance(outcome, dict) and outcome.get("type") == "interrupt"):
            r.replied_to_its_prompt(paused=True)    # a run that replied to another message of its history
        assert end["type"] == "RUN_FINISHED" and not r.of_type("RUN_ERROR") and isinstance(outcome, dict) \
            and outcome.get("type") == "interrupt", \
            f"{move.what()}: expected RUN_FINISHED with outcome.type 'interrupt', got " \
            f"{truncate(end, 300, quoted=True)} (events {r.types()})"


def resumed_stream(move: Played) -> Run:
    """The resumed run's stream. Refused with `invalid_request`: a resume without messages was not taken as one
    (AGUI-INT-003); any other answer but a stream: the paused run did not continue (AGUI-INT-002)."""
    ex = move.ex
    if answered_stream(ex):
        return run_of(move)
    if streamed_by(ex) == RESUME_WITHOUT_MESSAGES:
        raise precondition(RESUME_WITHOUT_MESSAGES, ex, f"{move.what()}: a request with `resume` and no `messages` "
                                                        f"was refused with invalid_request")
    raise precondition(RESUME_CONTINUES, ex, f"{move.what()}: expected the paused run to continue (200 event stream), "
                                             f"got {ex.status}: {truncate(ex.body.decode('utf-8', 'replace'), 300)}")


def generated_key_returned(move: Played) -> None:
    """The resume that first sent back a key the service generated in the call that paused found the paused run;
    refused while resumes of keys the suite gave continued, the key names no run (`sequences.given_resumes_continued`).
    Otherwise a refusal is the resume's own (`resumed_stream` names AGUI-INT-002 or AGUI-INT-003, which block this
    reading)."""
    try:
        resumed_stream(move)
    except Blocked as exc:
        if exc.root != RESUME_CONTINUES or not sequences.given_resumes_continued(move):
            raise
        raise Deviation(f"{exc.message} ({sequences.RETURNED_KEY})", [move.ex]) from None


def resume_continues(move: Played) -> None:
    """The paused run continues with the answer: its text, then its next pause or its end."""
    r = resumed_stream(move)
    want = "interrupt" if move.expect["then"] == "pause" else "success"
    with on(r.ex):
        got = r.outcome_type()
        assert got == want, f"{move.what()}: the resumed run ended with outcome.type {got!r}, expected {want!r} " \
                            f"({truncate(r.finished(), 200, quoted=True)})"
    judge_reply(r, lambda text: _is(text, move))


def _is(text: str, move: Played) -> None:
    want = move.expect["reply"]
    assert sequences.resumed_as_expected(move, text), \
        f"{move.what()}: the resumed run replied {truncate(text, 160, quoted=True)}, expected " \
        f"{truncate(want, 160, quoted=True)} (the answer, then the rest of the script)"


def thread_kept(move: Played) -> None:
    r = resumed_stream(move)
    got = r.started().get("threadId")
    if not same_json(got, move.key):
        raise precondition(THREAD_ECHOED, r.ex, f"the resume was sent on threadId {move.key!r}, RUN_STARTED.threadId "
                                                f"is {truncate(got, 80, quoted=True)}")


def reply_exact(move: Played) -> None:
    r = run_of(move)
    r.finished()
    with on(r.ex):
        assert r.text() == move.expect["reply"], \
            f"{move.what()}: the deltas joined are {truncate(r.text(), 160, quoted=True)}, expected " \
            f"{truncate(move.expect['reply'], 160, quoted=True)}"


def failed(move: Played) -> None:
    """The run failed as the spec says: RUN_ERROR last, no RUN_FINISHED, after the text sent before the failure."""
    r = run_of(move)
    with on(r.ex):
        ends_with_error(r)
        assert sequences.before_failure(move, r.text()), \
            f"{move.what()}: the deltas before RUN_ERROR join to {truncate(r.text(), 160, quoted=True)}, expected " \
            f"{truncate(move.expect['reply'], 160, quoted=True)}"


JUDGES = {"pause": paused_run, "resume": resume_continues, "thread": thread_kept, "reply": reply_exact,
          "returned": generated_key_returned,
          "messages": lambda move: sequences.messages_reached(move, run_of(move).text()),
          "failed": failed}


def moves_rule(requirement: str):
    def fn(*recs: Recording) -> str | None:
        return sequences.judge_moves(recs, "agui", requirement, JUDGES, count_text)
    return fn


for _args in sequences.rules_over_moves("agui", GROUPS, moves_rule):
    rule(**_args)

register_again(lambda c: list(c.scenarios) == STREAMS or c.id in ID_CHECKS, GROUPS["sequences"], "sequences",
               "The runs of the chains")
register_again(lambda c: list(c.scenarios) == STREAMS or c.id in ID_CHECKS,   # its runs call tools and take steps
               GROUPS["histories"], "histories", "The runs of the history")
