"""The facts about the server under test, and the profile of the agent it runs.

Every fact the spec leaves unshown (the extra-data field's name, an access
token, the agent's slug …) comes from an option or the profile; a check that
needs a fact nobody supplied is not assessed, with the option named.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import ssl
from dataclasses import dataclass, field, fields, replace
from typing import Any

from conformance import __version__, options
from conformance.profile import AGENT_SCENARIOS, FIXED_RESUME, RESUME_SHAPES, Profile, Timeouts  # noqa: F401 (re-exported)

# name -> (option, environment variable), from the one option table; secrets are read from the environment first.
FACTS: dict[str, tuple[str, str]] = options.facts()
SECRET_FACTS = tuple(o.name for o in options.OPTIONS if o.secret)


def suite_seed(version: str = __version__) -> int:
    """The seed of a run given none: fixed by the suite version, so every run of one version on every machine
    sends the same generated inputs (a verdict never depends on the draw), and a new version draws anew."""
    return int.from_bytes(hashlib.sha256(f"conformance {version}".encode()).digest()[:4], "big")


DEFAULT_SEED = suite_seed()

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
    max_run_time: str | None = None  # the run's cap, waiting for the rate limit included (None: DEFAULT_MAX_RUN_TIME)
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

    def tls(self) -> ssl.SSLContext:
        """A TLS context to verify the target with: the suite's own CA alone for the embedded server."""
        from conformance.wire.http import tls_context     # the network's libraries, for a run that sends
        return tls_context(self.ca_bundle, self.insecure, system_cas=not self.embedded)

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
