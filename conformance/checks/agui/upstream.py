"""agui checks: upstream compatibility."""
from __future__ import annotations

from functools import cache
from typing import Any

from conformance.outcomes import on
from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import (LIFECYCLES, STREAMS, Run, judge_every, judge_reply, lifecycle_problems,
                                             needs_events, one_run, streams)


@cache
def _event_adapter():
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    return TypeAdapter(Event)


def _pydantic_reason(err: dict[str, Any]) -> str:
    if err.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        return "`type` names no AG-UI 1.0 event"
    where = ".".join(str(x) for x in err.get("loc", ())[1:]) or "$"
    return f"{where}: {str(err.get('msg'))[:160]}"


def upstream_problems(r: Run) -> list[str]:
    from pydantic import ValidationError

    problems = []
    for i, e in enumerate(r.events, 1):
        try:
            _event_adapter().validate_python(e)
        except ValidationError as exc:
            why = "; ".join(_pydantic_reason(err) for err in exc.errors()[:3])
            problems.append(f"event {i} {truncate(e['type'], 40, quoted=True)} is not an AG-UI 1.0 event ({why}): "
                            f"{truncate(e, 200, quoted=True)}")
    return problems


@check("AGUI-COMPAT-001", scenarios=STREAMS + ["agui.upstream_input"])
def events_validate_upstream(*recs):
    """Runs every stream scenario; every event validates against the AG-UI 1.0 models (ag_ui.core, camelCase)."""
    def validates(r: Run) -> None:
        needs_events(r)
        problems = upstream_problems(r)
        assert not problems, "AG-UI 1.0 (ag-ui-protocol) rejects: " + "; ".join(problems[:8])
    return judge_every(streams(*recs), validates)


@check("AGUI-COMPAT-002", scenarios=["agui.upstream_input"])
def upstream_input_accepted(rec):
    """Sends a full AG-UI 1.0 RunAgentInput as the official client does; it streams upstream-valid events to RUN_FINISHED."""
    r = one_run(rec, steps.UPSTREAM)
    with on(r.ex):
        problems = upstream_problems(r)
        for family in LIFECYCLES:
            found = lifecycle_problems(r, family)
            problems += found["use"] + found["finish"]
        assert not problems, "; ".join(problems[:8])
        r.finished()
        if r.want.get("reply") is not None:
            judge_reply(r, lambda text: _replied(text, r.want["reply"]))


def _replied(text: str, want: str) -> None:
    assert text == want, f"replied {truncate(text, 160, quoted=True)}, expected {truncate(want, 160, quoted=True)}"
