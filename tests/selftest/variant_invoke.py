"""The variant's choices in invoke, errors and generated-input territory (composed into variant.wrap).

=====  ===========================================  ==================================================================
 #     variation (reference → variant)              the spec sentence that leaves it open
=====  ===========================================  ==================================================================
 20    integers written with a zero fraction:       "`versionNumber` | integer", "`durationMs` | integer", "Every event
       ``versionNumber`` 3 → 3.0, ``durationMs``    carries `v` (integer, always `1`)": JSON has one number type
       35 → 35.0, ``v`` 1 → 1.0 (results and        (RFC 8259 §6) and JSON Schema counts "a number with a zero
       every invoke stream frame)                   fractional part" as an integer
 21    invoke and AG-UI refusals as                 "A refusal before the run starts answers with an HTTP status and
       ``application/problem+json`` with the        the error body" — the media type is not shown; a ``+json`` type is
       spec's error body                            JSON (RFC 6839 §3.1)
 22    AG-UI ``invalid_request`` status 400 → 422   "Complete list of codes with their HTTP statuses: not shown."
=====  ===========================================  ==================================================================
"""
from __future__ import annotations

from typing import Any

from tests.selftest import asgi_tools as t

PROBLEM_JSON = b"application/problem+json"
INTEGER_FIELDS = ("versionNumber", "durationMs")
STATUS_BY_CODE = {"invalid_request": 422}


def as_float(value: Any) -> Any:
    """An integer written with a zero fraction (3 → 3.0); anything else unchanged."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def float_event(event: Any) -> Any:
    return {**event, "v": as_float(event.get("v"))} if isinstance(event, dict) and "v" in event else event


def restyle_answer(obj: Any, scope: dict, status: int, headers: t.Headers) -> Any:
    """Invoke results with float integers; invoke/AG-UI refusals as problem+json (and invalid_request 422)."""
    if not isinstance(obj, dict):
        return obj
    if 400 <= status < 500 and isinstance(obj.get("error"), dict):
        code = obj["error"].get("code")
        return STATUS_BY_CODE.get(code, status), t.with_header(headers, b"content-type", PROBLEM_JSON), obj
    if status == 200 and t.path_kind(scope.get("path", "")) == "invoke":
        obj = {**obj, **{k: as_float(obj[k]) for k in INTEGER_FIELDS if k in obj}}
        if isinstance(obj.get("events"), list):
            obj["events"] = [float_event(e) for e in obj["events"]]
    return obj


def wrap(app: t.ASGIApp, facts: dict) -> t.ASGIApp:
    app = t.rewrite_sse_json(app, lambda event, obj, state, scope: float_event(obj), where="invoke")
    return t.rewrite_json_response(app, restyle_answer, where=("invoke", "agui"))
