"""Invoke checks (`POST /v1/agents/{agentId}/invoke`), plus the general error-body, transport and rate-limit rules
as far as invoke shows them.

Every check reads recordings of `conformance/scenarios/invoke.py` (and of the shared
`generated.round_trip` / `generated.params`). Stream checks read the strict recorder's frames:
CRLF or CR line endings, `id:` and `retry:` fields, comments and unknown fields are legal SSE
and never fail a check; only what the spec says about frames is judged.

Checks are grouped by catalog section, one module each; `_common` holds what they share. Every check keeps the id
`invoke.<name>` (the registry names a check by its surface package, not the section module).
"""
from conformance.checks.invoke import selection, results, streams, runs, sessions, passthrough, limits, refusals, errors, transport, rate_limits, chains, every  # noqa: F401
