"""Steps of the schemathesis scenarios (fuzz.invoke, fuzz.agui, fuzz.mcp, fuzz.metadata)."""
from conformance.registry import Step

CASE = Step("fuzz-*")             # one generated case: CASE.of(kind), kind positive | negative | no-auth | other-agent
FUZZ = (CASE,)
