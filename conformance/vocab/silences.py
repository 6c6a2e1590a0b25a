"""The silence model: where in a run the agent falls silent (position), on which stream (invoke SSE, AG-UI, MCP
progress), for how long (length), and the requirements the stream is judged under meanwhile.

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

from dataclasses import dataclass
from typing import Any, Iterable

from conformance.profile import AGENT_SCENARIOS as AGENT
from conformance.vocab.protocols import canonical
from conformance.vocab.steps import silences as steps
from conformance.wire.exchange import Limits

FLOOR = float(AGENT["silence"]["silent_seconds"])    # agui.silence's 16 s: how long a default run lasts anyway
SECONDS = {"invoke": FLOOR - 0.5, "agui": FLOOR, "mcp": FLOOR - 0.5}   # the length of each stream's silences (above)
QUESTION = AGENT["question_and_resume"]["question"]
ANSWER = {"name": "Ada"}                  # the answer a silence after a resume is resumed with
STREAMS = {"invoke": "invoke `stream: true` (server-sent events)", "agui": "AG-UI (always a stream)",
           "mcp": "MCP tools/call with a progress token (a stream of progress notifications, then the result)"}

# position -> (what it is, the directives before the silence)
POSITIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "start": ("before the first output: the run opens with the silence", ()),
    "after-text": ("after the reply has begun (on MCP after the progress notification of its first piece, when the "
                   "server sends one: MCP-PROG-009, a SHOULD)", ("say early",)),
    "after-tool": ("after a tool call and its result", (AGENT["tool_call"]["prompt"].splitlines()[0],)),
    "after-step": ("after a step", (AGENT["step"]["prompt"].splitlines()[0],)),
    "after-resume": ("after a resume: the paused run continues with the answer's text, then falls silent",
                     (f"ask {QUESTION}",)),
}

# What each stream is judged under, on every silence of it (the checks over its scenario, `checks/*/`).
EVERY_STREAM = {"invoke": ("INV-SEL-001", "INV-STREAM-001", "INV-STREAM-002", "INV-STREAM-003", "INV-STREAM-004",
                      "INV-STREAM-005", "INV-STREAM-006", "INV-STREAM-007"),
           "agui": ("AGUI-FRAME-002", "AGUI-FRAME-003", "AGUI-FRAME-004", "AGUI-ORDER-001", "AGUI-ID-004",
                    "AGUI-ID-007", "AGUI-ID-008", "AGUI-ID-009", "AGUI-COMPAT-003", "AGUI-COMPAT-004",
                    "AGUI-COMPAT-005"),
           "mcp": ("MCP-PROG-001", "MCP-PROG-002")}
ENDS = {"invoke": ("INV-TERM-001", "INV-TERM-002", "INV-TERM-003"),      # exactly one `done`, last, then the end
        "agui": ("AGUI-ORDER-002", "AGUI-ORDER-003", "AGUI-ORDER-004"),  # one RUN_FINISHED, last, then the end
        "mcp": ("MCP-PROG-003",)}                                         # the result is the last frame, once
TEXT = {"invoke": "INV-STREAM-008", "agui": "AGUI-ORDER-006", "mcp": "MCP-PROG-008"}   # the text after it arrives
RESUMED_TEXT = {"agui": "AGUI-INT-002", "mcp": "MCP-PAUSE-002"}   # ... of a resumed run: the run continued
PINGS = ("AGUI-PING-001", "AGUI-PING-003")                        # a `: ping` inside it, and its exact form


@dataclass(frozen=True)
class Silence:
    stream: str
    position: str
    seconds: float
    scenario: str                      # the scenario that sends it
    judged: tuple[str, ...]            # the requirements its stream is judged under

    @property
    def name(self) -> str:
        return f"{self.stream}:{self.position}:{self.seconds:g}s"

    @property
    def label(self) -> str:
        return steps.SILENT.of(self.position)

    @property
    def script(self) -> tuple[str, ...]:
        after = "say awake" if self.position == "start" else "say late"
        return (*POSITIONS[self.position][1], f"sleep {self.seconds:g}", after)

    @property
    def prompt(self) -> str:
        return "\n".join(self.script)

    @property
    def reply(self) -> str:
        """The text of the run that holds the silence (for a resume, of the resumed run)."""
        head = {"start": "", "after-text": "early", "after-resume": "answer: " + canonical(ANSWER)}
        return head.get(self.position, "") + ("awake" if self.position == "start" else "late")

    @property
    def resumed(self) -> bool:
        return self.position == "after-resume"

    @property
    def parts(self) -> list[list]:
        """The resumed run's reply as the agent's contract builds it (`agent_readings.reads_as`): the answer, then the
        piece said after the silence."""
        return [["answer", ANSWER], ["text", "late"]]


def _silence(stream: str, position: str, scenario: str | None = None) -> Silence:
    text = RESUMED_TEXT[stream] if position == "after-resume" else TEXT[stream]
    judged = (*EVERY_STREAM[stream], *ENDS[stream], text, *(PINGS if stream == "agui" else ()))
    return Silence(stream, position, SECONDS[stream], scenario or f"{stream}.silences", judged)


SILENCES: dict[str, Silence] = {s.name: s for s in [
    *(_silence("invoke", pos) for pos in ("start", "after-text", "after-tool", "after-step")),
    # before the first output AG-UI falls silent in agui.silence (the `silence` profile key, `sleep 16`/`say awake`)
    _silence("agui", "start", "agui.silence"),
    *(_silence("agui", pos) for pos in ("after-text", "after-tool", "after-step", "after-resume")),
    *(_silence("mcp", pos) for pos in ("start", "after-text", "after-tool", "after-resume")),
]}


@dataclass(frozen=True)
class LeftOut:
    what: str
    why: str
    concerns: tuple[str, ...]          # the requirements it would be judged under


LEFT_OUT: tuple[LeftOut, ...] = (
    LeftOut("invoke:after-resume", "the spec shows no pause on invoke (what invoke does with a question: not "
            "shown), so an invoke run has no resume to fall silent after", ENDS["invoke"] + (TEXT["invoke"],)),
    LeftOut("mcp:after-step", "a step reaches an MCP client only as a progress notification, the frame a tool call "
            "also gives (docs/agent.md); mcp:after-tool falls silent after that frame, and one more 16 s run would "
            "pass the default run's budget of requests", ENDS["mcp"] + (TEXT["mcp"],)),
    LeftOut("longer than 16 s", "the default run lasts as long as agui.silence's 16 s: a longer silence would lengthen "
            "every run, so a cut after 16 s of idle, or a ping late by more than a second, shows at no position but "
            "the start, over 32 s, with --thorough (agui.silence_long: AGUI-PING-002, the ping repeating)",
            ENDS["invoke"] + ENDS["agui"] + ENDS["mcp"] + PINGS + ("AGUI-PING-002",)),
    LeftOut("two silences in one run", "two silences of one ping interval each do not fit in 16 s: every run holds "
            "one, and each position has a run of its own", ENDS["agui"] + PINGS),
    LeftOut("pings on invoke and MCP", "the spec asks for keep-alive comments on AG-UI only: a silent invoke or MCP "
            "stream is judged on staying open and ending properly, and any comment it sends is allowed", ()),
    LeftOut("before a failure", "a silence followed by `fail` ends in an error event; the failures are judged "
            "without a silence (invoke.runs, agui.fail_*, mcp): a stream that holds through a silence and then ends "
            "properly is what the table reads", ("INV-TERM-004", "AGUI-FAIL-001", "MCP-TOOL-004")),
    LeftOut("MCP on the 2025-11-25 handshake path, and an eliciting client's retry",
            "the silences are sent as 2026-07-28 calls of a client that cannot elicit; the other paths answer with "
            "the same progress stream, and each more would be another 16 s run", ENDS["mcp"]),
    LeftOut("over HTTP/2", "which scenarios run again over HTTP/2 is the versions model's (conformance/versions.py); "
            "of the silences it repeats agui.silence (before the first output), judged there by the same checks; the "
            "other positions are sent over HTTP/1.1 only", ENDS["agui"] + PINGS),
)


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
