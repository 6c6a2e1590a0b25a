"""MCP checks: versions and headers."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.registry import check, rule
from conformance.vocab import protocols as p
from conformance.vocab.steps import mcp as steps
from conformance.vocab.constants import UNKNOWN_VERSION, UNSUPPORTED_VERSION
from conformance.vocab.refusals import mcp_refused
from conformance.vocab.text import truncate
from conformance.checks.mcp._common import MODERN, NO_NAME, REFUSALS, UPSTREAM_NOTE, result_of, text_block


@check("MCP-VER-001", scenarios=MODERN)
def modern_call_served(rec: Recording):
    """Sends a 2026-07-28 tools/call (header = `_meta` version, matching Mcp-Method/Mcp-Name, no initialize);
    HTTP 200 with a JSON-RPC result."""
    result_of(rec.get(steps.CALL), "2026-07-28 tools/call")


@check("MCP-HDR-004", scenarios=MODERN)
def call_without_mcp_name(rec: Recording):
    """Sends a valid tools/call without Mcp-Name (the only exchange that leaves it out); 200 with a result
    (upstream 2026-07-28 requires Mcp-Name; the spec makes it optional)."""
    result_of(rec.get(NO_NAME), "tools/call without Mcp-Name")
    return "spec: Mcp-Name optional (upstream 2026-07-28 requires it)"


@check("MCP-VER-005", scenarios=["mcp.legacy"])
def legacy_initialize(rec: Recording):
    """Sends `initialize` at 2025-11-25 without MCP-Protocol-Version; 200 with `result.protocolVersion` 2025-11-25."""
    result = result_of(rec.get(steps.INITIALIZE), "initialize (2025-11-25)")
    assert result.get("protocolVersion") == p.MCP_LEGACY_VERSION, \
        f"initialize: `result.protocolVersion` is {truncate(result.get('protocolVersion'))}, expected 2025-11-25"


@check("MCP-VER-006", scenarios=["mcp.legacy"])
def legacy_calls_served(rec: Recording):
    """After initialize, tools/list and tools/call with `MCP-Protocol-Version: 2025-11-25` (no `_meta` version)
    answer 200 with results; the call replies the plain reply."""
    result_of(rec.get(steps.LIST), "tools/list at 2025-11-25")
    result = result_of(rec.get(steps.CALL), "tools/call at 2025-11-25")
    reply = rec.facts.get("replies", {}).get(steps.CALL)
    if reply is not None:
        text = text_block(result, "tools/call at 2025-11-25")
        assert text == reply, f"tools/call at 2025-11-25: expected the reply {reply!r}, got {truncate(text)}"


def _supported(err: dict[str, Any], what: str) -> list[str]:
    data = err.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    assert isinstance(supported, list) and all(isinstance(v, str) for v in supported), \
        f"{what}: `error.data.supported` must be an array of version strings, got {truncate(data)}"
    assert p.MCP_VERSION in supported, f"{what}: `error.data.supported` {supported} lacks {p.MCP_VERSION}"
    return supported




@check("MCP-VER-002", scenarios=REFUSALS)
def unknown_version_refused(rec: Recording):
    """Sends tools/call declaring 1999-01-01 in header and `_meta`; HTTP 400 with JSON-RPC code -32022."""
    mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)


@check("MCP-VER-003", scenarios=REFUSALS)
def unknown_version_lists_supported(rec: Recording):
    """The -32022 for version 1999-01-01 has `error.data.supported`: version strings holding 2026-07-28."""
    err = mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    _supported(err, "the -32022 for version 1999-01-01")


@check("MCP-VER-004", scenarios=REFUSALS)
def unknown_version_echoes_requested(rec: Recording):
    """The -32022 for version 1999-01-01 has `error.data.requested` = "1999-01-01"."""
    err = mcp_refused(rec, steps.VERSION_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    data = err.get("data")
    requested = data.get("requested") if isinstance(data, dict) else None
    assert requested == UNKNOWN_VERSION, \
        f"the -32022 for version {UNKNOWN_VERSION}: `error.data.requested` is {truncate(requested)}, " \
        f"expected {UNKNOWN_VERSION!r} (data: {truncate(data)})"


@check("MCP-VER-007", scenarios=REFUSALS)
def unknown_initialize_version_refused(rec: Recording):
    """Sends `initialize` with protocolVersion 1999-01-01; HTTP 400, -32022, `data.supported` listing versions
    (upstream 2025-11-25 would negotiate instead; the spec says refuse)."""
    err = mcp_refused(rec, steps.INITIALIZE_UNKNOWN, 400, UNSUPPORTED_VERSION)["error"]
    _supported(err, "the -32022 for initialize 1999-01-01")
    return "spec: refuse; upstream 2025-11-25 initialize negotiates a version instead"


def _mismatch(label: str, doc: str):
    def fn(rec: Recording):
        mcp_refused(rec, label, 400, UNSUPPORTED_VERSION)
        return UPSTREAM_NOTE
    fn.__doc__ = doc
    return fn


MISMATCHES = {   # requirement: (step, check name, doc)
    "MCP-HDR-001": (steps.VERSION_MISMATCH, "version_header_mismatch",
                    "Sends tools/call with header 2026-07-28 but `_meta` version 2025-11-25; HTTP 400 with -32022."),
    "MCP-HDR-002": (steps.METHOD_MISMATCH, "method_header_mismatch",
                    "Sends tools/call with `Mcp-Method: tools/list`; HTTP 400 with -32022."),
    "MCP-HDR-003": (steps.NAME_MISMATCH, "name_header_mismatch",
                    "Sends tools/call whose Mcp-Name names another tool than params.name; HTTP 400 with -32022."),
}
rule(lambda req: _mismatch(MISMATCHES[req][0], MISMATCHES[req][2]), over=MISMATCHES, requirements=lambda req: req,
     scenarios=REFUSALS, name=lambda req: MISMATCHES[req][1])


@check("MCP-HDR-005", scenarios=REFUSALS)
def method_header_required(rec: Recording):
    """Sends a 2026-07-28 tools/call without Mcp-Method; a 4xx with a JSON-RPC error body (the exact 400 is
    MCP-HDR-006's SHOULD: that a missing header "does not match the body" is a reading of the spec)."""
    mcp_refused(rec, steps.METHOD_MISSING, None)


@check("MCP-HDR-007", scenarios=REFUSALS)
def version_header_required(rec: Recording):
    """Sends tools/call with `_meta` version 2026-07-28 but no MCP-Protocol-Version header; a 4xx with a JSON-RPC
    error body (the exact 400 is MCP-HDR-006's SHOULD)."""
    mcp_refused(rec, steps.VERSION_HEADER_MISSING, None)


@check("MCP-HDR-006", scenarios=REFUSALS)
def missing_header_code(rec: Recording):
    """The refusals of a missing Mcp-Method and a missing MCP-Protocol-Version are HTTP 400 with code -32022."""
    for label in (steps.METHOD_MISSING, steps.VERSION_HEADER_MISSING):
        mcp_refused(rec, label, 400, UNSUPPORTED_VERSION)
    return "spec reading: missing = not matching; upstream 2026-07-28 uses -32020 for missing headers"


@check("MCP-HDR-008", scenarios=REFUSALS)
def wrong_content_type(rec: Recording):
    """Sends tools/call as `Content-Type: text/plain`; a 4xx with a JSON-RPC error body (upstream code -32005)."""
    body = mcp_refused(rec, steps.CONTENT_TYPE, None)
    return f"code {body['error']['code']} (upstream: -32005)"
