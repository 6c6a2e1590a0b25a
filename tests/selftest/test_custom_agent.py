"""A team's own agent, certified with a profile: what it reaches, and that the catalog and the docs say so exactly.

The server is the reference server with an agent of its own (custom_agent.py): it answers the prompts of
`fixtures/profile.example.toml` and follows no directive. With that profile (the eight keys any agent can map) a run
must judge nothing wrong, and leave not assessed exactly the requirements the catalog marks `needs_agent` (plus the
ones only `--thorough` reaches); with the three reporting keys mapped too, only the marks a profile cannot serve
(`say-json`, echo mode, `sleep`) stay out of reach. docs/certify.md lists the marked MUSTs by reason: it must agree
with the catalog.
"""
from __future__ import annotations

import dataclasses
import json
import re
import ssl
from pathlib import Path

import httpx
import pytest

from conformance import api, catalog
from conformance.agent import Text
from conformance.server import ReferenceServer
from conformance.target import Profile, from_server_facts
from tests.selftest.custom_agent import (PROFILE, REPORTING_KEYS, REPORTING_PROFILE, UNKNOWN_PROMPT_REPLY, CustomAgent,
                                         custom_agent_config, custom_agent_server)
from tests.selftest.variant_agents import AGENTS

CERTIFY = Path(__file__).resolve().parents[2] / "docs" / "certify.md"
# Needs a profile key can serve, given an agent that reports in the conformance agent's form.
REPORTING_NEEDS = {"count", "echo params", "echo messages"}
WRONG = ("failed", "warning", "error")


def marked(needs: set[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Requirement id -> its needs_agent marks (only those among `needs`, when given)."""
    out = {}
    for r in catalog.load().values():
        got = tuple(n for n in r.agent_needs if needs is None or n in needs)
        if got:
            out[r.id] = got
    return out


@pytest.fixture(scope="module")
def server():
    with custom_agent_server() as srv:
        yield srv


def certify(server, profile: Profile) -> dict:
    target = dataclasses.replace(from_server_facts(server.facts, embedded=False), profile=profile)
    return api.certify(target, concurrency=6)


def not_assessed_beyond_thorough(report: dict) -> dict[str, str]:
    """id -> message of every requirement left not assessed, except those only --thorough assesses."""
    return {r["id"]: r.get("message", "") for r in report["requirements"]
            if r["status"] == "not_assessed" and "--thorough" not in r.get("message", "")}


def test_the_agent_is_not_the_conformance_agent(server):
    f = server.facts
    url = f"{f['base_url']}/v1/agents/{f['agent_id']}/invoke"
    with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), headers={"Authorization": f"Bearer {f['api_key']}"}, timeout=20) as c:
        for directive in ("say conformance", "count", "echo params"):
            assert c.post(url, json={"prompt": directive}).json()["result"] == UNKNOWN_PROMPT_REPLY
        mapped = PROFILE.scenarios["plain_reply"]
        assert c.post(url, json={"prompt": mapped["prompt"]}).json()["result"] == mapped["reply"]


@pytest.mark.xdist_group("custom-agent")
def test_the_eight_mappable_keys_reach_all_but_the_marked_requirements(server):
    report = certify(server, PROFILE)
    assert not [r["id"] for r in report["requirements"] if r["status"] in WRONG], report["verdict"]
    left = not_assessed_beyond_thorough(report)
    marks = marked()
    thorough_only = {r["id"] for r in report["requirements"] if "--thorough" in r.get("message", "")}
    assert set(left) == set(marks) - thorough_only, \
        f"not assessed but unmarked: {sorted(set(left) - set(marks))}; marked but assessed: " \
        f"{sorted(set(marks) - set(left) - thorough_only)}"


@pytest.mark.xdist_group("custom-agent")
def test_reporting_prompts_reach_the_count_and_echo_marks(server):
    """A mapped prompt serves what `count`, `echo params` and `echo messages` served: MCP-SESS-* included."""
    report = certify(server, REPORTING_PROFILE)
    assert not [r["id"] for r in report["requirements"] if r["status"] in WRONG], report["verdict"]
    out_of_reach = {rid for rid, needs in marked().items() if not set(needs) <= REPORTING_NEEDS}
    thorough_only = {r["id"] for r in report["requirements"] if "--thorough" in r.get("message", "")}
    assert set(not_assessed_beyond_thorough(report)) == out_of_reach - thorough_only
    assert set(REPORTING_KEYS) == {"session_affinity", "params_passthrough", "messages_passthrough"}


def test_certify_md_lists_exactly_the_marked_musts_by_reason():
    text = CERTIFY.read_text(encoding="utf-8")
    block = re.search(r"<!-- needs-agent -->\n(.*?)\n<!-- /needs-agent -->", text, re.S)
    assert block, "docs/certify.md has no <!-- needs-agent --> table"
    documented: dict[str, set[str]] = {}
    for need, ids in re.findall(r"^\| `([^`]+)` \|[^|]*\| \d+ \| ([^|]*) \|$", block.group(1), re.M):
        documented[need] = set(re.findall(r"[A-Z]+-[A-Z]+-\d{3}", ids))
    levels = {r.id: r.level for r in catalog.load().values()}
    expected: dict[str, set[str]] = {}
    for rid, needs in marked().items():
        if levels[rid] == "MUST":
            for need in needs:
                expected.setdefault(need, set()).add(rid)
    assert documented == expected
    counts = {need: int(n) for need, n in re.findall(r"^\| `([^`]+)` \|[^|]*\| (\d+) \|", block.group(1), re.M)}
    assert counts == {need: len(ids) for need, ids in expected.items()}


def test_a_resume_shape_for_mcp_is_refused_with_the_reason(tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text('[resume]\nmcp = \'{"answer": "$payload"}\'\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[resume\] mcp: .*takes any value"):
        Profile.load(str(profile))
    profile.write_text('[resume]\nagui = \'{"answer": "$payload"}\'\n', encoding="utf-8")
    assert Profile.load(str(profile)).resume == {"agui": {"answer": "$payload"}}


class OffContractCustomAgent(CustomAgent):
    """This team's agent off the contract its profile maps it to: it echoes what it received as JSON in the order
    received, with spaces (its `count` counting from 0 comes from the session store of counts-from-zero)."""

    def steps(self, script, ctx, start=0):
        echo = script.directives[start:start + 1]
        if echo and echo[0].word == "echo":
            return iter([Text(json.dumps(ctx.params if echo[0].arg == "params" else ctx.messages))])
        return super().steps(script, ctx, start)


@pytest.mark.xdist_group("custom-agent")
def test_a_mapped_agent_off_its_contract_is_judged_by_the_same_readings():
    """The readings of a team's own agent go through the same judgement as the conformance agent's
    (vocab.agent_readings): its `count` from 0 leaves the session requirements not assessed, its JSON in another form
    is read through, nothing is failed, and the report names the agent."""
    config = custom_agent_config(AGENTS["counts-from-zero"]())
    inner = config.wrap_app

    def wrap(app, facts):
        app = inner(app, facts)
        app.interpreter = OffContractCustomAgent()
        return app
    with ReferenceServer(dataclasses.replace(config, wrap_app=wrap)) as srv:
        report = certify(srv, REPORTING_PROFILE)
    assert not [r["id"] for r in report["requirements"] if r["status"] in WRONG], report["verdict"]
    ways = {w["way"]: w for w in report["agent"]["deviations"]}
    assert set(ways) == {"counts from 0", "writes JSON in another form than the canonical one"}
    hidden = set(ways["counts from 0"]["not_assessed"])
    assert {"INV-SESS-002", "MCP-SESS-002", "AGUI-SESS-002"} <= hidden
    assert all("off its contract" in r["message"] for r in report["requirements"] if r["id"] in hidden)
    assert {"INV-PASS-001", "AGUI-PASS-002", "INV-PASS-004"} <= {r["id"] for r in report["requirements"]
                                                                  if r["status"] == "passed"}
