"""The invoke checks against the reference server, and against servers they must fail.

* On the reference server every MUST and SHOULD the invoke checks cover passes (MAY: passed or
  info); GEN-RATE-003 needs a 429, so it is proved on a rate-limited reference server.
* Without `--extra-data-field` the extra-data checks are not assessed, naming the option.
* GEN-BASE-001/002 cannot be broken with ASGI middleware (TLS sits below it): their broken servers
  live in tests/selftest/zoo_invoke.py as listeners beside the reference server; the zoo test runs them.
* The invoke scenarios stay within their cost share.
"""
from __future__ import annotations

import dataclasses

import pytest

from conformance import canned, catalog, registry
from conformance.api import certify
from conformance.outcomes import NotAssessed
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.vocab import sequences
from conformance.vocab.steps import invoke as steps
from tests.checks.support import checks_in

MODULE = "conformance.checks.invoke"
NEEDS_429 = {"GEN-RATE-003"}
EXTRA_DATA = {"INV-PASS-003", "INV-LIM-003", "INV-LIM-004", "INV-LIM-005"}
# the invoke share of a default run, generated inputs excluded (runs: 45 with the input forms, and 20 for the
# chains, overlaps, long runs and the chain across protocols), the history across protocols (about 52 requests) and
# the silences (4)
REQUEST_BUDGET, RUN_BUDGET = 110 + 57 + 5, 65 + 57 + 5


def invoke_checks(*, generated: bool | None = None) -> list[str]:
    return checks_in("invoke", generated=generated)


def covered_ids() -> list[str]:
    reqs = catalog.load()
    # (the checks over the sequence scenarios are extra evidence of rules other modules' scripted checks judge)
    return sorted({r for c in registry.load_all().values() if c.module == MODULE
                   and not set(c.scenarios) <= set(sequences.CHAINS) for r in c.requirements if reqs[r].testable})


IDS = covered_ids()


@pytest.fixture(scope="module")
def report(server):
    return certify(from_server_facts(server.facts), requirements=IDS, check_ids=invoke_checks())


@pytest.fixture(scope="module")
def own_report(server):
    """Only the invoke scenarios (no generated inputs): what the invoke share costs."""
    return certify(from_server_facts(server.facts), check_ids=invoke_checks(generated=False))


@pytest.fixture(scope="module")
def no_field_report(server):
    target = dataclasses.replace(from_server_facts(server.facts), extra_data_field=None)
    return certify(target, check_ids=invoke_checks(generated=False))


def rows(report) -> dict[str, dict]:
    return {r["id"]: r for r in report["requirements"]}


def test_every_invoke_requirement_is_covered():
    reqs = catalog.load()
    wanted = [rid for rid, r in reqs.items() if r.testable and
              (rid.startswith("INV-") or rid.startswith(("GEN-ERR-", "GEN-BASE-", "GEN-RATE-")))]
    assert not [rid for rid in wanted if rid not in IDS]


def test_no_check_fails_or_errors(report):
    bad = [(c["id"], c["status"], c["message"][:300]) for c in report["checks"] if c["status"] in ("failed", "error")]
    assert not bad, bad


@pytest.mark.parametrize("rid", [r for r in IDS if r not in NEEDS_429])
def test_requirement_passes_on_the_reference_server(report, rid):
    row = rows(report)[rid]
    allowed = ("passed", "info") if row["level"] == "MAY" else ("passed",)
    assert row["status"] in allowed, (rid, row["status"], row["message"][:500])


def test_retry_after_needs_a_429(report):
    row = rows(report)["GEN-RATE-003"]
    assert row["status"] == "not_assessed" and "no 429" in row["message"], row


def test_retry_after_judges_the_429s_it_saw():
    """Canned: the 429s the client waited on, and a final 429, are judged on their Retry-After."""
    fn = registry.CHECKS["invoke.retry_after_is_seconds"].fn
    waited = canned.exchange(200, {"content-type": "application/json"}, body={"status": "completed"},
                             label=steps.RUN_JSON.of("plain_reply"))
    waited.waited_429 = [1.0]
    final = canned.exchange(429, {"retry-after": "2", "content-type": "application/json"}, body={"error": {}},
                            label=steps.RUN_JSON.of("step"))
    assert "429" in fn(canned.recording("invoke.runs", [waited, final]))
    bad = canned.exchange(429, {"retry-after": "1.5"}, body=b"", label=steps.RUN_JSON.of("plain_reply"))
    with pytest.raises(AssertionError, match="whole seconds"):
        fn(canned.recording("invoke.runs", [bad]))
    with pytest.raises(NotAssessed, match="no 429"):
        fn(canned.recording("invoke.runs", [canned.exchange(200, {}, body=b"{}",
                                                             label=steps.RUN_JSON.of("plain_reply"))]))


def test_stream_false_with_accept_sse_is_reported(report):
    row = rows(report)["INV-SEL-005"]
    assert row["status"] == "info" and "answered" in row["message"], row


def test_extra_data_checks_need_the_field_name(no_field_report):
    by_id = rows(no_field_report)
    for rid in EXTRA_DATA:
        assert by_id[rid]["status"] == "not_assessed", (rid, by_id[rid])
        assert "--extra-data-field" in by_id[rid]["message"], (rid, by_id[rid]["message"])
    extra_checks = [c for c in no_field_report["checks"] if c["id"].endswith("__extra_data")
                    or set(c["requirements"]) & EXTRA_DATA]
    assert extra_checks and all(c["status"] == "not_assessed" for c in extra_checks), extra_checks


def test_without_the_field_the_refusal_requirement_is_partly_assessed(no_field_report):
    """The other refusals still prove no run started, but the extra-data refusal was not sent: partly assessed is
    not assessed, and the message says what was seen."""
    row = rows(no_field_report)["INV-ERR-006"]
    assert row["status"] == "not_assessed", row
    assert "partly assessed" in row["message"] and "refusal_starts_no_run__refusals" in row["message"]
    assert "--extra-data-field" in row["message"]


def test_invoke_share_of_the_cost(own_report):
    cost = own_report["cost"]
    assert cost["requests"] <= REQUEST_BUDGET and cost["agent_runs"] <= RUN_BUDGET, cost
