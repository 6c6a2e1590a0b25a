"""MCP checks: refusals."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import Blocked, NotAssessed, judge_all, on, precondition
from conformance.registry import check, rule
from conformance.vocab.steps import mcp as steps
from conformance.vocab.constants import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from conformance.vocab.readers import got, step
from conformance.vocab.values import digits_only, same_integer, same_json
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import (REFUSALS, REFUSAL_BODY, STATUS_OPEN, as_json, error_answer, refusal,
                                            response, rpc_error_body, sent_id)


def code_is(ex: Exchange, root: str, code: int) -> None:
    """A JSON-RPC error with `code` (the spec gives no status for these: a 4xx or an error under 200 alike)."""
    actual = refusal(ex, root, in_band=True)["error"]["code"]
    assert same_integer(actual, code), f"code {as_json(actual)}, expected {code}"


@check("MCP-METH-006", scenarios=REFUSALS)
def unknown_method(rec: Recording):
    """Sends `resources/list`; a JSON-RPC error with code -32601."""
    ex = step(rec, steps.UNSUPPORTED_METHOD)
    with on(ex):
        code_is(ex, "MCP-METH-006", METHOD_NOT_FOUND)


@check("MCP-METH-007", scenarios=REFUSALS)
def invalid_params(rec: Recording):
    """Sends tools/call for an unknown tool; a JSON-RPC error with code -32602 (in MCP a protocol error, never a tool
    result)."""
    ex = step(rec, steps.UNKNOWN_TOOL)
    with on(ex):
        code_is(ex, "MCP-METH-007", INVALID_PARAMS)


NO_PROMPT_ROOT = "MCP-METH-009"


@check(NO_PROMPT_ROOT, scenarios=REFUSALS)
def missing_prompt_is_an_error(rec: Recording):
    """Sends tools/call of the agent's tool without `arguments.prompt`; an error in either form MCP gives an input
    the tool cannot take: a tool result with `isError: true` (MCP 2025-11-25, SEP-1303) or a JSON-RPC error -32602.
    The form is noted, never judged."""
    ex = step(rec, steps.NO_PROMPT)
    with on(ex):
        msg = response(ex, NO_PROMPT_ROOT) if ex.status == 200 else None
        if msg is not None and "result" in msg:
            flag = msg["result"].get("isError") if isinstance(msg["result"], dict) else None
            assert flag is True, (f"the call without a prompt was served as a run (`isError` {as_json(flag)}); "
                                  f"expected an error: a tool result with `isError: true` or a JSON-RPC error -32602")
            return "answered as a tool result with `isError: true` (a tool execution error)"
        code_is(ex, NO_PROMPT_ROOT, INVALID_PARAMS)
        return "answered as a JSON-RPC error -32602 (invalid params)"


def kept_status(ex: Exchange, *, refused_step: bool) -> None:
    """MCP-ERR-001 on one answer: a refusal keeps a 4xx with a JSON-RPC error body whose `id` is the request's or
    null (another id is the id rule's deviation, MCP-METH-005's: blocked by it where it failed); a JSON-RPC error
    under a 2xx is a refusal that lost its status (except where the spec gives no status); a request that was served
    is no refusal (not assessed here: the requirement asking for the refusal judges it).
    `refused_step`: the spec refuses this request, so no response at all is a refusal that kept no status."""
    if ex.status is None:
        if refused_step:
            raise AssertionError(f"a refusal must keep a 4xx status, got {got(ex)}")
        raise NotAssessed(f"no response ({ex.error})")
    if 200 <= ex.status < 300:
        if ex.label in STATUS_OPEN:
            raise NotAssessed("the spec gives no status for this refusal")
        if error_answer(ex) is None:
            raise NotAssessed("served, not refused")
        raise AssertionError(f"a JSON-RPC error under HTTP {ex.status}; a refusal must keep its 4xx status: {got(ex)}")
    assert 400 <= ex.status < 500, f"a refusal must keep a 4xx status, got {got(ex)}"
    body = rpc_error_body(ex, REFUSAL_BODY)
    if not (body.get("id") is None or same_json(body.get("id"), sent_id(ex))):    # a response's id is MCP-METH-005's
        raise Blocked("MCP-METH-005", f"the error's id is {as_json(body.get('id'))}, expected the request's "
                                      f"{as_json(sent_id(ex))} or null", [ex])


def refusals_keep_status(rec: Recording):
    """Every MCP refusal the suite provokes has a 4xx and a JSON-RPC error body whose `id` is the request's or null;
    a JSON-RPC error under a 2xx is a refusal that lost its status (except where the spec gives no status)."""
    every_step_refused = rec.base_scenario in REFUSALS
    return judge_all(rec.exchanges, lambda ex: kept_status(ex, refused_step=every_step_refused),
                     nothing=f"{rec.scenario}: no refusal was observed")


rule(lambda scn: refusals_keep_status, over=("mcp.refusals", "access.mcp"), requirements="MCP-ERR-001",
     scenarios=lambda scn: [scn], name=lambda scn: f"refusal_body_{scn.replace('.', '_')}")


@check("MCP-ERR-002", scenarios=REFUSALS)
def unknown_agent(rec: Recording):
    """Sends tools/call with a valid API key to a nonexistent `agt_…` id; HTTP 404 with code -32600."""
    refusal(step(rec, steps.UNKNOWN_AGENT), "MCP-ERR-002", status=404, code=INVALID_REQUEST)


def probed_429(rec: Recording) -> Exchange:
    limited = [ex for ex in rec.exchanges if ex.status == 429]
    if not limited:
        raise NotAssessed(no_429_why(rec.facts))
    return limited[0]


def no_429_why(facts: dict) -> str:
    """Why the probe saw no 429: how far it went, the bucket the server showed, and what it would take."""
    sent, cap, first, last = (facts.get(k) for k in ("sent", "cap", "remaining_first", "remaining_last"))
    seen = ("the server sent no X-RateLimit-Remaining" if first is None else
            f"X-RateLimit-Remaining was {first} at the first request and {last} at the last")
    if facts.get("out_of_time"):
        stop = "the probe's time ran out"
    elif cap is not None and sent is not None and sent >= cap:
        stop = f"the cap was reached (--rate-probe-max {cap})"
    else:
        stop = "the server said no request was left to spend"
    need = (f"; the bucket still held {last} after {sent} requests, so a 429 takes more than {sent + last} (plus "
            "what refills meanwhile): give --rate-probe-max above that if you accept the load"
            if isinstance(last, int) and last > 0 and sent else "")
    return f"no 429 within {sent} requests: {stop}; {seen}{need}"


WHOLE_SECONDS = "GEN-RATE-003"   # every 429 carries Retry-After in whole seconds (judged on the probe's 429 below)


def retry_after_seconds(ex: Exchange) -> str:
    retry = (ex.header("retry-after") or "").strip()
    if not digits_only(retry):
        raise precondition(WHOLE_SECONDS, ex, f"the 429's Retry-After is {retry!r}, expected whole seconds")
    return retry


@check("MCP-ERR-003", scenarios=["mcp.rate_limit"])
def rate_limited(rec: Recording):
    """A 429 from the MCP endpoint has a JSON-RPC error body and an integer `Retry-After` (the general rule for
    every 429, GEN-RATE-003, judges the Retry-After on the same 429)."""
    ex = probed_429(rec)
    body = rpc_error_body(ex, "MCP-ERR-003")
    return f"code {body['error']['code']}, Retry-After {retry_after_seconds(ex)}"


@check("GEN-RATE-003", scenarios=["mcp.rate_limit"])
def probed_429_has_retry_after(rec: Recording):
    """The 429 the rate-limit probe provoked carries `Retry-After` in whole seconds."""
    return f"Retry-After {retry_after_seconds(probed_429(rec))}"
