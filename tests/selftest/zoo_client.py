"""Broken servers for the official-client requirements (MCP-CLIENT-*): each answers one thing the official `mcp`
client (2.3.0) cannot use, while the suite's own requests still get what the specification shows. Each finding
names the exchange the client rejected (tests/clients/test_mcp_official_client.py shows its curl re-sends it and
that the requirements the same answer breaks downstream are blocked by the one it breaks first)."""
from __future__ import annotations

from tests.selftest.zoo import broken
from tests.selftest.zoo_mcp import MODERN, hdr, mcp_where, on_results

CACHE_FIELDS = ("resultType", "ttlMs", "cacheScope")    # upstream 2026-07-28 fields the specification never shows


@broken("MCP-CLIENT-003", name="MCP-CLIENT-003-tools-list-without-cache-fields")
def tools_list_without_cache_fields(app, facts):
    """A 2026-07-28 tools/list result lacks resultType, ttlMs and cacheScope (the official client requires them)."""
    def drop(result):
        for name in CACHE_FIELDS:
            result.pop(name, None)
    return on_results(app, drop, where=mcp_where(method="tools/list", version=MODERN))


@broken("MCP-CLIENT-002", name="MCP-CLIENT-002-input-schema-array")
def input_schema_array(app, facts):
    """The listed tool's inputSchema has type "array" (the official client requires an object schema)."""
    def retype(result):
        for tool in result.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                tool["inputSchema"]["type"] = "array"
    return on_results(app, retype)      # every listing, with or without Mcp-Method (the handshake sends none)


@broken("MCP-CLIENT-002", name="MCP-CLIENT-002-input-schema-array-when-content-type-has-a-charset")
def input_schema_array_for_a_charset(app, facts):
    """The listed tool's inputSchema has type "array" when the tools/list request's Content-Type carries a parameter
    (`application/json; charset=utf-8`), which the official client never sends: a handler of the other path."""
    def retype(result):
        for tool in result.get("tools") or []:
            if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                tool["inputSchema"]["type"] = "array"
    return on_results(app, retype, where=mcp_where(test=lambda scope: ";" in (hdr(scope, "content-type") or "")))
