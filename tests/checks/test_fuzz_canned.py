"""The schemathesis checks on recorded cases built by hand, without a server: each rule passes a correct answer
and fails a wrong one on its requirement, a case without an answer is the transport's finding, and a recording
with nothing to judge is not assessed, never passed."""
from __future__ import annotations

import datetime
import json
from typing import Any

import httpx
import pytest

from conformance import canned, registry
from conformance.checks import fuzz as judging
from conformance.outcomes import NotAssessed, SuiteFault
from conformance.scenarios import fuzz
from conformance.vocab import fuzzing

AGENT = canned.DEFAULT_TARGET.agent_id
SECRET = canned.DEFAULT_TARGET.api_key
ERROR = {"error": {"code": "invalid_request", "message": "the body is not JSON", "requestId": "req_1"}}


def probe(op: str, kind: str, body: Any, label: str | None = None) -> fuzzing.Probe:
    """A generated case of `op` as the scenario would have built it (its defects from the shared rules)."""
    headers = {} if kind == "no-auth" else {"Authorization": f"Bearer {SECRET}"}
    case = fuzzing.Request(op, {"agentId": AGENT}, headers, body=body, media_type="application/json")
    p = fuzzing.probe(op, kind, case, body)
    p.label = label or f"fuzz-{kind}-1"
    return p


def answered(p: fuzzing.Probe, status: int | None, body: Any = b"", content_type: str = "application/json",
             headers: dict[str, str] | None = None) -> fuzzing.Sent:
    """The case sent once and answered (status None: no answer), recorded as the scenario records it."""
    record = {"kind": p.kind, "label": p.label, "request": fuzz._redacted_request(p, (SECRET,)),
              "defects": [d[2] for d in p.defects]}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    exchange = canned.exchange(status, {"content-type": content_type, **(headers or {})}, body=content, label=p.label,
                               error="ReadTimeout: timed out" if status is None else None)
    if status is None:
        record.update(status=None, error="ReadTimeout: timed out")
        return fuzzing.Sent(p, None, record["error"], record, exchange)
    response = httpx.Response(status, headers={"content-type": content_type, **(headers or {})}, content=content,
                              request=httpx.Request(p.case.method, f"https://server.test{p.case.formatted_path}"))
    response.elapsed = datetime.timedelta(seconds=0.01)
    record.update(status=status, content_type=fuzzing.content_type(response), run=fuzzing.started_run(p, response),
                  answer=content[:300].decode("utf-8", "replace"),
                  response=fuzz._redacted_response(response, (SECRET,)))
    return fuzzing.Sent(p, response, None, record, exchange)


def recording(op: str, *cases: fuzzing.Sent):
    result = {"operation": op, "requests": len(cases), "runs": sum(bool(c.record.get("run")) for c in cases),
              "skipped": 0, "statuses": {}, "cases": [c.record for c in cases], "generated": len(cases), "seed": 1}
    return canned.recording(f"fuzz.{op}", [c.exchange for c in cases],
                            facts={"fuzz": result, "fuzz_sent": list(cases)})


def outcome(check_id: str, rec) -> tuple[str, str]:
    try:
        return "passed", registry.load_all()[check_id].fn(rec)
    except NotAssessed as exc:
        return "not_assessed", str(exc)
    except AssertionError as exc:
        return "failed", str(exc)


def test_a_refused_non_json_body_keeps_inv_err_005():
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 400, ERROR))
    status, note = outcome("fuzz.invoke_inv_err_005", rec)
    assert status == "passed", note
    assert outcome("fuzz.invoke_gen_err_004", rec)[0] == "passed"


def test_a_non_json_body_answered_500_breaks_gen_err_001_and_shows_the_request():
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 500, ERROR))
    assert outcome("fuzz.invoke_inv_err_005", rec)[0] == "passed"      # not accepted: a 500 is no refusal either
    status, message = outcome("fuzz.invoke_gen_err_001", rec)
    assert status == "failed"
    assert "expected a 4xx refusal (the body is not valid JSON), got 500" in message
    assert "sent (negative (the body is not valid JSON))" in message and "got: 500" in message
    assert SECRET not in message and "Bearer ***" in message


def test_a_malformed_request_id_breaks_only_gen_err_004():
    bad = {"error": {**ERROR["error"], "requestId": "abc"}}
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 400, bad))
    status, message = outcome("fuzz.invoke_gen_err_004", rec)
    assert status == "failed" and "requestId" in message
    assert outcome("fuzz.invoke_gen_err_001", rec)[0] == "passed"
    assert outcome("fuzz.invoke_inv_err_005", rec)[0] == "passed"


def test_a_refusal_with_another_stated_code_breaks_its_requirement():
    p = probe("invoke", "negative", {"prompt": 42})
    good = {"error": {"code": "validation_failed", "message": "m", "requestId": "req_1", "details": {}}}
    assert outcome("fuzz.invoke_inv_err_002", recording("invoke", answered(p, 422, good)))[0] == "passed"
    status, message = outcome("fuzz.invoke_inv_err_002", recording("invoke", answered(p, 400, ERROR)))
    assert status == "failed" and "expected error.code 'validation_failed', got 'invalid_request'" in message


def test_mcp_result_with_another_id_breaks_mcp_meth_005():
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    ok = {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}
    status, note = outcome("fuzz.mcp_mcp_meth_005", recording("mcp", answered(probe("mcp", "positive", body), 200, ok)))
    assert status == "passed", note
    status, message = outcome("fuzz.mcp_mcp_meth_005",
                              recording("mcp", answered(probe("mcp", "positive", body), 200, {**ok, "id": "7"})))
    assert status == "failed" and "response id '7' is not the request's id 7" in message


def test_no_answer_is_the_transport_finding_on_the_status_requirement():
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), None))
    status, message = outcome("fuzz.invoke_inv_err_005", rec)
    assert status == "failed" and "[transport] no answer: ReadTimeout" in message


def test_nothing_exercised_or_nothing_recorded_is_not_assessed():
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 400, ERROR))
    status, message = outcome("fuzz.invoke_inv_sess_006", rec)
    assert status == "not_assessed" and "no generated invoke request exercised INV-SESS-006" in message
    bare = canned.recording("fuzz.invoke", [], facts={"fuzz": rec.facts["fuzz"]})
    assert outcome("fuzz.invoke_inv_err_005", bare)[0] == "not_assessed"


def test_a_crash_while_judging_is_a_suite_fault_for_every_check(monkeypatch):
    def broken(ctx, response, case):
        raise KeyError("our bug")

    monkeypatch.setattr(judging, "CUSTOM_CHECKS", [broken])
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 400, ERROR))
    for check_id in ("fuzz.invoke_inv_err_005", "fuzz.invoke_gen_err_004"):
        with pytest.raises(SuiteFault, match="judging a generated invoke case crashed: KeyError"):
            registry.load_all()[check_id].fn(rec)


def test_each_recording_is_judged_once(monkeypatch):
    calls = []
    original = judging.judge
    monkeypatch.setattr(judging, "judge", lambda sent: calls.append(sent) or original(sent))
    rec = recording("invoke", answered(probe("invoke", "negative", b"\x00"), 400, ERROR))
    for check_id in ("fuzz.invoke_inv_err_005", "fuzz.invoke_gen_err_001", "fuzz.invoke_gen_err_004"):
        outcome(check_id, rec)
    assert len(calls) == 1


# -- judged only where the answer is unambiguous; a failure names its exchange ---------------------------------
VALIDATION = {"error": {"code": "validation_failed", "message": "m", "requestId": "req_1", "details": {}}}


def test_a_failure_names_every_exchange_that_broke_the_rule_and_starts_with_the_first_label():
    from conformance.outcomes import Deviation
    ok = answered(probe("invoke", "negative", b"\x00", "fuzz-negative-1"), 400, ERROR)
    first = answered(probe("invoke", "negative", {"stream": True}, "fuzz-negative-2"), 200, {"result": "x"})
    second = answered(probe("invoke", "negative", {"sessionId": "k"}, "fuzz-negative-3"), 201, {"result": "x"})
    with pytest.raises(Deviation) as caught:       # accepted: the rule that they be refused is broken
        registry.load_all()["fuzz.invoke_inv_err_004"].fn(recording("invoke", ok, first, second))
    assert caught.value.exchanges == (first.exchange, second.exchange)
    assert caught.value.message.startswith("fuzz-negative-2: 2 of 2 generated invoke requests broke INV-ERR-004")
    assert "\n  fuzz-negative-3: [" in caught.value.message


@pytest.mark.parametrize("op, body", [
    ("invoke", {"prompt": "x", "stream": None}),                                   # null: absent or refused
    ("agui", {"messages": [{"id": 1, "role": "assistant", "content": "x"}]}),      # two rules, two codes
    ("invoke", {"prompt": 42, "sessionId": ""}),                                   # two stated rules
])
def test_a_case_the_spec_leaves_open_is_never_judged_whatever_the_answer(op, body):
    rec = recording(op, answered(probe(op, "negative", body), 500, {"error": {"code": "boom"}}))
    for check_id in [c for c in registry.load_all() if c.startswith(f"fuzz.{op}_")]:
        status, note = outcome(check_id, rec)
        assert status == "not_assessed" and "not judged (the spec leaves their answer open)" in note, (check_id, note)


def test_a_429_judges_the_rate_limit_rules_only():
    p = probe("invoke", "negative", {"prompt": 42})
    limited = {"error": {"code": "rate_limited", "message": "slow down", "requestId": "req_1"}}
    rec = recording("invoke", answered(p, 429, limited, headers={"retry-after": "2"}))
    assert outcome("fuzz.invoke_inv_err_002", rec)[0] == "not_assessed"
    rec = recording("invoke", answered(p, 429, limited))                    # no Retry-After
    status, message = outcome("fuzz.invoke_gen_rate_003", rec)
    assert status == "failed" and "Retry-After" in message, message


@pytest.mark.parametrize("sent, echoed, status", [
    (7, 7.0, "passed"),                    # JSON has one number type: 7.0 is 7
    (7, "7", "failed"),
    ("7", "7", "passed"),
    (2**60 + 1, 2**60, "passed"),          # beyond 2^53 readers round: the echo is not compared
])
def test_an_mcp_id_is_judged_by_value_and_only_when_every_reader_reads_it_alike(sent, echoed, status):
    body = {"jsonrpc": "2.0", "id": sent, "method": "tools/list", "params": {}}
    answer = {"jsonrpc": "2.0", "id": echoed, "result": {"tools": []}}
    got, note = outcome("fuzz.mcp_mcp_meth_005", recording("mcp", answered(probe("mcp", "negative", body), 200, answer)))
    assert got == status, note


def test_a_refusal_in_an_undocumented_content_type_breaks_only_the_refusal_body_rule():
    """One deviation, one failure: the defect was refused (INV-ERR-002 held); the body's type breaks GEN-ERR-001."""
    good = {"error": {"code": "validation_failed", "message": "m", "requestId": "req_1", "details": {}}}
    rec = recording("invoke", answered(probe("invoke", "negative", {"prompt": 42}), 400, good,
                                       content_type="text/plain"),
                    answered(probe("invoke", "no-auth", {"prompt": "x"}), 401,
                             {"error": {"code": "unauthenticated", "message": "m", "requestId": "req_2"}},
                             content_type="text/plain"))
    assert outcome("fuzz.invoke_inv_err_002", rec)[0] == "passed"
    assert outcome("fuzz.invoke_auth_key_002", rec)[0] == "passed"
    status, message = outcome("fuzz.invoke_gen_err_001", rec)
    assert status == "failed" and "2 of 2" in message and "text/plain" in message, message
