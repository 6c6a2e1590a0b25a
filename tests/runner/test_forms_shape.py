"""What rides on the runs every scenario sends (`forms.shape`): a step and a tool call around a reply, an AG-UI
conversation around the prompt, `stream: false` on an invoke asking for JSON, the id classes on the ids the run
chooses, and (`Context.unique`) the string kinds on its keys. The reply read off the prompt stays the same, a prompt
with timing or events of its own, echo mode and a scenario's first request go as built, and `unshaped` gives back
what the scenario built."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from conformance.engine import KEY_KINDS, Context
from conformance.registry import SCENARIOS, load_scenarios
from conformance.vocab import forms, inputs, replies
from conformance.vocab.protocols import agui_input, invoke_body, mcp_request

# what else a body may carry, as built: only what rides on the prompt changes
FORM = {**forms.AS_BUILT, "stream-writing": "absent"}
DRAWN = {"agent-events": tuple(forms.AGENT_EVENTS), "agui-history": forms.AGUI_HISTORIES,
         "stream-writing": forms.STREAM_WRITINGS, "run-id": forms.RUN_IDS, "mcp-progress": forms.PROGRESS,
         "invoke-history": forms.INVOKE_HISTORIES, "pause": ("none", "after-text")}


def shaped(operation: str, body: dict, request: str | None) -> tuple[dict, dict]:
    return forms.shape(FORM, operation, body, replies_read=True, request=request)


def request_drawing(what: str, value: str) -> str:
    return next(f"7|s|{n}" for n in range(1, 500) if forms._drawn(f"7|s|{n}", what, DRAWN[what]) == value)


@pytest.mark.parametrize("events", ["before", "after"])
@pytest.mark.parametrize("operation", ["invoke", "agui"])
def test_a_prompt_that_says_its_reply_gets_a_step_and_a_tool_call_and_says_the_same_reply(operation, events):
    body = invoke_body("count", "k1") if operation == "invoke" else agui_input("count", thread="k1")
    out, applied = shaped(operation, body, request_drawing("agent-events", events))
    prompt = replies.prompt_in(operation, out)
    assert applied["agent-events"] == events and "step plan" in prompt \
        and any(line.startswith("tool ") for line in prompt.split("\n"))
    assert replies.reply_of(prompt).shown == replies.reply_of("count").shown
    assert forms.unshaped(operation, out, applied) == body


@pytest.mark.parametrize("prompt", ["hello there", "count\nsleep 1", "tool lookup {}\nsay done", "echo params",
                                    "ask Who?", "fail boom"])
def test_a_prompt_with_timing_events_or_a_reply_of_its_own_goes_as_built(prompt):
    body = invoke_body(prompt, "k1")
    out, applied = shaped("invoke", body, request_drawing("agent-events", "before"))
    assert "agent-events" not in applied and forms.unshaped("invoke", out, applied) == body
    assert out == body or applied.get("failure-message") == "unsaid" and replies.prompt_in("invoke", out) == "fail"


def test_an_agui_run_the_scenario_left_without_a_run_id_gets_one_of_the_runs_making_on_some_requests():
    made = iter(["run-made-1", "run-made-2"])
    body = agui_input("say hi", thread="k1")
    sent = request_drawing("run-id", "sent")
    out, applied = forms.shape(FORM, "agui", body, replies_read=True, request=sent, made=lambda stem: next(made))
    assert out["runId"] == "run-made-1" and applied["run-id"] == "sent"
    assert forms.unshaped("agui", out, applied) == body
    left = forms.shape(FORM, "agui", body, replies_read=True, request=request_drawing("run-id", "absent"),
                       made=lambda stem: next(made))[0]
    assert "runId" not in left
    # what the scenario set stays: its own run id, or none where its subject is a generated one
    own = agui_input("say hi", thread="k1", run="mine")
    kept, applied = forms.shape(FORM, "agui", own, replies_read=True, request=sent, made=lambda stem: next(made))
    assert kept["runId"] == "mine" and "run-id" not in applied
    pinned = forms.shape({**FORM, "run-id": "absent"}, "agui", body, replies_read=True, request=sent,
                         made=lambda stem: next(made))[0]
    assert "runId" not in pinned
    # a reply the run cannot read off the prompt: the body goes as built
    assert forms.shape(FORM, "agui", body, replies_read=False, request=sent, made=lambda stem: next(made))[0] == body


def test_an_mcp_call_the_scenario_sent_without_a_token_gets_one_of_the_runs_making_on_some_requests():
    made = iter(["token-1", "token-2", "token-3"])
    body = mcp_request("tools/call", {"name": "agent", "arguments": {"prompt": "say hi"}}, id=3)
    sent = request_drawing("mcp-progress", "token")
    out, applied = forms.shape(FORM, "mcp", body, replies_read=True, request=sent, made=lambda stem: next(made))
    assert out["params"]["_meta"]["progressToken"] == "token-1" and applied["mcp-progress"] == "token"
    assert "progressToken" not in forms.unshaped("mcp", out, applied)["params"]["_meta"]
    none = forms.shape(FORM, "mcp", body, replies_read=True, request=request_drawing("mcp-progress", "none"),
                       made=lambda stem: next(made))[0]
    assert "progressToken" not in none["params"]["_meta"]
    # a scenario's own token stays; a method other than tools/call, and a pinned form, get none
    own = mcp_request("tools/call", {"name": "agent", "arguments": {"prompt": "say hi"}}, id=3, progress_token=7)
    assert forms.shape(FORM, "mcp", own, replies_read=True, request=sent,
                       made=lambda stem: next(made))[0]["params"]["_meta"]["progressToken"] == 7
    listed = forms.shape(FORM, "mcp", mcp_request("tools/list", id=3), replies_read=True, request=sent,
                         made=lambda stem: next(made))[0]
    assert "progressToken" not in listed["params"]["_meta"]
    pinned = forms.shape({**FORM, "mcp-progress": "none"}, "mcp", body, replies_read=True, request=sent,
                         made=lambda stem: next(made))[0]
    assert "progressToken" not in pinned["params"]["_meta"]


def test_a_scenarios_first_request_goes_as_built():
    body = agui_input("say hi", thread="k1")
    assert shaped("agui", body, None) == (body, {})


@pytest.mark.parametrize("history", ["earlier", "after", "system-after"])
def test_an_agui_prompt_gets_a_conversation_around_it_and_stays_the_last_user_message(history):
    body = agui_input("say hi", thread="k1")
    out, applied = shaped("agui", body, request_drawing("agui-history", history))
    assert applied["agui-history"] == history and len(out["messages"]) == (3 if history == "earlier" else 2)
    if history == "system-after":
        assert out["messages"][-1]["role"] == "system"
    assert replies.reply_of(replies.prompt_in("agui", out)).shown == "hi"
    assert forms.unshaped("agui", out, applied) == body


def test_an_invoke_that_runs_gets_a_conversation_beside_its_prompt_on_some_requests():
    body = invoke_body("say hi", "k1")
    earlier = request_drawing("invoke-history", "earlier")
    out, applied = forms.shape(FORM, "invoke", body, replies_read=True, runs=True, request=earlier)
    assert out["messages"] == list(forms.INVOKE_EARLIER) and applied["invoke-history"] == "earlier"
    assert replies.reply_of(out["prompt"]).shown == "hi" and forms.unshaped("invoke", out, applied) == body
    none = request_drawing("invoke-history", "none")
    assert "messages" not in forms.shape(FORM, "invoke", body, replies_read=True, runs=True, request=none)[0]
    # a count's reply does not read them either; `echo messages` does
    assert "messages" in forms.shape(FORM, "invoke", invoke_body("count", "k1"), replies_read=True, runs=True,
                                     request=earlier)[0]
    assert "messages" not in forms.shape(FORM, "invoke", invoke_body("echo messages", "k1"), replies_read=True,
                                         runs=True, request=earlier)[0]


@pytest.mark.parametrize("body,runs", [(invoke_body("say hi", "k1"), False),       # refused: a credential, an agent
                                       (invoke_body("say hi", "k" * 300), True),    # refused: a key outside
                                       (invoke_body("say hi", "k1", stream="yes"), True),
                                       ({"prompt": 42}, True),
                                       ({**invoke_body("say hi", "k1"), "data": "x" * 5000}, True),
                                       (invoke_body("say hi", "k1", messages=[]), True)])
def test_an_invoke_that_may_be_refused_or_has_a_conversation_keeps_its_own(body, runs):
    """A conversation beside a request refused for something else would make it a request of two problems, which
    the rules of either do not read (the spec does not say which a server reports first)."""
    earlier = request_drawing("invoke-history", "earlier")
    out, applied = forms.shape(FORM, "invoke", body, replies_read=True, runs=runs, request=earlier)
    assert out.get("messages") == body.get("messages") and "invoke-history" not in applied


@pytest.mark.parametrize("accept", [None, "application/json", "Application/JSON"])
def test_an_invoke_asking_for_json_may_say_stream_false(accept):
    body = invoke_body("hello there", "k1")
    form = {**FORM, "stream-writing": "false"}
    out, applied = forms.shape(form, "invoke", body, replies_read=True, request="7|s|1", accept=accept)
    assert out == {**body, "stream": False} and applied["stream-writing"] == "false"
    assert forms.unshaped("invoke", out, applied) == body


@pytest.mark.parametrize("body,accept", [(invoke_body("hello there", "k1"), "text/event-stream"),
                                         (invoke_body("hello there", "k1", stream=True), None),
                                         (invoke_body("hello there", "k1"), "application/json, text/event-stream")])
def test_stream_false_never_where_the_scenario_asked_for_a_stream_or_left_it_open(body, accept):
    form = {**FORM, "stream-writing": "false"}
    assert forms.shape(form, "invoke", body, replies_read=True, request="7|s|1", accept=accept) == (body, {})


def test_a_scenarios_first_invoke_keeps_its_stream_field_as_built():
    body = invoke_body("say hi", "k1")
    assert forms.shape(dict(forms.AS_BUILT), "invoke", body, replies_read=True, request=None) == (body, {})


@pytest.mark.parametrize("kind", ["integer", "string"])
def test_the_ids_the_run_chooses_carry_every_id_class_and_stay_distinct(kind):
    writings = set()
    for rid in (3, 4):
        seen = {}
        for n in range(1, 400):
            out, applied = forms.shape({**FORM, "jsonrpc-id": kind}, "mcp", mcp_request("tools/list", id=rid),
                                       replies_read=True, request=f"7|s|{n}")
            seen[applied.get("id-writing", "as-built")] = out["id"]
        assert set(seen) == set(forms.ID_WRITINGS[kind])
        assert len({forms._rotated(f"7|s|{n}", "id-writing", tuple(forms.ID_WRITINGS[kind]))
                    for n in range(1, 1 + len(forms.ID_WRITINGS[kind]))}) == len(forms.ID_WRITINGS[kind])
        for writing, written in seen.items():
            out, applied = forms.shape({**FORM, "jsonrpc-id": kind}, "mcp", mcp_request("tools/list", id=rid),
                                       replies_read=True, request=next(f"7|s|{n}" for n in range(1, 400) if forms._rotated(
                                           f"7|s|{n}", "id-writing", tuple(forms.ID_WRITINGS[kind])) == writing))
            assert forms.unshaped("mcp", out, applied)["id"] == forms.ID_WRITINGS[kind]["as-built"](rid)
        assert all(type(i) is (int if kind == "integer" else str) for i in seen.values())
        writings |= set(map(repr, seen.values()))
    assert len(writings) == 2 * len(forms.ID_WRITINGS[kind])      # no writing makes two ids one


def test_an_id_class_a_test_withholds_is_not_written(monkeypatch):
    monkeypatch.setattr(inputs, "is_sent", lambda name: name != "jsonrpc-id:negative")
    got = {forms.shape({**FORM, "jsonrpc-id": "integer"}, "mcp", mcp_request("tools/list", id=3), replies_read=True,
                       request=f"7|s|{n}")[0]["id"] for n in range(1, 200)}
    assert -3 not in got and 2**32 + 3 in got


def test_a_key_carries_the_characters_of_three_string_kinds_and_every_kind_is_met():
    load_scenarios()
    ctx = Context(SimpleNamespace(target=SimpleNamespace(seed=7, run_tag="abcd1234")), SCENARIOS["invoke.runs"], None)
    keys = [ctx.unique("k") for _ in range(40)][1:]
    chars = {kind: "".join(v) for kind, v in KEY_KINDS.items() if kind != "edge-whitespace"}
    per_key = [{kind for kind, text in chars.items() if text in key} for key in keys]
    assert all(len(kinds) == 3 for key, kinds in zip(keys, per_key) if key.startswith(("conf-", " ")))
    assert set().union(*per_key) == set(chars) and any(key.startswith(" \t") for key in keys)
    assert len(set(keys)) == len(keys)


def test_a_value_the_service_only_echoes_carries_every_kind_but_escapes_beside_its_own_and_edge_whitespace():
    load_scenarios()
    ctx = Context(SimpleNamespace(target=SimpleNamespace(seed=7, run_tag="abcd1234")), SCENARIOS["invoke.runs"], None)
    tokens = [ctx.unique("token", echoed=True) for _ in range(40)][1:]
    beside = {kind: "".join(v) for kind, v in KEY_KINDS.items() if kind not in ("edge-whitespace", "json-escapes")}
    lettered = [t for t in tokens if t.strip().startswith("conf-") and "".join(KEY_KINDS["json-escapes"]) not in t]
    assert lettered and all(all(text in t for text in beside.values()) for t in lettered)
    # ...and whitespace at its ends, whatever its kind (a UUID's form aside)
    assert all(t.startswith(" \t") and t.endswith("\t ") for t in tokens if "conf-" in t)
    assert len(set(tokens)) == len(tokens)


@pytest.mark.parametrize("operation", ["invoke", "agui", "mcp"])
def test_a_body_free_to_carry_a_field_of_its_own_is_sometimes_long(operation):
    body = {"invoke": invoke_body("say hi", "k1"), "agui": agui_input("say hi", thread="k1"),
            "mcp": mcp_request("tools/list", id=3)}[operation]
    form = {**FORM, "other-field": "sent", "agui-fields": "set"}
    sizes = {}
    for n in range(1, 60):
        out, applied = forms.shape(form, operation, body, replies_read=True, request=f"7|s|{n}")
        sizes.setdefault(applied.get("field-length", "short"), len(json.dumps(out)))
    assert sizes["long"] > 1500 > sizes["short"]


@pytest.mark.parametrize("stream", ["field", "accept"])
def test_a_streamed_invoke_run_pauses_after_its_reply_on_some_requests_and_says_the_same_reply(stream):
    """INV-STREAM-009 is judged on runs of every form: now and then a streamed run of a plain reply sleeps 2 s after
    it (after a step and a tool call before it too), so its text must arrive well before `done`."""
    body = invoke_body("say hi", "k1") | ({"stream": True} if stream == "field" else {})
    pausing = next(f"7|s|{n}" for n in range(1, 500) if forms._drawn(f"7|s|{n}", "pause", DRAWN["pause"]) ==
                   "after-text" and forms._drawn(f"7|s|{n}", "agent-events", DRAWN["agent-events"]) != "inside")
    accept = "text/event-stream" if stream == "accept" else None
    out, applied = forms.shape(FORM, "invoke", body, replies_read=True, runs=True, accept=accept,
                               request=pausing)
    prompt = replies.prompt_in("invoke", out)
    assert applied["pause"] == "after-text" and replies.said_before_a_pause(prompt, 2.0) == ("hi", 2.0)
    assert replies.reply_of(prompt).shown == "hi" and forms.unshaped("invoke", out, applied) == body
    json_run, applied = forms.shape(FORM, "invoke", invoke_body("say hi", "k1"), replies_read=True, runs=True,
                                    request=pausing)
    assert "pause" not in applied       # a JSON answer shows no timing of its text


@pytest.mark.parametrize("operation", ["invoke", "agui"])
@pytest.mark.parametrize("prompt, cut", [("say conformance", True), ("say hello, \nsay conformance", False),
                                         ("chunks 5 hello, conformance", None)])
def test_a_step_and_a_tool_call_go_inside_a_reply_that_has_two_pieces_and_it_says_the_same(operation, prompt, cut):
    """The order of a run's mixed events with text on both sides: a step and a tool call after the prompt's first
    line, or between the halves of its one `say` line; a prompt of one other line keeps its events outside."""
    body = invoke_body(prompt, "k1") if operation == "invoke" else agui_input(prompt, thread="k1")
    out, applied = shaped(operation, body, request_drawing("agent-events", "inside"))
    sent = replies.prompt_in(operation, out)
    if cut is None:
        assert "agent-events" not in applied and sent == prompt
        return
    assert applied["agent-events"] == ("inside-cut" if cut else "inside")
    lines = sent.split("\n")
    assert lines[1:3] == list(forms.INSIDE) and (lines[0] != prompt if cut else lines[0] == "say hello, ")
    assert replies.reply_of(sent).shown == replies.reply_of(prompt).shown
    assert forms.unshaped(operation, out, applied) == body
