"""Constants a scenario sends and a check judges by: JSON-RPC codes, the scope, the agent runs of the invoke
scenarios, the fields each protocol interprets, the credential variants of the access scenarios."""
from __future__ import annotations

# -- JSON-RPC 2.0 error codes (and the spec's version refusal) ------------------------------------
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602
JSONRPC_INVALID_REQUEST = INVALID_REQUEST
UNSUPPORTED_VERSION = -32022
HEADER_MISMATCH = -32020                 # MCP 2026-07-28: headers that do not match the body, or are missing
#: the codes the spec's MCP refusals name (its table and "other JSON-RPC codes listed"), and upstream's -32020 for
#: the condition it gives -32022: each names a condition, so a valid request refused with one lacks it
MCP_LISTED_CODES = (UNSUPPORTED_VERSION, HEADER_MISMATCH, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, -32603,
                    -32001, -32002, -32004, -32005, -32009)

# -- auth -------------------------------------------------------------------------------------------
SCOPE = "agent:invoke"
#: the user name under which the suite sends the API key with the Basic scheme (`curl -u "conformance:$KEY"`)
BASIC_USER = "conformance"
QUERY_CREDENTIAL_PARAM = "access_token"  # RFC 6750 §2.3's query parameter: a credential outside the header
BODY_CREDENTIAL_FIELD = "access_token"   # RFC 6750 §2.2 form-parameter name, the usual misplaced spot

# -- MCP --------------------------------------------------------------------------------------------
UNKNOWN_VERSION = "1999-01-01"           # a protocolVersion no server supports
MCP_DESCRIBING = ("server/discover", "tools/list")   # the methods that describe the tool (no run, no session)
MCP_MODERN_METHODS = ("tools/call", *MCP_DESCRIBING)   # the 2026-07-28 methods a request may ask, whatever it carries

# -- invoke runs (`invoke.runs` sends each once as JSON, `json-<name>`, and once streamed, `sse-<name>`) ----
RUNS = ("plain_reply", "streamed_reply", "tool_call", "step", "failure_after_output", "failure_before_output")
COMPLETED_RUNS = ("plain_reply", "streamed_reply", "tool_call", "step")
FAILED_RUNS = ("failure_after_output", "failure_before_output")

# -- limits ----------------------------------------------------------------------------------------
MAX_KEY = 256                            # a session key (sessionId, threadId) is 1 to 256 characters long

# -- fields the service interprets (an echoed extra field must not be one of them) ---------------------
INVOKE_INTERPRETED = ("prompt", "sessionId", "stream", "messages")
AGUI_INTERPRETED = ("threadId", "runId", "messages", "resume")
AGUI_FORWARDED = ("tools", "state", "context", "forwardedProps")   # AG-UI fields passed to the agent as `params`
INTERPRETED = frozenset(INVOKE_INTERPRETED + AGUI_INTERPRETED)   # generated extra fields avoid every one
