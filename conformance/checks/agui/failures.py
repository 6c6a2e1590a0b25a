"""agui checks: failures."""
from __future__ import annotations

from typing import Callable

from conformance.registry import Step, check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import fail_all, need_items, one_run, streams


def _failure_check(label: Step, partial: bool) -> Callable[..., None]:
    def judge(rec):
        r = one_run(rec, label)
        types = [e.get("type") for e in r.events]
        problems = []
        if not types or types[0] != "RUN_STARTED" or types[-1] != "RUN_ERROR" or "RUN_FINISHED" in types:
            problems.append(f"{r.where}: a failing run must stream RUN_STARTED … RUN_ERROR (last) with no "
                            f"RUN_FINISHED; got {r.types()}")
        if partial and r.want.get("reply") and r.want["reply"] not in r.text():
            problems.append(f"{r.where}: the text sent before the failure ({truncate(r.want['reply'], 160, quoted=True)}) is not in "
                            f"the deltas {truncate(r.text(), 160, quoted=True)}")
        fail_all(problems)
    return judge


check("AGUI-FAIL-001", scenarios=["agui.fail_after"], name="failure_after_output",
      doc="Runs `say partial` then `fail boom`; 200, deltas carry `partial`, RUN_ERROR last, no RUN_FINISHED.")(_failure_check(steps.FAIL_AFTER, True))
check("AGUI-FAIL-002", scenarios=["agui.fail_before"], name="failure_before_output",
      doc="Runs `fail boom`; 200, RUN_STARTED, then RUN_ERROR last and no RUN_FINISHED.")(_failure_check(steps.FAIL_BEFORE, False))


@check("AGUI-FAIL-003", scenarios=["agui.fail_after", "agui.fail_before"])
def run_error_has_message(*recs):
    """Runs the two failing prompts; every RUN_ERROR carries `message`, a string."""
    errors = need_items([(r, e) for r in streams(*recs) for e in r.of_type("RUN_ERROR")], "RUN_ERROR event")
    fail_all([f"{r.where}: RUN_ERROR without a string message: {truncate(e, 160, quoted=True)}" for r, e in errors
              if not isinstance(e.get("message"), str)])
    codes = sorted({str(e.get("code")) for _, e in errors if "code" in e})
    return f"RUN_ERROR codes seen (not judged, AGUI-OPEN-001): {', '.join(codes) or 'none'}"
