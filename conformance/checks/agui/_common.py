"""What the agui check modules share: constants and readers."""
from __future__ import annotations

import json

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.vocab.readers import stream_events
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent

PING_INTERVAL = 15.0
PING_TEXT = " ping"                      # SSEComment.text of the line `: ping` (the exact form, AGUI-PING-003)
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")

# Scenarios whose every run is judged by the framing, order, id and upstream-compatibility checks.
STREAMS = ["agui.plain", "agui.streamed", "agui.tool", "agui.step", "agui.fail_after", "agui.fail_before",
           "agui.interrupt"]


# -- reading streams ------------------------------------------------------------------------------
@dataclass
class Run:
    """One AG-UI answer a scenario expected to stream, with what the scenario sent."""
    rec: Recording
    label: str
    ex: Exchange
    want: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.rec.scenario} [{self.label}]"

    @property
    def frames(self) -> list[SSEEvent]:
        return self.ex.stream.dispatched if self.ex.stream else []

    @property
    def events(self) -> list[dict[str, Any]]:
        """The frames whose data is a JSON object (others are judged by AGUI-FRAME-003/004 alone)."""
        return stream_events(self.ex)

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") in types]

    def first(self, type_: str) -> dict[str, Any]:
        found = self.of_type(type_)
        assert found, f"{self.where}: no {type_} event; the stream held {self.types()}"
        return found[0]

    def terminal(self) -> dict[str, Any]:
        found = self.of_type(*TERMINAL)
        assert found, f"{self.where}: no RUN_FINISHED or RUN_ERROR event; the stream held {self.types()}"
        return found[-1]

    def text(self) -> str:
        return "".join(e["delta"] for e in self.of_type("TEXT_MESSAGE_CONTENT") if isinstance(e.get("delta"), str))

    def types(self, limit: int = 14) -> str:
        names = [str(e.get("type")) for e in self.events]
        shown = ", ".join(names[:limit]) + (f", … ({len(names)} events)" if len(names) > limit else "")
        return f"[{shown}]"

    def reply(self) -> str:
        """The reply carried by the content deltas; the expectation must be known."""
        if self.want.get("reply") is None:
            raise NotAssessed(f"{self.where}: the profile gives no expected reply for this run")
        return self.text()


def _streamed(rec: Recording, label: str) -> Exchange:
    ex = rec.get(label)
    assert ex.status == 200 and ex.stream is not None, (
        f"{rec.scenario} [{label}]: expected a 200 text/event-stream answer to {ex.method} {ex.url}, got "
        + (f"no response ({ex.error})" if ex.status is None else
           f"status {ex.status}, Content-Type {ex.header('content-type')!r}: {truncate(ex.body.decode('utf-8', 'replace'), 160, quoted=True)}"))
    return ex


def answered_stream(ex: Exchange) -> bool:
    return ex.status == 200 and ex.stream is not None


def runs(*recs: Recording, kinds: Iterable[str] | None = None, labels: Iterable[str] | None = None,
         keep: Callable[[dict[str, Any]], bool] | None = None, lenient: bool = False,
         own: Iterable[str] = ()) -> list[Run]:
    """Every run the recordings expected to stream (optionally only some kinds, labels, or expectations).

    A run that did not answer a 200 event stream fails the caller, unless `lenient`: then it is left out
    (another requirement owns it), except the labels in `own`."""
    out = []
    own = set(own)
    for rec in recs:
        for label, want in rec.facts.get("runs", {}).items():
            if (kinds is None or want["kind"] in kinds) and (labels is None or label in labels) \
                    and (keep is None or keep(want)):
                if lenient and label not in own and not answered_stream(rec.get(label)):
                    continue
                out.append(Run(rec, label, _streamed(rec, label), want))
    return out


def streams(*recs: Recording, need: str = "events", **filters: Any) -> list[Run]:
    """The runs that streamed something to judge, for the checks over every stream: `need` "frames" (a dispatched
    frame, or an unterminated one) or "events" (a JSON object event). NotAssessed when none did."""
    found = [r for r in runs(*recs, lenient=True, **filters)
             if (r.frames or r.ex.stream.pending.strip() if need == "frames" else r.events)]
    return need_runs(found, f"a stream with {'SSE frames' if need == 'frames' else 'JSON events'}")


def need_items(items: list[Any], what: str) -> list[Any]:
    """Nothing to look at is not assessed, never passed."""
    if not items:
        raise NotAssessed(f"nothing to judge: no {what} in any stream")
    return items


def one_run(rec: Recording, label: str) -> Run:
    found = runs(rec, labels=[label])
    if not found:
        raise NotAssessed(rec.facts.get("no_resume") or f"scenario {rec.scenario} did not send {label!r}")
    return found[0]


def need_runs(found: list[Run], what: str) -> list[Run]:
    if not found:
        raise NotAssessed(f"no run of {what} was recorded")
    return found


def fail_all(problems: list[str], header: str = "") -> None:
    if problems:
        shown = problems[:8] + ([f"… and {len(problems) - 8} more"] if len(problems) > 8 else [])
        raise AssertionError((header + "\n  " if header else "") + "\n  ".join(shown))


def text_diff(got: str, want: str) -> str:
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"lengths {len(got)} vs {len(want)} characters, first difference at {i}: got {truncate(got[i:i + 40], 160, quoted=True)}, "
            f"expected {truncate(want[i:i + 40], 160, quoted=True)}")


def _round_trips(rec: Recording) -> list[tuple[Run, str]]:
    texts = rec.facts.get("texts") or []
    if not texts:
        raise NotAssessed("the round-trip scenario generated no texts")
    return [(one_run_of(rec, generated_steps.AGUI.of(i), text), text) for i, text in enumerate(texts)]


def one_run_of(rec: Recording, label: str, reply: str) -> Run:
    return Run(rec, label, _streamed(rec, label), {"kind": "success", "reply": reply})


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


LIFECYCLES = {
    "TEXT_MESSAGE": ("messageId", "TEXT_MESSAGE_START", ("TEXT_MESSAGE_CONTENT",), "TEXT_MESSAGE_END", "text message"),
    "TOOL_CALL": ("toolCallId", "TOOL_CALL_START", ("TOOL_CALL_ARGS",), "TOOL_CALL_END", "tool call"),
    "STEP": ("stepName", "STEP_STARTED", (), "STEP_FINISHED", "step"),
}


def lifecycle_problems(r: Run, family: str) -> dict[str, list[str]]:
    """Violations of one family's open/close rules: 'use' (open twice, use or close while not open), 'finish'
    (still open at RUN_FINISHED)."""
    key, opener, users, closer, noun = LIFECYCLES[family]
    open_: dict[str, Any] = {}
    out: dict[str, list[str]] = {"use": [], "finish": []}
    for i, e in enumerate(r.events, 1):
        t, k = e.get("type"), _key(e.get(key))
        if t == opener:
            if k in open_:
                out["use"].append(f"{r.where}: event {i} {t} for {noun} {truncate(e.get(key), 60, quoted=True)}, already open")
            open_[k] = e.get(key)
        elif t in users or t == closer:
            if k not in open_:
                out["use"].append(f"{r.where}: event {i} {t} for {noun} {truncate(e.get(key), 60, quoted=True)}, which is not open")
            elif t == closer:
                del open_[k]
        elif t == "RUN_FINISHED" and open_:
            out["finish"].append(f"{r.where}: RUN_FINISHED while {noun}(s) {', '.join(truncate(v, 40, quoted=True) for v in open_.values())} "
                                 f"are still open")
    return out
