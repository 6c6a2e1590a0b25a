"""The facts about the server under test, and the profile of the agent it runs.

Every fact the spec leaves unshown (the extra-data field's name, an access
token, the agent's slug …) comes from an option or the profile; a check that
needs a fact nobody supplied is not assessed, with the option named.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import tomllib
from dataclasses import dataclass, field, fields, replace
from typing import Any

from conformance import __version__, options

# name -> (option, environment variable), from the one option table; secrets are read from the environment first.
FACTS: dict[str, tuple[str, str]] = options.facts()
SECRET_FACTS = tuple(o.name for o in options.OPTIONS if o.secret)


def suite_seed(version: str = __version__) -> int:
    """The seed of a run given none: fixed by the suite version, so every run of one version on every machine
    sends the same generated inputs (a verdict never depends on the draw), and a new version draws anew."""
    return int.from_bytes(hashlib.sha256(f"conformance {version}".encode()).digest()[:4], "big")


DEFAULT_SEED = suite_seed()

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


@dataclass(frozen=True)
class Target:
    base_url: str
    agent_id: str | None = None
    api_key: str | None = None
    access_token: str | None = None
    other_agent_id: str | None = None
    revoked_key: str | None = None
    expired_token: str | None = None
    undeployed_agent_id: str | None = None
    agent_slug: str | None = None
    auth_url: str | None = None
    extra_data_field: str | None = None
    ca_bundle: str | None = None
    insecure: bool = False
    profile: Profile = Profile()
    run_tag: str = field(default_factory=lambda: secrets.token_hex(4))
    depth: int = 1               # multiplies the examples of generated-input checks
    seed: int | str | None = None  # None: DEFAULT_SEED; "random": a fresh one; the int used after construction
    seed_source: str | None = None  # how the seed was chosen: "default", "given" or "random"
    thorough: bool = False       # also run the slow checks (the ping over two intervals, the 429 probe)
    embedded: bool = False       # the target is our own reference server
    rate_limit: str | None = None  # cap on our pace, N/SECONDS as schemathesis writes it ("20/10s", "100/m")
    rate_probe_max: int = options.RATE_PROBE_MAX  # requests the 429 probe may send
    http2: bool = True           # the core scenarios over HTTP/2 too when the target picks h2 by ALPN (--no-http2)

    def __post_init__(self) -> None:
        if self.seed is None:
            seed, source = DEFAULT_SEED, "default"
        elif self.seed == options.RANDOM_SEED:   # exploring: printed and recorded, so --seed N repeats it
            seed, source = secrets.randbelow(2**32), "random"
        else:
            seed, source = int(self.seed), self.seed_source or "given"
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "seed_source", source)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(v for k in SECRET_FACTS if (v := getattr(self, k)))

    def option_for(self, fact: str) -> str:
        return FACTS[fact][0] if fact in FACTS else fact

    def option_env(self, fact: str) -> str:
        """How a user names a fact: its environment variable for secrets, its option otherwise."""
        option, env = FACTS.get(fact, (fact, fact))
        return env if fact in SECRET_FACTS else option

    def public(self) -> dict[str, Any]:
        """Facts safe to print: secrets replaced by whether they were given."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "profile":
                v = v.source or None
            elif f.name in SECRET_FACTS:
                v = "(given)" if v else None
            out[f.name] = v
        return out

    def with_facts(self, **facts: Any) -> "Target":
        return replace(self, **{k: v for k, v in facts.items() if v is not None})


def from_server_facts(facts: dict[str, Any], **overrides: Any) -> Target:
    """A Target for our reference server (its `serve --json` facts)."""
    known = {f.name for f in fields(Target)}
    values = {k: v for k, v in facts.items() if k in known}
    values.update({k: v for k, v in overrides.items() if v is not None})
    values.setdefault("embedded", True)
    return Target(**values)


def env_or(option_value: Any, fact: str) -> Any:
    """Environment first for secrets (so they stay off command lines), option first otherwise."""
    env = os.environ.get(FACTS[fact][1]) if fact in FACTS else None
    if fact in SECRET_FACTS:
        return env or option_value
    return option_value if option_value not in (None, "") else env
