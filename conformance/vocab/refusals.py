"""Refusals of the credential and addressing steps (shared by the access, MCP and metadata checks): a step
refused with a 4xx (or the given status) and the error body of its protocol."""
from __future__ import annotations

from typing import Any, Iterable

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.vocab.readers import error_code, got, is_4xx, rpc_error, step
from conformance.vocab.steps import access as steps
from conformance.wire.exchange import Exchange


STEP_SENT = {   # the steps of the access scenarios (the MCP and metadata refusals reuse the addressing labels)
    steps.NO_CREDENTIAL: "no Authorization header", steps.EMPTY_BEARER: "the bare scheme `Bearer` and no credential",
    steps.BASIC_SCHEME: "the API key under the Basic scheme", steps.UNKNOWN_KEY: "an unknown `<svc>_live_…` key",
    steps.UNKNOWN_TOKEN: "an unknown `<svc>_oat_…` token", steps.REVOKED_KEY: "the revoked key (--revoked-key)",
    steps.EXPIRED_TOKEN: "the expired token (--expired-token)",
    steps.OTHER_AGENT_TOKEN: "the access token, addressed to --other-agent-id",
    steps.QUERY_KEY: "no header, the API key as `access_token` query parameter",
    steps.QUERY_TOKEN: "no header, the access token as `access_token` query parameter",
    steps.BODY_KEY: "no header, the API key as an `access_token` member of the JSON body",
    steps.MALFORMED_AGENT: "a valid API key to an agentId without the `agt_` prefix",
    steps.UNKNOWN_AGENT: "a valid API key to a well-formed agentId that does not exist",
    steps.UNDEPLOYED_AGENT: "a valid API key to the undeployed agent (--undeployed-agent-id)",
}


def step_sent(label: str) -> str:
    """What a credential or addressing step sent, in words (for messages)."""
    return STEP_SENT.get(label, label)


def refused_4xx(rec: Recording, label: str, *, status: int | None = None, code: str | None = None,
                error_body: bool = False) -> Exchange:
    """Invoke/AG-UI: the step was refused before any run with a 4xx (or `status`), optionally `error.code` = code."""
    ex = step(rec, label)
    want = str(status) if status else "a 4xx"
    what = f"{rec.scenario} sent {step_sent(label)}"
    assert (ex.status == status) if status else is_4xx(ex), f"{what}; expected {want} refusal, got {got(ex)}"
    if code is not None:
        actual = error_code(ex, what)
        assert actual == code, f"{what}; expected error.code {code!r}, got {actual!r}: {got(ex)}"
    if error_body:
        schemas.check("error-body", ex.json(), what)
    return ex


def mcp_refused(rec: Recording, label: str, status: int | None, code: int | None = None) -> dict[str, Any]:
    """MCP: the step answered `status` (None: any 4xx) with a JSON-RPC error body, optionally `error.code` = code."""
    ex = step(rec, label)
    what = f"{rec.scenario} sent {step_sent(label)}"
    ok = ex.status == status if status else is_4xx(ex)
    assert ok, f"{what}; expected HTTP {status or '4xx'} with a JSON-RPC error, got {got(ex)}"
    body = rpc_error(ex, what)
    if code is not None:
        actual = body["error"]["code"]
        assert actual == code, f"{what}; expected error.code {code}, got {actual}: {got(ex)}"
    return body


def each(labels: Iterable[str], rec: Recording, fn) -> str:
    """Apply fn to every step that ran; NotAssessed (with the reasons) if none did."""
    ran, reasons = [], []
    for label in labels:
        try:
            step(rec, label)
        except NotAssessed as exc:
            reasons.append(str(exc))
            continue
        fn(label)
        ran.append(label)
    if not ran:
        raise NotAssessed("; ".join(reasons) or "no step ran")
    return ""
