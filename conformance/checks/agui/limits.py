"""agui checks: limits."""
from __future__ import annotations

from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import one_run, text_diff


@check("AGUI-LIM-001", scenarios=["agui.big"])
def half_megabyte_accepted(rec):
    """Sends an echo-mode prompt making the body about 0.5 MB; it streams, ends with RUN_FINISHED, reply = prompt."""
    r = one_run(rec, steps.HALF_MB)
    assert r.terminal().get("type") == "RUN_FINISHED", f"{r.where}: ended with {truncate(r.terminal(), 160, quoted=True)}"
    assert r.text() == r.want["reply"], f"{r.where}: the echo differs from the prompt: {text_diff(r.text(), r.want['reply'])}"
