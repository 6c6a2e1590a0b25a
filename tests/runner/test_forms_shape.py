"""What rides on the runs every scenario sends (`forms.shape`): a step and a tool call around a reply, an AG-UI
conversation around the prompt. The reply read off the prompt stays the same, a prompt with timing or events of its
own, echo mode and a scenario's first request go as built, and `unshaped` gives back what the scenario built."""
from __future__ import annotations

import pytest

from conformance.vocab import forms, replies
from conformance.vocab.protocols import agui_input, invoke_body

FORM = dict(forms.AS_BUILT)     # what else a body may carry, as built: only what rides on the prompt changes


def shaped(operation: str, body: dict, request: str | None) -> tuple[dict, dict]:
    return forms.shape(FORM, operation, body, replies_read=True, request=request)


def request_drawing(what: str, value: str) -> str:
    return next(f"7|s|{n}" for n in range(1, 500) if forms._drawn(f"7|s|{n}", what, {
        "agent-events": tuple(forms.AGENT_EVENTS), "agui-history": forms.AGUI_HISTORIES}[what]) == value)


@pytest.mark.parametrize("events", ["before", "after"])
@pytest.mark.parametrize("operation", ["invoke", "agui"])
def test_a_prompt_that_says_its_reply_gets_a_step_and_a_tool_call_and_says_the_same_reply(operation, events):
    body = invoke_body("count", "k1") if operation == "invoke" else agui_input("count", thread="k1")
    out, applied = shaped(operation, body, request_drawing("agent-events", events))
    prompt = replies.prompt_in(operation, out)
    assert applied["agent-events"] == events and "step plan" in prompt and "tool lookup" in prompt
    assert replies.reply_of(prompt).shown == replies.reply_of("count").shown
    assert forms.unshaped(operation, out, applied) == body


@pytest.mark.parametrize("prompt", ["hello there", "count\nsleep 1", "tool lookup {}\nsay done", "echo params",
                                    "ask Who?", "fail boom"])
def test_a_prompt_with_timing_events_or_a_reply_of_its_own_goes_as_built(prompt):
    body = invoke_body(prompt, "k1")
    out, applied = shaped("invoke", body, request_drawing("agent-events", "before"))
    assert out == body and "agent-events" not in applied


def test_a_scenarios_first_request_goes_as_built():
    body = agui_input("say hi", thread="k1")
    assert shaped("agui", body, None) == (body, {})


@pytest.mark.parametrize("history", ["earlier", "after"])
def test_an_agui_prompt_gets_a_conversation_around_it_and_stays_the_last_user_message(history):
    body = agui_input("say hi", thread="k1")
    out, applied = shaped("agui", body, request_drawing("agui-history", history))
    assert applied["agui-history"] == history and len(out["messages"]) == (3 if history == "earlier" else 2)
    assert replies.reply_of(replies.prompt_in("agui", out)).shown == "hi"
    assert forms.unshaped("agui", out, applied) == body
