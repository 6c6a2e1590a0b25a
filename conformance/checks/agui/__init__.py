"""AG-UI checks: framing, event order, ids, prompt and pass-through, pings, failures, interrupt/resume,
refusals, and compatibility with upstream AG-UI 1.0 (the `ag-ui-protocol` package).

Every run a scenario lists in `facts["runs"]` has one requirement that owns it (the plain reply:
AGUI-FRAME-001; the tool call and step: AGUI-ORDER-005; the failures: AGUI-FAIL-001/002; the question:
AGUI-INT-001; the resume: AGUI-INT-002/003; …). That requirement's check fails a run that did not answer a
200 event stream. The checks over every stream (framing, order, ids, upstream compatibility) judge only what
streamed (`streams`): one deviation, one failure. A check with nothing to look at (no run streamed, no frame,
no JSON event, no event of the kind it judges) is not assessed, never passed.

Only dispatched SSE blocks are frames (`SSEEvent.dispatched`): a block with no data line (a standalone
`retry:` or `id:` block) and comment lines dispatch nothing, so no check sees them as frames.

Checks are grouped by catalog section, one module each; `_common` holds what they share. Every check keeps the id
`agui.<name>` (the registry names a check by its surface package, not the section module).
"""
from conformance.checks.agui import framing, order, ids, lifecycles, sessions, refusals, prompt, passthrough, pings, failures, interrupts, limits, upstream  # noqa: F401
