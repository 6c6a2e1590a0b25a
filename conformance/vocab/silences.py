"""How a run sends the silences of the model (`conformance.model.silences`: where in a run the agent falls silent,
on which stream, for how long, and the requirements the stream is judged under meanwhile).

What the spec says of a silent stream holds at every position of a run: an invoke stream ends in exactly one `done`
(invoke rules 3 and 5), an AG-UI stream ends with RUN_FINISHED and carries a `: ping` comment every 15 s while the
agent is silent (AG-UI rules 3 and 4), an MCP progress stream ends with the result as its last frame (MCP rule 1);
the text the agent says after the silence arrives. A server can keep these before the reply has begun and break
them after (an idle time-out armed by the first byte, a keep-alive timer that stops at the first frame, a resumed
run served by another code path): so each stream falls silent at each position, one silence per run.

`SILENCES` is the table (name `<stream>:<position>:<seconds>s`); `LEFT_OUT` says what the model leaves out and why.
A scenario sends the silences of its stream (`of(scenario)`), notes on each step the silence it holds (`carry`), and
`judged_on` reads them back from the recordings a check was judged on, so report.json names per requirement the
silences it was judged on (`silences`, beside `input_classes`), and `conformance list` the ones the model applies.

The length, and the edge of the 15 s ping interval (principle 2: probe a loose bound well inside and well outside,
never at the edge). A default run lasts as long as its longest scenario, agui.silence's `sleep 16` (`FLOOR`); the
silences start with the run (one after a resume a fraction of a second later) and end by the time it ends, so the
run is no longer. AG-UI falls silent for the whole 16 s. A ping is due 15 s into a silence; the suite allows its
arrival 1.5 s more (`timeouts.ping_tolerance`, a network allowance). Read by arrival times, 15 to 16.5 s is the
edge, and a 16 s silence sits on it: a server that never pings shows a 16 s gap, inside 15 s + tolerance. So the
ping of a silence is read by order, not by time: at least one ping between the frame before the silence and the
frame after it. One stream keeps its order whatever the network does, so that reading depends on the server's own
timer alone, and 16 s leaves it one whole second past the interval: outside the edge, as AGUI-PING-001 has read
agui.silence since it was written (a server whose ping comes more than a second late is judged so at every
position alike). The arrival-time reading (no gap over 15 s + tolerance) is applied too; it bites only on a gap
over 16.5 s, well outside, which in a default run only a server that holds frames back makes. A silence whose frames
arrived less than the 15 s interval apart has no ping due: its ping is not assessed. Invoke and MCP streams ask for
no ping, so no edge: they fall silent 15.5 s, half a second less, which lets their requests take the time they take
to start (MCP learns the tool's name first) and still end with agui.silence; any idle cut under 15.5 s shows. Well
inside all of them, the 15 s silences of the *.slow_run scenarios (the sequences model: a session and a pause
outlast them) and invoke.timing's 2 s ask for no ping either: there a stream only stays open.
"""
from __future__ import annotations

from typing import Any, Iterable

from conformance.model.silences import (  # noqa: F401 (the model's data, read through this module too)
    FLOOR, SECONDS, QUESTION, ANSWER, STREAMS, POSITIONS, EVERY_STREAM, ENDS, TEXT, RESUMED_TEXT, PINGS, Silence,
    SILENCES, LeftOut, LEFT_OUT)
from conformance.wire.exchange import Limits


# -- what a run sends -----------------------------------------------------------------------------------------------
def of(scenario: str) -> list[Silence]:
    """The silences `scenario` sends, in the table's order."""
    return [s for s in SILENCES.values() if s.scenario == scenario]


def limits(ctx: Any, seconds: float) -> Limits:
    """Room for a silence of `seconds`: the idle bound (and the wait for headers, which a server may hold until the
    agent's first event) outlasts it even if nothing is written meanwhile."""
    t = ctx.target.profile.timeouts
    return Limits(connect=t.connect, headers=max(t.headers, seconds + 10), idle=max(t.idle, seconds + 10),
                  total=max(t.request, seconds + 30))


def carry(ctx: Any, step: str, silence: Silence) -> None:
    """Note that `step` holds `silence` (`facts["silences"]`: step label -> silence name)."""
    ctx.recording.facts.setdefault("silences", {})[step] = silence.name


def held(rec: Any) -> list[tuple[Any, Silence]]:
    """(exchange, silence) of every step of the recording that holds a silence, in the table's order."""
    noted = (getattr(rec, "facts", None) or {}).get("silences") or {}
    return [(rec.get(label), SILENCES[name]) for label, name in noted.items() if name in SILENCES]


# -- what a report says --------------------------------------------------------------------------------------------
def judged_on(requirements: Iterable[str], recordings: Iterable[Any]) -> tuple[str, ...]:
    """The silences the recordings held that are judged under any of `requirements` (a check's), sorted."""
    wanted = set(requirements)
    held_names = {name for rec in recordings
                  for name in ((getattr(rec, "facts", None) or {}).get("silences") or {}).values()}
    return tuple(sorted(n for n in held_names if n in SILENCES and wanted & set(SILENCES[n].judged)))


def applies_to(requirement: str) -> list[str]:
    """The silences the model judges `requirement` on (`conformance list`)."""
    return sorted(s.name for s in SILENCES.values() if requirement in s.judged)


def left_out_for(requirement: str) -> list[dict[str, str]]:
    """What the model leaves out that `requirement` would be judged on, and why."""
    return [{"silence": lo.what, "why": lo.why} for lo in LEFT_OUT if requirement in lo.concerns]
