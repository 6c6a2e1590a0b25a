"""Steps of the MCP scenarios."""
from conformance.registry import Step

# -- mcp.modern --------------------------------------------------------------------------------
DISCOVER = Step("discover")
LIST = Step("list")
CALL = Step("call")
CALL_TOOL = Step("call-tool")
CALL_NONAME = Step("call-noname")          # judged by MCP-HDR-004 alone: the other checks use calls with Mcp-Name
MCP_MODERN = (DISCOVER, LIST, CALL, CALL_TOOL, CALL_NONAME)

# -- mcp.legacy (the 2025-11-25 handshake, then `list` and `call` as above) -----------------------
INITIALIZE = Step("initialize")
MCP_LEGACY = (INITIALIZE, LIST, CALL)

# -- mcp.failures ------------------------------------------------------------------------------
FAIL_AFTER = Step("fail-after")
FAIL_BEFORE = Step("fail-before")
MCP_FAILURES = (FAIL_AFTER, FAIL_BEFORE)

# -- mcp.sessions (`count` twice on a given session_id, then without one and on the generated one) ---
GIVEN_1 = Step("given-1")
GIVEN_2 = Step("given-2")
GENERATED_1 = Step("generated-1")
GENERATED_2 = Step("generated-2")
MCP_SESSIONS = (GIVEN_1, GIVEN_2, GENERATED_1, GENERATED_2)

# -- mcp.progress (one stream per type of progress token) ------------------------------------------
STRING_TOKEN = Step("string-token")
INTEGER_TOKEN = Step("integer-token")
EMPTY_TOKEN = Step("empty-token")
MCP_PROGRESS = (STRING_TOKEN, INTEGER_TOKEN, EMPTY_TOKEN)

# -- mcp.pause_text and mcp.pause_elicit ---------------------------------------------------------
ASK = Step("ask")
RESUME = Step("resume")
RESUME_WITH_PROMPT = Step("resume-with-prompt")   # sent only when `resume` alone got no result
MCP_PAUSE_TEXT = (ASK, RESUME, RESUME_WITH_PROMPT)
RETRY = Step("retry")
MCP_PAUSE_ELICIT = (ASK, RETRY)

# -- mcp.refusals (each request the spec's table refuses) -----------------------------------------
VERSION_UNKNOWN = Step("version-unknown")
VERSION_MISMATCH = Step("version-mismatch")
METHOD_MISMATCH = Step("method-mismatch")
NAME_MISMATCH = Step("name-mismatch")
METHOD_MISSING = Step("method-missing")
VERSION_HEADER_MISSING = Step("version-header-missing")
CONTENT_TYPE = Step("content-type")
UNKNOWN_TOOL = Step("unknown-tool")
NO_PROMPT = Step("no-prompt")
UNKNOWN_AGENT = Step("unknown-agent")
INITIALIZE_UNKNOWN = Step("initialize-unknown")
UNSUPPORTED_METHOD = Step("unsupported-method")
MCP_REFUSALS = (VERSION_UNKNOWN, VERSION_MISMATCH, METHOD_MISMATCH, NAME_MISMATCH, METHOD_MISSING,
                VERSION_HEADER_MISSING, CONTENT_TYPE, UNKNOWN_TOOL, NO_PROMPT, UNKNOWN_AGENT, INITIALIZE_UNKNOWN,
                UNSUPPORTED_METHOD)

# -- mcp.rate_limit (one tools/list, then batches until a 429) ----------------------------------------
PROBE = Step("probe-0")
BURST = Step("burst-*")                    # BURST.of(n): the n-th request of the probe
MCP_RATE_LIMIT = (PROBE, BURST)

# -- mcp.official_client: every request of the official `mcp` client, one family per run, each labelled with the
# JSON-RPC method it carried (`response` for an answer to the server, else the HTTP method), `-2`, `-3`… when
# repeated: `official-2026-07-28/tools/call-2`. The modern run is the SDK's default mode `auto` (server/discover,
# then 2026-07-28, or the handshake when it falls back); the other is the 2025-11-25 handshake.
OFFICIAL_MODERN = Step("official-2026-07-28/*")
OFFICIAL_LEGACY = Step("official-2025-11-25/*")
MCP_OFFICIAL_CLIENT = (OFFICIAL_MODERN, OFFICIAL_LEGACY)
