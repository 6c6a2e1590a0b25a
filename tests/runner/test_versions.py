"""The version model (`conformance/versions.py`) as data and its twins, without a server."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance import canned, judging, registry, report
from conformance.engine import PREFLIGHT, Recording
from conformance.outcomes import NotAssessed, judge_all, on, precondition
from conformance.registry import SCENARIOS, Check
from conformance.versions import (FACT, HTTP1, HTTP2, HTTP2_SCENARIOS, is_twin, of_requirement, one_root, summary,
                                  twin_name)
from conformance.wire.redact import Redactor


def test_every_twin_is_registered_with_the_scenarios_before_any_run() -> None:
    """The twins exist once the scenario modules are imported: a run never registers one while its recording threads
    read `SCENARIOS` (a dict that grows under a reader fails it)."""
    registry.load_all()
    assert {s for s in SCENARIOS if is_twin(s)} == {twin_name(s) for s in HTTP2_SCENARIOS}
    for name in HTTP2_SCENARIOS:
        assert dataclasses.replace(SCENARIOS[twin_name(name)], name=name) == SCENARIOS[name]


def test_a_derived_scenario_is_registered_for_those_before_and_after() -> None:
    registry.load_all()
    before = registry.Scenario("test.derive.before", lambda ctx: None, ("invoke",))
    SCENARIOS[before.name] = before
    maker = lambda scn: [dataclasses.replace(scn, name=scn.name + "@x")] if scn.name.startswith("test.derive.") else []
    try:
        registry.derive(maker)
        assert SCENARIOS["test.derive.before@x"].fn is before.fn

        @registry.scenario("test.derive.after", protocol="invoke", steps=())
        async def after(ctx) -> None:
            """A scenario registered after the maker."""
        assert SCENARIOS["test.derive.after@x"].fn is after
    finally:
        registry._DERIVERS.remove(maker)
        for name in [n for n in SCENARIOS if n.startswith("test.derive.")]:
            del SCENARIOS[name]


# -- one result per check over two versions ------------------------------------------------------------------

JSON = {"content-type": "application/json"}
INVOKE = "https://server.test/v1/agents/agt_canned/invoke"


def answer(status: int, version: str, label: str = "json-plain_reply", url: str = INVOKE) -> Any:
    return dataclasses.replace(canned.exchange(status, JSON, body={"status": "completed"}, label=label, url=url,
                                               request_headers={"accept": "application/json"}),
                               http_version=version)


@dataclass
class Source:
    """A run's recordings as judging reads them, with the preflight's fact of HTTP/2."""
    recordings: dict[str, Any]
    http2: bool = True
    preflight_error: str | None = None
    redactor: Redactor = field(default_factory=Redactor)

    def __post_init__(self) -> None:
        self.preflight = canned.recording(PREFLIGHT, [], facts={FACT: {"spoken": self.http2, "why": "spoken: test"}})

    def recording(self, name: str) -> Any:
        return self.recordings.get(name) or NotAssessed(f"scenario {name} was not run")


def status_200(rec: Recording) -> None:
    ex = rec.get("json-plain_reply")
    with on(ex):
        assert ex.status == 200, f"expected 200, got {ex.status}"


def runs(h1: int, h2: int | None, version2: str = HTTP2) -> dict[str, Any]:
    got = {"invoke.runs": canned.recording("invoke.runs", [answer(h1, HTTP1)])}
    if h2 is not None:
        got["invoke.runs@h2"] = canned.recording("invoke.runs@h2", [answer(h2, version2)])
    return got


CHECK = Check("invoke.status_200_test", status_200, ("INV-RES-001",), ("invoke.runs",))


def test_a_failure_over_http2_alone_names_its_version_where_every_report_shows_it() -> None:
    got = judging.assess(Source(runs(200, 201)), CHECK)
    assert got.status == "failed"
    assert got.message.startswith("json-plain_reply over HTTP/2 (over HTTP/1.1 it passed): expected 200, got 201")
    first = got.evidence[0]
    assert first["scenario"] == "invoke.runs@h2" and "< HTTP/2 201" in first["transcript"]
    assert " --http2 " in first["curl"]
    assert got.http_versions == (HTTP1, HTTP2) and got.version_only == (HTTP2, "invoke")


def test_a_failure_over_both_versions_says_so_and_shows_each() -> None:
    got = judging.assess(Source(runs(201, 201)), CHECK)
    assert got.message.startswith("json-plain_reply over HTTP/1.1 and HTTP/2: expected 200, got 201")
    assert [e["scenario"] for e in got.evidence] == ["invoke.runs", "invoke.runs@h2"]
    assert got.version_only == ()


def test_a_failure_over_http1_alone_says_http2_passed() -> None:
    got = judging.assess(Source(runs(201, 200)), CHECK)
    assert got.message.startswith("json-plain_reply over HTTP/1.1 (over HTTP/2 it passed): ")
    assert " --http1.1 " in got.evidence[0]["curl"] and got.version_only == (HTTP1, "invoke")


def test_a_finding_read_over_http1_alone_against_an_http2_target_says_so() -> None:
    untwinned = Check("invoke.key_test", status_200, ("INV-RES-001",), ("invoke.key_lengths",))
    source = Source({"invoke.key_lengths": canned.recording("invoke.key_lengths", [answer(201, HTTP1)])})
    got = judging.assess(source, untwinned)
    assert got.message.startswith("json-plain_reply over HTTP/1.1 (not sent over HTTP/2): ")
    assert got.left_out and got.http_versions == (HTTP1,)
    not_recorded = judging.assess(Source(runs(201, None)), CHECK)
    assert not_recorded.message.startswith("json-plain_reply over HTTP/1.1 (not assessed over HTTP/2): ")
    assert "was not run" in not_recorded.left_out


def test_a_target_of_http1_alone_keeps_every_message_as_the_check_wrote_it() -> None:
    got = judging.assess(Source(runs(201, None), http2=False), CHECK)
    assert got.message.startswith("json-plain_reply: expected 200, got 201") and got.http_versions == (HTTP1,)


def test_a_precondition_broken_over_http2_alone_blocks_with_the_version_named() -> None:
    def reads_result(rec: Recording) -> None:
        ex = rec.get("json-plain_reply")
        if ex.status != 200:
            raise precondition("INV-RES-001", ex, f"expected 200, got {ex.status}")
    got = judging.assess(Source(runs(200, 201)), Check("invoke.reads_test", reads_result, ("INV-RES-002",),
                                                       ("invoke.runs",)))
    assert got.status == "blocked" and got.blocked_by == "INV-RES-001"
    assert got.message.startswith("json-plain_reply over HTTP/2 (over HTTP/1.1 it passed): ")


def test_a_step_left_out_over_http2_is_not_assessed_there_with_its_reason() -> None:
    def two_mb(rec: Recording) -> None:
        rec.get("body-over-1mb")
    base = canned.recording("invoke.refusals", [answer(413, HTTP1, "body-over-1mb")])
    source = Source({"invoke.refusals": base, "invoke.refusals@h2": canned.recording("invoke.refusals@h2", [])})
    got = judging.assess(source, Check("invoke.two_mb_test", two_mb, ("INV-LIM-002",), ("invoke.refusals",)))
    assert got.status == "passed" and got.http_versions == (HTTP1,)
    assert got.left_out.startswith("body-over-1mb is not sent over HTTP/2: a body over 1 MB")


# -- one root --------------------------------------------------------------------------------------------------
def test_a_fault_over_one_version_on_one_operation_is_one_root_with_the_rest_blocked() -> None:
    other = {"access.invoke": canned.recording("access.invoke", [answer(200, HTTP1, "accepted")]),
             "access.invoke@h2": canned.recording("access.invoke@h2", [answer(201, HTTP2, "accepted")])}
    source = Source({**runs(200, 201), "invoke.runs@h2": canned.recording("invoke.runs@h2", [
        answer(201, HTTP2), answer(201, HTTP2, "json-streamed_reply")]), **other})

    def is_200(ex: Any) -> None:
        assert ex.status == 200, f"expected 200, got {ex.status}"

    def both_runs(rec: Recording) -> None:
        judge_all(rec.exchanges, is_200)

    def accepted(rec: Recording) -> None:
        ex = rec.get("accepted")
        with on(ex):
            assert ex.status == 200, f"the API key accepted: expected 200, got {ex.status}"
    checks = [Check("invoke.result_test", both_runs, ("INV-RES-001",), ("invoke.runs",)),
              Check("invoke.base_test", status_200, ("GEN-BASE-003",), ("invoke.runs",)),
              Check("auth.accepted_test", accepted, ("AUTH-KEY-001",), ("access.invoke",))]
    results = [judging.assess(source, c) for c in checks]
    assert [r.status for r in results] == ["failed"] * 3
    resolved = report.resolve_blocked(results)
    assert [(r.status, r.blocked_by) for r in resolved] == [("failed", None), ("blocked", "INV-RES-001"),
                                                           ("blocked", "INV-RES-001")]
    assert "one fault over HTTP/2 alone, on invoke as INV-RES-001's" in resolved[2].message
    rows = {r["id"]: r for r in report.requirement_rows(results, {"INV-RES-001": ["invoke.result_test"],
                                                                  "GEN-BASE-003": ["invoke.base_test"],
                                                                  "AUTH-KEY-001": ["auth.accepted_test"]}, {})}
    assert rows["INV-RES-001"]["status"] == "failed" and rows["INV-RES-001"]["http_versions"] == [HTTP1, HTTP2]
    assert sorted(rows["INV-RES-001"]["blocks"]) == ["AUTH-KEY-001", "GEN-BASE-003"]
    assert rows["GEN-BASE-003"]["status"] == "not_assessed" and rows["GEN-BASE-003"]["blocked_by"] == ["INV-RES-001"]


def test_failures_over_both_versions_are_not_made_one_root() -> None:
    source = Source(runs(201, 201))
    results = [judging.assess(source, CHECK),
               judging.assess(source, Check("invoke.base_test", status_200, ("GEN-BASE-003",), ("invoke.runs",)))]
    assert [r.status for r in one_root(results)] == ["failed", "failed"]


# -- the report's account of the versions ----------------------------------------------------------------------
def test_an_exchange_over_another_version_is_explained_and_not_counted_as_judged() -> None:
    go_answer = dataclasses.replace(answer(400, "HTTP/1.0", "cleartext", url="http://server.test/v1/agents/a/invoke"))
    rec = canned.recording("invoke.cleartext", [go_answer, answer(401, HTTP1, "decoy-over-https")])
    downgraded = canned.recording("invoke.runs@h2", [answer(200, HTTP1)])
    source = Source({"invoke.cleartext": rec, "invoke.runs": canned.recording("invoke.runs", [answer(200, HTTP1)]),
                     "invoke.runs@h2": downgraded})
    results = [judging.assess(source, Check("invoke.cleartext_test", lambda rec: None, ("GEN-BASE-002",),
                                            ("invoke.cleartext",))), judging.assess(source, CHECK)]
    assert results[0].http_versions == (HTTP1,)
    got = summary(source, [dataclasses.replace(r, check=c) for r, c in zip(results, ("invoke.cleartext_never_served",
                                                                                    "invoke.result_is_json_200"))])
    assert got["judged"] == [HTTP1]
    assert got["exchanges"] == {"HTTP/1.0": 1, HTTP1: 3}
    whys = {(o["scenario"], o["label"], o["http_version"]): o["why"] for o in got["other"]}
    assert "plain http:// on purpose" in whys[("invoke.cleartext", "cleartext", "HTTP/1.0")]
    assert "picked http/1.1 there" in whys[("invoke.runs@h2", "json-plain_reply", HTTP1)]


@pytest.mark.parametrize("requirement, versions_", [("INV-SEL-002", [HTTP1, HTTP2]), ("AGUI-LIM-002", [HTTP1]),
                                                    ("GEN-BASE-002", [HTTP1])])
def test_the_model_says_per_requirement_what_it_judges_over_http2(requirement: str, versions_: list[str]) -> None:
    registry.load_all()
    got = of_requirement(requirement)
    assert got["http_versions"] == versions_
    assert bool(got["http2_left_out"]) == (HTTP2 not in versions_)


def test_rejudge_holds_a_report_to_what_it_says_of_the_versions() -> None:
    """A report of an earlier version says less of the versions (no `other`, no `left_out`): re-judged by this one,
    what it says must hold, and only that."""
    from conformance.rejudge import differences
    rebuilt = {"verdict": "conformant", "requirements": [], "checks": [], "summary": {},
               "http_versions": {"judged": [HTTP1], "exchanges": {HTTP1: 3}, "http2": "not spoken", "other": [],
                                 "left_out": []}}
    earlier = {**rebuilt, "http_versions": {"judged": [HTTP1], "exchanges": {HTTP1: 3}, "http2": "not spoken"}}
    assert differences(earlier, rebuilt) == []
    wrong = {**rebuilt, "http_versions": {**earlier["http_versions"], "judged": [HTTP1, HTTP2]}}
    assert [d.split(":")[0] for d in differences(wrong, rebuilt)] == ["http_versions"]
