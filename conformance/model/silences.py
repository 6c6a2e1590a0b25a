"""The silences of the model: where in a run the agent falls silent (position), on which stream (invoke SSE, AG-UI,
MCP progress), for how long (length), and the requirements the stream is judged under meanwhile; `LEFT_OUT`, what
the model leaves out and why. How a run sends them and what a report says of them: `conformance.vocab.silences`,
whose notes say why each length is what it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from conformance.profile import AGENT_SCENARIOS as AGENT
import json

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
EVERY_STREAM = {"invoke": ("INV-SEL-001", "INV-SEL-002", "INV-STREAM-001", "INV-STREAM-002", "INV-STREAM-003",
                      "INV-STREAM-004", "INV-STREAM-005", "INV-STREAM-006", "INV-STREAM-007"),
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
        return f"silent-{self.position}"

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
        head = {"start": "", "after-text": "early", "after-resume": "answer: " + json.dumps(ANSWER, sort_keys=True, separators=(",", ":"),
                                                                               ensure_ascii=False)}
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
