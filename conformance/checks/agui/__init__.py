"""AG-UI checks: framing, event order, ids, prompt and pass-through, pings, failures, interrupt/resume,
refusals, and compatibility with upstream AG-UI 1.0 (the `ag-ui-protocol` package).

Every run a scenario lists in `facts["runs"]` has one requirement that owns it (the plain reply:
AGUI-FRAME-001; the tool call and step: AGUI-ORDER-005; the failures: AGUI-FAIL-001/002; the question:
AGUI-INT-001; the resume: AGUI-INT-002/003; …). Its check reads the run through `runs` and never passes over it
unread (`judge_every`). The checks over every stream (framing, order, ids, upstream compatibility) read only what
streamed (`streams`): a run that did not stream is its owner's failure. One deviation, one failure: a reading that
meets a more basic deviation (no stream, a frame that is not one JSON value, no RUN_STARTED, …: the table in
`_common`) is a precondition, failed by that requirement's own check and blocking the others. A check with nothing
to look at (no run streamed, no frame, no event of the kind it judges) is not assessed, never passed. Every
failure names the exchange(s) that broke the rule; its message starts with the first one's step label.

Only dispatched SSE blocks are frames (`SSEEvent.dispatched`): a block with no data line (a standalone
`retry:` or `id:` block) and comment lines dispatch nothing, so no check sees them as frames.

Checks are grouped by catalog section, one module each; `_common` holds what they share. Every check keeps the id
`agui.<name>` (the registry names a check by its surface package, not the section module).
"""
from conformance.checks.agui import framing, order, ids, lifecycles, sessions, refusals, prompt, passthrough, pings, failures, interrupts, limits, upstream, chains, silences, every  # noqa: F401
