"""The reference server's real traffic validates against the schemas; the invalid examples keep failing.

Every operation is driven once (invoke JSON and stream for every agent scenario, AG-UI runs incl. an
interrupt and its resume, MCP results, progress streams and errors, the metadata document, refusals),
and every body and every stream frame is validated against the schema of its kind. A schema that
rejects what the reference server correctly sends is too strict; one the invalid examples pass is too
loose: both are caught here.
"""
from __future__ import annotations

import json
import ssl

import httpx
import pytest

from conformance import schemas
from conformance.vocab.protocols import MCP_ACCEPT, MCP_VERSION, agui_input, agui_resume, mcp_call, mcp_headers, \
    mcp_request, slug_tool_name
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import AGENT_SCENARIOS
from conformance.wire.sse import parse_sse
from tests.schemas.test_schemas_examples import INVALID

RUN_PROMPTS = {name: s["prompt"] for name, s in AGENT_SCENARIOS.items()
               if "prompt" in s and name not in ("silence",)}


@pytest.fixture(scope="module")
def traffic():
    """(what, schema name, instance) for every body and frame of one pass over every operation."""
    with ReferenceServer(ServerConfig()) as srv:
        f = srv.facts
        auth = {"Authorization": f"Bearer {f['api_key']}"}
        out: list[tuple[str, str, object]] = []
        with httpx.Client(base_url=f["base_url"], verify=ssl.create_default_context(cafile=f["ca_bundle"]),
                          timeout=30) as http:
            agent = f"/v1/agents/{f['agent_id']}"

            def frames(r: httpx.Response) -> list:
                assert r.headers["content-type"].startswith("text/event-stream"), r.text[:200]
                return [json.loads(e.data) for e in parse_sse(r.content).events if e.dispatched]

            for name, prompt in RUN_PROMPTS.items():
                r = http.post(f"{agent}/invoke", json={"prompt": prompt}, headers=auth)
                out.append((f"invoke json {name}", "invoke-result", r.json()))
                r = http.post(f"{agent}/invoke", json={"prompt": prompt, "stream": True}, headers=auth)
                out += [(f"invoke stream {name} frame", "invoke-event", d) for d in frames(r)]
                r = http.post(f"{agent}/agui", json=agui_input(prompt, thread=f"traffic-{name}"), headers=auth)
                events = frames(r)
                out += [(f"agui {name} event", "agui-event", e) for e in events]
                if name == "question_and_resume":
                    outcome = events[-1].get("outcome", {})
                    body = {"threadId": f"traffic-{name}",
                            "resume": agui_resume(outcome.get("interrupts", []), {"name": "Ada"})}
                    r = http.post(f"{agent}/agui", json=body, headers=auth)
                    out += [("agui resume event", "agui-event", e) for e in frames(r)]
            tool = slug_tool_name(f["agent_slug"])
            mcp = f"{agent}/mcp"
            for name in ("plain_reply", "tool_call", "failure_after_output", "failure_before_output"):
                r = http.post(mcp, json=mcp_call(tool, RUN_PROMPTS[name]),
                              headers={**auth, **mcp_headers("tools/call", name=tool)})
                out.append((f"mcp tools/call {name}", "mcp-tools-call-result", r.json()))
            r = http.post(mcp, json=mcp_call(tool, RUN_PROMPTS["streamed_reply"], progress_token="p1"),
                          headers={**auth, **mcp_headers("tools/call", name=tool)})
            msgs = frames(r)
            out += [("mcp progress", "mcp-progress-notification", m) for m in msgs[:-1]]
            out.append(("mcp progress final", "mcp-tools-call-result", msgs[-1]))
            for method in ("tools/list", "server/discover"):
                r = http.post(mcp, json=mcp_request(method), headers={**auth, **mcp_headers(method)})
                out.append((f"mcp {method}", "mcp-response", r.json()))
            r = http.post(mcp, json=mcp_call(tool, "say x", version="1999-01-01"),
                          headers={**auth, **mcp_headers("tools/call", version="1999-01-01", name=tool)})
            assert r.status_code == 400
            out.append(("mcp unsupported version", "mcp-error-32022", r.json()))
            r = http.post(mcp, json=mcp_call(tool, "say x"), headers=mcp_headers("tools/call", name=tool))
            assert r.status_code == 401
            out.append(("mcp no credential", "mcp-error", r.json()))
            r = http.post("/v1/agents/agt_doesnotexist/mcp", json=mcp_call(tool, "say x"),
                          headers={**auth, **mcp_headers("tools/call", name=tool)})
            out.append(("mcp unknown agent", "mcp-error", r.json()))
            r = http.get(f"/.well-known/oauth-protected-resource{agent}/mcp")
            out.append(("metadata", "protected-resource-metadata", r.json()))
            refusals = [("invoke no prompt", "invoke", {"stream": False}, auth),
                        ("invoke prompt 42", "invoke", {"prompt": 42}, auth),
                        ("invoke no credential", "invoke", {"prompt": "say x"}, {}),
                        ("agui no messages", "agui", {"runId": "r"}, auth),
                        ("agui long thread", "agui", agui_input("say x", thread="t" * 257), auth)]
            for what, op, body, headers in refusals:
                r = http.post(f"{agent}/{op}", json=body, headers={**headers, "Accept": "text/event-stream"})
                assert 400 <= r.status_code < 500, (what, r.status_code)
                out.append((what, "error-body", r.json()))
            r = http.post(f"{agent}/invoke", content=b"{not json", headers={**auth, "Content-Type": "application/json"})
            out.append(("invoke not JSON", "error-body", r.json()))
            r = http.post("/v1/agents/agt_doesnotexist/invoke", json={"prompt": "say x"}, headers=auth)
            out.append(("invoke unknown agent", "error-body", r.json()))
        return out


def test_every_kind_of_traffic_was_seen(traffic):
    kinds = {name for _, name, _ in traffic}
    assert kinds == set(schemas.names()) - {"invoke-request", "agui-request", "mcp-request", "mcp-tools-call-params"}
    types = {obj.get("type") for _, name, obj in traffic if name == "agui-event"}
    assert {"RUN_STARTED", "TEXT_MESSAGE_CONTENT", "RUN_FINISHED", "RUN_ERROR"} <= types


def test_traffic_validates_against_the_schemas(traffic):
    problems = [f"{what}: {e}" for what, name, obj in traffic for e in schemas.errors(name, obj)]
    assert not problems, "\n".join(problems[:20])


def test_requests_the_suite_sends_validate_against_the_request_schemas():
    tool = slug_tool_name("conformance-agent")
    assert schemas.errors("invoke-request", {"prompt": "say x", "sessionId": "k", "stream": True}) == []
    assert schemas.errors("agui-request", agui_input("say x", thread="t", run="r")) == []
    call = mcp_call(tool, "say x", session="s", progress_token="p")
    assert schemas.errors("mcp-request", call) == []
    assert schemas.errors("mcp-tools-call-params", call["params"]) == []
    assert mcp_headers("tools/call") == {"Accept": MCP_ACCEPT, "Mcp-Method": "tools/call",
                                         "MCP-Protocol-Version": MCP_VERSION}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_examples_keep_failing(case):
    name, instance, *_ = INVALID[case]
    assert schemas.errors(name, instance), f"{case} now passes {name}"
