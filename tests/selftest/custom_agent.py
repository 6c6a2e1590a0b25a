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
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

from conformance.agent import Paused, Script, parse, steps
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


def understand(prompt: str) -> Script:
    """This agent's reading of a prompt: one of its own, or the fixed reply (never a directive)."""
    return parse(SCRIPTS.get(prompt) or REPORTING_SCRIPTS.get(prompt) or f"say {UNKNOWN_PROMPT_REPLY}")


def carry_on(paused: Paused, answer: Any) -> Iterator[Any]:
    """A resumed run goes on after its question without repeating the answer."""
    return steps(paused.script, paused.context, paused.ask.resume_at)


@contextmanager
def custom_agent() -> Iterator[None]:
    """While open, every reference server of this process runs this agent instead of the conformance agent."""
    with ExitStack() as stack:
        for module in ("invoke", "agui", "mcp"):
            stack.enter_context(mock.patch(f"conformance.server.{module}.parse", understand))
        for module in ("agui", "mcp"):
            stack.enter_context(mock.patch(f"conformance.server.{module}.resumed_steps", carry_on))
        yield


@contextmanager
def custom_agent_server(config: ServerConfig | None = None) -> Iterator[ReferenceServer]:
    with custom_agent(), ReferenceServer(config or ServerConfig()) as srv:
        yield srv
