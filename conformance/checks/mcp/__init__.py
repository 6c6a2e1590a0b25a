"""MCP: protocol versions and mirrored headers, methods and the tool, tools/call results, sessions, progress
streams, paused runs, refusals, and the official `mcp` client.

Where the spec and upstream MCP 2026-07-28 differ (-32022 for a header mismatch where upstream uses -32020;
refusing an unknown `initialize` version where upstream negotiates; `Mcp-Name` optional) the checks follow the
spec and name the upstream rule in their pass note.

Checks are grouped by catalog section, one module each; `_common` holds what they share. Every check keeps the id
`mcp.<name>` (the registry names a check by its surface package, not the section module).
"""
from conformance.checks.mcp import client, methods, paused, progress, refusals, results, sessions, versions, chains, every  # noqa: F401
