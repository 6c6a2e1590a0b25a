"""Steps of the schemathesis scenarios (fuzz.invoke, fuzz.agui, fuzz.mcp, fuzz.metadata)."""
from conformance.registry import Step

CASE = Step("fuzz-*")             # one generated case: CASE.of(kind), kind positive | negative | no-auth | other-agent
TOOLS_LIST = Step("tools-list")   # fuzz.mcp: the tool to call, when --agent-slug does not name it
FUZZ = (CASE,)
FUZZ_MCP = (TOOLS_LIST, CASE)
