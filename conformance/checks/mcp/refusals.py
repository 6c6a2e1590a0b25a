"""MCP checks: refusals."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check, rule
from conformance.vocab.steps import mcp as steps
from conformance.vocab.constants import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from conformance.vocab.readers import got, rpc_error
from conformance.vocab.refusals import mcp_refused
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import REFUSALS, messages, sent_id


@check("MCP-METH-006", scenarios=REFUSALS)
def unknown_method(rec: Recording):
    """Sends `resources/list`; a JSON-RPC error with code -32601."""
    ex = rec.get(steps.UNSUPPORTED_METHOD)
    body = rpc_error(ex, "resources/list")
    assert body["error"]["code"] == METHOD_NOT_FOUND, f"resources/list: code {body['error']['code']}, expected -32601"


@check("MCP-METH-007", scenarios=REFUSALS)
def invalid_params(rec: Recording):
    """Sends tools/call for an unknown tool, and one without `arguments.prompt`; JSON-RPC errors with code -32602."""
    for label in (steps.UNKNOWN_TOOL, steps.NO_PROMPT):
        body = rpc_error(rec.get(label), f"tools/call ({label})")
        assert body["error"]["code"] == INVALID_PARAMS, \
            f"tools/call ({label}): code {body['error']['code']}, expected -32602"


# Errors whose HTTP status the spec's table does not give (it only lists -32601 and -32602 among "other codes"):
# a JSON-RPC error under 200 is as legitimate for them as a 4xx.
STATUS_OPEN = {steps.UNSUPPORTED_METHOD, steps.UNKNOWN_TOOL, steps.NO_PROMPT, steps.CONTENT_TYPE}


def refusals_keep_status(rec: Recording):
    """Every MCP refusal the suite provokes has a 4xx and a JSON-RPC error body whose `id` is the request's or null;
    a JSON-RPC error under a 2xx is a refusal that lost its status (except where the spec gives no status)."""
    judged = 0
    for ex in rec.exchanges:
        if ex.status is None:
            continue
        what = f"{rec.scenario} {ex.label}"
        if 200 <= ex.status < 300 and ex.label in STATUS_OPEN:
            continue
        if 200 <= ex.status < 300:
            try:
                msgs = messages(ex)
            except AssertionError:
                continue
            refused = [m for m in msgs if isinstance(m, dict) and "error" in m and "result" not in m]
            assert not refused, f"{what}: a JSON-RPC error under HTTP {ex.status}; a refusal must keep its 4xx status: " \
                                f"{got(ex)}"
            continue
        assert 400 <= ex.status < 500, f"{what}: a refusal must keep a 4xx status, got {got(ex)}"
        body = rpc_error(ex, what)
        assert body.get("id") in (None, sent_id(ex)), \
            f"{what}: the error's id is {truncate(body.get('id'))}, expected the request's {sent_id(ex)!r} or null"
        judged += 1
    if not judged:
        raise NotAssessed(f"{rec.scenario}: no refusal was observed")


rule(lambda scn: refusals_keep_status, over=("mcp.refusals", "access.mcp"), requirements="MCP-ERR-001",
     scenarios=lambda scn: [scn], name=lambda scn: f"refusal_body_{scn.replace('.', '_')}")


@check("MCP-ERR-002", scenarios=REFUSALS)
def unknown_agent(rec: Recording):
    """Sends tools/call with a valid API key to a nonexistent `agt_…` id; HTTP 404 with code -32600."""
    mcp_refused(rec, steps.UNKNOWN_AGENT, 404, INVALID_REQUEST)


def probed_429(rec: Recording) -> Exchange:
    limited = [ex for ex in rec.exchanges if ex.status == 429]
    if not limited:
        raise NotAssessed(f"no 429 within {rec.facts.get('sent')} requests")
    return limited[0]


def retry_after_seconds(ex: Exchange) -> str:
    retry = (ex.header("retry-after") or "").strip()
    assert retry.isascii() and retry.isdigit(), f"the 429's Retry-After is {retry!r}, expected whole seconds"
    return retry


@check("MCP-ERR-003", scenarios=["mcp.rate_limit"])
def rate_limited(rec: Recording):
    """A 429 from the MCP endpoint has a JSON-RPC error body and an integer `Retry-After`."""
    ex = probed_429(rec)
    body = rpc_error(ex, "the 429")
    return f"code {body['error']['code']}, Retry-After {retry_after_seconds(ex)}"


@check("GEN-RATE-003", scenarios=["mcp.rate_limit"])
def probed_429_has_retry_after(rec: Recording):
    """The 429 the rate-limit probe provoked carries `Retry-After` in whole seconds."""
    return f"Retry-After {retry_after_seconds(probed_429(rec))}"
