"""invoke checks: GEN-ERR: the error body of every refusal."""
from __future__ import annotations

from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, precondition
from conformance.registry import rule
from conformance.vocab.readers import error_of, is_4xx
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import (asked_for_stream, error_body, is_json_answer, is_sse_answer, judge_each,
                                               quoted, what)


def refusals_of(rec: Recording) -> list[Exchange]:
    """The answered refusals: exchanges the scenario expected refused that did not answer 2xx."""
    out = [ex for label in rec.facts.get("refusals", []) for ex in [rec.get(label)]
           if ex.status is not None and not 200 <= ex.status < 300]
    if not out:
        raise NotAssessed(f"scenario {rec.scenario} saw no refusal")
    return out


def error_rule(requirement: str, *, only_with_error: bool = True):
    """Decorator: `judge(ex, err)` over every refusal of `invoke.refusals` and `invoke.extra_data`, one check per
    scenario (`<judge>__<scenario>`, registered by `registry.rule`). `err` is the error object: a refusal without the
    error body is GEN-ERR-001's (blocked by it), unless `only_with_error` is False (GEN-ERR-001 itself: `err` None)."""

    def over_refusals(judge) -> Callable[[Recording], str | None]:
        def fn(rec: Recording) -> str | None:
            items = refusals_of(rec)
            note = judge_each(items, lambda ex: judge(ex, error_body(ex) if only_with_error else error_of(ex)))
            return observed_codes(items) if requirement == "GEN-ERR-001" else note
        return fn

    def register(judge):
        rule(lambda scn: over_refusals(judge), over=("invoke.refusals", "invoke.extra_data"), requirements=requirement,
             scenarios=lambda scn: [scn], name=lambda scn: f"{judge.__name__}__{scn.split('.')[-1]}", doc=judge.__doc__)
        return judge

    return register


def observed_codes(items: list[Exchange]) -> str:
    """GEN-ERR-006/007 (reported, not judged): the (status, code) pairs and details keys seen."""
    seen = []
    for ex in items:
        err = error_of(ex) or {}
        details = err.get("details")
        keys = f" details {sorted(details)}" if isinstance(details, dict) else ""
        seen.append(f"{ex.label} {ex.status} {err.get('code')!r}{keys}")
    return "refusals seen: " + "; ".join(seen)


@error_rule("GEN-ERR-001", only_with_error=False)
def refusal_is_4xx_error_body(ex: Exchange, err: dict[str, Any] | None) -> None:
    """Provokes invoke refusals; each is a 4xx whose JSON object body has an `error` object, sent as JSON
    (`application/json` or a `+json` type)."""
    if is_4xx(ex) and is_sse_answer(ex) and asked_for_stream(ex):
        raise precondition("INV-ERR-001", ex, f"the refusal of a request asking for a stream came as an event "
                                              f"stream: {what(ex)}")
    assert is_4xx(ex), f"a refusal must have a 4xx status, got {what(ex)}"
    assert is_json_answer(ex), \
        f"a refusal must be sent as JSON (application/json or +json), got Content-Type {ex.header('content-type')!r}"
    assert err is not None, f"the refusal's body is not the error body {{error: {{…}}}}: {what(ex)}"


@error_rule("GEN-ERR-002")
def error_code_is_string(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.code` is a non-empty string in each."""
    assert isinstance(err.get("code"), str) and err["code"], \
        f"`error.code` is not a non-empty string: {quoted(err.get('code'))}"


@error_rule("GEN-ERR-003")
def error_message_is_string(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.message` is a string in each."""
    assert isinstance(err.get("message"), str), \
        f"`error.message` is not a string: {quoted(err.get('message'))}"


@error_rule("GEN-ERR-004")
def error_request_id_prefixed(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.requestId` is a string `req_` followed by an identifier."""
    rid = err.get("requestId")
    assert isinstance(rid, str) and rid.startswith("req_") and len(rid) > 4, \
        f"`error.requestId` must be `req_` followed by an identifier, got {quoted(rid)}"


@error_rule("GEN-ERR-005")
def validation_failed_has_details(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; wherever `error.code` is `validation_failed`, `error.details` is an object."""
    if same_json(err.get("code"), "validation_failed"):
        assert isinstance(err.get("details"), dict), \
            f"`validation_failed` without `details` as an object: {quoted(err.get('details'))}"
