"""HTTP/2, both ways.

`zoo_http2.py`'s servers are each wrong in one way over HTTP/2 alone; `test_zoo.py` catches each on its requirement
(the server offers h2 by ALPN, so the core scenarios run over both versions). Here the other way: the very same
server offering only HTTP/1.1 passes that requirement, so what caught it was the version, not the deviation showing
anyway. And the reference server serving HTTP/2 too is conformant with exchanges over both versions, its report
saying so and its recording re-judged to the same verdict, while the HTTP/1.1-only default costs nothing more.
"""
from __future__ import annotations

import dataclasses

import pytest

from conformance.api import certify
from conformance.registry import SCENARIOS
from conformance.rejudge import verify
from conformance.reporting import http_text
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import Profile, from_server_facts
from conformance.versions import HTTP2_SCENARIOS
from tests.selftest.test_zoo import ZOO_SEED, ZOO_TIMEOUTS, check_rounds, row_of
from tests.selftest.variant_servers import SERVERS, false_verdicts
from tests.selftest.zoo import load_zoo

HTTP2_ONLY = {name: b for name, b in load_zoo().items() if b.module == "tests.selftest.zoo_http2"}


def test_the_zoo_has_http2_only_servers_of_every_kind() -> None:
    assert len(HTTP2_ONLY) >= 7
    assert all(b.config.get("http2") for b in HTTP2_ONLY.values())


@pytest.mark.parametrize("name", sorted(HTTP2_ONLY))
def test_the_same_server_offering_only_http1_passes(name: str) -> None:
    b = HTTP2_ONLY[name]
    config = dataclasses.replace(b.server_config(), http2=False)
    with ReferenceServer(config) as srv:
        target = from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS), seed=ZOO_SEED)
        ids = [c for round_ in check_rounds(b.breaks) for c in round_]
        report = certify(target, check_ids=ids)
    row = row_of(report, b.breaks)
    assert row["status"] == "passed", f"{name} over HTTP/1.1 alone: {row['status']}: {row.get('message', '')[:500]}"
    assert report["http_versions"]["judged"] == ["HTTP/1.1"], report["http_versions"]


@pytest.mark.parametrize("name", sorted(HTTP2_ONLY))
def test_a_default_run_reports_a_fault_of_one_version_as_one_root(name: str) -> None:
    """The whole default run, not the requirement's checks alone: the fault is one failure (or warning), on the
    requirement it breaks, its message naming the version it showed on and what the other gave; everything read
    through the same broken answers is blocked by it, never failed again."""
    b = HTTP2_ONLY[name]
    with ReferenceServer(b.server_config()) as srv:
        report = certify(from_server_facts(srv.facts))
    rows = {r["id"]: r for r in report["requirements"]}
    wrong = sorted(rid for rid, r in rows.items() if r["status"] in ("failed", "warning", "error"))
    assert wrong == [b.breaks], f"{name}: {[(rid, rows[rid]['message'][:300]) for rid in wrong]}"
    root = rows[b.breaks]
    assert "over HTTP/2 (over HTTP/1.1 it passed)" in root["message"], root["message"][:500]
    assert root["evidence"][0]["scenario"].endswith("@h2") and " --http2 " in root["evidence"][0]["curl"]
    assert "< HTTP/2 " in root["evidence"][0]["transcript"]
    chained = {rid: r["blocked_by"] for rid, r in rows.items() if r.get("blocked_by")}   # to the root, through
    assert all(up == b.breaks or up in chained for roots in chained.values() for up in roots), chained  # blocked ones


def test_the_reference_server_over_http2_is_conformant_on_both_versions() -> None:
    registered = dict(SCENARIOS)
    with ReferenceServer(ServerConfig(http2=True)) as srv:
        report = certify(from_server_facts(srv.facts), keep_recording=True)
    assert SCENARIOS == registered      # the twins were registered before the run, none during it
    document = report.pop("recording")["document"]
    assert not false_verdicts(SERVERS["reference-http2"], report), false_verdicts(SERVERS["reference-http2"], report)
    versions = report["http_versions"]
    assert versions["judged"] == ["HTTP/1.1", "HTTP/2"], versions
    twins = [s for s in document["scenarios"] if s["scenario"].endswith("@h2")]
    assert sorted(s["scenario"].removesuffix("@h2") for s in twins) == sorted(HTTP2_SCENARIOS)
    over_h2 = [ex for s in twins for ex in s["exchanges"] if ex["status"] is not None]
    assert over_h2 and all(ex["http_version"] == "HTTP/2" for ex in over_h2)
    assert versions["exchanges"]["HTTP/2"] == len(over_h2)
    assert versions["http2"].startswith("spoken:") and "picked h2" in versions["http2"]
    assert not verify(report, document).differences


def test_an_http1_only_server_costs_no_request_more_and_says_so() -> None:
    with ReferenceServer(ServerConfig()) as srv:
        report = certify(from_server_facts(srv.facts), requirements=["MCP-SESS-005", "AGUI-FRAME-001"],
                         keep_recording=True)
    document = report.pop("recording")["document"]
    assert report["http_versions"]["judged"] == ["HTTP/1.1"]
    assert report["http_versions"]["http2"] == ("not spoken: offered h2 and http/1.1 by ALPN, the target picked "
                                                "neither")
    assert not [s for s in document["scenarios"] if s["scenario"].endswith("@h2")]
    assert all(ex["http_version"] == "HTTP/1.1" for s in document["scenarios"] for ex in s.get("exchanges", ()))


def test_no_http2_keeps_an_http2_server_on_http1() -> None:
    with ReferenceServer(ServerConfig(http2=True)) as srv:
        report = certify(dataclasses.replace(from_server_facts(srv.facts), http2=False),
                         requirements=["AGUI-FRAME-001"])
    assert report["http_versions"]["judged"] == ["HTTP/1.1"]
    assert report["http_versions"]["http2"] == "not spoken: --no-http2"


def test_an_answer_over_http1_0_is_explained_and_not_judged_as_a_version() -> None:
    """A server offering HTTP/1.1 and HTTP/2 whose TLS port answers the cleartext probe as Go's net/http does: that
    one exchange comes back over HTTP/1.0. The report says why, and lists HTTP/1.0 as no version it judged."""
    with ReferenceServer(SERVERS["http2-go-cleartext-answer"].config()) as srv:
        report = certify(from_server_facts(srv.facts), requirements=["GEN-BASE-002", "INV-RES-001"],
                         keep_recording=True)
    document = report.pop("recording")["document"]
    rows = {r["id"]: r for r in report["requirements"]}
    assert rows["GEN-BASE-002"]["status"] == "passed" and rows["GEN-BASE-002"]["http_versions"] == ["HTTP/1.1"]
    assert rows["INV-RES-001"]["http_versions"] == ["HTTP/1.1", "HTTP/2"]
    got = report["http_versions"]
    assert got["judged"] == ["HTTP/1.1", "HTTP/2"] and got["exchanges"]["HTTP/1.0"] == 1
    (other,) = got["other"]
    assert (other["scenario"], other["label"], other["http_version"]) == ("invoke.cleartext", "cleartext", "HTTP/1.0")
    assert "plain http:// on purpose" in other["why"]
    assert "invoke.cleartext / cleartext went over HTTP/1.0" in http_text(report)
    assert not verify(report, document).differences
