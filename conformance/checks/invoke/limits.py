"""invoke checks: INV-LIM: limits."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import on
from conformance.registry import check
from conformance.vocab.readers import request_json as sent
from conformance.vocab.steps import invoke as steps
from conformance.vocab.values import same_json
from conformance.checks.invoke._common import (accepted, echoed, exact, inside_limit, refused, reply_of, run_status,
                                               what)


@check("INV-LIM-001", scenarios=["invoke.big_body"])
def half_megabyte_accepted(rec: Recording) -> None:
    """Sends an echo-mode prompt making the body about 0.5 MB; it is accepted and `result` equals the prompt."""
    ex = rec.get(steps.HALF_MB)
    accepted(ex, "a body of about 0.5 MB (inside 1 MB)")
    prompt = (sent(ex) or {}).get("prompt", "")
    exact(ex, reply_of(ex), prompt)


@check("INV-LIM-002", scenarios=["invoke.refusals"])
def two_megabytes_refused(rec: Recording) -> None:
    """Sends a body of 1.25 MB; it is refused with a 4xx and the error body."""
    refused(rec.get(steps.HUGE_BODY))


@check("INV-LIM-003", scenarios=["invoke.extra_data"])
def extra_data_inside_accepted(rec: Recording) -> None:
    """Sends about 2 KB in the extra data field; the run completes and the field reaches `params`."""
    ex = inside_limit(rec)
    accepted(ex, "about 2 KB of extra data (inside 4 KB)", "INV-LIM-003")
    status = run_status(ex)
    with on(ex):
        assert same_json(status, "completed"), f"2 KB of extra data must be accepted and run; status {status!r} " \
                                               f"({what(ex)})"
    params = echoed(ex)
    with on(ex):
        assert isinstance(params, dict) and rec.facts["field"] in params, \
            f"the extra data field {rec.facts['field']!r} did not reach `params`"


@check("INV-LIM-004", scenarios=["invoke.extra_data"])
def extra_data_outside_refused(rec: Recording) -> None:
    """Sends about 8 KB in the extra data field; it is refused with a 4xx and the error body."""
    refused(rec.get(steps.EXTRA_8KB))


@check("INV-LIM-005", scenarios=["invoke.extra_data"])
def extra_data_outside_is_validation_failed(rec: Recording) -> None:
    """Sends about 8 KB in the extra data field; the refusal's code is `validation_failed`."""
    refused(rec.get(steps.EXTRA_8KB), "validation_failed", root="INV-LIM-004")
