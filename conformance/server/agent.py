"""The conformance agent as the reference server uses it: a re-export of :mod:`conformance.agent`, and the one
place the server runs it through (`Interpreter`).

The interpreter lives in ``conformance/agent/`` (stdlib only, documented in
``docs/agent.md``) so that a third party can embed the very code the reference
server runs.
"""

from typing import Any, Iterator

from conformance.agent import *  # noqa: F401,F403
from conformance.agent import __all__  # noqa: F401
from conformance.agent import AgentEvent, Paused, RunContext, Script, parse, resumed_steps, steps


class Interpreter:
    """How the service runs its deployed agent: reads a prompt, plays a run, continues a paused one. The reference
    server runs the conformance agent; a test server plugs another agent by setting `Service.interpreter` (the
    agents off their contract of tests/selftest/variant_agents.py, the custom agent of custom_agent.py)."""

    def parse(self, prompt: str) -> Script:
        return parse(prompt)

    def steps(self, script: Script, ctx: RunContext, start: int = 0) -> Iterator[AgentEvent]:
        return steps(script, ctx, start)

    def resumed_steps(self, paused: Paused, answer: Any) -> Iterator[AgentEvent]:
        return resumed_steps(paused, answer)
