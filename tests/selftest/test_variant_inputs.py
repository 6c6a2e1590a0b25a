"""The suite passes two correct servers that read open requests the other ways (variant_inputs.py): one reading
every open input as kindly as it can, one refusing it. A failed, warning or error requirement is a suite bug.

``test_the_input_variants_make_their_choices`` first proves each really answers differently from the reference
server where its table says so, so a green certification means something.
"""
from __future__ import annotations

import ssl
from typing import Any

import httpx
import pytest

from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from tests.selftest.variant_inputs import lenient_config, strict_config
from tests.selftest.variant_servers import SERVERS, false_verdicts

USER = [{"id": "u1", "role": "user", "content": "say x"}]
MCP_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
               "Accept": "application/json, text/event-stream"}
MCP_LIST = {"jsonrpc": "2.0", "id": 2**60 + 1, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}

# (operation, body, extra headers) -> what each server answers: status and error code, or the JSON-RPC id echoed
CHOICES: list[tuple[str, Any, dict[str, str], dict[str, Any]]] = [
    ("invoke", {"prompt": "say x", "stream": None}, {},
     {"ref": (400, "validation_failed"), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("invoke", {"stream": True}, {},
     {"ref": (400, "validation_failed"), "lenient": (400, "invalid_request"), "strict": (400, "validation_failed")}),
    ("invoke", {"prompt": ""}, {}, {"ref": (200, None), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("invoke", {"prompt": "say x", "messages": [1]}, {},
     {"ref": (200, None), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("invoke", {"prompt": "say x", "x": 2**60}, {},
     {"ref": (200, None), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("invoke", {"prompt": "say x"}, {"Accept": "text/html"},
     {"ref": (200, None), "lenient": (200, None), "strict": (406, "not_acceptable")}),
    ("invoke", b'\xef\xbb\xbf{"prompt": "say x"}', {},
     {"ref": (400, "invalid_request"), "lenient": (200, None), "strict": (400, "invalid_request")}),
    ("invoke", b'{"prompt": "say x", "prompt": "say y"}', {},
     {"ref": (200, None), "lenient": (200, None), "strict": (400, "invalid_request")}),
    ("agui", {"messages": [{"id": 1, "role": "assistant", "content": "x"}]}, {},
     {"ref": (400, "invalid_request"), "lenient": (400, "invalid_request"), "strict": (400, "validation_failed")}),
    ("agui", {"messages": [{"role": "assistant", "content": "x"}]}, {},
     {"ref": (400, "invalid_request"), "lenient": (400, "invalid_request"), "strict": (400, "validation_failed")}),
    ("agui", {"messages": USER, "resume": None}, {},
     {"ref": (200, None), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("agui", {"messages": USER, "runId": None}, {},
     {"ref": (400, "validation_failed"), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("agui", {"messages": USER, "tools": 5}, {},
     {"ref": (200, None), "lenient": (200, None), "strict": (400, "validation_failed")}),
    ("mcp", MCP_LIST, MCP_HEADERS, {"ref": (200, 2**60 + 1), "lenient": (200, 2**60), "strict": (400, None)}),
]


def answer(srv, op: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    f = srv.facts
    kw = {"content": body} if isinstance(body, bytes) else {"json": body}
    with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
        r = c.post(f"{f['base_url']}/v1/agents/{f['agent_id']}/{op}", **kw, headers={
            "Authorization": f"Bearer {f['api_key']}", "Content-Type": "application/json", **headers})
    doc = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
    if op == "mcp":
        return r.status_code, doc.get("id") if isinstance(doc, dict) else None
    err = doc.get("error") if isinstance(doc, dict) else None
    return r.status_code, err.get("code") if isinstance(err, dict) else None


@pytest.mark.parametrize("name, config", [("ref", ServerConfig), ("lenient", lenient_config), ("strict", strict_config)])
def test_the_input_variants_make_their_choices(name, config):
    with ReferenceServer(config()) as srv:
        got = [(op, repr(body)[:60], answer(srv, op, body, headers)) for op, body, headers, _ in CHOICES]
    want = [(op, repr(body)[:60], by[name]) for op, body, _, by in CHOICES]
    assert got == want


@pytest.mark.parametrize("name", ["inputs-lenient", "inputs-strict", "inputs-escaped", "inputs-negotiating"])
def test_the_suite_passes_each_input_variant(name):
    """A full default run (a new seed each time) gives no failed, warning or error requirement."""
    server = SERVERS[name]
    with ReferenceServer(server.config()) as srv:
        report = certify(from_server_facts(srv.facts))
    wrong = false_verdicts(server, report)
    messages = [f"{r['id']}: {(r.get('message') or '')[:400]}" for r in report["requirements"]
                if f"{r['id']}={r['status']}" in wrong]
    assert not wrong, f"seed {report['seed']}: the suite fails a correct server ({name}); reproduce with " \
                      f"--seed {report['seed']}:\n  " + "\n  ".join(messages)
    assert report["verdict"] in ("conformant", "conformant-partial"), report["verdict_reason"]
