"""Broken servers for the generated-input checks: schemathesis refusals, cross-protocol replies, schemas.

Each is the reference server with exactly one deviation, named after the rule it breaks.
"""
from __future__ import annotations

import re

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken

_LONE_CR = re.compile(r"\r(?!\n)")


def _error(obj):
    return obj.get("error") if isinstance(obj, dict) and isinstance(obj.get("error"), dict) else None


@broken("INV-ERR-005", name="INV-ERR-005-invalid-json-answers-500")
def invalid_json_500(app, facts):
    """An invoke whose body is not JSON is answered 500 (same error body) instead of a 4xx."""
    def rewrite(obj, scope, status, headers):
        err = _error(obj)
        if status < 500 and err and "not valid" in str(err.get("message", "")):
            return 500, headers, obj
        return obj
    return t.rewrite_json_response(app, rewrite, where="invoke")


@broken("GEN-ERR-004", name="GEN-ERR-004-validation-request-id-without-req")
def request_id_without_prefix(app, facts):
    """Invoke `validation_failed` refusals carry `error.requestId` without the `req_` prefix."""
    def rewrite(obj, scope, status, headers):
        err = _error(obj)
        if err and err.get("code") == "validation_failed" and isinstance(err.get("requestId"), str):
            err["requestId"] = err["requestId"].removeprefix("req_")
        return obj
    return t.rewrite_json_response(app, rewrite, where="invoke")


@broken("GEN-ERR-001", name="GEN-ERR-001-invoke-refusals-as-text-plain")
def invoke_refusals_text_plain(app, facts):
    """Every invoke refusal keeps the error body but is sent as `text/plain` (not JSON, not a +json type)."""
    def fn(headers, scope, status):
        if 400 <= status < 500:
            return t.with_header(headers, "content-type", "text/plain; charset=utf-8")
        return headers
    return t.rewrite_headers(app, fn, where="invoke")


@broken("GEN-XPROTO-001", name="GEN-XPROTO-001-agui-u2028-becomes-space")
def agui_line_separator(app, facts):
    """AG-UI text deltas turn U+2028 into a space (invoke and MCP keep it)."""
    def rewrite(event, obj, state, scope):
        if isinstance(obj, dict) and isinstance(obj.get("delta"), str):
            obj["delta"] = obj["delta"].replace("\u2028", " ")
        return obj
    return t.rewrite_sse_json(app, rewrite, where="agui")


@broken("GEN-XPROTO-001", name="GEN-XPROTO-001-invoke-stream-drops-lone-cr")
def invoke_stream_lone_cr(app, facts):
    """Invoke streaming drops a lone CR from text deltas (CRLF is kept; JSON invoke, AG-UI and MCP keep it)."""
    def rewrite(event, obj, state, scope):
        if isinstance(obj, dict) and obj.get("type") == "text" and isinstance(obj.get("delta"), str):
            obj["delta"] = _LONE_CR.sub("", obj["delta"])
        return obj
    return t.rewrite_sse_json(app, rewrite, where="invoke")


@broken("GEN-XPROTO-002", name="GEN-XPROTO-002-agui-drops-non-ascii-fields")
def agui_non_ascii_fields(app, facts):
    """AG-UI drops top-level request fields whose name is not ASCII before the agent sees them."""
    def rewrite(body, scope):
        if isinstance(body, dict):
            return {k: v for k, v in body.items() if k.isascii()}
        return None
    return t.rewrite_request_json(app, rewrite, where="agui")


@broken("INV-RES-011", name="INV-RES-011-version-number-as-string-schema")
def version_number_string(app, facts):
    """The non-streaming invoke result carries `versionNumber` as a JSON string ("1")."""
    def rewrite(obj, scope, status, headers):
        if status == 200 and isinstance(obj, dict) and "versionNumber" in obj:
            obj["versionNumber"] = str(obj["versionNumber"])
        return obj
    return t.rewrite_json_response(app, rewrite, where="invoke")
