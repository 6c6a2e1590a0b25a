"""Steps of the sequence scenarios (chains, overlaps, long runs): every move of a chain is one member of its family,
`<family>-<n>-<protocol>-<verb>` (`chain-4-agui-resume`), numbered in the order the scenario sent them; what each
must answer is in `facts["moves"]` (`conformance.vocab.sequences`)."""
from conformance.registry import Step

CHAIN = Step("chain-*")        # the moves of a chain (invoke.chain, agui.chain, mcp.chain, agui.cross_chain)
OVERLAP = Step("overlap-*")    # calls sent at the same time (invoke.together, agui.together, mcp.together)
LONG = Step("long-*")          # runs of several seconds and what follows them (*.slow_run)
HISTORY = Step("history-*")    # every transition, then a reading, on every path (agui.histories)
