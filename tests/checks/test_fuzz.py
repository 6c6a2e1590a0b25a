"""The schemathesis scenarios and their checks: pass on the reference server within the cost share, fail a
server that answers one refusal with a 500 or with a malformed error body, and classify negative data only
as the spec does. (Judging recorded cases without a server: test_fuzz_canned.py.)"""
from __future__ import annotations

import json
import ssl

import httpx

import pytest

from conformance import canned, registry
from conformance.api import certify
from conformance.checks import fuzz as judging
from conformance.scenarios import fuzz
from conformance.vocab import fuzzing
from conformance.server import ReferenceServer
from conformance.target import from_server_facts
from tests.checks.support import checks_in
from tests.selftest.zoo import load_zoo

REQUEST_BUDGET, RUN_BUDGET = 80, 10
# Which requirements a handful of generated cases happen to exercise depends on the seed; these tests assert
# that some did, so they draw from one fixed seed (a correct server passes under every seed: test_variant).
SEED = 1


def fuzz_checks() -> list[str]:
    return checks_in("fuzz")


@pytest.fixture(scope="module")
def report(server):
    return certify(from_server_facts(server.facts, seed=SEED), check_ids=fuzz_checks())


def test_passes_on_the_reference_server(report):
    bad = [(c["id"], c["message"][:400]) for c in report["checks"] if c["status"] not in ("passed", "not_assessed")]
    assert not bad
    passed = [c for c in report["checks"] if c["status"] == "passed"]
    assert len(passed) >= 40, f"only {len(passed)} fuzz checks judged anything"
    for rid in ("GEN-ERR-001", "GEN-ERR-004", "INV-ERR-002", "INV-ERR-004", "INV-ERR-005", "AGUI-ERR-001",
                "AUTH-KEY-002", "AUTH-KEY-003", "AUTH-MCP-003", "MCP-ERR-001", "META-DOC-001", "META-STATE-002"):
        assert any(rid in c["requirements"] and c["status"] == "passed" for c in report["checks"]), rid


def test_cost_share_and_counts_in_the_note(report):
    assert report["cost"]["requests"] <= REQUEST_BUDGET, report["cost"]
    assert report["cost"]["agent_runs"] <= RUN_BUDGET, report["cost"]
    notes = [c["message"] for c in report["checks"] if c["status"] == "passed"]
    assert any("schemathesis invoke:" in n and "agent runs" in n for n in notes)


def test_no_credential_in_the_recording(server):
    target = from_server_facts(server.facts, seed=SEED)
    with httpx.Client(verify=ssl.create_default_context(cafile=target.ca_bundle)) as http:
        def send(p):
            method, url, headers, body = p.case.wire(target.base_url)
            return http.request(method, url, headers=headers, **body)

        result, sent = fuzz.run_operation("invoke", target, lambda label: f"conf-test-{label}", send)
    assert [s.record for s in sent] == result["cases"]
    text = json.dumps(result)
    for secret in target.secrets:
        assert secret not in text
    assert any(c["kind"] == "no-auth" and c["request"]["headers"]["Authorization"] == "(none)"
               for c in result["cases"])


def _judge_broken(name: str, requirement: str) -> dict:
    b = load_zoo()[name]
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts, seed=SEED)
        report = certify(target, check_ids=fuzz_checks())
    row = next(r for r in report["requirements"] if r["id"] == requirement)
    assert not any(s in json.dumps(report) for s in target.secrets)
    return {"row": row, "report": report}


def test_fails_a_server_that_answers_a_refusal_with_500():
    # a 500 is no refusal: the status rule of refusals (GEN-ERR-001) is broken, not the rule that it be refused
    got = _judge_broken("INV-ERR-005-invalid-json-answers-500", "GEN-ERR-001")
    assert got["row"]["status"] == "failed", got["row"]
    assert "500" in got["row"]["message"] and "not valid JSON" in got["row"]["message"]
    assert "sent (negative" in got["row"]["message"]       # the reproducing request (credential redacted)


def test_fails_a_server_with_a_malformed_error_body():
    got = _judge_broken("GEN-ERR-004-validation-request-id-without-req", "GEN-ERR-004")
    assert got["row"]["status"] == "failed", got["row"]
    assert "requestId" in got["row"]["message"]
    # the malformed requestId breaks only the requirement that states it
    others = {r["id"]: r["status"] for r in got["report"]["requirements"]
              if r["id"] in ("GEN-ERR-001", "GEN-ERR-002", "GEN-ERR-003", "INV-ERR-002")}
    assert set(others.values()) <= {"passed", "not_assessed"}, others


@pytest.mark.parametrize("body, expected", [
    (b"\x00", ["INV-ERR-005"]),
    ([1, 2], ["INV-ERR-005"]),
    ({"stream": True}, ["INV-ERR-004"]),
    ({"prompt": 42}, ["INV-ERR-002"]),
    ({"prompt": "x", "stream": "yes"}, ["INV-ERR-003"]),
    ({"prompt": "x", "sessionId": ""}, ["INV-SESS-006"]),
    ({"prompt": "x", "sessionId": "s" * 257}, ["INV-SESS-006"]),
    ({"prompt": "x", "sessionId": 42}, []),          # a stated type with no requirement of its own: not judged
    ({"prompt": "x", "messages": 5}, []),
    ({"prompt": "x", "stream": None}, []),           # null for an optional field: read as absent or refused
    ({"prompt": None}, []),                          # missing (no code stated) or not a string: the code is open
    ({"prompt": "x", "sessionId": "é" * 257}, []),   # non-ASCII: the count depends on what a character is
    ({"prompt": "x", "sessionId": "\U0001f600" * 200}, []),
])
def test_invoke_negative_data_is_must_refuse_only_where_the_spec_says(body, expected):
    found = fuzzing.raw_defects("invoke", body) if isinstance(body, bytes) else fuzzing.invoke_defects(body)
    assert [d[0] for d in found] == expected


@pytest.mark.parametrize("body, expected", [
    ({"runId": "r"}, ["AGUI-ERR-001"]),
    ({"messages": []}, ["AGUI-ERR-002"]),
    ({"messages": [{"id": "1", "role": "assistant", "content": "x"}]}, ["AGUI-ERR-003"]),
    ({"resume": []}, []),
    ({"messages": [{"role": "user", "content": "x"}]}, []),     # a message without id: not stated as a refusal
    ({"messages": [{"id": "1", "role": "user", "content": "x"}], "threadId": ""}, ["AGUI-SESS-004"]),
    ({"messages": None}, []),                                   # null: read as absent or refused
    ({"messages": [{"id": 1, "role": "assistant", "content": "x"}]}, ["AGUI-ERR-003"]),   # and another rule: below
])
def test_agui_negative_data_is_must_refuse_only_where_the_spec_says(body, expected):
    assert [d[0] for d in fuzzing.agui_defects(body)] == expected


@pytest.mark.parametrize("op, body, why", [
    ("invoke", {"prompt": "x", "stream": None}, "`stream` is null"),
    ("invoke", {"prompt": ""}, "empty string"),
    ("invoke", {"prompt": "x", "messages": [{"role": "user", "content": "y"}]}, "items is not shown"),
    ("invoke", {"prompt": "x", "n": 2**60}, "beyond"),
    ("invoke", {"prompt": "x\x00"}, "U+0000"),
    ("invoke", {"prompt": "x", "data": "d" * 5000}, "extra data field"),
    ("agui", {"messages": [{"id": 1, "role": "assistant", "content": "x"}]}, "`messages[0].id` is not a string"),
    ("agui", {"messages": [{"id": "1", "role": "user", "content": "x"}], "runId": ""}, "empty string"),
    ("agui", {"messages": [{"id": "1", "role": "tool", "content": "x"}, {"id": "2", "role": "user", "content": "y"}]},
     "roles other than user and assistant"),
    ("agui", {"messages": [{"id": "1", "role": "user", "content": "x", "name": "n"}]}, "fields the spec does not show"),
    ("agui", {"messages": [{"id": "1", "role": "user", "content": "x"}], "resume": None}, "`resume` is null"),
    ("agui", {"messages": [{"id": "1", "role": "user", "content": "x"}], "tools": 5}, "typed list"),
    ("invoke", b'\xef\xbb\xbf{"prompt": "x"}', "lenient reader"),
    ("invoke", b'{"prompt": "x", "prompt": 1}', "lenient reader"),
    ("mcp", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], "batch"),
])
def test_a_case_whose_answer_the_spec_leaves_open_is_not_judged(op, body, why):
    p = fuzzing.probe(op, "negative", None, body)
    assert not p.judged
    assert any(why in reason for reason in p.open_reasons), p.open_reasons


def test_a_violation_nested_in_messages_is_another_broken_rule():
    """The reported case: no user message (invalid_request) and message ids that are numbers (validation_failed):
    either code is right, so the case is not judged at all."""
    body = {"messages": [{"id": 1, "role": "assistant", "content": "x"}, {"id": 2, "role": "assistant", "content": "y"}]}
    defects = fuzzing.agui_defects(body)
    assert [d[0] for d in defects] == ["AGUI-ERR-003"]
    assert fuzzing.expected_code(defects, fuzzing.other_broken_fields("agui", body, defects)) is None
    assert not fuzzing.probe("agui", "negative", None, body).judged


def test_refusal_code_is_asserted_only_when_every_defect_states_the_same():
    assert fuzzing.expected_code([("INV-ERR-002", "validation_failed", ""), ("INV-ERR-003", "validation_failed", "")]) \
        == "validation_failed"
    assert fuzzing.expected_code([("INV-ERR-004", None, ""), ("INV-ERR-003", "validation_failed", "")]) is None


# -- the run's seed reproduces the generated inputs; generation never replays ---------------------------
def _offline_target(seed):
    from types import SimpleNamespace
    return SimpleNamespace(agent_id="agt_seed", api_key="ais_live_seed", depth=1, seed=seed, secrets=("ais_live_seed",))


def _drawn(name, seed):
    counter = iter(range(10_000))
    plan = fuzz.Plan(_offline_target(seed), lambda label: f"{label}-{next(counter)}", tool="ask_seed")
    probes = fuzz.build_probes(name, plan, 1, seed)
    return [(p.kind, repr(p.body), sorted((p.case.headers or {}).items())) for p in probes]


@pytest.mark.parametrize("name", ["invoke", "agui", "mcp"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_case_sent_has_one_right_answer(name, seed):
    """Positives break nothing, negatives exactly one stated rule with everything else valid, headers are the ones
    the spec names (an Accept that agrees with `stream`), each case has its own step label."""
    counter = iter(range(10_000))
    plan = fuzz.Plan(_offline_target(seed), lambda label: f"{label}-{next(counter)}", tool="ask_seed")
    probes = fuzz.build_probes(name, plan, 1, seed)
    assert probes and all(p.judged for p in probes), [p.open_reasons for p in probes if not p.judged]
    assert len({p.label for p in probes}) == len(probes) and all(p.label.startswith("fuzz-") for p in probes)
    for p in probes:
        assert len(p.defects) == (p.kind == "negative" and name != "mcp"), (p.kind, p.defects, p.body)
        assert fuzzing.issues_of(name, p.body) == [i for i in fuzzing.issues_of(name, p.body) if i.requirement]
        if name == "mcp":
            continue
        headers = p.case.headers or {}
        assert set(headers) <= {"Authorization", "Accept"}, headers
        stream = p.body.get("stream") if isinstance(p.body, dict) else None
        accept = headers.get("Accept")
        assert accept in (None, "text/event-stream") + (("application/json",) if name == "invoke" else ())
        assert not (stream is True and accept == "application/json" or stream is False and accept == "text/event-stream")
    kinds = [p.kind for p in probes]
    assert kinds.count("no-auth") == 1 and kinds[-1] == "no-auth"
    assert "Authorization" not in (probes[-1].case.headers or {})


def test_a_drawn_negative_is_repaired_to_break_one_stated_rule():
    counter = iter(range(100))
    plan = fuzz.Plan(_offline_target(1), lambda label: f"{label}-{next(counter)}")
    body, kept = plan.negative("invoke", {"prompt": 5, "stream": None, "sessionId": 7, "messages": [1], "x": 2**70}, {})
    assert kept == "INV-ERR-002" and body == {"x": fuzzing.SAFE_INTEGER, "prompt": 5}
    body, kept = plan.negative("agui", {"messages": [{"id": 1, "role": "system", "content": "", "name": 3}],
                                        "threadId": None, "runId": "", "tools": 1}, {})
    assert kept == "AGUI-ERR-003"
    assert body == {"messages": [{"id": "fz-0", "role": "assistant", "content": "fz"}]}
    assert plan.negative("invoke", {"prompt": "x", "stream": None}, {}) is None     # nothing stated to judge


@pytest.mark.parametrize("name", ["invoke", "agui", "mcp"])
def test_the_same_seed_draws_the_same_schemathesis_cases(name):
    first, again, other = _drawn(name, 4242), _drawn(name, 4242), _drawn(name, 7)
    assert first == again
    assert first != other


def test_the_same_seed_draws_the_same_hypothesis_inputs(monkeypatch):
    from conformance import generate
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "")                 # drawn every time
    assert generate.texts(8, 99) == generate.texts(8, 99)
    assert generate.extra_fields(4, 99) == generate.extra_fields(4, 99)
    assert generate.extra_fields(4, 99) != generate.extra_fields(4, 100)


def test_a_crashing_generator_is_a_suite_fault_not_a_flaky_failure():
    from hypothesis import strategies as st
    from conformance import generate
    from conformance.outcomes import SuiteFault
    calls = []

    def crash_once(x):
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("generator bug")
        return x

    with pytest.raises(SuiteFault, match="RuntimeError: generator bug"):
        generate.examples(st.integers().map(crash_once), 3, 1)


def test_a_crashing_check_is_a_suite_fault_and_nothing_is_sent_twice(monkeypatch):
    from conformance.outcomes import SuiteFault
    sent = []

    def send(p):
        import datetime
        sent.append(p)
        r = httpx.Response(400, headers={"content-type": "application/json"},
                           json={"error": {"code": "x", "message": "m", "requestId": "req_1"}},
                           request=httpx.Request("POST", "https://server.test/"))
        r.elapsed = datetime.timedelta(seconds=0.01)
        return r

    def broken_check(ctx, response, case):
        raise KeyError("our bug")

    result, cases = fuzz.run_operation("invoke", _offline_target(5), lambda label: label, send)
    assert len(sent) == len(cases) == result["requests"] >= 1       # every case sent once, none judged yet
    monkeypatch.setattr(judging, "CUSTOM_CHECKS", [broken_check])
    rec = canned.recording("fuzz.invoke", [], facts={"fuzz": result, "fuzz_sent": cases})
    for check_id in ("fuzz.invoke_inv_err_005", "fuzz.invoke_gen_err_001"):     # every check of the recording
        with pytest.raises(SuiteFault, match="KeyError"):
            registry.load_all()[check_id].fn(rec)
    assert len(sent) == len(cases)                                   # judging sent nothing


def test_positive_mcp_cases_call_the_tool_with_matching_headers_and_meta():
    counter = iter(range(100))
    plan = fuzz.Plan(_offline_target(3), lambda label: f"{label}-{next(counter)}", tool="ask_seed")
    positives = [p for p in fuzz.build_probes("mcp", plan, 1, 3) if p.kind == "positive"]
    assert positives
    for p in positives:
        assert p.body["method"] == "tools/call" and p.body["params"]["name"] == "ask_seed"
        assert p.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert p.body["params"]["arguments"]["prompt"].startswith(fuzz.PROMPT_PREFIX)
        h = p.case.headers
        assert (h["MCP-Protocol-Version"], h["Mcp-Method"], h["Mcp-Name"]) == ("2026-07-28", "tools/call", "ask_seed")
        assert h["Authorization"].startswith("Bearer ")
        assert p.may_run


def test_problem_json_refusal_is_no_undocumented_content_type():
    request = httpx.Request("POST", "https://server.test/")
    body = {"error": {"code": "validation_failed", "message": "m", "requestId": "req_1", "details": {}}}
    problem = httpx.Response(422, request=request, headers={"content-type": "application/problem+json"}, json=body)
    assert judging.documented("invoke", problem) == []
    text = httpx.Response(422, request=request, headers={"content-type": "text/plain"}, content=b"no")
    assert [d.title for d in judging.documented("invoke", text)] == ["Undocumented Content-Type"]


def test_generated_requests_run_the_agent_on_every_operation(report):
    import re
    runs = {}
    for c in report["checks"]:
        for op, n in re.findall(r"schemathesis (\w+): \d+ requests, (\d+) agent runs", c.get("message") or ""):
            runs[op] = int(n)
    assert runs.get("invoke", 0) > 0 and runs.get("agui", 0) > 0 and runs.get("mcp", 0) > 0, runs


def test_generated_mcp_calls_are_judged():
    got = _judge_broken("MCP-METH-005-integer-id-as-string", "MCP-METH-005")
    assert got["row"]["status"] == "failed", got["row"]
    assert "tools/call" in got["row"]["message"] and "got: 200" in got["row"]["message"]


def test_a_case_the_suite_gave_up_waiting_for_is_unsent_not_the_servers_fault(server):
    """The bridge's wait for a turn under a rate limit ran out: the case is counted as not sent, never recorded
    as a transport failure of the server (and never an IndexError on an empty message)."""
    import concurrent.futures

    target = from_server_facts(server.facts, seed=SEED)

    def send(p):
        raise concurrent.futures.TimeoutError()

    result, sent = fuzz.run_operation("metadata", target, lambda label: f"conf-test-{label}", send)
    assert sent == [] and result["cases"] == [] and result["requests"] == 0
    assert result["skipped"] > 0


def test_the_same_broken_server_and_seed_give_the_same_statuses():
    """Same server, same seed: the same cases are sent and judged alike, so every requirement ends the same."""
    def statuses() -> dict[str, str]:
        got = _judge_broken("GEN-ERR-004-validation-request-id-without-req", "GEN-ERR-004")["report"]
        return {r["id"]: r["status"] for r in got["requirements"]}

    first, again = statuses(), statuses()
    assert first == again
    assert first["GEN-ERR-004"] == "failed"
