"""A correct server with a tight rate limit is certified without a failure: the client paces itself from
X-RateLimit-Remaining and waits out a 429's Retry-After, so no requirement is judged on a 429 (issue 12).
The time it takes is the bucket's business and is not asserted."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.report import exit_code
from conformance.server import ReferenceServer, ServerConfig
from conformance.server.config import rate_limit_fields
from conformance.target import from_server_facts

RATE_LIMIT = "30/5"   # 30 requests, refilled at 6 a second: a default run needs about 40 s of it


@pytest.mark.xdist_group("ratelimit-certify")
def test_suite_passes_a_rate_limited_reference_server() -> None:
    with ReferenceServer(ServerConfig(**rate_limit_fields(RATE_LIMIT))) as srv:
        report = certify(from_server_facts(srv.facts))
    failed = [f"{r['id']}: {r.get('message', '')[:400]}" for r in report["requirements"] if r["status"] == "failed"]
    assert not failed, f"a correct server limited to {RATE_LIMIT} failed:\n  " + "\n  ".join(failed)
    assert report["verdict"] in ("conformant", "conformant-partial"), report["verdict_reason"]
    cost = report["cost"]
    assert cost["paced_waits"] > 0   # the limit was reached, and paced
    assert cost["rate_limited"] == 0


@pytest.mark.xdist_group("ratelimit-certify")
def test_a_small_bucket_is_waited_for_and_no_judgement_is_lost_to_a_429() -> None:
    """A bucket of 8 refilled at 4 a second, a few requirements (the official client's among them: its requests go
    together once the bucket holds them, or the SDK would give up its server/discover and speak another version)."""
    wanted = ["MCP-CLIENT-003", "MCP-CLIENT-004", "AUTH-KEY-002", "INV-SEL-001", "INV-SEL-002"]
    with ReferenceServer(ServerConfig(**rate_limit_fields("8/2"))) as srv:
        report = certify(from_server_facts(srv.facts), requirements=wanted)
    rows = {r["id"]: r for r in report["requirements"] if r["id"] in wanted}
    assert {r["status"] for r in rows.values()} == {"passed"}, {k: r.get("message") for k, r in rows.items()}
    cost = report["cost"]
    assert cost["rate_limited"] == 0 and cost["cut_by_run_deadline"] == 0 and cost["rate_limit_wait_seconds"] > 0
    assert cost["planned_requests"] > 0 and cost["estimated_seconds"] is not None


@pytest.mark.xdist_group("ratelimit-certify")
def test_a_run_cut_by_its_cap_names_the_option_that_finishes_it_and_counts_what_was_cut() -> None:
    """A bucket of 20 refilled over 600 s, a cap of 20 s (room for a busy machine to start the run): what fits in
    the bucket is judged, the scenarios still waiting for it are cut off and their requirements not assessed with
    the option named, the run is partial (exit 3 with --require-complete), and the cost counts what was cut."""
    # (none of them read a silence: a slow scenario starts first and would spend the bucket before invoke.runs)
    wanted = ["INV-SEL-003", "INV-RES-005", "INV-SESS-001"]
    with ReferenceServer(ServerConfig(**rate_limit_fields("20/600"))) as srv:
        report = certify(from_server_facts(srv.facts, max_run_time="20s"), requirements=wanted)
    cost = report["cost"]
    assert cost["cut_by_run_deadline"] >= 1 and cost["cut_by"] == "max_run_time" and cost["max_run_time_seconds"] == 20
    assert "--max-run-time 20s" in report["run_cut"] and report["run_cut"].endswith("finishes it")
    status = {r["id"]: r for r in report["requirements"] if r["id"] in wanted}
    assert status["INV-RES-005"]["status"] == "passed"       # invoke.runs, first in line
    cut = [r for r in status.values() if r["status"] == "not_assessed"]
    assert cut and all("(--max-run-time 20s)" in r["message"] for r in cut), {r["id"]: r["message"] for r in cut}
    assert {r["status"] for r in status.values()} == {"passed", "not_assessed"}
    assert report["verdict"] == "conformant-partial" and exit_code(report, require_complete=True) == 3


def test_serve_rate_limit_option_maps_to_a_bucket() -> None:
    from conformance.server.serve import _parser, _rate_limits

    assert _rate_limits(_parser().parse_args(["--rate-limit", "20/10"])) == {
        "rate_limit_burst": 20, "rate_limit_per_second": 2.0}
    assert _rate_limits(_parser().parse_args(["--rate-limit", "120/m"])) == {
        "rate_limit_burst": 120, "rate_limit_per_second": 2.0}
    assert _rate_limits(_parser().parse_args(["--rate-limit-burst", "5"])) == {"rate_limit_burst": 5}
    with pytest.raises(ValueError):
        _rate_limits(_parser().parse_args(["--rate-limit", "20/10", "--rate-limit-burst", "5"]))


def test_reference_server_answers_429_with_whole_second_retry_after() -> None:
    import ssl

    import httpx

    with ReferenceServer(ServerConfig(**rate_limit_fields("3/60"))) as srv:
        f = srv.facts
        with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
            got = [c.post(f"{f['base_url']}/v1/agents/{f['agent_id']}/invoke", json={"prompt": "say x"},
                          headers={"Authorization": f"Bearer {f['api_key']}"}) for _ in range(4)]
    assert [r.status_code for r in got] == [200, 200, 200, 429]
    assert [r.headers["x-ratelimit-remaining"] for r in got] == ["2", "1", "0", "0"]
    assert got[3].headers["retry-after"].isdigit() and 1 <= int(got[3].headers["retry-after"]) <= 20
