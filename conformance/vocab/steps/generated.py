"""Steps of the generated-input scenarios: one family per protocol, a member per run (`INVOKE_JSON.of(i)` is run i
sent as invoke JSON)."""
from conformance.registry import Step

# -- generated.round_trip (the same say-json prompts over every protocol) ------------------------------
INVOKE_JSON = Step("invoke-json-*")
INVOKE_SSE = Step("invoke-sse-*")
AGUI = Step("agui-*")
MCP = Step("mcp-*")
GENERATED_ROUND_TRIP = (INVOKE_JSON, INVOKE_SSE, AGUI, MCP)

# -- generated.params (the same extra fields over invoke and AG-UI) -----------------------------------
INVOKE = Step("invoke-*")
GENERATED_PARAMS = (INVOKE, AGUI)
