"""agui checks over silences: runs that fall silent for 16 s at each position of a run (conformance.vocab.silences),
judged as extra evidence beside the scripted checks (supplementary) on what the spec says of a silent stream: it
stays open and ends with RUN_FINISHED, the text said after the silence arrives, and `: ping` comments come while
the agent is silent (pings.py reads those).

Each silent run is listed in `facts["runs"]`, so the rules over every stream (framing, order, ids, lifecycles) and
the rule that a normal run finishes apply to it through the same check functions, registered again over the silence
scenarios: agui.silences (after text, a tool call, a step, a resume) and agui.silence (before the first output)."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import on
from conformance.registry import check, rule
from conformance.vocab import agent_readings, silences
from conformance.vocab.text import truncate
from conformance.checks.agui._common import STREAMS, Run, judge_every, judge_reply, register_again, runs

GROUPS = {"silences": ["agui.silences"], "silence": ["agui.silence"]}
NORMAL_RUNS = "AGUI-ORDER-004"

for _group, _scenarios in GROUPS.items():
    register_again(lambda c: list(c.scenarios) == STREAMS or NORMAL_RUNS in c.requirements, _scenarios, _group,
                   "The runs that fall silent")


def silent_runs(*recs: Recording, resumed: bool) -> list[Run]:
    """The runs of the recordings that hold a silence of the model (those after a resume, or the others)."""
    held = {label for rec in recs for label in (rec.facts.get("silences") or {})}
    return runs(*recs, labels=held, keep=lambda want: bool(want.get("resumed")) == resumed)


def text_after_silence(*recs: Recording) -> str | None:
    """Runs that fall silent for 16 s; the run finishes, and the TEXT_MESSAGE_CONTENT deltas joined equal the reply,
    the piece said after the silence included."""
    def arrives(r: Run) -> None:
        r.finished()
        with on(r.ex):
            assert r.text() == r.want["reply"], \
                f"after the silence the deltas joined are {truncate(r.text(), 160, quoted=True)}, expected " \
                f"{truncate(r.want['reply'], 160, quoted=True)}"
    return judge_every(silent_runs(*recs, resumed=False), arrives, nothing="no run of the silence model was recorded")


def resumed_after_silence(*recs: Recording) -> str | None:
    """A run that pauses at once, resumed with `resume` on its threadId, goes on with the answer and falls silent for
    16 s; the resumed run ends with RUN_FINISHED outcome `success` and its reply is the answer then the piece said
    after the silence."""
    def continues(r: Run) -> None:
        with on(r.ex):
            got = r.outcome_type()
            assert got == "success", f"the resumed run ended with outcome.type {got!r} after its silence, expected " \
                                     f"'success' ({truncate(r.finished(), 200, quoted=True)})"

        def exact(text: str) -> None:
            assert text == r.want["reply"] or agent_readings.reads_as(text, silences.SILENCES[
                r.rec.facts["silences"][r.label]].parts, r.ex), \
                f"the resumed run replied {truncate(text, 160, quoted=True)}, expected " \
                f"{truncate(r.want['reply'], 160, quoted=True)} (the answer, the silence, then the rest of the script)"
        judge_reply(r, exact)
    return judge_every(silent_runs(*recs, resumed=True), continues,
                       nothing="no resumed run of the silence model was recorded (`facts[\"unsent\"]` says why)")


rule(lambda group: text_after_silence, over=GROUPS, requirements=silences.TEXT["agui"], scenarios=lambda g: GROUPS[g],
     supplementary=True, name=lambda group: f"text_after_silence__{group}", doc=text_after_silence.__doc__)
check(silences.RESUMED_TEXT["agui"], scenarios=GROUPS["silences"], supplementary=True)(resumed_after_silence)
