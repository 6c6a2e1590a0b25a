"""agui checks: refusals."""
from __future__ import annotations


from typing import Callable

from conformance import schemas
from conformance.registry import Step, check, rule
from conformance.vocab.readers import error_of
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import fail_all


def refusal_problem(ex: Exchange, code: str | None = None) -> str | None:
    """Why an answer is not a refusal before the stream with the error body (and `code`), or None."""
    what = f"[{ex.label}] {ex.method} {ex.url}"
    if ex.status is None:
        return f"{what}: no response ({ex.error})"
    if not 400 <= ex.status < 500 or ex.stream is not None:
        return (f"{what}: expected a 4xx refusal before any stream, got status {ex.status}, Content-Type "
                f"{ex.header('content-type')!r}: {truncate(ex.body.decode('utf-8', 'replace'), 160, quoted=True)}")
    try:
        body = ex.json()
        schemas.check("error-body", body, what)
    except AssertionError as exc:
        return str(exc)
    if code is not None and body["error"]["code"] != code:
        return f"{what}: status {ex.status} with error.code {body['error']['code']!r}, expected {code!r}"
    return None


def _refusal_check(labels: tuple[Step, ...], code: str | None) -> Callable[..., None]:
    def judge(rec):
        fail_all([why for label in labels if (why := refusal_problem(rec.get(label), code))])
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
        ("AGUI-LIM-002", "refused_two_megabytes", (steps.TWO_MB,), None,
         "Sends a body of about 2 MB (well over 1 MB); refused before the stream with a 4xx and the error body."),
        ("AGUI-ERR-005", "refusals_are_error_bodies", steps.AGUI_REFUSED, None,
         "Sends faulty AG-UI requests with Accept: text/event-stream; each answer is a JSON error body, not a stream."))
rule(lambda case: _refusal_check(case[2], case[3]), over=REFUSALS, requirements=lambda case: case[0],
     scenarios=["agui.refusals"], name=lambda case: case[1], doc=lambda case: case[4])


@check("AGUI-ERR-004", scenarios=["agui.refusals"])
def refusals_match_invoke(rec):
    """Sends the same faults (unknown agent, no/bad credential, 257-character key) to AG-UI and invoke; same status and code."""
    problems = []
    for agui_label, invoke_label in ((steps.AGUI_UNKNOWN_AGENT, steps.INVOKE_UNKNOWN_AGENT),
                                     (steps.AGUI_NO_CREDENTIAL, steps.INVOKE_NO_CREDENTIAL),
                                     (steps.AGUI_BAD_CREDENTIAL, steps.INVOKE_BAD_CREDENTIAL),
                                     (steps.THREAD_257, steps.INVOKE_SESSION_257)):
        a, i = rec.get(agui_label), rec.get(invoke_label)
        got = [(ex.status, (error_of(ex) or {}).get('code')) for ex in (a, i)]
        if got[0] != got[1] or got[0][0] is None or not 400 <= got[0][0] < 500:
            problems.append(f"{agui_label}: AG-UI answered status {got[0][0]} code {got[0][1]!r}, invoke "
                            f"answered status {got[1][0]} code {got[1][1]!r} (expected the same 4xx refusal)")
    fail_all(problems)
