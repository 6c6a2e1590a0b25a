"""MCP checks: versions and headers."""
from __future__ import annotations

from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import judge_all, on, precondition
from conformance.registry import SCENARIOS, check, rule
from conformance.vocab import protocols as p
from conformance.vocab.readers import step
from conformance.vocab.steps import mcp as steps
from conformance.vocab.constants import HEADER_MISMATCH, UNKNOWN_VERSION, UNSUPPORTED_VERSION
from conformance.vocab.text import truncate
from conformance.vocab.values import same_integer
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import (AFFINITY_SCENARIOS, EXACT_REPLY, LEGACY_CALLS, MODERN, NO_NAME, REFUSALS,
                                            UPSTREAM_NOTE, answered, as_json, refusal, reply_text, response, result_of,
                                            round_trip_runs)


def modern_calls(labels: tuple[str, ...], judge: Callable[[Exchange], Any] = result_of):
    """MCP-VER-001 over a scenario's 2026-07-28 tools/calls (each carries Mcp-Name, no initialize before it)."""
    def fn(rec: Recording):
        return judge_all([ex for ex in rec.exchanges if ex.label in labels], judge,
                         nothing=f"{rec.scenario} recorded no tools/call")
    return fn


@check("MCP-VER-001", scenarios=MODERN)
def modern_call_served(rec: Recording):
    """Sends 2026-07-28 tools/calls (header = `_meta` version, matching Mcp-Method/Mcp-Name, no initialize);
    each answers HTTP 200 with a JSON-RPC result."""
    return modern_calls((steps.CALL, steps.CALL_TOOL))(rec)


# The same rule on the 2026-07-28 calls of the other scenarios: it is the root their readers rely on, so it judges
# every one of them, as far as the spec says they are served.
SERVED_ELSEWHERE = {
    "mcp.sessions": (modern_calls(steps.MCP_SESSIONS), "the `count` calls"),
    "mcp.progress": (modern_calls(steps.MCP_PROGRESS, answered), "the calls with a progress token (how their "
                                                                 "stream ends is MCP-PROG-001 to 003's)"),
    "mcp.failures": (modern_calls(steps.MCP_FAILURES, response), "the failing prompts (a JSON-RPC response; that "
                                                                 "it is a result is MCP-TOOL-004's)"),
    "mcp.pause_text": (modern_calls((steps.ASK,)), "the question (its resume is MCP-PAUSE-002's: a server may "
                                                   "refuse a resume it finds no paused run for)"),
    "mcp.pause_elicit": (modern_calls((steps.ASK,), answered), "the question of a client that can elicit (HTTP "
                                                               "200; what it asks is MCP-PAUSE-003's, the retry "
                                                               "MCP-PAUSE-004's)"),
}
rule(lambda scn: SERVED_ELSEWHERE[scn][0], over=SERVED_ELSEWHERE, requirements="MCP-VER-001",
     scenarios=lambda scn: [scn], name=lambda scn: f"modern_call_served_{scn.split('.')[1]}",
     supplementary=lambda scn: scn in AFFINITY_SCENARIOS,
     doc=lambda scn: f"The 2026-07-28 tools/calls of {scn}, {SERVED_ELSEWHERE[scn][1]}, answer HTTP 200 with a "
                     f"JSON-RPC response.")


if "generated.round_trip" in SCENARIOS:  # the lead's shared generated-text scenario, when present
    @check("MCP-VER-001", scenarios=["generated.round_trip"], supplementary=True)
    def modern_call_served_round_trip(rec: Recording):
        """The generated round trip's 2026-07-28 tools/calls answer HTTP 200 (their result is MCP-TOOL-002's)."""
        return judge_all([ex for _, ex in round_trip_runs(rec)], answered, nothing="the generated round trip sent no tools/call "
                                                                   "over MCP")


@check("MCP-HDR-004", scenarios=MODERN)
def call_without_mcp_name(rec: Recording):
    """Sends a valid tools/call without Mcp-Name (the only exchange that leaves it out); 200 with a result
    (upstream 2026-07-28 requires Mcp-Name; the spec makes it optional)."""
    result_of(rec.get(NO_NAME))
    return "spec: Mcp-Name optional (upstream 2026-07-28 requires it)"


@check("MCP-VER-005", scenarios=["mcp.legacy"])
def legacy_initialize(rec: Recording):
    """Sends `initialize` at 2025-11-25 without MCP-Protocol-Version; 200 with `result.protocolVersion` 2025-11-25."""
    ex = rec.get(steps.INITIALIZE)
    version = result_of(ex).get("protocolVersion")
    with on(ex):
        assert version == p.MCP_LEGACY_VERSION, f"`result.protocolVersion` is {as_json(version)}, expected 2025-11-25"


@check("MCP-VER-006", scenarios=["mcp.legacy"])
def legacy_calls_served(rec: Recording):
    """After initialize, tools/list and tools/call with `MCP-Protocol-Version: 2025-11-25` (no `_meta` version)
    answer 200 with results; the call replies the plain reply (its text is judged exactly by MCP-TOOL-002 on this
    call: a text that differs is that requirement's failure)."""
    reply = rec.facts.get("replies", {}).get(steps.CALL)

    def served(ex: Exchange) -> None:
        result_of(ex, LEGACY_CALLS)
        if ex.label == steps.CALL and reply is not None and (text := reply_text(ex, LEGACY_CALLS)) != reply:
            raise precondition(EXACT_REPLY, ex, f"expected the reply {reply!r}, got {truncate(text, quoted=True)}")
    return judge_all([rec.get(steps.LIST), rec.get(steps.CALL)], served)


# -- refusals of versions and headers --------------------------------------------------------------
UNKNOWN_REFUSED = "MCP-VER-002"      # the unknown version is refused with 400 and -32022: what VER-003/004 read
INITIALIZE_REFUSED = "MCP-VER-007"   # so is an initialize with an unknown version
SUPPORTED_LISTED = "MCP-VER-003"     # a -32022's `data.supported` holds 2026-07-28


def version_errors(rec: Recording) -> list[tuple[Exchange, str]]:
    """The two refusals of an unknown version (a 2026-07-28 request, initialize), each with the requirement that refuses it."""
    return [(step(rec, steps.VERSION_UNKNOWN), UNKNOWN_REFUSED),
            (step(rec, steps.INITIALIZE_UNKNOWN), INITIALIZE_REFUSED)]


def unknown_version_error(ex: Exchange, root: str) -> dict[str, Any]:
    return refusal(ex, root, status=400, code=UNSUPPORTED_VERSION)["error"]


def supported_listed(err: dict[str, Any]) -> list[str]:
    data = err.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    assert isinstance(supported, list) and all(isinstance(v, str) for v in supported), \
        f"`error.data.supported` must be an array of version strings, got {truncate(data)}"
    assert p.MCP_VERSION in supported, f"`error.data.supported` {supported} lacks {p.MCP_VERSION}"
    return supported


@check("MCP-VER-002", scenarios=REFUSALS)
def unknown_version_refused(rec: Recording):
    """Sends a request (its method rotating by seed) declaring 1999-01-01 in header and `_meta`; HTTP 400 with
    JSON-RPC code -32022."""
    unknown_version_error(step(rec, steps.VERSION_UNKNOWN), UNKNOWN_REFUSED)


@check("MCP-VER-003", scenarios=REFUSALS)
def unknown_version_lists_supported(rec: Recording):
    """Each -32022 for version 1999-01-01 (tools/call and initialize) has `error.data.supported`: version strings
    holding 2026-07-28."""
    return judge_all(version_errors(rec), lambda item: supported_listed(unknown_version_error(*item)),
                     exchange=lambda item: item[0])


@check("MCP-VER-004", scenarios=REFUSALS)
def unknown_version_echoes_requested(rec: Recording):
    """The -32022 for version 1999-01-01 has `error.data.requested` = "1999-01-01"."""
    ex = step(rec, steps.VERSION_UNKNOWN)
    data = unknown_version_error(ex, UNKNOWN_REFUSED).get("data")
    requested = data.get("requested") if isinstance(data, dict) else None
    with on(ex):
        assert requested == UNKNOWN_VERSION, \
            f"`error.data.requested` is {as_json(requested)}, expected {UNKNOWN_VERSION!r} (data: {truncate(data)})"


@check("MCP-VER-007", scenarios=REFUSALS)
def unknown_initialize_version_refused(rec: Recording):
    """Sends `initialize` with protocolVersion 1999-01-01; HTTP 400, -32022, `data.supported` listing versions
    (upstream 2025-11-25 would negotiate instead; the spec says refuse). What the list holds is MCP-VER-003's."""
    ex = step(rec, steps.INITIALIZE_UNKNOWN)
    err = unknown_version_error(ex, INITIALIZE_REFUSED)
    try:
        supported_listed(err)
    except AssertionError as exc:
        raise precondition(SUPPORTED_LISTED, ex, str(exc)) from None
    return "spec: refuse; upstream 2025-11-25 initialize negotiates a version instead"


def _mismatch(requirement: str, label: str, doc: str):
    def fn(rec: Recording):
        refusal(step(rec, label), requirement, status=400, code=UNSUPPORTED_VERSION)
        return UPSTREAM_NOTE
    fn.__doc__ = doc
    return fn


MISMATCHES = {   # requirement: (step, check name, doc)
    "MCP-HDR-001": (steps.VERSION_MISMATCH, "version_header_mismatch",
                    "Sends a request (its method drawn by seed) with header 2026-07-28 but `_meta` version "
                    "2025-11-25; HTTP 400 with -32022."),
    "MCP-HDR-002": (steps.METHOD_MISMATCH, "method_header_mismatch",
                    "Sends a request whose `Mcp-Method` names another method; HTTP 400 with -32022."),
    "MCP-HDR-003": (steps.NAME_MISMATCH, "name_header_mismatch",
                    "Sends tools/call whose Mcp-Name names another tool than params.name; HTTP 400 with -32022."),
}
rule(lambda req: _mismatch(req, MISMATCHES[req][0], MISMATCHES[req][2]), over=MISMATCHES,
     requirements=lambda req: req, scenarios=REFUSALS, name=lambda req: MISMATCHES[req][1])

MISSING_HEADERS = {steps.METHOD_MISSING: "MCP-HDR-005", steps.VERSION_HEADER_MISSING: "MCP-HDR-007"}


@check("MCP-HDR-005", scenarios=REFUSALS)
def method_header_required(rec: Recording):
    """Sends a 2026-07-28 request without Mcp-Method; a 4xx with a JSON-RPC error body (the exact 400 is
    MCP-HDR-006's SHOULD: that a missing header "does not match the body" is a reading of the spec)."""
    refusal(step(rec, steps.METHOD_MISSING), "MCP-HDR-005")


@check("MCP-HDR-007", scenarios=REFUSALS)
def version_header_required(rec: Recording):
    """Sends a request with `_meta` version 2026-07-28 but no MCP-Protocol-Version header; a 4xx with a JSON-RPC
    error body (the exact 400 is MCP-HDR-006's SHOULD)."""
    refusal(step(rec, steps.VERSION_HEADER_MISSING), "MCP-HDR-007")


MISSING_HEADER_CODES = {   # code: whose it is
    UNSUPPORTED_VERSION: "the spec's code for headers that do not match the body",
    HEADER_MISMATCH: "MCP 2026-07-28's HeaderMismatch, which names missing headers",
}


@check("MCP-HDR-006", scenarios=REFUSALS)
def missing_header_code(rec: Recording):
    """The refusals of a missing Mcp-Method and a missing MCP-Protocol-Version are HTTP 400 with code -32022 (the
    spec's, read as 'does not match') or -32020 (MCP 2026-07-28's for a missing header); the code is noted."""
    seen: list[str] = []

    def exact(label: str) -> None:
        ex = step(rec, label)
        code = refusal(ex, MISSING_HEADERS[label])["error"]["code"]
        known = next((c for c in MISSING_HEADER_CODES if same_integer(code, c)), None)
        assert ex.status == 400 and known is not None, \
            f"expected HTTP 400 with code {UNSUPPORTED_VERSION} or {HEADER_MISMATCH}, got HTTP {ex.status} with code " \
            f"{as_json(code)}"
        seen.append(f"{label}: {known} ({MISSING_HEADER_CODES[known]})")
    judge_all(list(MISSING_HEADERS), exact, exchange=lambda label: step(rec, label))
    return "; ".join(seen)


@check("MCP-HDR-008", scenarios=REFUSALS)
def wrong_content_type(rec: Recording):
    """Sends a request as `Content-Type: text/plain`; a 4xx with a JSON-RPC error body (upstream code -32005)."""
    body = refusal(step(rec, steps.CONTENT_TYPE), "MCP-HDR-008")
    return f"code {body['error']['code']} (upstream: -32005)"
