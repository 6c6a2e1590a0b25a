"""What a client that can elicit answers: every form an MCP server asks for (an upstream 2026-07-28
`InputRequiredResult` holding `elicitation/create` requests) filled in with values its own schema accepts, and the
retry that carries them."""
from __future__ import annotations

import math
from typing import Any

from conformance.vocab import protocols as p
from conformance.wire.exchange import Exchange


FORMATTED = {"email": "ada@example.com", "uri": "https://example.com/ada", "date": "2026-01-01",
             "date-time": "2026-01-01T00:00:00Z"}   # a value of each string format MCP's forms may ask for


def form_answer(schema: Any) -> dict[str, Any]:
    """Content answering an elicitation form: every property of the requested schema filled in with a value the
    property's own schema accepts (its default, a listed choice, a number inside its bounds, a string of its
    format and length), so a server that validates the content sees a valid answer."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {name: form_value(prop if isinstance(prop, dict) else {}) for name, prop in (props or {}).items()}


def form_value(prop: dict[str, Any]) -> Any:
    choices = _choices(prop)
    kind = prop.get("type")
    if "default" in prop:
        return prop["default"]
    if choices:
        return choices[0]
    if kind in ("number", "integer"):
        return _number_inside(prop, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "array":
        items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
        options = _choices(items) or [form_value(items)]
        wanted = max(prop.get("minItems") or 0, 1)
        limit = prop.get("maxItems")
        return options[:min(wanted, limit)] if isinstance(limit, int) else options[:wanted]
    return _string_of(prop)


def _choices(prop: dict[str, Any]) -> list[Any]:
    """The values a property lists: `enum`, or the `const` of each `oneOf` / `anyOf` entry (titled choices)."""
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return list(prop["enum"])
    entries = prop.get("oneOf") or prop.get("anyOf")
    return [e["const"] for e in entries if isinstance(e, dict) and "const" in e] if isinstance(entries, list) else []


def _number_inside(prop: dict[str, Any], *, integer: bool) -> int | float:
    low, high = prop.get("minimum"), prop.get("maximum")
    if isinstance(prop.get("exclusiveMinimum"), (int, float)):
        low = prop["exclusiveMinimum"] + (1 if integer else 0.5)
    if isinstance(prop.get("exclusiveMaximum"), (int, float)):
        high = prop["exclusiveMaximum"] - (1 if integer else 0.5)
    value: int | float = 1
    if isinstance(low, (int, float)) and value < low:
        value = low
    if isinstance(high, (int, float)) and value > high:
        value = high
    if integer and not float(value).is_integer():
        return math.ceil(value)
    # a whole number is written as one (`0`, not `0.0`): canonical JSON of a double differs between languages there
    return int(value) if float(value).is_integer() else value


def _string_of(prop: dict[str, Any]) -> str:
    text = FORMATTED.get(prop.get("format"), "Ada")
    shortest, longest = prop.get("minLength"), prop.get("maxLength")
    if isinstance(shortest, int) and len(text) < shortest:
        text += "a" * (shortest - len(text))
    if isinstance(longest, int) and len(text) > longest:
        text = text[:longest]
    return text


def elicitation_requests(result: Any) -> tuple[dict[str, Any], str | None] | None:
    """(form elicitation requests by key, requestState) of an upstream 2026-07-28 InputRequiredResult, or None."""
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return None
    from mcp_types._v2026_07_28 import ElicitRequest, InputRequiredResult
    from pydantic import ValidationError
    try:
        parsed = InputRequiredResult.model_validate(result)
    except ValidationError:
        return None
    forms = {key: req.model_dump(by_alias=True, exclude_none=True) for key, req in (parsed.input_requests or {}).items()
             if isinstance(req, ElicitRequest) and getattr(req.params, "mode", "form") == "form"}
    return (forms, parsed.request_state) if forms else None


def answered_form(ex: Exchange) -> tuple[dict[str, Any], Any] | None:
    """The retry of an eliciting client's paused call: its params (`inputResponses` with every form filled in,
    `requestState`) and the content the agent gets (one form's, or the list of them); None when the answer asked
    for no form in the upstream 2026-07-28 shape."""
    try:
        result = p.mcp_response(ex).get("result")
    except AssertionError:
        return None
    found = elicitation_requests(result)
    if found is None:
        return None
    forms, state = found
    responses = {k: {"action": "accept", "content": form_answer(f["params"].get("requestedSchema"))}
                 for k, f in forms.items()}
    extra: dict[str, Any] = {"inputResponses": responses}
    if state is not None:
        extra["requestState"] = state
    contents = [r["content"] for r in responses.values()]
    return extra, contents[0] if len(contents) == 1 else contents
