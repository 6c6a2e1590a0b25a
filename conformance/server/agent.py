"""The conformance agent as the reference server uses it: a re-export of :mod:`conformance.agent`.

The interpreter lives in ``conformance/agent/`` (stdlib only, documented in
``docs/agent.md``) so that a third party can embed the very code the reference
server runs.
"""

from conformance.agent import *  # noqa: F401,F403
from conformance.agent import __all__  # noqa: F401
