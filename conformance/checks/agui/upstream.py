"""agui checks: upstream compatibility."""
from __future__ import annotations

from functools import cache
from typing import Any

from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import LIFECYCLES, Run, STREAMS, fail_all, lifecycle_problems, one_run, streams


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
            problems.append(f"{r.where}: event {i} {truncate(e.get('type'), 40, quoted=True)} is not an AG-UI 1.0 event ({why}): "
                            f"{truncate(e, 200, quoted=True)}")
    return problems


@check("AGUI-COMPAT-001", scenarios=STREAMS + ["agui.upstream_input"])
def events_validate_upstream(*recs):
    """Runs every stream scenario; every event validates against the AG-UI 1.0 models (ag_ui.core, camelCase)."""
    fail_all([m for r in streams(*recs) for m in upstream_problems(r)], "AG-UI 1.0 (ag-ui-protocol) rejects:")


@check("AGUI-COMPAT-002", scenarios=["agui.upstream_input"])
def upstream_input_accepted(rec):
    """Sends a full AG-UI 1.0 RunAgentInput as the official client does; it streams upstream-valid events to RUN_FINISHED."""
    r = one_run(rec, steps.UPSTREAM)
    problems = upstream_problems(r)
    for family in LIFECYCLES:
        found = lifecycle_problems(r, family)
        problems += found["use"] + found["finish"]
    if r.terminal().get("type") != "RUN_FINISHED":
        problems.append(f"{r.where}: ended with {truncate(r.terminal(), 160, quoted=True)}, expected RUN_FINISHED")
    if r.want.get("reply") is not None and r.text() != r.want["reply"]:
        problems.append(f"{r.where}: replied {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)}")
    fail_all(problems)
