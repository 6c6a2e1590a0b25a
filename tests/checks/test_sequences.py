"""The sessions model of the sequence scenarios (conformance/vocab/sequences.py) and the checks over its moves, on
canned recordings: what each move must answer, chains drawn under --depth, and each reading proven both ways."""
from __future__ import annotations

import dataclasses

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, Deviation, NotAssessed, judging
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
    assert counts == [1, 3]
    kinds = [(e["kind"], e.get("then")) for _, e in expectations(seq.AGUI_CHAIN)]
    assert kinds[1:4] == [("pause", None), ("resumed", "pause"), ("resumed", "success")]
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


def test_the_chain_across_protocols_played_under_depth_is_judged_under_what_is_registered():
    for protocol in ("invoke", "agui", "mcp"):
        assert set(seq.requirements([seq.CROSS_CHAIN], protocol)) <= set(seq.judged_under([seq.CROSS], protocol))


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


GENERATED_THEN_SAME = (seq.Move("invoke", binds="k"), seq.Move("invoke", key="k"), seq.Move("invoke", key="k"))


def chain_replying(*replies):
    moves = noted(steps.CHAIN, GENERATED_THEN_SAME)
    exchanges = [invoke_result(m["label"], m["key"], r) for m, r in zip(moves, replies)]
    return canned.recording("invoke.chain", exchanges, facts={"moves": moves})


def test_a_generated_key_is_judged_on_its_first_return_and_the_key_on_later_calls():
    rules = [e["judged"][0][1] for _, e in expectations(GENERATED_THEN_SAME)]
    assert rules == ["INV-SESS-004", "INV-SESS-004", "INV-SESS-002"]


def test_a_generated_key_is_judged_on_the_first_return_whose_count_is_read():
    """MCP reads no count off a paused call: the generated key's rule waits for the first call that shows one."""
    rules = [e["judged"][0][1] for _, e in expectations(seq.MCP_CHAIN) if e["kind"] == "count"]
    assert rules == ["MCP-SESS-004", "MCP-SESS-004"]


def test_a_count_that_follows_an_earlier_wrong_count_on_its_key_is_that_one_deviation():
    """The generated key reached another instance (1, not 2): the third call's 2, not 3, follows from it, so the
    key's own rule is blocked by the generated key's, which fails on the second call."""
    recs = (chain_replying("1", "1", "2"), empty("invoke.together"), empty("invoke.slow_run"))
    with pytest.raises(Deviation) as failed:
        judge("invoke.sequences_invoke__inv_sess_004", *recs)
    assert [ex.label for ex in failed.value.exchanges][:1] == ["chain-2-invoke-run"]
    with pytest.raises(Blocked) as blocked:
        judge(SAME_KEY, *recs)
    assert blocked.value.root == "INV-SESS-004" and "already counted wrong" in str(blocked.value)
    judge(SAME_KEY, chain_replying("1", "2", "3"), empty("invoke.together"), empty("invoke.slow_run"))
    with pytest.raises(Deviation) as lost:       # the session lost only on the third call: the key's own failure
        judge(SAME_KEY, chain_replying("1", "2", "1"), empty("invoke.together"), empty("invoke.slow_run"))
    assert not isinstance(lost.value, Blocked)


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
    texts = ["1", seq.FIRST_QUESTION, seq.SECOND_QUESTION, final_reply, "2"]
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


GENERATED_PAUSE = (seq.Move("mcp", script="ask", binds="g"), seq.Move("mcp", "resume", key="g"),
                   seq.Move("mcp", key="k", script="ask"), seq.Move("mcp", "resume", key="k"))


def test_a_resume_is_the_generated_keys_first_return_only_after_a_pause_in_the_call_that_generated_it():
    returned = [[rule for aspect, rule in e["judged"] if aspect == "returned"] for _, e in expectations(GENERATED_PAUSE)]
    assert returned == [[], ["MCP-SESS-004"], [], []]
    assert not any(a == "returned" for _, e in expectations(seq.AGUI_CHAIN) for a, _ in e["judged"])  # a key sent


def generated_pause(given_resume_continues: bool, chain=GENERATED_PAUSE):
    moves = noted(steps.CHAIN, chain)
    moves[0]["key"], moves[0]["generated"], moves[1]["key"] = None, "ses_given_back", "ses_given_back"
    refused = canned.exchange(400, {"content-type": "application/json"}, label=moves[1]["label"],
                              url="https://server.test/v1/agents/agt_canned/mcp",
                              body={"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no paused run"}},
                              request_headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                               "Mcp-Name": "ask_x"},
                              request_body={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                            "params": {"name": "ask_x", "arguments": {"session_id": "ses_given_back",
                                                                                      "resume": {"name": "Ada"}}}})
    given = mcp_result(moves[3]["label"], moves[3]["expect"]["reply"], "key-k") if given_resume_continues \
        else dataclasses.replace(refused, label=moves[3]["label"])
    exchanges = [mcp_result(moves[0]["label"], seq.FIRST_QUESTION, "ses_given_back"), refused,
                 mcp_result(moves[2]["label"], seq.FIRST_QUESTION, "key-k"), given]
    return canned.recording("mcp.chain", exchanges, facts={"moves": moves})


def test_a_refused_resume_of_a_generated_key_is_the_keys_deviation_when_resumes_of_given_keys_continue():
    """The run paused in the call that generated its key; the resume sent on that key finds no paused run, while a
    resume on a key the suite gave continued: the key the service gave names no run (MCP-SESS-004 fails, beside the
    resume's own rule). When no resume continues, resuming is what failed: MCP-SESS-004 does not fail."""
    recs = (empty("mcp.together"), empty("mcp.slow_run"))
    with pytest.raises(Deviation) as failed:
        judge("mcp.sequences_mcp__mcp_sess_004", generated_pause(True), *recs)
    assert not isinstance(failed.value, Blocked) and "the key it gave names no paused run" in str(failed.value)
    with pytest.raises(AssertionError):
        judge("mcp.sequences_mcp__mcp_pause_002", generated_pause(True), *recs)
    with pytest.raises(Blocked):
        judge("mcp.sequences_mcp__mcp_sess_004", generated_pause(False), *recs)


def test_a_resume_continued_on_another_path_tells_nothing_of_a_generated_keys_pause():
    """A service may keep the pauses of one path only (a progress stream's): a resume that continued on another
    path leaves the generated key's refused resume to the resume's rule."""
    chain = GENERATED_PAUSE[:2] + (seq.Move("mcp", key="k", script="ask", form="progress"),
                                   seq.Move("mcp", "resume", key="k", form="progress"))
    with pytest.raises(Blocked):
        judge("mcp.sequences_mcp__mcp_sess_004", generated_pause(True, chain), empty("mcp.together"),
              empty("mcp.slow_run"))


def test_a_refused_resumes_other_readings_are_blocked_by_the_resume_rule():
    """The key's echo cannot be read off a resume the service refused: one deviation, the resume's."""
    with pytest.raises(Blocked) as blocked:
        judge("mcp.sequences_mcp__mcp_sess_003", generated_pause(True), empty("mcp.together"), empty("mcp.slow_run"))
    assert blocked.value.root == "MCP-PAUSE-002"


def test_nothing_played_is_not_assessed():
    with pytest.raises(NotAssessed):
        judge(SAME_KEY, empty("invoke.chain"), empty("invoke.together"), empty("invoke.slow_run"))


# -- histories: every transition, then a reading, on every path ------------------------------------------------
def history_pairs(chain) -> set:
    """What a history covers: each transition taken on each path, each transition read on each path, each path
    followed by each path (a reading move only: one whose answer shows its `count`)."""
    covered, last = set(), ("completes", "invoke")

    def path_of(move):
        return next(q for q, (protocol, forms) in seq.PATHS.items() if protocol == move.protocol and move.form in forms)

    key = seq.HISTORY_KEY
    for move in chain[1:]:       # after the call that generates the first key
        if move.verb != "run":
            continue
        t, q = seq.transition_of(move.script), path_of(move)
        kf = "this-call" if move.key is None else "earlier" if move.key == key else "sent"
        key = move.key or move.binds
        covered |= {("taken", t, q), ("key", kf, t), ("key-path", kf, q)}
        if kf == "this-call" and t == "pauses-and-resumes":
            covered.add(("key-pause", q))
        if seq.reads_count(move) and kf == "earlier":      # a reading of the transition before it: on its key
            covered |= {("read-after", last[0], q), ("path-after", last[1], q), ("read-after-on", *last)}
        last = (t, q)
    return covered


@pytest.mark.parametrize("seed", [1, 2, 3, 7, 2**31 - 1])
def test_a_history_covers_every_transition_then_every_path_pairwise(seed):
    chain = seq.history(seed)
    paths, transitions = list(seq.PATHS), list(seq.TRANSITIONS)
    wanted = ({("taken", t, q) for t in transitions for q in paths if seq.possible(t, q)}
              | {("read-after", t, q) for t in transitions for q in paths}
              | {("path-after", p, q) for p in paths for q in paths}
              | {("read-after-on", "pauses-and-resumes", q) for q in paths if seq.possible("pauses-and-resumes", q)}
              | {("key-pause", q) for q in paths if seq.possible("pauses-and-resumes", q) and q != "mcp-elicit"}
              | {("key", kf, t) for kf in seq.KEY_FORMS for t in transitions}
              | {("key-path", kf, q) for kf in seq.KEY_FORMS for q in paths if kf != "this-call" or q != "mcp-elicit"})
    assert wanted <= history_pairs(chain), sorted(wanted - history_pairs(chain))
    assert len(chain) < seq.HISTORY_MOVES
    assert seq.history(seed) == chain          # drawn once per seed: the same seed, the same chain
    for form in {f for _, forms in seq.PATHS.values() for f in forms}:
        assert any(m.form == form for m in chain), f"the form {form!r} is never sent"


def test_a_history_is_a_chain_the_model_answers_and_counts_failures_but_not_resumes():
    chain = seq.history(1)
    model = seq.Model()
    for group in seq.groups(chain):
        for move in group:
            assert model.allows(move), move
        model.expect(group, [seq.ANSWERS[0]] * len(group))
    out = expectations(chain)
    for key in {m.key or m.binds for m in chain} - {None}:     # each key's counts go up, by its runs
        runs = [m for m in chain if m.verb == "run" and (m.key or m.binds) == key]
        counted = [e["count"] for m, e in out if "count" in e and (m.key or m.binds) == key]
        assert counted == sorted(counted) and (not counted or counted[-1] <= len(runs)), key
    failed = [e for m, e in out if e["kind"] == "failed"]
    assert failed and all(any(aspect == "failed" and rule in seq.FAILED.values() for aspect, rule in e["judged"])
                          for e in failed)
    late = next(e for m, e in out if m.script == "count-fail-late" and m.protocol != "mcp")
    assert late["reply"] == f"{late['count']},more" and late["suffix"] == ",more"


def test_every_requirement_a_history_can_judge_has_a_check():
    for protocol in ("invoke", "agui", "mcp"):
        registered = {c.requirements[0] for c in registry.CHECKS.values() if c.scenarios == (seq.HISTORIES,)
                      and c.id.split(".", 1)[1].startswith(f"histories_{protocol}__")}
        for seed in (1, 2, 3):
            assert set(seq.requirements([seq.history(seed)], protocol)) <= registered, (protocol, seed)


# -- kept apart: a key and its twins ---------------------------------------------------------------------------
def test_the_twins_of_a_key_are_keys_of_their_own_each_expected_to_start_at_one():
    out = expectations(seq.KEPT_APART)
    assert [e["count"] for _, e in out] == [1] * len(seq.KEPT_APART)
    assert all(e["judged"][0] == ["count", "GEN-SESS-002"] for _, e in out)
    assert {m.protocol for m in seq.KEPT_APART} == {"invoke", "agui", "mcp"}


@pytest.mark.parametrize("seed", [1, 2, 3, 11, 12, 13, 2**31 - 1])
def test_the_request_writings_apply_to_what_every_history_judges(seed):
    from conformance.vocab import inputs
    judged = {r for protocol in ("invoke", "agui", "mcp") for r in seq.requirements([seq.history(seed)], protocol)}
    assert set(inputs.HISTORY_REQUIREMENTS) <= judged


def test_every_writing_is_the_same_json_value():
    import json
    from conformance.vocab import inputs, protocols as p
    body = {"prompt": "say x", "sessionId": inputs.TRANSFORMABLE + "😀\u2028/", "nested": {"b": [1, {"c": None}], "a": 2}}
    texts = {w: p.written(body, w) for w in p.JSON_WRITINGS}
    assert all(json.loads(t) == body for t in texts.values()) and len(set(texts.values())) == len(texts)
    assert texts["ascii-escaped"].isascii() and b"\r\n" in texts["spaced"] and b"/" not in texts["slash-escaped"].replace(b"\\/", b"")
    assert list(json.loads(texts["members-reversed"])) == list(reversed(body))
