"""The profile of the agent a server runs: the scenario prompts a user maps, timeouts, and `resume` shapes.

Plain data and its TOML reader, below every other module of the runner: `options` checks a `--profile` file with
it, `target` holds one.
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from typing import Any

# The conformance agent's scenarios (docs/agent.md): default prompt and reply.
AGENT_SCENARIOS: dict[str, dict[str, Any]] = {
    "plain_reply": {"prompt": "say conformance", "reply": "conformance"},
    "streamed_reply": {"prompt": "chunks 5 hello, conformance", "reply": "hello, conformance"},
    "tool_call": {"prompt": 'tool lookup {"q":"x"}\nsay done', "reply": "done", "tool": "lookup"},
    "step": {"prompt": "step plan\nsay done", "reply": "done", "step": "plan"},
    "silence": {"prompt": "sleep 16\nsay awake", "reply": "awake", "silent_seconds": 16},
    "failure_after_output": {"prompt": "say partial\nfail boom", "reply": "partial"},
    "failure_before_output": {"prompt": "fail boom", "reply": ""},
    "question_and_resume": {"prompt": "ask What is your name?\nsay thanks", "question": "What is your name?",
                            "reply_after_resume_suffix": "thanks"},
    # These need the conformance agent's directives; a profile may still map them.
    "text_round_trip": {"directive": "say-json"},
    "params_passthrough": {"prompt": "echo params"},
    "messages_passthrough": {"prompt": "echo messages"},
    "session_affinity": {"prompt": "count"},
}


# `[resume]` of a profile: the protocols whose resume shape the spec leaves open (AG-UI's `resume` "answers every
# interrupt", in a shape not shown), and those whose shape is fixed, with why.
RESUME_SHAPES = ("agui",)
FIXED_RESUME = {
    "mcp": "MCP's resume has no shape to give: `arguments.resume` takes any value (\"any\" in the spec's tools/call "
           "table) and the paused run is named by `session_id`, so the suite sends the answer itself as the value; "
           "remove this entry (only `[resume] agui` is read)",
}


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    headers: float = 30.0
    idle: float = 30.0
    request: float = 60.0        # one ordinary exchange, body included
    ping_tolerance: float = 1.5  # network allowance on top of the spec's 15 s ping interval
    run: float = 150.0           # the whole recording phase: scenarios still running then are cut off


@dataclass(frozen=True)
class Profile:
    """What a user says about an agent that is not (only) the conformance agent."""
    agent: str = "conformance"   # "conformance": the scripted agent; "custom": only the mapped scenarios run
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_data_field: str | None = None
    timeouts: Timeouts = Timeouts()
    source: str = ""
    # protocol -> the shape of a `resume` answer (the spec does not show it): a JSON value (or its JSON text) in
    # which the string "$payload" stands for the answer and "$interruptId" for one interrupt id the paused run
    # listed (a list item naming "$interruptId" is repeated once per listed interrupt). Only AG-UI's is open.
    resume: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | None) -> "Profile":
        if not path:
            return cls()
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        unknown = set(data) - {"agent", "scenarios", "extra_data_field", "timeouts", "resume"}
        if unknown:
            raise ValueError(f"profile {path}: unknown keys {sorted(unknown)}")
        if data.get("agent", "conformance") not in ("conformance", "custom"):
            raise ValueError(f"profile {path}: agent must be 'conformance' or 'custom'")
        for name in data.get("scenarios", {}):
            if name not in AGENT_SCENARIOS:
                raise ValueError(f"profile {path}: unknown scenario {name!r}; known: {sorted(AGENT_SCENARIOS)}")
        timeouts = Timeouts(**data.get("timeouts", {}))
        resume = {}
        for protocol, shape in data.get("resume", {}).items():
            if protocol in FIXED_RESUME:
                raise ValueError(f"profile {path}: [resume] {protocol}: {FIXED_RESUME[protocol]}")
            if protocol not in RESUME_SHAPES:
                raise ValueError(f"profile {path}: [resume] {protocol}: unknown protocol; known: "
                                 f"{', '.join(RESUME_SHAPES)}")
            try:
                resume[protocol] = json.loads(shape) if isinstance(shape, str) else shape
            except ValueError as exc:
                raise ValueError(f"profile {path}: [resume] {protocol} is not JSON: {exc}") from None
        return cls(data.get("agent", "conformance"), data.get("scenarios", {}), data.get("extra_data_field"),
                   timeouts, str(path), resume)

    @property
    def is_conformance_agent(self) -> bool:
        return self.agent == "conformance"

    def scenario(self, name: str) -> dict[str, Any] | None:
        """The prompt (and expectations) for an agent scenario, or None when not mapped."""
        if name in self.scenarios:
            entry = self.scenarios[name]
            return None if entry.get("prompt") in (None, "") else dict(entry)
        if self.is_conformance_agent:
            return dict(AGENT_SCENARIOS[name])
        return None
