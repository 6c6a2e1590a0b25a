"""The in-memory organization the reference server serves.

Seeded at start: the conformance agent, a second deployed agent (it runs the
conformance agent too), one suspended agent; one valid and one revoked API
key; one access token bound to the conformance agent and one expired token.
Secrets come from the ``secrets`` module, or from a seeded RNG when the
config gives a seed.
"""

from __future__ import annotations

import math
import random
import secrets
import string
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from conformance.agent import Paused

SERVICE_PREFIX = "ais"
API_KEY_PREFIX = f"{SERVICE_PREFIX}_live_"
ACCESS_TOKEN_PREFIX = f"{SERVICE_PREFIX}_oat_"
MAX_SESSIONS = 100_000

_ALPHABET = string.ascii_letters + string.digits


@dataclass
class Agent:
    id: str
    slug: str
    name: str
    deployed: bool = True
    version_number: int = 1

    @property
    def tool_name(self) -> str:
        return "ask_" + self.slug.replace("-", "_")


@dataclass
class Credential:
    kind: str  # "api_key" | "access_token"
    secret: str
    org_id: str
    agent_id: str | None = None  # access tokens are bound to one agent
    revoked: bool = False
    expires_at: float | None = None  # wall clock

    def usable(self) -> bool:
        if self.revoked:
            return False
        return self.expires_at is None or time.time() < self.expires_at


@dataclass
class Instance:
    """One running instance of an agent: what one session key reaches."""

    runs: int = 0
    paused: Paused | None = None

    def start_run(self) -> int:
        self.runs += 1
        return self.runs


class Sessions:
    """Session key → running instance, per agent. Least recently used keys are dropped past a cap."""

    def __init__(self, cap: int = MAX_SESSIONS) -> None:
        self._cap = cap
        self._items: OrderedDict[tuple[str, str], Instance] = OrderedDict()

    def get(self, agent_id: str, key: str) -> Instance:
        k = (agent_id, key)
        inst = self._items.get(k)
        if inst is None:
            inst = self._items[k] = Instance()
            if len(self._items) > self._cap:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(k)
        return inst

    def peek(self, agent_id: str, key: str) -> Instance | None:
        return self._items.get((agent_id, key))

    def __len__(self) -> int:
        return len(self._items)


class TokenBucket:
    def __init__(self, burst: int, per_second: float) -> None:
        self.burst = max(1, int(burst))
        self.rate = max(1e-9, float(per_second))
        self.tokens = float(self.burst)
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> tuple[bool, int, int]:
        """(allowed, remaining, retry_after_seconds)."""
        with self._lock:
            self._refill()
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return True, int(self.tokens), 0
            wait = (1.0 - self.tokens) / self.rate
            return False, 0, max(1, math.ceil(wait))

    def remaining(self) -> int:
        with self._lock:
            self._refill()
            return int(self.tokens)


@dataclass
class Organization:
    id: str
    agents: dict[str, Agent]
    credentials: dict[str, Credential]
    bucket: TokenBucket
    sessions: Sessions = field(default_factory=Sessions)
    facts: dict[str, Any] = field(default_factory=dict)

    def credential(self, secret: str) -> Credential | None:
        return self.credentials.get(secret)


def _opaque(rng: random.Random | None, n: int = 24) -> str:
    if rng is None:
        return "".join(secrets.choice(_ALPHABET) for _ in range(n))
    return "".join(rng.choice(_ALPHABET) for _ in range(n))


def seed_organization(*, seed: int | None, rate_limit_burst: int, rate_limit_per_second: float) -> Organization:
    rng = random.Random(seed) if seed is not None else None
    org_id = "org_" + _opaque(rng, 16)
    main = Agent(id="agt_" + _opaque(rng, 16), slug="conformance-agent", name="Conformance agent")
    other = Agent(id="agt_" + _opaque(rng, 16), slug="second-agent", name="Second agent")
    suspended = Agent(id="agt_" + _opaque(rng, 16), slug="suspended-agent", name="Suspended agent", deployed=False)
    agents = {a.id: a for a in (main, other, suspended)}

    creds = [
        Credential("api_key", API_KEY_PREFIX + _opaque(rng, 32), org_id),
        Credential("api_key", API_KEY_PREFIX + _opaque(rng, 32), org_id, revoked=True),
        Credential("access_token", ACCESS_TOKEN_PREFIX + _opaque(rng, 32), org_id, agent_id=main.id),
        Credential("access_token", ACCESS_TOKEN_PREFIX + _opaque(rng, 32), org_id, agent_id=main.id,
                   expires_at=time.time() - 3600),
    ]
    org = Organization(
        id=org_id,
        agents=agents,
        credentials={c.secret: c for c in creds},
        bucket=TokenBucket(rate_limit_burst, rate_limit_per_second),
    )
    org.facts = {
        "agent_id": main.id,
        "agent_slug": main.slug,
        "api_key": creds[0].secret,
        "access_token": creds[2].secret,
        "other_agent_id": other.id,
        "revoked_key": creds[1].secret,
        "expired_token": creds[3].secret,
        "undeployed_agent_id": suspended.id,
    }
    return org
