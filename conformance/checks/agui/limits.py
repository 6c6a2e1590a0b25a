"""agui checks: limits."""
from __future__ import annotations

from conformance.outcomes import on
from conformance.registry import check
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import judge_reply, one_run, text_diff


@check("AGUI-LIM-001", scenarios=["agui.big"])
def half_megabyte_accepted(rec):
    """Sends an echo-mode prompt making the body about 0.5 MB; it streams, ends with RUN_FINISHED, reply = prompt."""
    r = one_run(rec, steps.HALF_MB)
    with on(r.ex):
        r.finished()
        judge_reply(r, lambda text: _echoes(text, r.want["reply"]))


def _echoes(text: str, prompt: str) -> None:
    assert text == prompt, f"the echo differs from the prompt: {text_diff(text, prompt)}"
