"""A request refused before any run starts, and the rules every protocol shares to refuse one."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_SESSION_KEY = 256   # "session key | string, length 1 to 256"


@dataclass
class Refusal(Exception):
    """A request refused before any run starts."""

    status: int
    code: str
    message: str
    details: dict[str, Any] | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


def is_session_key(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= MAX_SESSION_KEY


SESSION_KEY_RULE = f"must be a string of 1 to {MAX_SESSION_KEY} characters"
