"""agui checks: prompt and result."""
from __future__ import annotations

import json

from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import _round_trips, fail_all, need_runs, one_run, runs, streams, text_diff


@check("AGUI-PROMPT-001", scenarios=["agui.last_user"])
def last_user_message_is_prompt(rec):
    """Sends [user `say first`, assistant, user `say conformance`] and [user `say conformance`, assistant]; replies `conformance`."""
    if any(r.want.get("reply") is None for r in runs(rec)):
        raise NotAssessed("the profile's plain_reply gives no expected `reply` to compare with")
    fail_all([f"{r.where}: reply {truncate(r.reply(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)} (only the last user "
              f"message is the prompt)" for r in need_runs(runs(rec), "a message list") if r.reply() != r.want["reply"]])


@check("AGUI-PROMPT-002", scenarios=["agui.messages"])
def whole_message_list_reaches_agent(rec):
    """Sends a history ending in `echo messages`; the reply is the canonical JSON of the list exactly as sent."""
    r = one_run(rec, steps.ECHO_MESSAGES)
    try:
        got = json.loads(r.text())
    except ValueError:
        raise AssertionError(f"{r.where}: `echo messages` replied {truncate(r.text(), 160, quoted=True)}, not JSON") from None
    assert got == rec.facts["messages"], (f"{r.where}: the agent received {truncate(got, 400, quoted=True)}, expected the list sent: "
                                          f"{truncate(rec.facts['messages'], 400, quoted=True)}")


@check("AGUI-PROMPT-003", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def finished_result_is_reply(*recs):
    """Runs prompts that end normally; RUN_FINISHED.result is a string equal to the reply."""
    checked = streams(*recs, kinds=["success"], keep=lambda w: w.get("reply") is not None)
    fail_all([f"{r.where}: RUN_FINISHED.result is {truncate(r.first('RUN_FINISHED').get('result'), 160, quoted=True)}, expected "
              f"{truncate(r.want['reply'], 160, quoted=True)}" for r in checked if r.first("RUN_FINISHED").get("result") != r.want["reply"]])


@check("AGUI-PROMPT-003", scenarios=["generated.round_trip"])
def round_trip_result(rec):
    """Sends generated texts as `say-json`; RUN_FINISHED.result equals each text exactly."""
    problems = []
    for r, text in _round_trips(rec):
        got = r.first("RUN_FINISHED").get("result")
        if got != text:
            problems.append(f"{r.where}: RUN_FINISHED.result differs from the generated text: "
                            + (text_diff(got, text) if isinstance(got, str) else f"got {truncate(got, 160, quoted=True)}"))
    fail_all(problems)


@check("AGUI-PROMPT-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_outcome_success(*recs):
    """Runs prompts that end normally; RUN_FINISHED.outcome.type is `success`."""
    problems = []
    for r in streams(*recs, kinds=["success"]):
        outcome = r.first("RUN_FINISHED").get("outcome")
        if not isinstance(outcome, dict) or outcome.get("type") != "success":
            problems.append(f"{r.where}: RUN_FINISHED.outcome is {truncate(outcome, 160, quoted=True)}, expected type 'success'")
    fail_all(problems)
