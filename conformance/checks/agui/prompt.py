"""agui checks: prompt and result."""
from __future__ import annotations

from conformance.outcomes import NotAssessed, on
from conformance.registry import check
from conformance.vocab import agent_readings
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import (Run, answered_stream, judge_reply, judge_every, one_run, round_trips, runs,
                                             streams, text_diff)


@check("AGUI-PROMPT-001", scenarios=["agui.last_user"])
def last_user_message_is_prompt(rec):
    """Sends [user <another mapped prompt>, assistant, user <plain prompt>] and [user <plain prompt>, assistant]; both
    reply the plain reply."""
    if any(r.want.get("reply") is None for r in runs(rec)):
        raise NotAssessed("the profile's plain_reply gives no expected `reply` to compare with")

    def last_user_ran(r: Run) -> None:
        want = r.want["reply"]

        def is_reply(text: str) -> None:
            assert text == want, (f"reply {truncate(text, 160, quoted=True)}, expected {truncate(want, 160, quoted=True)} "
                                  f"(only the last user message is the prompt)")
        judge_reply(r, is_reply)
    return judge_every(runs(rec), last_user_ran, nothing="no run of a message list was recorded")


@check("AGUI-PROMPT-002", scenarios=["agui.messages"])
def whole_message_list_reaches_agent(rec):
    """Sends a history ending in `echo messages`; the reply is the canonical JSON of the list exactly as sent."""
    r = one_run(rec, steps.ECHO_MESSAGES)
    sent = rec.facts["messages"]

    def is_list_sent(text: str) -> None:
        got = agent_readings.echoed(text, "echo messages", r.ex)
        assert not agent_readings.changed("echo messages", sent, got, r.ex), (
            f"the agent received {truncate(got, 400, quoted=True)}, expected the list sent: "
            f"{truncate(sent, 400, quoted=True)}")
    with on(r.ex):
        judge_reply(r, is_list_sent)


def _result_is(r: Run, want: str) -> None:
    r.replied_to_its_prompt()
    got = r.finished().get("result")
    differs = text_diff(got, want) if isinstance(got, str) else f"got {truncate(got, 160, quoted=True)}"
    assert same_json(got, want), f"RUN_FINISHED.result differs from the reply: {differs}"


@check("AGUI-PROMPT-003", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def finished_result_is_reply(*recs):
    """Runs prompts that end normally; RUN_FINISHED.result is a string equal to the reply."""
    return judge_every(streams(*recs, kinds=["success"], keep=lambda w: w.get("reply") is not None),
                      lambda r: _result_is(r, r.want["reply"]))


@check("AGUI-PROMPT-003", scenarios=["generated.round_trip"], supplementary=True)
def round_trip_result(rec):
    """Sends generated texts as `say-json`; RUN_FINISHED.result equals each text exactly. A round trip that did not
    stream is AGUI-ORDER-006's (it owns these runs)."""
    return judge_every([(r, text) for r, text in round_trips(rec) if answered_stream(r.ex)],
                      lambda item: _result_is(*item), exchange=lambda item: item[0].ex, nothing="no round trip streamed")


@check("AGUI-PROMPT-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_outcome_success(*recs):
    """Runs prompts that end normally; RUN_FINISHED.outcome.type is `success`."""
    def success(r: Run) -> None:
        outcome = r.finished().get("outcome")
        assert isinstance(outcome, dict) and same_json(outcome.get("type"), "success"), \
            f"RUN_FINISHED.outcome is {truncate(outcome, 160, quoted=True)}, expected type 'success'"
    return judge_every(streams(*recs, kinds=["success"]), success)
