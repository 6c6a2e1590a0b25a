"""agui checks: pass-through."""
from __future__ import annotations

import json

from typing import Any

from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab.constants import AGUI_INTERPRETED as INTERPRETED
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.checks.agui._common import Run, fail_all, one_run, one_run_of


def echoed_params(r: Run) -> dict[str, Any]:
    try:
        got = json.loads(r.text())
    except ValueError:
        raise AssertionError(f"{r.where}: `echo params` replied {truncate(r.text(), 160, quoted=True)}, not JSON") from None
    assert isinstance(got, dict), f"{r.where}: `echo params` replied {truncate(got, 160, quoted=True)}, not a JSON object"
    return got


def missing_params(r: Run, sent: dict[str, Any]) -> list[str]:
    got = echoed_params(r)
    return [f"{r.where}: sent {name} = {truncate(value, 120, quoted=True)}, the agent's params hold "
            + (truncate(got[name], 120, quoted=True) if name in got else "no such field")
            for name, value in sent.items() if name not in INTERPRETED and (name not in got or got[name] != value)]


@check("AGUI-PASS-001", scenarios=["agui.params"])
def forwarded_fields_reach_params(rec):
    """Sends tools, state, context and forwardedProps with `echo params`; each reaches the agent unchanged."""
    fail_all(missing_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["forwarded"]))


@check("AGUI-PASS-002", scenarios=["agui.params"])
def unknown_fields_reach_params(rec):
    """Sends unknown top-level fields of every JSON type with `echo params`; each reaches the agent unchanged."""
    fail_all(missing_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["unknown"]))


@check("AGUI-PASS-002", scenarios=["generated.params"])
def generated_fields_reach_params(rec):
    """Sends generated extra fields (any JSON values, unicode names) with `echo params`; each reaches the agent."""
    sent = rec.facts.get("params") or []
    if not sent:
        raise NotAssessed("the generated-params scenario generated no fields")
    fail_all([m for i, extra in enumerate(sent)
              for m in missing_params(one_run_of(rec, generated_steps.AGUI.of(i), ""), extra)])


@check("AGUI-PASS-003", scenarios=["agui.params"])
def interpreted_fields_withheld(rec):
    """Sends threadId, runId and messages with `echo params`; none of the interpreted fields is in params."""
    got = echoed_params(one_run(rec, steps.ECHO_PARAMS))
    leaked = [name for name in INTERPRETED if name in got]
    assert not leaked, f"the agent's params hold interpreted field(s) {leaked}: {truncate(got, 300, quoted=True)}"
