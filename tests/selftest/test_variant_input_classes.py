"""Two correct servers choose differently inside the input model's classes (variant_input_classes.py): this proves
each answers differently from the reference server where its table says so, so that their green certification
(test_variant_inputs.py, bench/bench_false_failures.py) means something."""
from __future__ import annotations

import ssl
from typing import Any

import httpx
import pytest

from conformance.server import ReferenceServer, ServerConfig
from tests.selftest.variant_input_classes import escaped_config, negotiating_config

MCP = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
MCP_LIST = {"jsonrpc": "2.0", "id": "é", "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}
ASTRAL_KEY = "😀" * 200   # 200 code points, 400 UTF-16 units

# (operation, body, headers) -> (status, Content-Type, whether the body holds a raw é) per server
CHOICES: list[tuple[str, Any, dict[str, str], dict[str, tuple]]] = [
    ("invoke", {"prompt": "say é"}, {"Accept": "application/json"},
     {"ref": (200, "application/json", True), "escaped": (200, "application/json", False),
      "negotiating": (200, "application/json; charset=utf-8", True)}),
    ("invoke", {"prompt": "say x", "sessionId": ASTRAL_KEY}, {"Accept": "application/json"},
     {"ref": (200, "application/json", False), "escaped": (400, "application/json", False),
      "negotiating": (200, "application/json; charset=utf-8", False)}),
    ("invoke", {"prompt": "say x"}, {"Accept": "text/event-stream;q=0.5, application/json"},
     {"ref": (200, "text/event-stream; charset=utf-8", False),
      "escaped": (200, "text/event-stream; charset=utf-8", False),
      "negotiating": (200, "application/json; charset=utf-8", False)}),
    ("invoke", {"prompt": "say x"}, {"Accept": "application/json",
                                     "Content-Type": "application/json; charset=latin-1"},
     {"ref": (200, "application/json", False), "escaped": (200, "application/json", False),
      "negotiating": (415, "application/json; charset=utf-8", False)}),
    ("mcp", MCP_LIST, {**MCP, "Accept": "application/json"},
     {"ref": (200, "application/json", True), "escaped": (200, "application/json", False),
      "negotiating": (406, "application/json; charset=utf-8", False)}),
]


def answer(srv, op: str, body: Any, headers: dict[str, str]) -> tuple:
    f = srv.facts
    with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"]), timeout=20) as c:
        r = c.post(f"{f['base_url']}/v1/agents/{f['agent_id']}/{op}", json=body, headers={
            "Authorization": f"Bearer {f['api_key']}", **headers})
    return r.status_code, r.headers.get("content-type"), "é".encode() in r.content


@pytest.mark.parametrize("name, config", [("ref", ServerConfig), ("escaped", escaped_config),
                                          ("negotiating", negotiating_config)])
def test_the_variants_make_their_choices(name, config):
    with ReferenceServer(config()) as srv:
        got = [(op, repr(body)[:40], answer(srv, op, body, headers)) for op, body, headers, _ in CHOICES]
    assert got == [(op, repr(body)[:40], by[name]) for op, body, _, by in CHOICES]
