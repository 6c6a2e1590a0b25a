"""The sessions model of the sequence scenarios (conformance/vocab/sequences.py) and the checks over its moves, on
canned recordings: what each move must answer, chains drawn under --depth, and each reading proven both ways."""
from __future__ import annotations

import dataclasses

import pytest

from conformance import canned, registry
from conformance.outcomes import Deviation, NotAssessed, judging
from conformance.vocab import sequences as seq
from conformance.vocab.steps import sequences as steps

registry.load_all()


def expectations(chain):
    model, out = seq.Model(), []
    for group in seq.groups(chain):
        answers = [seq.ANSWERS[model.resumes % len(seq.ANSWERS)] for _ in group]
        out += list(zip(group, model.expect(group, answers)))
    return out


def test_fixed_chains_make_only_moves_the_spec_answers():
    """Every move of the default chains is one the model gives one answer for, but the run racing a resume (whose
    answer the model leaves open)."""
    for name, chains in seq.CHAINS.items():
        for chain in chains:
            model = seq.Model()
            for group in seq.groups(chain):
                raced = {m.key for m in group if m.verb == "resume"} & {m.key for m in group if m.verb == "run"}
                for move in group:
                    assert move.key in raced or model.allows(move), f"{name}: {move} is not a move the spec answers"
                model.expect(group, [seq.ANSWERS[0]] * len(group))


def test_a_chain_counts_runs_not_resumes():
    counts = [e.get("count") for m, e in expectations(seq.AGUI_CHAIN) if e["kind"] == "count"]
    assert counts == [1, 2, 4]
    kinds = [(e["kind"], e.get("then")) for _, e in expectations(seq.AGUI_CHAIN)]
    assert kinds[2:5] == [("pause", None), ("resumed", "pause"), ("resumed", "success")]
    first, second = [e for _, e in expectations(seq.MCP_CHAIN) if e["kind"] == "resumed"]
    assert first["reply"] == 'answer: {"name":"Ada"}' and second["whole"] == first["reply"] + second["reply"]


def test_runs_sent_together_span_a_range_and_a_race_leaves_later_counts_open_by_one():
    out = expectations(seq.AGUI_OVERLAP)
    assert [e.get("among") for _, e in out[:2]] == [[1, 2], [1, 2]] and all(e["distinct"] for _, e in out[:2])
    assert out[2][1]["count"] == 1 and out[3][1]["count"] == 3
    resume, racing = out[5][1], out[6][1]
    assert resume["kind"] == "open" and not resume["judged"]
    assert racing["count"] == 2 and racing["if_completed"]
    *_, (_, after) = expectations(seq.AGUI_OVERLAP + (seq.Move("agui", key="r"),))
    assert after["among"] == [2, 3, 4]     # a run on the key after the race: one more or less, its outcome is open


def test_the_requirements_name_who_carried_the_key():
    rules = [e["judged"][0][1] for _, e in expectations(seq.CROSS_CHAIN) if e["kind"] == "count"]
    assert rules == ["INV-SESS-004", "GEN-SESS-001", "GEN-SESS-001", "GEN-SESS-001"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_drawn_chains_are_answered_moves_judged_under_what_is_registered(seed):
    chains = seq.drawn_chains(3, seed)
    assert chains == seq.drawn_chains(3, seed)       # drawn once per seed: the same chains every time
    for chain in chains:
        model = seq.Model()
        for move in chain:
            assert model.allows(move), move
            (expected,) = model.expect([move], [seq.ANSWERS[0]])
            assert {rule for _, rule in expected["judged"]} <= set(seq.DRAWABLE[move.protocol]), (move, expected)


# -- the readings, on canned recordings --------------------------------------------------------------------------
def noted(family, chain, answers: dict[int, object] = {}):
    """`facts["moves"]` as the Player notes them, with the key each move sent."""
    moves, n = [], 0
    model = seq.Model()
    for group_no, group in enumerate(seq.groups(chain), 1):
        for move, expected in zip(group, model.expect(group, [seq.ANSWERS[model.resumes % 3]] * len(group))):
            n += 1
            label = family.of(f"{n}-{move.protocol}-{move.verb}")
            moves.append({"label": label, "move": dataclasses.asdict(move), "key": f"key-{move.key}",
                          "group": group_no, "expect": expected})
    return moves


def invoke_result(label, key, reply, duration=5):
    body = {"status": "completed", "result": reply, "events": [], "sessionId": key, "agentId": "agt_canned",
            "versionNumber": 1, "requestId": "req_1", "durationMs": duration}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label,
                           request_body={"prompt": "count", "sessionId": key})


def invoke_overlap(replies, durations=None):
    moves = noted(steps.OVERLAP, seq.INVOKE_OVERLAP)
    slept = {i: round(m["expect"]["slept"] * 1000) for i, m in enumerate(moves)}
    exchanges = [invoke_result(m["label"], m["key"], r, {**slept, **(durations or {})}.get(i, 5))
                 for i, (m, r) in enumerate(zip(moves, replies))]
    return canned.recording("invoke.together", exchanges, facts={"moves": moves})


def judge(check_id, *recs):
    c = registry.CHECKS[check_id]
    with judging(c.requirements):
        return c.fn(*recs)


def empty(name):
    return canned.recording(name, [], facts={"moves": []})


SAME_KEY = "invoke.sequences_invoke__inv_sess_002"


@pytest.mark.parametrize("replies", [["1", "2", "1", "3"], ["2", "1", "1", "3"]])
def test_overlapping_runs_on_one_key_pass_in_either_order(replies):
    judge(SAME_KEY, empty("invoke.chain"), invoke_overlap(replies), empty("invoke.slow_run"))


def test_two_instances_for_one_key_fail_naming_both_calls():
    with pytest.raises(Deviation) as exc:
        judge(SAME_KEY, empty("invoke.chain"), invoke_overlap(["1", "1", "1", "2"]), empty("invoke.slow_run"))
    labels = [ex.label for ex in exc.value.exchanges]
    assert labels[:2] == ["overlap-2-invoke-run", "overlap-1-invoke-run"] and "two instances" in str(exc.value)


def test_a_duration_longer_than_the_exchange_fails():
    rule = "invoke.sequences_invoke__inv_res_013"
    judge(rule, empty("invoke.chain"), invoke_overlap(["1", "2", "1", "3"], {0: 2000}), empty("invoke.slow_run"))
    with pytest.raises(Deviation, match="cannot have lasted longer"):
        judge(rule, empty("invoke.chain"), invoke_overlap(["1", "2", "1", "3"], {3: 60_000}),
              empty("invoke.slow_run"))
    with pytest.raises(Deviation, match="slept 1 s"):
        judge(rule, empty("invoke.chain"), invoke_overlap(["1", "2", "1", "3"], {0: 10}), empty("invoke.slow_run"))


def mcp_result(label, text, key, result_type="complete"):
    body = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}],
                                                  "structuredContent": {"sessionId": key}, "isError": False,
                                                  "resultType": result_type}}
    return canned.exchange(200, {"content-type": "application/json"}, body=body, label=label,
                           url="https://server.test/v1/agents/agt_canned/mcp",
                           request_headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                            "Mcp-Name": "ask_x"},
                           request_body={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": "ask_x", "arguments": {"session_id": key}}})


def mcp_chain(final_reply):
    moves = noted(steps.CHAIN, seq.MCP_CHAIN)
    texts = ["", "1", "2", seq.FIRST_QUESTION, seq.SECOND_QUESTION, final_reply, "4"]
    exchanges = [mcp_result(m["label"], text, m["key"]) if m["move"]["verb"] not in ("list",) else
                 canned.exchange(200, {"content-type": "application/json"}, label=m["label"],
                                 url="https://server.test/v1/agents/agt_canned/mcp",
                                 body={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
                                 request_headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
                                 request_body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                 for m, text in zip(moves, texts)]
    for m in moves:     # the generated key the first count returned is the key of the others
        m["key"] = m["key"] if m["move"]["key"] else None
        if m["move"]["binds"]:
            m["generated"] = "key-s"
    return canned.recording("mcp.chain", exchanges, facts={"moves": moves})


@pytest.mark.parametrize("final", ['answer: {"city":"Zürich"}done',
                                   'answer: {"name":"Ada"}answer: {"city":"Zürich"}done'])
def test_a_resumed_mcp_run_may_answer_its_whole_reply_or_what_follows_the_question(final):
    judge("mcp.sequences_mcp__mcp_pause_002", mcp_chain(final), empty("mcp.together"), empty("mcp.slow_run"))


def test_a_resumed_mcp_run_that_lost_the_answer_fails():
    with pytest.raises(AssertionError, match="expected"):
        judge("mcp.sequences_mcp__mcp_pause_002", mcp_chain("done"), empty("mcp.together"), empty("mcp.slow_run"))


def test_nothing_played_is_not_assessed():
    with pytest.raises(NotAssessed):
        judge(SAME_KEY, empty("invoke.chain"), empty("invoke.together"), empty("invoke.slow_run"))
