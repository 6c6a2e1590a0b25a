"""Moved to `conformance.vocab.protocols`; kept for importers outside the suite's checks and scenarios
(tests/schemas/test_traffic.py). New code imports `conformance.vocab.protocols`."""
from conformance.vocab.protocols import *  # noqa: F401,F403
from conformance.vocab.protocols import MCP_ACCEPT, MCP_LEGACY_VERSION, MCP_VERSION, META_CAPS, META_VERSION, SSE  # noqa: F401
from conformance.vocab.protocols import slug_tool_name as tool_name  # noqa: F401  (the old name)
