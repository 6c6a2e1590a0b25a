"""Moved to `conformance.vocab.protocols`; kept for importers outside the suite's checks and scenarios."""
from conformance.vocab.protocols import *  # noqa: F401,F403
from conformance.vocab.protocols import MCP_ACCEPT, MCP_LEGACY_VERSION, MCP_VERSION, META_CAPS, META_VERSION, SSE  # noqa: F401
