"""What a run of the conformance agent does, as plain values (no protocol, no I/O).

A protocol adapter maps each event to its own wire shape: see ``docs/agent.md``
and ``docs/examples/adapter.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Text:
    """One text piece of the reply (``say``, each piece of ``chunks``, ``echo``, ``count``, an answer)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call and its result (``tool NAME ARGS``); the tool returns canonical JSON of ARGS."""

    id: str
    name: str
    args: dict[str, Any]
    result: str


@dataclass(frozen=True, slots=True)
class Step:
    """A step named ``name`` starts and finishes (``step NAME``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Sleep:
    """``sleep SECONDS``: the agent sends nothing for that long.

    Only the low-level generator yields it; the iterators of :class:`~conformance.agent.Run`
    perform it through their sleep hook instead.
    """

    seconds: float


@dataclass(frozen=True, slots=True)
class Ask:
    """The run pauses with ``question`` (``ask QUESTION``); ``id`` names the pause for the resume."""

    id: str
    question: str
    resume_at: int  # index of the directive after the ask


@dataclass(frozen=True, slots=True)
class Fail:
    """The run ends as failed with ``message``; what was sent before stays sent."""

    message: str


@dataclass(frozen=True, slots=True)
class Idle:
    """Not an agent event: the agent has been silent for the idle interval (time for a keep-alive)."""


AgentEvent = Text | ToolCall | Step | Sleep | Ask | Fail
