"""The suite passes the MCP servers that answer the way the official SDKs do where the spec is silent
(variant_mcp_sdk.py): one server per choice the audit of the SHOULDs turned up. A failed, warning or error
requirement is a suite bug.

``test_each_sdk_variant_makes_its_choice`` first proves each really answers differently from the reference server,
so a green certification means something; then the MCP surface of each is certified and the audited requirement
notes the form it saw. (A full default run of each, over random seeds: ``bench/bench_false_failures.py --servers
'mcp-*'``.)
"""
from __future__ import annotations

import json
import ssl
from typing import Any

import httpx
import pytest

from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.vocab import protocols as p
from tests.selftest.variant_servers import SERVERS, false_verdicts


def post(srv, body: dict[str, Any], *, accept: str = p.MCP_ACCEPT, drop: tuple[str, ...] = ()) -> httpx.Response:
    f = srv.facts
    params = body.get("params") or {}
    headers = {**p.mcp_headers(body["method"], name=params.get("name") if body["method"] == "tools/call" else None),
               "Accept": accept, "Authorization": f"Bearer {f['api_key']}", "Content-Type": "application/json"}
    headers = {k: v for k, v in headers.items() if k not in drop}
    with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=30) as c:
        return c.post(f"{f['base_url']}/v1/agents/{f['agent_id']}/mcp", json=body, headers=headers)


def answered(r: httpx.Response) -> tuple[int, str, Any]:
    """(status, media type, the JSON-RPC message: the body, or the data of the stream's last frame)."""
    kind = r.headers.get("content-type", "").split(";")[0].strip()
    if kind == "text/event-stream":
        data = [line[5:].strip() for line in r.text.splitlines() if line.startswith("data:")]
        return r.status_code, kind, json.loads(data[-1])
    return r.status_code, kind, r.json()


def call(srv, args: dict[str, Any], *, tool: str | None = None, **kw) -> tuple[int, str, Any]:
    tool = tool or p.slug_tool_name(srv.facts["agent_slug"])
    return answered(post(srv, p.mcp_request("tools/call", {"name": tool, "arguments": args}, id=7), **kw))


def shape(answer: tuple[int, str, Any]) -> tuple[int, str, Any]:
    """What tells the choices apart: status, media type, and the error code or whether the result is an error."""
    status, kind, msg = answer
    if "error" in msg:
        return status, kind, msg["error"]["code"]
    return status, kind, "isError" if msg["result"].get("isError") else "result"


JSON, SSE = "application/json", "text/event-stream"
# what each server answers: no prompt / a prompt that is no string / an unknown tool / a plain call / the plain call
# when Accept names JSON only / a call without Mcp-Method
CHOICES = {
    "reference": [(400, JSON, -32602), (400, JSON, -32602), (400, JSON, -32602), (200, JSON, "result"),
                  (200, JSON, "result"), (400, JSON, -32022)],
    "mcp-input-errors-as-results": [(200, JSON, "isError"), (200, JSON, "isError"), (400, JSON, -32602),
                                    (200, JSON, "result"), (200, JSON, "result"), (400, JSON, -32022)],
    "mcp-streams-every-answer": [(200, SSE, -32602), (200, SSE, -32602), (200, SSE, -32602), (200, SSE, "result"),
                                 (200, JSON, "result"), (400, JSON, -32022)],
    "mcp-missing-header-code-32020": [(400, JSON, -32602), (400, JSON, -32602), (400, JSON, -32602),
                                      (200, JSON, "result"), (200, JSON, "result"), (400, JSON, -32020)],
}


@pytest.mark.parametrize("name", list(CHOICES))
def test_each_sdk_variant_makes_its_choice(name):
    config = ServerConfig if name == "reference" else SERVERS[name].config
    with ReferenceServer(config()) as srv:
        got = [shape(call(srv, {"session_id": "s-1"})),
               shape(call(srv, {"prompt": 5})),
               shape(call(srv, {"prompt": "say x"}, tool="ask_nobody")),
               shape(call(srv, {"prompt": "say x"})),
               shape(call(srv, {"prompt": "say x"}, accept="application/json")),
               shape(call(srv, {"prompt": "say x"}, drop=("Mcp-Method",)))]
    assert got == CHOICES[name]


AUDITED = {   # server: (the requirement its choice exercises, the note that names the form it saw)
    "mcp-input-errors-as-results": ("MCP-METH-009", "isError"),
    "mcp-streams-every-answer": ("MCP-PROG-011", "event stream"),
    "mcp-missing-header-code-32020": ("MCP-HDR-006", "-32020"),
}


@pytest.mark.parametrize("name", list(AUDITED))
def test_the_suite_passes_each_sdk_variant_on_mcp(name):
    """Every MCP and credential check: no failed, warning or error requirement; the audited one notes the form."""
    server = SERVERS[name]
    with ReferenceServer(server.config()) as srv:
        report = certify(from_server_facts(srv.facts), protocols={"mcp", "metadata"})
    wrong = false_verdicts(server, report)
    messages = [f"{r['id']}: {(r.get('message') or '')[:400]}" for r in report["requirements"]
                if f"{r['id']}={r['status']}" in wrong]
    assert not wrong, f"seed {report['seed']}: the suite fails a correct server ({name}):\n  " + "\n  ".join(messages)
    rid, form = AUDITED[name]
    notes = " ".join(str(c.get("message") or "") for c in report["checks"] if rid in c["requirements"])
    assert form in notes, (rid, notes)
