"""agui checks: failures."""
from __future__ import annotations

from typing import Callable

from conformance.outcomes import on
from conformance.registry import Step, check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import Run, ends_with_error, events_of, judge_every, one_run, streams


def _failure_check(label: Step, partial: bool) -> Callable[..., None]:
    def judge(rec):
        r = one_run(rec, label)
        with on(r.ex):
            ends_with_error(r)
            sent = r.want.get("reply") if partial else None
            if sent:
                assert sent in r.text(), (f"the text sent before the failure ({truncate(sent, 160, quoted=True)}) is not "
                                          f"in the deltas {truncate(r.text(), 160, quoted=True)}")
    return judge


check("AGUI-FAIL-001", scenarios=["agui.fail_after"], name="failure_after_output",
      doc="Runs `say partial` then `fail boom`; 200, deltas carry `partial`, RUN_ERROR last, no RUN_FINISHED.")(_failure_check(steps.FAIL_AFTER, True))
check("AGUI-FAIL-002", scenarios=["agui.fail_before"], name="failure_before_output",
      doc="Runs `fail boom`; 200, RUN_STARTED, then RUN_ERROR last and no RUN_FINISHED.")(_failure_check(steps.FAIL_BEFORE, False))


@check("AGUI-FAIL-003", scenarios=["agui.fail_after", "agui.fail_before"])
def run_error_has_message(*recs):
    """Runs the two failing prompts; every RUN_ERROR carries `message`, a string."""
    codes: set[str] = set()

    def has_message(r: Run) -> None:
        errors = events_of(r, "RUN_ERROR")
        codes.update(str(e.get("code")) for e in errors if "code" in e)
        bad = [e for e in errors if not isinstance(e.get("message"), str)]
        assert not bad, f"RUN_ERROR without a string message: {truncate(bad[0], 160, quoted=True)}"
    judge_every(streams(*recs), has_message, nothing="no RUN_ERROR event in any stream")
    return f"RUN_ERROR codes seen (not judged, AGUI-OPEN-001): {', '.join(sorted(codes)) or 'none'}"
