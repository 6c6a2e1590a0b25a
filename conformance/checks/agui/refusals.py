"""agui checks: refusals.

A refusal is read through `refusal_error`: an answer that is no 4xx fails the requirement of what was refused; a 4xx
that is not the error body is AGUI-ERR-005's deviation, which the other refusal checks do not report again."""
from __future__ import annotations

from typing import Any, Callable

from conformance import schemas
from conformance.outcomes import Deviation, NotAssessed, precondition
from conformance.registry import Step, check, rule
from conformance.vocab.readers import error_of, got, is_4xx
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import access, agui as steps
from conformance.checks.agui._common import judge_every, refusal_error


def _refused_with(code: str | None) -> Callable[[Exchange], None]:
    def refused(ex: Exchange) -> None:
        err = refusal_error(ex)
        assert code is None or same_json(err.get("code"), code), \
            f"status {ex.status} with error.code {err.get('code')!r}, expected {code!r}"
    return refused


def _refusal_check(labels: tuple[Step, ...], code: str | None) -> Callable[..., None]:
    def judge(rec):
        return judge_every([rec.get(label) for label in labels], _refused_with(code), exchange=lambda ex: ex)
    return judge


REFUSALS = (   # (requirement, check name, steps, error.code, doc)
        ("AGUI-ERR-001", "refused_without_messages", (steps.NO_MESSAGES,), "invalid_request",
         "Sends neither messages nor resume; refused before any stream with a 4xx and invalid_request."),
        ("AGUI-ERR-002", "refused_empty_messages", (steps.EMPTY_MESSAGES,), "invalid_request",
         "Sends `messages: []` and no resume; refused with a 4xx and invalid_request."),
        ("AGUI-ERR-003", "refused_without_user_message", (steps.ASSISTANT_ONLY,), "invalid_request",
         "Sends only an assistant message and no resume; refused with a 4xx and invalid_request."),
        ("AGUI-SESS-004", "refused_thread_id_out_of_bounds", (steps.THREAD_257, steps.THREAD_EMPTY),
         "validation_failed",
         "Sends threadIds of 257 and 0 characters; each is refused before the stream with a 4xx and validation_failed."),
        ("AGUI-LIM-002", "refused_two_megabytes", (steps.HUGE_BODY,), None,
         "Sends a body of 1.25 MB (well over 1 MB); refused before the stream with a 4xx and the error body."))
rule(lambda case: _refusal_check(case[2], case[3]), over=REFUSALS, requirements=lambda case: case[0],
     scenarios=["agui.refusals"], name=lambda case: case[1], doc=lambda case: case[4])


# The credential and addressing refusals of AG-UI (access.agui sends them with Accept: text/event-stream)
ACCESS_REFUSED = (access.NO_CREDENTIAL, access.UNKNOWN_KEY, access.UNKNOWN_AGENT)


@check("AGUI-ERR-005", scenarios=["agui.refusals", "access.agui"])
def refusals_are_error_bodies(rec, access_rec):
    """Sends faulty AG-UI requests with Accept: text/event-stream (and no, or an unknown, credential; an unknown
    agent); each 4xx answer is a JSON error body, not a stream. An answer that is no refusal at all is judged by the
    requirement of that fault."""
    def error_body(ex: Exchange) -> None:
        if not is_4xx(ex):
            raise NotAssessed(f"{ex.label}: not refused ({got(ex)}): judged by the requirement of that fault")
        refusal_error(ex)
        schemas.check("error-body", ex.json(), "the refusal's body")
    return judge_every([rec.get(label) for label in steps.AGUI_REFUSED if not rec.left_out(label)]
                       + [access_rec.get(label) for label in ACCESS_REFUSED], error_body, exchange=lambda ex: ex)


# The same fault sent to AG-UI and to invoke, and the requirements that say each must refuse it.
SAME_FAULT = (   # (AG-UI step, invoke step, AG-UI's requirement, invoke's requirement, both in agui.refusals)
    (access.UNKNOWN_AGENT, access.UNKNOWN_AGENT, "GEN-AGENT-005", "GEN-AGENT-005", False),
    (access.NO_CREDENTIAL, access.NO_CREDENTIAL, "AUTH-KEY-003", "AUTH-KEY-002", False),
    (access.UNKNOWN_KEY, access.UNKNOWN_KEY, "AUTH-KEY-004", "AUTH-KEY-004", False),
    (steps.THREAD_257, steps.INVOKE_SESSION_257, "AGUI-SESS-004", "INV-SESS-006", True),
)
INVOKE_REFUSAL_STATUS = "GEN-ERR-001"        # a refusal of invoke has a 4xx status and the error body
INVOKE_REFUSAL_NOT_STREAMED = "INV-ERR-001"  # … as JSON, when the request accepted an event stream
INVOKE_ERROR_CODE = "GEN-ERR-002"


def _agui_refusal(ex: Exchange, owner: str) -> dict[str, Any]:
    if not is_4xx(ex):
        raise precondition(owner, ex, f"expected a 4xx refusal, got {got(ex)}")
    err = refusal_error(ex)
    if not isinstance(err.get("code"), str) or not err["code"]:
        raise precondition("AGUI-ERR-005", ex, f"error.code is not a non-empty string: {got(ex)}")
    return err


def _invoke_refusal(ex: Exchange, owner: str) -> dict[str, Any]:
    if ex.status is not None and 200 <= ex.status < 300:
        raise precondition(owner, ex, f"expected a 4xx refusal, got {got(ex)}")
    if not is_4xx(ex):
        raise precondition(INVOKE_REFUSAL_STATUS, ex, f"a refusal must have a 4xx status, got {got(ex)}")
    if ex.stream is not None:
        raise precondition(INVOKE_REFUSAL_NOT_STREAMED, ex, f"the {ex.status} refusal is an event stream, not the JSON "
                                                            f"error body: {got(ex)}")
    err = error_of(ex)
    if err is None:
        raise precondition(INVOKE_REFUSAL_STATUS, ex, f"the refusal's body is not the error body: {got(ex)}")
    if not isinstance(err.get("code"), str) or not err["code"]:
        raise precondition(INVOKE_ERROR_CODE, ex, f"error.code is not a non-empty string: {got(ex)}")
    return err


@check("AGUI-ERR-004", scenarios=["agui.refusals", "access.agui", "access.invoke"])
def refusals_match_invoke(rec, agui_access, invoke_access):
    """Sends the same faults (unknown agent, no/unknown credential: the access scenarios; 257-character key) to AG-UI
    and invoke; same status and code."""
    def pair(case: tuple) -> tuple[Exchange, Exchange]:
        agui_label, invoke_label, _, _, refusals = case
        return (rec.get(agui_label), rec.get(invoke_label)) if refusals else \
            (agui_access.get(agui_label), invoke_access.get(invoke_label))

    def same_refusal(case: tuple) -> None:
        agui_owner, invoke_owner = case[2], case[3]
        a, i = pair(case)
        a_code, i_code = _agui_refusal(a, agui_owner).get("code"), _invoke_refusal(i, invoke_owner).get("code")
        if not (same_json(a.status, i.status) and same_json(a_code, i_code)):
            raise Deviation(f"AG-UI answered status {a.status} code {a_code!r}, invoke ({i.label}) answered status "
                            f"{i.status} code {i_code!r} (expected the same 4xx refusal)", (a, i))
    return judge_every(SAME_FAULT, same_refusal, exchange=lambda case: pair(case)[0])
