"""Two correct AG-UI servers that are not ours trip exactly the one SHOULD their choice breaks, and no MUST
(variant_agui.py): sse-starlette's keep-alive `: ping - <timestamp>`, and a pause that lists no interrupt ids
(resumed with the shape the profile entry `[resume] agui` gives)."""
from __future__ import annotations

import pytest

from conformance import catalog, registry
from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import from_server_facts
from tests.checks.support import checks_in
from tests.selftest.variant_agui import RESUME_PROFILE, no_interrupt_ids_config, sse_starlette_config

IDS = [rid for rid, r in catalog.load().items() if rid.startswith("AGUI-") and r.testable] + \
      ["GEN-SESS-001", "GEN-SESS-002"]
RESUME_IDS = ("AGUI-INT-002", "AGUI-INT-003", "AGUI-INT-004")


def agui_checks(*, slow: bool) -> list[str]:
    return [c for c in checks_in("agui", generated=False) if slow or not registry.load_all()[c].slow]


def bad_rows(report: dict) -> dict[str, list[str]]:
    """Requirement ids by status, for the statuses that matter here."""
    out: dict[str, list[str]] = {"failed": [], "warning": []}
    for row in report["requirements"]:
        if row["status"] in out:
            out[row["status"]].append(row["id"])
    return out


def row(report: dict, rid: str) -> dict:
    return next(r for r in report["requirements"] if r["id"] == rid)


def explain(report: dict, ids) -> list[tuple[str, str]]:
    return [(r["id"], r.get("message", "")[:300]) for r in report["requirements"] if r["id"] in ids]


def test_sse_starlette_ping_passes_every_must_and_warns_only_on_the_exact_form():
    with ReferenceServer(sse_starlette_config()) as srv:
        report = certify(from_server_facts(srv.facts), requirements=IDS, check_ids=agui_checks(slow=True))
    bad = bad_rows(report)
    assert not bad["failed"], explain(report, bad["failed"])
    assert bad["warning"] == ["AGUI-PING-003"], explain(report, bad["warning"])
    assert row(report, "AGUI-PING-001")["status"] == "passed", row(report, "AGUI-PING-001")
    assert "ping - " in row(report, "AGUI-PING-003")["message"]


@pytest.fixture(scope="module")
def unlisted():
    with ReferenceServer(no_interrupt_ids_config()) as srv:
        yield srv


def test_a_pause_listing_no_ids_is_not_assessed_without_the_profile_entry(unlisted):
    report = certify(from_server_facts(unlisted.facts), requirements=IDS, check_ids=agui_checks(slow=False))
    bad = bad_rows(report)
    assert not bad["failed"], explain(report, bad["failed"])
    assert bad["warning"] == ["AGUI-COMPAT-001"], explain(report, bad["warning"])   # AG-UI 1.0 needs an interrupt
    for rid in RESUME_IDS:
        got = row(report, rid)
        assert got["status"] == "not_assessed" and "[resume] agui" in got["message"], got
    assert row(report, "AGUI-INT-001")["status"] == "passed"


def test_a_pause_listing_no_ids_resumes_with_the_profile_shape(unlisted):
    target = from_server_facts(unlisted.facts, profile=RESUME_PROFILE)
    ids = [c for c in agui_checks(slow=False) if set(registry.load_all()[c].requirements) & set(RESUME_IDS)]
    report = certify(target, requirements=list(RESUME_IDS), check_ids=ids)
    for rid in RESUME_IDS:
        assert row(report, rid)["status"] == "passed", row(report, rid)


def agui_post(srv, body: dict) -> "httpx.Response":
    import ssl

    import httpx

    f = srv.facts
    with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
        return c.post(f"{f['base_url']}/v1/agents/{f['agent_id']}/agui", json=body,
                      headers={"Authorization": f"Bearer {f['api_key']}", "Accept": "text/event-stream"})


def ask(thread: str) -> dict:
    return {"threadId": thread, "messages": [{"id": "u1", "role": "user", "content": "ask Name?\nsay thanks"}]}


def test_the_variants_make_their_choices(unlisted):
    """Proof the servers above really differ (so their green rows mean something)."""
    from tests.selftest.variant import variant_config

    with ReferenceServer(variant_config()) as srv:
        r = agui_post(srv, ask("thr-variant"))
    body = r.content.replace(b"\r\n", b"\n")
    assert r.headers["content-type"] == "text/event-stream; charset=utf-8" and r.headers["x-accel-buffering"] == "no"
    assert body.index(b"\nretry: 3000\n\n") < body.index(b"data:")          # a standalone retry block first
    assert b'"timestamp"' in body and b'"responseSchema"' in body and b'"interrupts"' in body
    r = agui_post(unlisted, ask("thr-unlisted"))
    assert b'"interrupt"' in r.content and b'"interrupts"' not in r.content
    r = agui_post(unlisted, {"threadId": "thr-unlisted", "resume": {"answer": {"name": "Ada"}}})
    assert r.status_code == 200 and b"thanks" in r.content
