"""agui checks: lifecycles (the official AG-UI client's verifyEvents rules)."""
from __future__ import annotations

from typing import Callable

from conformance.registry import check, rule
from conformance.checks.agui._common import (LIFECYCLES, STREAMS, Run, judge_every, lifecycle_problems, events_of,
                                             streams)


@check("AGUI-ID-009", scenarios=STREAMS)
def messages_ended_before_finish(*recs):
    """Runs every stream scenario; every started text message is ended (TEXT_MESSAGE_END) before RUN_FINISHED."""
    def ended(r: Run) -> None:
        events_of(r, "TEXT_MESSAGE_START")
        problems = lifecycle_problems(r, "TEXT_MESSAGE")["finish"]
        assert not problems, "; ".join(problems)
    return judge_every(streams(*recs), ended, nothing="no TEXT_MESSAGE_START event in any stream")


def _lifecycle_check(family: str) -> Callable[..., None]:
    key, opener, users, closer, noun = LIFECYCLES[family]

    def judge(*recs):
        def verified(r: Run) -> None:
            events_of(r, opener, *users, closer)
            found = lifecycle_problems(r, family)
            problems = found["use"] + (found["finish"] if family != "TEXT_MESSAGE" else [])
            assert not problems, "the official AG-UI client (verifyEvents) rejects this order: " + "; ".join(problems[:8])
        return judge_every(streams(*recs), verified, nothing=f"no {noun} event in any stream")
    return judge


LIFECYCLE_CHECKS = {   # requirement: (event family, doc)
    "AGUI-COMPAT-003": ("TEXT_MESSAGE", "Runs every stream scenario; text messages open once, and CONTENT/END come only while open."),
    "AGUI-COMPAT-004": ("TOOL_CALL", "Runs every stream scenario; tool calls open once, ARGS/END only while open, none open at RUN_FINISHED."),
    "AGUI-COMPAT-005": ("STEP", "Runs every stream scenario; steps start once, finish only if started, none open at RUN_FINISHED."),
}
rule(lambda req: _lifecycle_check(LIFECYCLE_CHECKS[req][0]), over=LIFECYCLE_CHECKS, requirements=lambda req: req, scenarios=STREAMS,
     name=lambda req: f"{LIFECYCLE_CHECKS[req][0].lower()}_lifecycle", doc=lambda req: LIFECYCLE_CHECKS[req][1])
