"""Readings of the agent judged against its contract before the service is blamed (conformance/vocab/agent_readings.py),
on literal replies and canned recordings: each way a reading can differ gets its verdict, the agent's (not assessed,
or noted and read) or the service's (failed)."""
from __future__ import annotations

import re

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, Deviation, judging
from conformance.vocab import agent_readings as agent
from conformance.vocab.steps import agui as agui_steps
from conformance.vocab.steps import invoke as invoke_steps
from conformance.vocab.steps import mcp as mcp_steps
from tests.checks.support import agui_reply

CHECKS = registry.load_all()    # before any check module is imported: some register only once scenarios are known
same_key_same_instance, other_key_new_instance, generated_key_reaches_instance = (
    "invoke.same_key_same_instance", "invoke.other_key_new_instance", "invoke.generated_key_reaches_instance")
messages_reach_agent, unknown_fields_reach_params = "invoke.messages_reach_agent", "invoke.unknown_fields_reach_params"
whole_message_list_reaches_agent = "agui.whole_message_list_reaches_agent"
resume_continues, same_session_same_instance = "mcp.resume_continues", "mcp.same_session_same_instance"


def judged(check_id, *recs):
    """A check judged as the engine judges it, with the findings its readings noted."""
    c = CHECKS[check_id]
    with judging(c.requirements), agent.collecting() as found:
        c.fn(*recs)
    return found


def raises(exc_type, check_id, *recs):
    c = CHECKS[check_id]
    with judging(c.requirements), agent.collecting() as found, pytest.raises(exc_type) as caught:
        c.fn(*recs)
    return caught.value, found


# -- count: the table, one row a case -----------------------------------------------------------------------------
def count(got, expected=2, **evidence):
    agent.judge_count(agent.Count(got, (expected,) if isinstance(expected, int) else tuple(expected), **evidence),
                      what="the call", exchanges=(canned.exchange(200, label="count-2"),))


@pytest.mark.parametrize("got, evidence", [("2", {}), (" 2", {}), ("3", {"expected": [2, 3]})])
def test_a_count_the_contract_gives_passes(got, evidence):
    count(got, **evidence)


@pytest.mark.parametrize("got, evidence, way", [
    ("0", {"expected": 1}, "counts from 0"),                       # no run counts 0 runs when it counts itself
    ("1", {"zero_based": True}, "counts from 0"),                  # one less, where another count said 0
    ("4", {"resumes": (2, 2)}, "counts a resumed run again"),      # more by exactly this key's resumes
    ("3", {"resumes": (1, 2)}, "counts a resumed run again"),      # a resume raced the run: it may have counted
    ("3", {"resumes": (2, 2), "zero_based": True}, "counts from 0 and counts a resumed run again"),
])
def test_a_count_the_agent_explains_is_not_assessed(got, evidence, way):
    with agent.collecting() as found, pytest.raises(agent.OffContract, match=way) as exc:
        count(got, **evidence)
    assert [f.said for f in found] == [way] and found[0].hides
    assert "docs/agent.md" in str(exc.value) and "not the service" in str(exc.value)


@pytest.mark.parametrize("got, evidence, said", [
    ("1", {}, "lower than the runs this key's instance started, so the call reached another instance"),
    ("0", {"zero_based": True}, "reached another instance"),       # the agent counts from 0, and still one less
    ("4", {"others": (("key-a", 2),)}, "higher by exactly the 2 run(s) key 'key-a' started: two keys reached one "
                                       "instance"),
    ("3", {}, "higher than the runs this key's instance started, by 1"),
    ("5", {"resumes": (2, 2)}, "higher"),                          # more than the resumes explain
])
def test_a_count_the_agent_does_not_explain_is_the_services_deviation(got, evidence, said):
    with agent.collecting() as found, pytest.raises(Deviation, match=re.escape(said)) as exc:
        count(got, **evidence)
    assert not isinstance(exc.value, Blocked) and not found


@pytest.mark.parametrize("got, evidence", [("3", {}), ("4", {"resumes": (1, 1)}), ("4", {}),
                                           ("3", {"zero_based": True})])
def test_more_by_resumes_that_did_not_continue_is_blocked_by_the_resume_rule(got, evidence):
    """A resume that did not continue the paused run may have started a run of its own: that is the resume rule's
    deviation (one deviation, one failure), never the agent's."""
    lost = canned.exchange(200, label="chain-4-agui-resume"), canned.exchange(200, label="chain-7-mcp-resume")
    with agent.collecting() as found, pytest.raises(Blocked, match="did not continue the paused run") as exc:
        count(got, lost=(("AGUI-INT-002", lost[0]), ("MCP-PAUSE-002", lost[1])), **evidence)
    assert exc.value.root == "AGUI-INT-002" and lost[0] in exc.value.exchanges and not found


REPLY_CARRIED = [("/invoke", None, "INV-RES-003"), ("/invoke", [(0.01, b"event: done\ndata: {}\n\n")], "INV-STREAM-008"),
                 ("/agui", [(0.01, b"data: {}\n\n")], "AGUI-ORDER-006"), ("/mcp", None, "MCP-TOOL-002"),
                 ("/mcp", [(0.01, b"data: {}\n\n")], "MCP-PROG-008")]


@pytest.mark.parametrize("path, sse, rule", REPLY_CARRIED)
def test_a_reply_not_of_the_form_the_agent_writes_rests_on_the_rule_that_carries_it(path, sse, rule):
    """A `count` that is no number, an echo of another JSON type (the reply in quotes): what the agent replied did
    not come through whole, the deviation of the call's reply rule (every reading of the reply rests on it); for that
    rule's own checks, a deviation of its own."""
    call = canned.exchange(200, label="count-2", url=f"https://server.test/v1/agents/agt_canned{path}", sse=sse)
    readings = [lambda: agent.judge_count(agent.Count('"2"', (2,)), what="the call", exchanges=(call,)),
                lambda: agent.echoed('"{\\"a\\":1}"', "echo params", call),
                lambda: agent.echoed('{"a":1}', "echo messages", call)]
    for read in readings:
        with agent.collecting() as found, pytest.raises(Blocked, match="as the agent writes it") as exc:
            read()
        assert exc.value.root == rule and exc.value.exchanges == (call,) and not found
        with judging([rule]), pytest.raises(Deviation) as own:
            read()
        assert not isinstance(own.value, Blocked)


def test_the_agent_counts_from_zero_only_on_a_reply_no_service_can_cause():
    assert agent.counts_from_zero([("0", [1]), ("1", [2])])
    assert not agent.counts_from_zero([("1", [2]), (None, [1]), ("1", [1])])
    assert not agent.counts_from_zero([("0", [0])])


# -- count, through the session checks --------------------------------------------------------------------------
def invoke_count(label, reply, key="k"):
    body = {"status": "completed", "result": reply, "events": [], "sessionId": key, "agentId": "agt_canned",
            "versionNumber": 1, "requestId": "req_1", "durationMs": 3}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label,
                           request_body={"prompt": "count", "sessionId": key})


def invoke_sessions(replies):
    labels = [invoke_steps.COUNT_1, invoke_steps.COUNT_2, invoke_steps.COUNT_OTHER, invoke_steps.GENERATED_1,
              invoke_steps.GENERATED_2]
    keys = ["k", "k", "K", "g", "g"]
    return canned.recording("invoke.sessions", [invoke_count(label, reply, key) for label, reply, key
                                                in zip(labels, replies, keys)], facts={"key": "k", "other": "K"})


def test_invoke_sessions_of_an_agent_counting_from_zero_are_not_assessed():
    rec = invoke_sessions(["0", "1", "0", "0", "1"])
    for check in (same_key_same_instance, other_key_new_instance, generated_key_reaches_instance):
        exc, found = raises(agent.OffContract, check, rec)
        assert found and found[0].way == "from-zero", check


def test_invoke_sessions_fail_where_the_agents_count_does_not_explain_the_reply():
    _, found = raises(Deviation, same_key_same_instance, invoke_sessions(["0", "0", "0", "0", "1"]))   # lost
    exc, _ = raises(Deviation, other_key_new_instance, invoke_sessions(["1", "2", "3", "1", "2"]))     # shared
    assert "two keys reached one instance" in str(exc)


def mcp_count(label, text, key):
    body = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}],
                                                  "structuredContent": {"sessionId": key}, "isError": False,
                                                  "resultType": "complete"}}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label,
                           url="https://server.test/v1/agents/agt_canned/mcp")


def mcp_sessions(replies):
    labels = [mcp_steps.GIVEN_1, mcp_steps.GIVEN_2, mcp_steps.GENERATED_1, mcp_steps.GENERATED_2]
    return canned.recording("mcp.sessions", [mcp_count(label, text, "s") for label, text in zip(labels, replies)],
                            facts={"session": "s"})


@pytest.mark.parametrize("replies, verdict", [(["1", "2", "1", "2"], None), (["0", "1", "0", "1"], agent.OffContract),
                                              (["0", "0", "0", "1"], Deviation), (["1", "1", "1", "2"], Deviation)])
def test_mcp_session_counts_both_ways(replies, verdict):
    if verdict is None:
        judged(same_session_same_instance, mcp_sessions(replies))
    else:
        raises(verdict, same_session_same_instance, mcp_sessions(replies))


# -- echo params, echo messages -----------------------------------------------------------------------------------
def test_an_echo_in_another_json_form_is_read_and_noted():
    with agent.collecting() as found:
        assert agent.echoed('{"b": 1, "a": "\\u00e9"}', "echo params") == {"a": "é", "b": 1}
        assert agent.echoed('{"a":"é","b":1}', "echo params") == {"a": "é", "b": 1}
    assert [(f.way, f.hides, f.got) for f in found] == [("canonical", False, '{"b": 1, "a": "\\u00e9"}')]


def test_an_echo_that_is_no_json_is_the_services():
    """No JSON writer gives it: the agent ran no `echo` on what it received (the service sent it another prompt)."""
    with agent.collecting() as found, pytest.raises(Deviation, match="not JSON") as exc:
        agent.echoed("echo messages", "echo messages")
    assert not isinstance(exc.value, agent.OffContract) and not found


def test_fields_missing_or_changed_are_the_services_and_doubles_are_nobodys():
    big = 123456789012345678901234567890
    assert agent.fields_changed("echo params", {"a": 1, "b": 2.5}, {"a": 1.0, "b": 2.5}) == []
    assert agent.fields_changed("echo params", {"a": 1, "n": None}, {"a": 1}) == [("n", None, agent.MISSING)]
    assert agent.fields_changed("echo params", {"a": "x"}, {"a": "y"}) == [("a", "x", "y")]
    with pytest.raises(agent.OffContract, match="as a double reads them"):
        agent.fields_changed("echo params", {"n": big}, {"n": float(big)})
    # a service deviation beside it is still reported
    assert agent.fields_changed("echo params", {"n": big, "s": "x"}, {"n": float(big)}) == [("s", "x", agent.MISSING)]


def invoke_echo(label, text, request_body):
    body = {"status": "completed", "result": text, "events": [], "sessionId": "e", "agentId": "agt_canned",
            "versionNumber": 1, "requestId": "req_1", "durationMs": 3}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label, request_body=request_body)


MESSAGES = [{"role": "user", "content": "first \u2713"}, {"role": "assistant", "content": "second\nline"}]


@pytest.mark.parametrize("text", ['[{"content": "first \\u2713", "role": "user"}, '
                                  '{"content": "second\\nline", "role": "assistant"}]',
                                  '[\n {\n  "role": "user",\n  "content": "first \u2713"\n },\n '
                                  '{\n  "role": "assistant",\n  "content": "second\\nline"\n }\n]'])
def test_messages_echoed_in_another_form_pass_and_name_the_agent(text):
    rec = canned.recording("invoke.messages", [invoke_echo(invoke_steps.MESSAGES, text, {"messages": MESSAGES})],
                           facts={"messages": MESSAGES})
    found = judged(messages_reach_agent, rec)
    assert [(f.reading, f.way, f.hides) for f in found] == [("`echo messages`", "canonical", False)]


def test_messages_dropped_by_the_service_fail():
    rec = canned.recording("invoke.messages", [invoke_echo(invoke_steps.MESSAGES, "[]", {"messages": MESSAGES})],
                           facts={"messages": MESSAGES})
    raises(Deviation, messages_reach_agent, rec)


def test_params_echoed_in_another_form_pass_and_params_changed_fail():
    sent = {"confInteger": 42, "confString": "text"}
    ok = canned.recording("invoke.params", [invoke_echo(invoke_steps.PARAMS, '{"confString": "text", "confInteger": 42}',
                                                        sent)], facts={"params": sent})
    assert [f.way for f in judged(unknown_fields_reach_params, ok)] == ["canonical"]
    no_json = canned.recording("invoke.params", [invoke_echo(invoke_steps.PARAMS, "echo params", sent)],
                               facts={"params": sent})
    raises(Deviation, unknown_fields_reach_params, no_json)
    changed = canned.recording("invoke.params", [invoke_echo(invoke_steps.PARAMS, '{"confInteger":"42"}', sent)],
                               facts={"params": sent})
    raises(Deviation, unknown_fields_reach_params, changed)


def agui_echo(text):
    return agui_reply(agui_steps.ECHO_MESSAGES, text)


def agui_messages(text):
    return canned.recording("agui.messages", [agui_echo(text)], facts={
        "messages": MESSAGES, "runs": {agui_steps.ECHO_MESSAGES: {"kind": "success", "reply": None, "thread": "t"}}})


def test_agui_messages_both_ways():
    assert judged(whole_message_list_reaches_agent, agui_messages('[{"role": "user", "content": "first \u2713"}, '
                                                                  '{"role": "assistant", "content": "second\\nline"}]'))
    raises(Deviation, whole_message_list_reaches_agent, agui_messages('[{"content":"first \u2713","role":"user"}]'))


# -- the answer a resumed run starts with ------------------------------------------------------------------------
@pytest.mark.parametrize("got", ['answer: {"name":"Ada"}thanks', 'Answer: {"name": "Ada"}thanks',
                                 'answer:{"name":"Ada"}thanks', 'ANSWER - {"name": "Ada"}thanks'])
def test_an_answer_written_otherwise_with_the_right_value_and_rest_is_read(got):
    with agent.collecting() as found:
        assert agent.resumed(got, {"name": "Ada"}, "thanks")
    assert [f.way for f in found] == ([] if got.startswith('answer: {"name":"Ada"}') else ["answer"])


@pytest.mark.parametrize("got", ['answer: nullthanks', 'answer: {"name":"Grace"}thanks', 'thanks',
                                 'answer: {"name":"Ada"}', 'What is your name?', 'answer: {"value":{"name":"Ada"}}thanks'])
def test_an_answer_of_another_value_or_another_continuation_is_the_services(got):
    with agent.collecting() as found:
        assert not agent.resumed(got, {"name": "Ada"}, "thanks")
    assert not found


def test_several_answers_in_one_whole_reply():
    parts = [("text", "early"), ("answer", {"name": "Ada"}), ("text", ""), ("answer", {"city": "Zürich"}),
             ("text", "done")]
    with agent.collecting() as found:
        assert agent.reads_as('earlyAnswer: {"name": "Ada"}Answer: {"city": "Z\\u00fcrich"}done', parts)
        assert not agent.reads_as('earlyAnswer: {"name": "Ada"}done', parts)
    assert len(found) == 2


def test_a_resume_reached_the_agent_when_its_reply_holds_the_answer_in_any_form():
    assert agent.holds_answer('Answer: {"name": "Ada"}thanks', {"name": "Ada"})
    assert agent.holds_answer('hianswer: {"name":"Ada"}thanks', {"name": "Ada"})
    assert not agent.holds_answer("What is your name?", {"name": "Ada"})
    assert not agent.holds_answer(None, {"name": "Ada"})


def mcp_paused(resumed_text):
    ask = mcp_count(mcp_steps.ASK, "What is your name?", "p")
    resume = mcp_count(mcp_steps.RESUME, resumed_text, "p")
    return canned.recording("mcp.pause_text", [ask, resume], facts={
        "session": "p", "answer": {"name": "Ada"}, "question": "What is your name?", "after_resume": None,
        "suffix": "thanks"})


def test_mcp_resume_both_ways():
    assert [f.way for f in judged(resume_continues, mcp_paused('Answer: {"name": "Ada"}thanks'))] == ["answer"]
    raises(Deviation, resume_continues, mcp_paused('answer: {"value":{"name":"Ada"}}thanks'))
    raises(AssertionError, resume_continues, mcp_paused("What is your name?"))


def test_a_profile_reply_after_resume_is_compared_exactly():
    facts = {"after_resume": "thanks", "suffix": None}
    assert agent.resumed_as_profiled("thanks", facts, {"name": "Ada"})
    assert not agent.resumed_as_profiled("thanks!", facts, {"name": "Ada"})


def test_every_sentence_the_readings_cite_is_in_docs_agent_md():
    from pathlib import Path
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "agent.md").read_text().split())
    for sentence, _ in agent.CONTRACT.values():
        assert " ".join(sentence.split()) in doc, sentence


def test_every_vector_case_the_readings_name_exists():
    from conformance.agent.vectors import load
    names = {case["name"] for case in load()["agent"]}
    assert {vector for _, vector in agent.CONTRACT.values()} <= names
