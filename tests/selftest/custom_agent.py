"""A server whose agent is not the conformance agent: what a team with its own agent certifies.

The reference server with another agent plugged in. That agent knows the eight prompts of
`fixtures/profile.example.toml` (every key any agent can map: PROFILE), three more that report what it received
and how many runs its session started (REPORTING_PROFILE maps them too), and nothing else: it follows no
directive, so `say x`, `count` or `echo params` get the same fixed reply as any prompt it does not know.
Its runs are performed by the conformance agent's interpreter (so a stream, a tool call, a pause look
exactly as the reference server carries them), but only from the scripts below; and like most agents it
does not repeat the answer it was given when resumed: the resumed reply is just `thanks`.

    with custom_agent_server() as srv:   # srv.facts: the server's facts; PROFILE: the profile to certify it with
        ...
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from conformance.agent import Paused, Script, parse, steps
from conformance.server.agent import Interpreter
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import Profile

PROFILE_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "profile.example.toml"
PROFILE = Profile.load(str(PROFILE_PATH))

UNKNOWN_PROMPT_REPLY = "Sorry, I only know my own prompts."

# The prompts of the example profile -> what this agent does for each (in the interpreter's words).
SCRIPTS: dict[str, str] = {
    "Reply with exactly the word: conformance": "say conformance",
    "Reply with exactly: hello, conformance": "chunks 5 hello, conformance",
    "Look up x with the lookup tool, then reply with exactly: done": 'tool lookup {"q":"x"}\nsay done',
    "Plan first, then reply with exactly: done": "step plan\nsay done",
    "Wait 20 seconds without output, then reply with exactly: awake": "sleep 20\nsay awake",
    "Reply with exactly: partial, then fail": "say partial\nfail boom",
    "__force_failure__": "fail boom",
    "Ask me for my name, then reply with exactly: thanks": "ask What is your name?\nsay thanks",
}
# Prompts a team adds when its agent can report what it received and how many runs its session started, in the
# conformance agent's form (docs/profile.md): what the three reporting keys then reach.
REPORTING_SCRIPTS: dict[str, str] = {
    "How many runs has this session started? Reply with the number only.": "count",
    "Reply with the canonical JSON of the params you received.": "echo params",
    "Reply with the canonical JSON of the messages you received.": "echo messages",
}
REPORTING_KEYS = {"session_affinity": "How many runs has this session started? Reply with the number only.",
                  "params_passthrough": "Reply with the canonical JSON of the params you received.",
                  "messages_passthrough": "Reply with the canonical JSON of the messages you received."}
REPORTING_PROFILE = dataclasses.replace(
    PROFILE, scenarios={**PROFILE.scenarios, **{key: {"prompt": prompt} for key, prompt in REPORTING_KEYS.items()}})


class CustomAgent(Interpreter):
    """This agent, plugged into a reference server (`Service.interpreter`)."""

    def parse(self, prompt: str) -> Script:
        """Its reading of a prompt: one of its own, or the fixed reply (never a directive)."""
        return parse(SCRIPTS.get(prompt) or REPORTING_SCRIPTS.get(prompt) or f"say {UNKNOWN_PROMPT_REPLY}")

    def resumed_steps(self, paused: Paused, answer: Any) -> Iterator[Any]:
        """A resumed run goes on after its question without repeating the answer."""
        return steps(paused.script, paused.context, paused.ask.resume_at)


def with_custom_agent(app, facts):
    app.interpreter = CustomAgent()
    return app


def custom_agent_config(config: ServerConfig | None = None) -> ServerConfig:
    """`config` (default: the reference server's) running this agent instead of the conformance agent."""
    config = config or ServerConfig()
    inner = config.wrap_app

    def wrap(app, facts):
        with_custom_agent(app, facts)
        return inner(app, facts) if inner is not None else app
    return dataclasses.replace(config, wrap_app=wrap)


@contextmanager
def custom_agent_server(config: ServerConfig | None = None) -> Iterator[ReferenceServer]:
    with ReferenceServer(custom_agent_config(config)) as srv:
        yield srv
