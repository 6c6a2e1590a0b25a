"""The MCP checks against the reference server: every MUST and SHOULD passes (the thorough-only 429 probe and
option-dependent checks aside, which are not assessed with the option named), and no check fails or errors."""
from __future__ import annotations

import dataclasses

import pytest

from conformance import catalog
from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from tests.checks import support
from tests.checks.support import checks_in
from tests.selftest import asgi_tools as t

MCP_IDS = [rid for rid, r in catalog.load().items() if rid.startswith("MCP-") and r.testable]
THOROUGH_ONLY = {"MCP-ERR-003"}


my_checks = checks_in


@pytest.fixture(scope="module")
def report(server):
    return certify(from_server_facts(server.facts), requirements=MCP_IDS, check_ids=my_checks("mcp", "auth"))


def rows(report) -> dict[str, dict]:
    return support.rows(report, MCP_IDS)


def test_no_check_fails_or_errors(report):
    bad = [(c["id"], c["status"], c["message"][:300]) for c in report["checks"] if c["status"] in ("failed", "error")]
    assert not bad, bad


@pytest.mark.parametrize("rid", [r for r in MCP_IDS if r not in THOROUGH_ONLY])
def test_requirement_passes_on_the_reference_server(report, rid):
    row = rows(report)[rid]
    assert row["status"] == "passed", f"{rid}: {row['status']}: {row.get('message', '')[:500]}"


def test_rate_limit_probe_is_thorough_only(report):
    row = rows(report)["MCP-ERR-003"]
    assert row["status"] == "not_assessed" and "--thorough" in row["message"]


def test_rate_limit_probe_with_thorough():
    with ReferenceServer(ServerConfig(rate_limit_burst=20, rate_limit_per_second=0.5)) as srv:
        target = dataclasses.replace(from_server_facts(srv.facts), thorough=True)
        rep = certify(target, check_ids=["mcp.rate_limited"])
    row = next(r for r in rep["requirements"] if r["id"] == "MCP-ERR-003")
    assert row["status"] == "passed", row


def test_a_bucket_beyond_the_probe_cap_is_named_and_a_raised_cap_reaches_the_429():
    with ReferenceServer(ServerConfig(rate_limit_burst=120, rate_limit_per_second=0.5)) as srv:
        facts = from_server_facts(srv.facts)
        capped = certify(dataclasses.replace(facts, thorough=True, rate_probe_max=50), check_ids=["mcp.rate_limited"])
        raised = certify(dataclasses.replace(facts, thorough=True, rate_probe_max=400), check_ids=["mcp.rate_limited"])
    row = next(r for r in capped["requirements"] if r["id"] == "MCP-ERR-003")
    assert row["status"] == "not_assessed", row
    assert "--rate-probe-max 50" in row["message"] and "X-RateLimit-Remaining was" in row["message"], row["message"]
    assert next(r for r in raised["requirements"] if r["id"] == "MCP-ERR-003")["status"] == "passed"


def test_tool_name_without_slug_is_not_assessed(server):
    target = dataclasses.replace(from_server_facts(server.facts), agent_slug=None)
    rep = certify(target, check_ids=["mcp.tool_name_from_slug", "mcp.tool_name_form"])
    by_id = {r["id"]: r for r in rep["requirements"]}
    assert by_id["MCP-METH-004"]["status"] == "not_assessed" and "--agent-slug" in by_id["MCP-METH-004"]["message"]
    assert by_id["MCP-METH-003"]["status"] == "passed"


def test_cost_within_share(report):
    # the shared generated round trip is the lead's cost; everything else here is this surface's share (runs: 20
    # more for the chains, overlaps, long runs and the chain across protocols; about 52 requests and runs for the
    # history across protocols, and 5 for the silences)
    assert report["cost"]["requests"] < 120 + 40 + 57 + 6 and report["cost"]["agent_runs"] < 35 + 15 + 20 + 57 + 6, \
        report["cost"]


# -- correct servers that choose differently where the spec is silent -------------------------------
def _in_band(obj, status, headers):
    code = obj.get("error", {}).get("code") if isinstance(obj, dict) and isinstance(obj.get("error"), dict) else None
    return (200, headers, obj) if code in (-32601, -32602) else obj


def resume_needs_prompt(app, facts):
    """A tools/call carrying `resume` but no `prompt` is refused with -32602 (the spec does not say prompt may go)."""
    def refuse(body, scope):
        args = (body.get("params") or {}).get("arguments") if isinstance(body, dict) else None
        if isinstance(args, dict) and "resume" in args and "prompt" not in args:
            body["params"]["arguments"] = {**args, "prompt": None}   # the reference server then answers -32602
        return body
    return t.rewrite_request_json(app, refuse, where="mcp")


@pytest.mark.parametrize("wrap, requirements", [
    (lambda app, facts: t.rewrite_json_response(app, lambda o, s, st, h: _in_band(o, st, h), where="mcp"),
     ["MCP-ERR-001", "MCP-METH-006", "MCP-METH-007"]),
    (resume_needs_prompt, ["MCP-PAUSE-002"]),
], ids=["errors-in-band", "resume-needs-prompt"])
def test_other_legitimate_choices_pass(wrap, requirements):
    with ReferenceServer(ServerConfig(wrap_app=wrap)) as srv:
        rep = certify(from_server_facts(srv.facts), requirements=requirements, check_ids=my_checks("mcp", "auth"))
    got = {r["id"]: r for r in rep["requirements"] if r["id"] in requirements}
    assert all(r["status"] == "passed" for r in got.values()), got


# -- one deviation, one failure: a server that requires the optional Mcp-Name ------------------------------
TOOL_CALL_RIDS = ["MCP-TOOL-001", "MCP-TOOL-002", "MCP-TOOL-003", "MCP-TOOL-005", "MCP-METH-005", "MCP-VER-001",
                  "MCP-SESS-005", "MCP-PROG-011", "AUTH-KEY-001"]


def test_requiring_mcp_name_fails_only_mcp_hdr_004():
    from tests.selftest.zoo import load_zoo
    broken = load_zoo()["MCP-HDR-004-mcp-name-required"]
    with ReferenceServer(broken.server_config()) as srv:
        rep = certify(from_server_facts(srv.facts), requirements=["MCP-HDR-004", *TOOL_CALL_RIDS],
                      check_ids=my_checks("mcp", "auth"))
    got = support.rows(rep, ["MCP-HDR-004", *TOOL_CALL_RIDS])
    assert got["MCP-HDR-004"]["status"] == "failed", got["MCP-HDR-004"]
    assert all(got[rid]["status"] == "passed" for rid in TOOL_CALL_RIDS), \
        {rid: (r["status"], r.get("message", "")[:200]) for rid, r in got.items()}


# -- the variant's MCP choices (tests/selftest/variant_mcp.py) are really made, and pass ------------------------
def test_variant_mcp_choices_are_made_and_pass():
    import ssl

    import httpx

    from conformance.vocab import protocols as p
    from tests.selftest.variant import variant_config
    from tests.selftest.variant_mcp import AUTH_URL, RETRY_BLOCK

    with ReferenceServer(variant_config()) as srv:
        f = srv.facts
        tool = p.slug_tool_name(f["agent_slug"])
        with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
            mcp = f"{f['base_url']}/v1/agents/{f['agent_id']}/mcp"
            auth = {"Authorization": f"Bearer {f['api_key']}", **p.mcp_headers("tools/call", name=tool)}
            body = p.mcp_request("tools/call", {"name": tool, "arguments": p.tool_arguments("chunks 3 abc")},
                                 progress_token="t")
            r = c.post(mcp, json=body, headers=auth)
            raw = r.content
            assert r.headers["x-accel-buffering"] == "no"
            assert raw.index(RETRY_BLOCK) < raw.index(b"notifications/progress")
            assert b'"progress": 0.5' in raw and b'"progress": 1.5' in raw
            r = c.post(mcp, json=p.mcp_request("tools/list"), headers={**auth, **p.mcp_headers("tools/list")})
            assert r.headers["content-type"] == "application/json; charset=utf-8"
            r = c.post(mcp, json=p.mcp_request("tools/list"), headers=p.mcp_headers("tools/list"))
            assert r.status_code == 401 and 'resource_metadata="HTTPS://' in r.headers["www-authenticate"]
            doc = c.get(f"{f['base_url']}/.well-known/oauth-protected-resource/v1/agents/{f['agent_id']}/mcp").json()
            assert doc["authorization_servers"] == [AUTH_URL + "/"] and doc["resource"].startswith("HTTPS://")
        rids = [rid for rid, r in catalog.load().items() if r.testable and rid.startswith(("MCP-", "AUTH-", "META-"))]
        rep = certify(from_server_facts(f), requirements=rids, check_ids=my_checks("mcp", "auth", "metadata"))
    bad = [(r["id"], r["status"], r.get("message", "")[:300]) for r in rep["requirements"]
           if r["status"] in ("failed", "warning")]
    assert not bad, bad
