"""Steps of the MCP scenarios."""
from conformance.registry import Step

# -- mcp.modern --------------------------------------------------------------------------------
DISCOVER = Step("discover")
LIST = Step("list")
CALL = Step("call")
CALL_TOOL = Step("call-tool")
CALL_NONAME = Step("call-noname")          # judged by MCP-HDR-004 alone: the other checks use calls with Mcp-Name
MCP_MODERN = (DISCOVER, LIST, CALL, CALL_TOOL, CALL_NONAME)

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
