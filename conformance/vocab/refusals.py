"""Refusals of the credential and addressing steps (shared by the access, MCP and metadata checks): a step
refused with a 4xx (or the given status) and the error body of its protocol."""
from __future__ import annotations

from typing import Any, Iterable

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.vocab.readers import error_code, got, is_4xx, rpc_error, step
from conformance.wire.http import Exchange


def step_sent(label: str) -> str:
    """What a credential or addressing step sent, in words (for messages)."""
    return {
        "no-credential": "no Authorization header", "empty-bearer": "the bare scheme `Bearer` and no credential",
        "basic-scheme": "the API key under the Basic scheme", "unknown-key": "an unknown `<svc>_live_…` key",
        "unknown-token": "an unknown `<svc>_oat_…` token", "revoked-key": "the revoked key (--revoked-key)",
        "expired-token": "the expired token (--expired-token)",
        "other-agent-token": "the access token, addressed to --other-agent-id",
        "query-key": "no header, the API key as `access_token` query parameter",
        "query-token": "no header, the access token as `access_token` query parameter",
        "body-key": "no header, the API key as an `access_token` member of the JSON body",
        "malformed-agent": "a valid API key to an agentId without the `agt_` prefix",
        "unknown-agent": "a valid API key to a well-formed agentId that does not exist",
        "undeployed-agent": "a valid API key to the undeployed agent (--undeployed-agent-id)",
    }.get(label, label)


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
