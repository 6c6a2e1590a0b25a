"""The conformance agent, portable: a stdlib-only interpreter to embed in any agent runtime.

The conformance suite drives the server under test through one agent whose
behaviour the prompt controls (``say``, ``chunks``, ``tool``, ``step``,
``sleep``, ``ask``, ``fail``, ``echo``, ``count``; see ``docs/agent.md``).
The reference server runs this very module. A server team deploys it as an
agent of their own runtime and maps its events onto their wire::

    from conformance.agent import ConformanceAgent, Text, ToolCall, Step, Ask, Fail

    agent = ConformanceAgent()
    run = agent.run("say hi\\nask Your name?\\nsay thanks", session="thread-1")
    for event in run:               # or: async for event in run
        ...                         # Text / ToolCall / Step / Ask / Fail
    run.outcome                     # "paused"
    for event in agent.resume("thread-1", {"name": "Ada"}):
        ...                         # Text('answer: {"name":"Ada"}'), Text("thanks")

A session's state is plain JSON (``Session.to_state()``), kept in a store
shared by every worker (``ConformanceAgent(store=...)``). The contract, as
language-neutral test vectors: ``vectors.json`` beside this module, played by
``python -m conformance.agent.vectors``.

Lower layers, for a runtime with its own session store: :func:`parse` (the
prompt's script, checked whole before anything runs), :func:`steps` (a
generator of events that never waits), :func:`paced` / :func:`paced_sync`
(perform ``sleep`` through a hook and mark long silences with :class:`Idle`).

Nothing here imports anything outside the Python standard library.
"""

from .events import AgentEvent, Ask, Fail, Idle, Sleep, Step, Text, ToolCall
from .interpreter import Paused, RunContext, paced, paced_sync, resumed_steps, run_events, steps
from .script import (
    DIRECTIVES, MAX_CHUNKS, MAX_SLEEP, BadLine, Directive, Script, canonical_json, new_id, parse, parse_line,
    split_chunks, split_lines,
)
from .session import ConformanceAgent, NotPaused, Run, Session, SessionStore

__all__ = [
    "AgentEvent", "Ask", "BadLine", "ConformanceAgent", "DIRECTIVES", "Directive", "Fail", "Idle", "MAX_CHUNKS",
    "MAX_SLEEP", "NotPaused", "Paused", "Run", "RunContext", "Script", "Session", "SessionStore", "Sleep", "Step",
    "Text", "ToolCall", "canonical_json", "new_id", "paced", "paced_sync", "parse", "parse_line", "resumed_steps",
    "run_events", "split_chunks", "split_lines", "steps",
]
