"""invoke checks: INV-ERR: refusals."""
from __future__ import annotations


from typing import Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on, precondition
from conformance.vocab import agent_readings
from conformance.registry import check, rule
from conformance.vocab.readers import error_of, is_4xx
from conformance.vocab.steps import invoke as steps
from conformance.checks.invoke._common import (count_is, counts_from_zero, is_json_answer, is_sse_answer, judge_each, refused,
                                               what)


@check("INV-ERR-001", scenarios=["invoke.refusals"])
def streaming_refusal_is_json(rec: Recording) -> None:
    """Sends `stream: true` to a nonexistent agent; the refusal is a 4xx JSON error body (`application/json` or a
    `+json` type such as `application/problem+json`), not a stream."""
    ex = rec.get(steps.STREAM_NO_AGENT)
    if is_4xx(ex):      # a stream is this rule's deviation; any other type than JSON is every refusal's (GEN-ERR-001)
        with on(ex):
            assert not is_sse_answer(ex), \
                f"a refusal of a streaming request must be the JSON error body (application/json or +json), " \
                f"not an event stream: {what(ex)}"
        if not is_json_answer(ex):
            raise precondition("GEN-ERR-001", ex, f"a refusal must be sent as JSON (application/json or +json), "
                                                  f"got Content-Type {ex.header('content-type')!r}")
    refused(ex)


@check("INV-ERR-002", scenarios=["invoke.refusals"])
def prompt_not_string_refused(rec: Recording) -> None:
    """Sends `prompt: 42`; it is refused with a 4xx, `validation_failed` and `details` an object."""
    refused(rec.get(steps.PROMPT_NUMBER), "validation_failed", details=True)


@check("INV-ERR-003", scenarios=["invoke.refusals"])
def stream_not_boolean_refused(rec: Recording) -> None:
    """Sends `stream: "yes"`; it is refused with a 4xx, `validation_failed` and `details` an object."""
    refused(rec.get(steps.STREAM_STRING), "validation_failed", details=True)


@check("INV-ERR-004", scenarios=["invoke.refusals"])
def prompt_missing_refused(rec: Recording) -> str:
    """Sends a body without `prompt`; it is refused with a 4xx and the error body."""
    ex = rec.get(steps.PROMPT_MISSING)
    refused(ex)
    return f"code {(error_of(ex) or {}).get('code')!r} (not stated by the spec)"


@check("INV-ERR-005", scenarios=["invoke.refusals"])
def body_not_object_refused(rec: Recording) -> None:
    """Sends a body that is not JSON, and one that is a JSON array; both are refused with a 4xx and the error body."""
    judge_each([rec.get(steps.NOT_JSON), rec.get(steps.JSON_ARRAY)], refused)


def no_run(scenario: str) -> Callable[[Recording], str]:
    def fn(rec: Recording) -> str:
        pairs = rec.facts.get("no_run") or {}
        if not pairs:
            raise NotAssessed(rec.facts.get("no_run_reason") or f"scenario {scenario} proved no refusal")
        judged, skipped = [], []
        zero_based = counts_from_zero(rec, {proof["count_label"]: 1 for proof in pairs.values()})

        def rule(item: tuple[str, dict[str, str]]) -> None:
            label, proof = item
            refusal = rec.get(label)
            if not is_4xx(refusal):
                skipped.append(label)       # not refused: its own requirement fails, not this one
                return
            judged.append(label)
            # the `count` reply shows the run; the refusal that started it comes next
            count_is(rec.get(proof["count_label"]), 1,
                     f"`{label}` was refused ({refusal.status}), so the first run on its session key "
                     f"{proof['session']!r} is this one", refusal, zero_based=zero_based)

        agent_readings.read_all(lambda guarded: judge_each(pairs.items(), guarded), rule)
        if not judged:
            raise NotAssessed(f"none of {', '.join(pairs)} was refused")
        return f"no run after: {', '.join(judged)}" + (f"; not refused: {', '.join(skipped)}" if skipped else "")

    return fn


rule(no_run, over=("invoke.refusals", "invoke.extra_data"), requirements="INV-ERR-006", scenarios=lambda scn: [scn],
     name=lambda scn: f"refusal_starts_no_run__{scn.split('.')[-1]}",
     doc="Sends requests that must be refused with a fresh `sessionId`, then `count` on it; each reply is 1 (no run "
         "started).")
