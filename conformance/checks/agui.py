"""AG-UI checks: framing, event order, ids, prompt and pass-through, pings, failures, interrupt/resume,
refusals, and compatibility with upstream AG-UI 1.0 (the `ag-ui-protocol` package).

Every run a scenario lists in `facts["runs"]` has one requirement that owns it (the plain reply:
AGUI-FRAME-001; the tool call and step: AGUI-ORDER-005; the failures: AGUI-FAIL-001/002; the question:
AGUI-INT-001; the resume: AGUI-INT-002/003; …). That requirement's check fails a run that did not answer a
200 event stream. The checks over every stream (framing, order, ids, upstream compatibility) judge only what
streamed (`streams`): one deviation, one failure. A check with nothing to look at (no run streamed, no frame,
no JSON event, no event of the kind it judges) is not assessed, never passed.

Only dispatched SSE blocks are frames (`SSEEvent.dispatched`): a block with no data line (a standalone
`retry:` or `id:` block) and comment lines dispatch nothing, so no check sees them as frames.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable, Iterable

from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check, rule
from conformance.vocab import protocols as p
from conformance.vocab.constants import AGUI_INTERPRETED as INTERPRETED
from conformance.vocab.readers import error_of, stream_events
from conformance.vocab.text import truncate
from conformance.wire.http import Exchange
from conformance.wire.sse import SSEComment, SSEEvent

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


# -- framing ------------------------------------------------------------------------------------
@check("AGUI-FRAME-001", scenarios=["agui.plain"])
def answers_event_stream(plain):
    """Sends the plain prompt with `Accept: text/event-stream` and with no Accept header; both answer 200 text/event-stream."""
    problems = []
    for label in ("ids", "bare"):
        ex = plain.get(label)
        if ex.status != 200 or ex.content_type != "text/event-stream":
            problems.append(f"[{label}] {ex.method} {ex.url} (Accept {_sent_header(ex, 'accept')!r}): "
                            f"expected 200 text/event-stream, got status {ex.status}, Content-Type "
                            f"{ex.header('content-type')!r}" + (f" ({ex.error})" if ex.error else ""))
    fail_all(problems)


@check("AGUI-FRAME-002", scenarios=STREAMS)
def frames_are_unnamed(*recs):
    """Runs every stream scenario; no frame carries a non-empty `event:` name (the spec's frames are unnamed `data:`)."""
    problems = [f"{r.where}: frame {f.index} is named {f.event!r}: {truncate(f.data, 160, quoted=True)}"
                for r in streams(*recs, need="frames") for f in r.frames if f.event]
    fail_all(problems, "AG-UI frames must be unnamed `data:` frames:")


@check("AGUI-FRAME-003", scenarios=STREAMS)
def frames_are_json_events(*recs):
    """Runs every stream scenario; every frame's data is one JSON object with a non-empty string `type`."""
    problems = []
    for r in streams(*recs, need="frames"):
        for f in r.frames:
            try:
                value = f.json()
            except AssertionError as exc:
                problems.append(f"{r.where}: {exc}")
                continue
            if not isinstance(value, dict) or not isinstance(value.get("type"), str) or not value["type"]:
                problems.append(f"{r.where}: frame {f.index} is not a JSON object with a non-empty string "
                                f"`type`: {truncate(f.data, 160, quoted=True)}")
    fail_all(problems, "every AG-UI frame must hold one JSON event with a `type`:")


def _extra_after_json(data: str) -> str | None:
    try:
        _, end = json.JSONDecoder().raw_decode(data.lstrip())
    except ValueError:
        return "its data is not one complete JSON value (an event split across frames?)"
    rest = data.lstrip()[end:].strip()
    return f"more follows the first JSON value: {truncate(rest, 80, quoted=True)}" if rest else None


@check("AGUI-FRAME-004", scenarios=STREAMS)
def one_event_per_frame(*recs):
    """Runs every stream scenario; each frame is blank-line terminated and holds exactly one whole JSON value."""
    problems = []
    for r in streams(*recs, need="frames"):
        if r.ex.stream.end == "eof_mid_block":
            problems.append(f"{r.where}: the stream ended inside a frame that no blank line closed: "
                            f"{truncate(r.ex.stream.pending.decode('utf-8', 'replace'), 160, quoted=True)}")
        for f in r.frames:
            why = _extra_after_json(f.data)
            if why:
                problems.append(f"{r.where}: frame {f.index}: {why}: {truncate(f.data, 160, quoted=True)}")
    fail_all(problems, "one JSON AG-UI event per frame:")


def _sent_header(ex: Exchange, name: str) -> str:
    return next((v for k, v in ex.request_headers.items() if k.lower() == name), "(none)")


# -- order -------------------------------------------------------------------------------------
@check("AGUI-ORDER-001", scenarios=STREAMS)
def run_started_first(*recs):
    """Runs every stream scenario; the first event is RUN_STARTED and it occurs once."""
    problems = []
    for r in streams(*recs):
        types = [e.get("type") for e in r.events]
        if not types or types[0] != "RUN_STARTED" or types.count("RUN_STARTED") != 1:
            problems.append(f"{r.where}: expected RUN_STARTED first and once, got {r.types()}")
    fail_all(problems)


@check("AGUI-ORDER-002", scenarios=STREAMS)
def one_terminal_event(*recs):
    """Runs every stream scenario (success, failure, interrupt); exactly one RUN_FINISHED or RUN_ERROR in total."""
    problems = [f"{r.where}: expected exactly one RUN_FINISHED or RUN_ERROR, got {len(r.of_type(*TERMINAL))}: {r.types()}"
                for r in streams(*recs) if len(r.of_type(*TERMINAL)) != 1]
    fail_all(problems)


@check("AGUI-ORDER-003", scenarios=STREAMS)
def terminal_event_is_last(*recs):
    """Runs every stream scenario; RUN_FINISHED/RUN_ERROR is the last frame and the body ends after it (comments aside)."""
    problems = []
    for r in streams(*recs):
        frames = r.frames
        last_terminal = max((i for i, f in enumerate(frames) if _type_of(f) in TERMINAL), default=None)
        if last_terminal is None:
            problems.append(f"{r.where}: no RUN_FINISHED or RUN_ERROR: {r.types()}")
        elif last_terminal != len(frames) - 1:
            after = ", ".join(truncate(f.data, 60, quoted=True) for f in frames[last_terminal + 1:][:3])
            problems.append(f"{r.where}: {len(frames) - 1 - last_terminal} frame(s) after the terminal event: {after}")
        elif r.ex.stream.end != "eof" or r.ex.error:
            problems.append(f"{r.where}: the body did not end after the terminal event "
                            f"(stream end {r.ex.stream.end!r}{', ' + r.ex.error if r.ex.error else ''})")
    fail_all(problems)


def _safe_json(frame: SSEEvent) -> Any:
    try:
        return frame.json()
    except AssertionError:
        return None


def _type_of(frame: SSEEvent) -> Any:
    value = _safe_json(frame)
    return value.get("type") if isinstance(value, dict) else None


@check("AGUI-ORDER-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_run_finishes(*recs):
    """Runs prompts that end normally (plain, chunks, tool, step); each ends with RUN_FINISHED, not RUN_ERROR."""
    problems = [f"{r.where}: a normal run ended with {r.terminal().get('type')}: {truncate(r.terminal(), 160, quoted=True)}"
                for r in streams(*recs, kinds=["success"]) if r.terminal().get("type") != "RUN_FINISHED"]
    fail_all(problems)


def _is_text_or_run(type_: Any) -> bool:
    return isinstance(type_, str) and type_.startswith(("RUN_", "TEXT_MESSAGE_"))


@check("AGUI-ORDER-005", scenarios=["agui.tool", "agui.step"])
def tool_and_step_events_between(*recs):
    """Runs the tool-call and step prompts; some event other than RUN_*/TEXT_MESSAGE_* lies between start and end."""
    seen, problems = {}, []
    for r in need_runs(runs(*recs), "the tool-call or step prompt"):
        types = [e.get("type") for e in r.events]
        inner = types[1:-1] if len(types) >= 2 else []
        others = [t for t in inner if not _is_text_or_run(t)]
        if types[:1] != ["RUN_STARTED"] or not types or types[-1] not in TERMINAL or not others:
            problems.append(f"{r.where}: expected a tool or step event between RUN_STARTED and the terminal event, "
                            f"got {r.types()}")
        seen[r.label] = sorted({str(t) for t in others})
    fail_all(problems)
    return "types seen (not judged, AGUI-OPEN-002): " + "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items())


@check("AGUI-ORDER-006", scenarios=["agui.plain", "agui.streamed"])
def deltas_join_to_reply(*recs):
    """Runs the plain and chunked prompts; the TEXT_MESSAGE_CONTENT deltas joined in order equal the reply."""
    checked = need_runs(runs(*recs, keep=lambda w: w.get("reply") is not None, lenient=True, own=["streamed"]),
                        "a prompt with a known reply")
    problems = [f"{r.where}: deltas joined are {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)}"
                for r in checked if r.text() != r.want["reply"]]
    fail_all(problems)


def _round_trips(rec: Recording) -> list[tuple[Run, str]]:
    texts = rec.facts.get("texts") or []
    if not texts:
        raise NotAssessed("the round-trip scenario generated no texts")
    return [(one_run_of(rec, f"agui-{i}", text), text) for i, text in enumerate(texts)]


def one_run_of(rec: Recording, label: str, reply: str) -> Run:
    return Run(rec, label, _streamed(rec, label), {"kind": "success", "reply": reply})


@check("AGUI-ORDER-006", scenarios=["generated.round_trip"])
def round_trip_deltas(rec):
    """Sends generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json`; deltas join to each exactly."""
    fail_all([f"{r.where}: the deltas differ from the generated text: {text_diff(r.text(), text)}"
              for r, text in _round_trips(rec) if r.text() != text])


# -- ids -----------------------------------------------------------------------------------------
def _echo_check(event_type: str, field: str, sent_key: str) -> Callable[..., None]:
    def judge(*recs):
        checked = streams(*recs, keep=lambda w: w.get(sent_key) is not None)
        problems = []
        for r in checked:
            got = r.first(event_type).get(field)
            if got != r.want[sent_key]:
                problems.append(f"{r.where}: sent {field} {truncate(r.want[sent_key], 60, quoted=True)}, {event_type}.{field} is "
                                f"{truncate(got, 60, quoted=True)}")
        fail_all(problems)
    return judge


check("AGUI-ID-001", scenarios=["agui.plain", "agui.key_lengths", "agui.session"], name="thread_id_echoed_on_start",
      doc="Sends threadId (also 1 and 256 characters long); RUN_STARTED.threadId equals it.")(_echo_check("RUN_STARTED", "threadId", "thread"))
check("AGUI-ID-002", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_start",
      doc="Sends runId; RUN_STARTED.runId equals it.")(_echo_check("RUN_STARTED", "runId", "run"))
check("AGUI-ID-003", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_finish",
      doc="Sends runId; RUN_FINISHED.runId equals it.")(_echo_check("RUN_FINISHED", "runId", "run"))


@check("AGUI-ID-004", scenarios=STREAMS)
def finish_thread_matches_start(*recs):
    """Runs every stream scenario; RUN_FINISHED.threadId equals RUN_STARTED.threadId of the same stream."""
    problems = []
    found = streams(*recs)
    need_items([e for r in found for e in r.of_type("RUN_FINISHED")], "RUN_FINISHED event")
    for r in found:
        for fin in r.of_type("RUN_FINISHED"):
            start = r.first("RUN_STARTED").get("threadId")
            if fin.get("threadId") != start:
                problems.append(f"{r.where}: RUN_STARTED.threadId {truncate(start, 60, quoted=True)} but RUN_FINISHED.threadId "
                                f"{truncate(fin.get('threadId'), 60, quoted=True)}")
    fail_all(problems)


def _generated(value: Any, limit: int | None = None) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{truncate(value, 60, quoted=True)} is not a non-empty string"
    if limit is not None and len(value) > limit:
        return f"{truncate(value, 60, quoted=True)} is {len(value)} characters long (at most {limit})"
    return None


@check("AGUI-ID-005", scenarios=["agui.plain", "agui.session"])
def generated_thread_ids(plain, session):
    """Runs without threadId; RUN_STARTED.threadId is generated (1 to 256 characters). That two generated keys differ
    is not stated; a fresh key starting a new instance is judged at SHOULD (GEN-SESS-002)."""
    found = streams(plain, session, keep=lambda w: w.get("thread") is None)
    fail_all([f"{r.where}: sent no threadId; RUN_STARTED.threadId {why}"
              for r in found
              if (why := _generated(r.first("RUN_STARTED").get("threadId"), 256))])


@check("AGUI-ID-006", scenarios=["agui.plain", "agui.session"])
def generated_run_id(plain, session):
    """Runs without runId; RUN_STARTED.runId is a non-empty string and RUN_FINISHED.runId equals it."""
    problems = []
    for r in streams(plain, session, keep=lambda w: w.get("run") is None):
        rid = r.first("RUN_STARTED").get("runId")
        why = _generated(rid)
        if why:
            problems.append(f"{r.where}: sent no runId; RUN_STARTED.runId {why}")
        elif r.first("RUN_FINISHED").get("runId") != rid:
            problems.append(f"{r.where}: RUN_STARTED.runId {truncate(rid, 60, quoted=True)} but RUN_FINISHED.runId "
                            f"{truncate(r.first('RUN_FINISHED').get('runId'), 60, quoted=True)}")
    fail_all(problems)


@check("AGUI-ID-007", scenarios=STREAMS)
def message_start_role_assistant(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_START has a `messageId` and `role` = `assistant`."""
    starts = need_items([(r, e) for r in streams(*recs) for e in r.of_type("TEXT_MESSAGE_START")],
                        "TEXT_MESSAGE_START event")
    problems = [f"{r.where}: TEXT_MESSAGE_START without messageId or with role other than 'assistant': {truncate(e, 160, quoted=True)}"
                for r, e in starts if "messageId" not in e or e.get("role") != "assistant"]
    fail_all(problems)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


@check("AGUI-ID-008", scenarios=STREAMS)
def content_belongs_to_started_message(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_CONTENT has a string delta and a messageId a START announced."""
    problems = []
    found = streams(*recs)
    need_items([e for r in found for e in r.of_type("TEXT_MESSAGE_CONTENT")], "TEXT_MESSAGE_CONTENT event")
    for r in found:
        started: set[str] = set()
        for e in r.events:
            if e.get("type") == "TEXT_MESSAGE_START":
                started.add(_key(e.get("messageId")))
            elif e.get("type") == "TEXT_MESSAGE_CONTENT":
                if not isinstance(e.get("delta"), str):
                    problems.append(f"{r.where}: TEXT_MESSAGE_CONTENT delta is not a string: {truncate(e, 160, quoted=True)}")
                if "messageId" not in e or _key(e.get("messageId")) not in started:
                    problems.append(f"{r.where}: TEXT_MESSAGE_CONTENT for messageId {truncate(e.get('messageId'), 60, quoted=True)}, "
                                    f"which no earlier TEXT_MESSAGE_START announced")
    fail_all(problems)


# -- lifecycles (the official AG-UI client's verifyEvents rules) ------------------------------------
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


@check("AGUI-ID-009", scenarios=STREAMS)
def messages_ended_before_finish(*recs):
    """Runs every stream scenario; every started text message is ended (TEXT_MESSAGE_END) before RUN_FINISHED."""
    found = streams(*recs)
    need_items([e for r in found for e in r.of_type("TEXT_MESSAGE_START")], "TEXT_MESSAGE_START event")
    fail_all([p_ for r in found for p_ in lifecycle_problems(r, "TEXT_MESSAGE")["finish"]])


def _lifecycle_check(family: str) -> Callable[..., None]:
    key, opener, users, closer, noun = LIFECYCLES[family]

    def judge(*recs):
        problems = []
        judged = streams(*recs)
        need_items([e for r in judged for e in r.of_type(opener, *users, closer)], f"{noun} event")
        for r in judged:
            found = lifecycle_problems(r, family)
            problems += found["use"] + (found["finish"] if family != "TEXT_MESSAGE" else [])
        fail_all(problems, "the official AG-UI client (verifyEvents) rejects this order:")
    return judge


LIFECYCLE_CHECKS = {   # requirement: (event family, doc)
    "AGUI-COMPAT-003": ("TEXT_MESSAGE", "Runs every stream scenario; text messages open once, and CONTENT/END come only while open."),
    "AGUI-COMPAT-004": ("TOOL_CALL", "Runs every stream scenario; tool calls open once, ARGS/END only while open, none open at RUN_FINISHED."),
    "AGUI-COMPAT-005": ("STEP", "Runs every stream scenario; steps start once, finish only if started, none open at RUN_FINISHED."),
}
rule(lambda req: _lifecycle_check(LIFECYCLE_CHECKS[req][0]), over=LIFECYCLE_CHECKS, requirements=lambda req: req, scenarios=STREAMS,
     name=lambda req: f"{LIFECYCLE_CHECKS[req][0].lower()}_lifecycle", doc=lambda req: LIFECYCLE_CHECKS[req][1])


# -- sessions --------------------------------------------------------------------------------------
def _replies(rec: Recording, wanted: dict[str, str]) -> list[str]:
    problems = []
    for label, reply in wanted.items():
        r = one_run(rec, label)
        if r.text() != reply:
            problems.append(f"{r.where}: `count` replied {truncate(r.text(), 60, quoted=True)}, expected {reply!r}")
    return problems


@check("AGUI-SESS-001", scenarios=["agui.session"])
def generated_thread_continues(session):
    """Runs `count` without threadId (reply 1), then with the threadId RUN_STARTED gave it (reply 2)."""
    assert session.facts.get("generated_thread") is not None, (
        "the run without threadId got no string RUN_STARTED.threadId, so its session could not be continued")
    fail_all(_replies(session, {"generated-1": "1", "generated-2": "2"}))


@check("AGUI-SESS-002", scenarios=["agui.session"])
def same_thread_same_instance(session):
    """Runs `count` twice with one fresh threadId; the replies are 1 then 2."""
    fail_all(_replies(session, {"fresh-1": "1", "fresh-2": "2"}))


@check("GEN-SESS-002", scenarios=["agui.session"])
def fresh_key_starts_at_one(session):
    """Runs `count` on a fresh AG-UI threadId and on two generated ones; each replies 1 (a new instance)."""
    fail_all(_replies(session, {"fresh-1": "1", "generated-1": "1", "generated-other": "1"}))


@check("GEN-SESS-001", scenarios=["agui.cross_session"])
def one_key_across_protocols(rec):
    """Runs `count` with one fresh key as invoke sessionId, AG-UI threadId, MCP session_id; replies 1, 2, 3."""
    if rec.facts.get("no_mcp"):
        raise NotAssessed(rec.facts["no_mcp"])
    invoke = rec.get("invoke")
    body = invoke.json()
    got_invoke = body.get("result") if isinstance(body, dict) else None
    got_agui = Run(rec, "agui", _streamed(rec, "agui"), {"kind": "success", "reply": "2"}).text()
    mcp = p.mcp_response(rec.get("mcp"))
    result = mcp.get("result") if isinstance(mcp.get("result"), dict) else {}
    got_mcp = p.mcp_text(result) if isinstance(result.get("content"), list) else None
    got = [got_invoke, got_agui, got_mcp]
    assert got == ["1", "2", "3"], (f"`count` with key {rec.facts['key']!r} over invoke, AG-UI and MCP replied "
                                    f"{got}, expected ['1', '2', '3'] (one running instance)")


@check("AGUI-SESS-003", scenarios=["agui.key_lengths"])
def thread_id_bounds_accepted(rec):
    """Runs the plain prompt with threadIds of 1 and 256 characters; both stream and end with RUN_FINISHED."""
    fail_all([f"{r.where}: ended with {r.terminal().get('type')}" for r in need_runs(runs(rec), "a bound threadId")
              if r.terminal().get("type") != "RUN_FINISHED"])


# -- refusals ----------------------------------------------------------------------------------------
def refusal_problem(ex: Exchange, code: str | None = None) -> str | None:
    """Why an answer is not a refusal before the stream with the error body (and `code`), or None."""
    what = f"[{ex.label}] {ex.method} {ex.url}"
    if ex.status is None:
        return f"{what}: no response ({ex.error})"
    if not 400 <= ex.status < 500 or ex.stream is not None:
        return (f"{what}: expected a 4xx refusal before any stream, got status {ex.status}, Content-Type "
                f"{ex.header('content-type')!r}: {truncate(ex.body.decode('utf-8', 'replace'), 160, quoted=True)}")
    try:
        body = ex.json()
        schemas.check("error-body", body, what)
    except AssertionError as exc:
        return str(exc)
    if code is not None and body["error"]["code"] != code:
        return f"{what}: status {ex.status} with error.code {body['error']['code']!r}, expected {code!r}"
    return None


def _refusal_check(labels: tuple[str, ...], code: str | None) -> Callable[..., None]:
    def judge(rec):
        fail_all([why for label in labels if (why := refusal_problem(rec.get(label), code))])
    return judge


REFUSALS = (   # (requirement, check name, steps, error.code, doc)
        ("AGUI-ERR-001", "refused_without_messages", ("no-messages",), "invalid_request",
         "Sends neither messages nor resume; refused before any stream with a 4xx and invalid_request."),
        ("AGUI-ERR-002", "refused_empty_messages", ("empty-messages",), "invalid_request",
         "Sends `messages: []` and no resume; refused with a 4xx and invalid_request."),
        ("AGUI-ERR-003", "refused_without_user_message", ("assistant-only",), "invalid_request",
         "Sends only an assistant message and no resume; refused with a 4xx and invalid_request."),
        ("AGUI-SESS-004", "refused_thread_id_out_of_bounds", ("thread-257", "thread-empty"), "validation_failed",
         "Sends threadIds of 257 and 0 characters; each is refused before the stream with a 4xx and validation_failed."),
        ("AGUI-LIM-002", "refused_two_megabytes", ("two-mb",), None,
         "Sends a body of about 2 MB (well over 1 MB); refused before the stream with a 4xx and the error body."),
        ("AGUI-ERR-005", "refusals_are_error_bodies", ("no-messages", "empty-messages", "assistant-only", "thread-257", "thread-empty", "two-mb",
                          "agui-unknown-agent", "agui-no-credential", "agui-bad-credential"), None,
         "Sends faulty AG-UI requests with Accept: text/event-stream; each answer is a JSON error body, not a stream."))
rule(lambda case: _refusal_check(case[2], case[3]), over=REFUSALS, requirements=lambda case: case[0],
     scenarios=["agui.refusals"], name=lambda case: case[1], doc=lambda case: case[4])


@check("AGUI-ERR-004", scenarios=["agui.refusals"])
def refusals_match_invoke(rec):
    """Sends the same faults (unknown agent, no/bad credential, 257-character key) to AG-UI and invoke; same status and code."""
    problems = []
    for agui_label, invoke_label in (("agui-unknown-agent", "invoke-unknown-agent"),
                                     ("agui-no-credential", "invoke-no-credential"),
                                     ("agui-bad-credential", "invoke-bad-credential"),
                                     ("thread-257", "invoke-session-257")):
        a, i = rec.get(agui_label), rec.get(invoke_label)
        got = [(ex.status, (error_of(ex) or {}).get('code')) for ex in (a, i)]
        if got[0] != got[1] or got[0][0] is None or not 400 <= got[0][0] < 500:
            problems.append(f"{agui_label}: AG-UI answered status {got[0][0]} code {got[0][1]!r}, invoke "
                            f"answered status {got[1][0]} code {got[1][1]!r} (expected the same 4xx refusal)")
    fail_all(problems)


# -- prompt and result ------------------------------------------------------------------------------
@check("AGUI-PROMPT-001", scenarios=["agui.last_user"])
def last_user_message_is_prompt(rec):
    """Sends [user `say first`, assistant, user `say conformance`] and [user `say conformance`, assistant]; replies `conformance`."""
    if any(r.want.get("reply") is None for r in runs(rec)):
        raise NotAssessed("the profile's plain_reply gives no expected `reply` to compare with")
    fail_all([f"{r.where}: reply {truncate(r.reply(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)} (only the last user "
              f"message is the prompt)" for r in need_runs(runs(rec), "a message list") if r.reply() != r.want["reply"]])


@check("AGUI-PROMPT-002", scenarios=["agui.messages"])
def whole_message_list_reaches_agent(rec):
    """Sends a history ending in `echo messages`; the reply is the canonical JSON of the list exactly as sent."""
    r = one_run(rec, "echo-messages")
    try:
        got = json.loads(r.text())
    except ValueError:
        raise AssertionError(f"{r.where}: `echo messages` replied {truncate(r.text(), 160, quoted=True)}, not JSON") from None
    assert got == rec.facts["messages"], (f"{r.where}: the agent received {truncate(got, 400, quoted=True)}, expected the list sent: "
                                          f"{truncate(rec.facts['messages'], 400, quoted=True)}")


@check("AGUI-PROMPT-003", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def finished_result_is_reply(*recs):
    """Runs prompts that end normally; RUN_FINISHED.result is a string equal to the reply."""
    checked = streams(*recs, kinds=["success"], keep=lambda w: w.get("reply") is not None)
    fail_all([f"{r.where}: RUN_FINISHED.result is {truncate(r.first('RUN_FINISHED').get('result'), 160, quoted=True)}, expected "
              f"{truncate(r.want['reply'], 160, quoted=True)}" for r in checked if r.first("RUN_FINISHED").get("result") != r.want["reply"]])


@check("AGUI-PROMPT-003", scenarios=["generated.round_trip"])
def round_trip_result(rec):
    """Sends generated texts as `say-json`; RUN_FINISHED.result equals each text exactly."""
    problems = []
    for r, text in _round_trips(rec):
        got = r.first("RUN_FINISHED").get("result")
        if got != text:
            problems.append(f"{r.where}: RUN_FINISHED.result differs from the generated text: "
                            + (text_diff(got, text) if isinstance(got, str) else f"got {truncate(got, 160, quoted=True)}"))
    fail_all(problems)


@check("AGUI-PROMPT-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_outcome_success(*recs):
    """Runs prompts that end normally; RUN_FINISHED.outcome.type is `success`."""
    problems = []
    for r in streams(*recs, kinds=["success"]):
        outcome = r.first("RUN_FINISHED").get("outcome")
        if not isinstance(outcome, dict) or outcome.get("type") != "success":
            problems.append(f"{r.where}: RUN_FINISHED.outcome is {truncate(outcome, 160, quoted=True)}, expected type 'success'")
    fail_all(problems)


# -- pass-through ---------------------------------------------------------------------------------
def echoed_params(r: Run) -> dict[str, Any]:
    try:
        got = json.loads(r.text())
    except ValueError:
        raise AssertionError(f"{r.where}: `echo params` replied {truncate(r.text(), 160, quoted=True)}, not JSON") from None
    assert isinstance(got, dict), f"{r.where}: `echo params` replied {truncate(got, 160, quoted=True)}, not a JSON object"
    return got


def missing_params(r: Run, sent: dict[str, Any]) -> list[str]:
    got = echoed_params(r)
    return [f"{r.where}: sent {name} = {truncate(value, 120, quoted=True)}, the agent's params hold "
            + (truncate(got[name], 120, quoted=True) if name in got else "no such field")
            for name, value in sent.items() if name not in INTERPRETED and (name not in got or got[name] != value)]


@check("AGUI-PASS-001", scenarios=["agui.params"])
def forwarded_fields_reach_params(rec):
    """Sends tools, state, context and forwardedProps with `echo params`; each reaches the agent unchanged."""
    fail_all(missing_params(one_run(rec, "echo-params"), rec.facts["forwarded"]))


@check("AGUI-PASS-002", scenarios=["agui.params"])
def unknown_fields_reach_params(rec):
    """Sends unknown top-level fields of every JSON type with `echo params`; each reaches the agent unchanged."""
    fail_all(missing_params(one_run(rec, "echo-params"), rec.facts["unknown"]))


@check("AGUI-PASS-002", scenarios=["generated.params"])
def generated_fields_reach_params(rec):
    """Sends generated extra fields (any JSON values, unicode names) with `echo params`; each reaches the agent."""
    sent = rec.facts.get("params") or []
    if not sent:
        raise NotAssessed("the generated-params scenario generated no fields")
    fail_all([m for i, extra in enumerate(sent)
              for m in missing_params(one_run_of(rec, f"agui-{i}", ""), extra)])


@check("AGUI-PASS-003", scenarios=["agui.params"])
def interpreted_fields_withheld(rec):
    """Sends threadId, runId and messages with `echo params`; none of the interpreted fields is in params."""
    got = echoed_params(one_run(rec, "echo-params"))
    leaked = [name for name in INTERPRETED if name in got]
    assert not leaked, f"the agent's params hold interpreted field(s) {leaked}: {truncate(got, 300, quoted=True)}"


# -- pings ----------------------------------------------------------------------------------------
def is_ping(comment: SSEComment) -> bool:
    """A keep-alive ping by the MUST's reading: a comment line whose text begins with `ping` (one leading space
    aside, as SSE drops one from field values): `: ping`, `:ping`, `: ping - 2026-11-22 21:59:45+00:00`
    (sse-starlette's default). `: keepalive` is not a ping."""
    text = comment.text[1:] if comment.text.startswith(" ") else comment.text
    return text.startswith("ping")


def pings_of(r: Run) -> list[SSEComment]:
    return [i for i in r.ex.stream.items if isinstance(i, SSEComment) and is_ping(i)]


def ping_problems(r: Run, tolerance: float, min_pings: int) -> list[str]:
    """Pings during the silence: at least `min_pings` comment lines beginning with `ping`, and no gap between
    frames or pings over 15 s + tolerance (arrival times)."""
    items = r.ex.stream.items
    pings = pings_of(r)
    others = sorted({i.text for i in items if isinstance(i, SSEComment) and not is_ping(i)})
    ping_ids = {id(i) for i in pings}
    anchors = [(i.t, "frame" if isinstance(i, SSEEvent) else "ping") for i in items
               if (isinstance(i, SSEEvent) and i.dispatched) or id(i) in ping_ids]
    problems = []
    if len(pings) < min_pings:
        problems.append(f"{r.where}: {len(pings)} comment line(s) beginning with 'ping' during a "
                        f"{r.rec.facts.get('silent_seconds')} s silence, expected at least {min_pings}"
                        + (f" (other comments seen: {', '.join(repr(':' + t) for t in others[:5])})" if others else ""))
    bound = PING_INTERVAL + tolerance
    for (t0, k0), (t1, k1) in zip(anchors, anchors[1:]):
        if t1 - t0 > bound:
            problems.append(f"{r.where}: {t1 - t0:.1f} s passed between a {k0} at +{t0:.1f} s and the next {k1} at "
                            f"+{t1:.1f} s with no ping comment (at most {PING_INTERVAL:g} s + {tolerance:g} s tolerance)")
    # A ping is a comment line: it carries no event by construction (an `event: ping` frame is not counted at all).
    # A comment line written just before a data line of the next frame is still a comment (WHATWG), so it counts.
    return problems


def _ping_check(min_pings: int) -> Callable[..., None]:
    def judge(rec):
        tolerance = rec.target.profile.timeouts.ping_tolerance
        fail_all([m for r in need_runs(runs(rec), "the silence") for m in ping_problems(r, tolerance, min_pings)])
    return judge


check("AGUI-PING-001", scenarios=["agui.silence"], name="ping_during_silence",
      doc="Runs `sleep 16`; a comment beginning with `ping` comes at most 15 s (+ tolerance) after the last frame.")(_ping_check(1))
check("AGUI-PING-002", scenarios=["agui.silence_long"], name="ping_repeats",
      doc="Runs `sleep 32` (--thorough); pings repeat: two or more, no gap between frames/pings over 15 s + tolerance.")(_ping_check(2))


@check("AGUI-PING-003", scenarios=["agui.silence"])
def ping_is_exactly_colon_ping(rec):
    """Runs `sleep 16`; every keep-alive comment during the silence is exactly the line `: ping`."""
    pings = need_items([(r, c) for r in streams(rec) for c in pings_of(r)], "ping comment")
    fail_all([f"{r.where}: the keep-alive comment at +{c.t:.1f} s is {':' + c.text!r}, the spec's form is ': ping'"
              for r, c in pings if c.text != PING_TEXT])


# -- failures -----------------------------------------------------------------------------------
def _failure_check(label: str, partial: bool) -> Callable[..., None]:
    def judge(rec):
        r = one_run(rec, label)
        types = [e.get("type") for e in r.events]
        problems = []
        if not types or types[0] != "RUN_STARTED" or types[-1] != "RUN_ERROR" or "RUN_FINISHED" in types:
            problems.append(f"{r.where}: a failing run must stream RUN_STARTED … RUN_ERROR (last) with no "
                            f"RUN_FINISHED; got {r.types()}")
        if partial and r.want.get("reply") and r.want["reply"] not in r.text():
            problems.append(f"{r.where}: the text sent before the failure ({truncate(r.want['reply'], 160, quoted=True)}) is not in "
                            f"the deltas {truncate(r.text(), 160, quoted=True)}")
        fail_all(problems)
    return judge


check("AGUI-FAIL-001", scenarios=["agui.fail_after"], name="failure_after_output",
      doc="Runs `say partial` then `fail boom`; 200, deltas carry `partial`, RUN_ERROR last, no RUN_FINISHED.")(_failure_check("fail-after", True))
check("AGUI-FAIL-002", scenarios=["agui.fail_before"], name="failure_before_output",
      doc="Runs `fail boom`; 200, RUN_STARTED, then RUN_ERROR last and no RUN_FINISHED.")(_failure_check("fail-before", False))


@check("AGUI-FAIL-003", scenarios=["agui.fail_after", "agui.fail_before"])
def run_error_has_message(*recs):
    """Runs the two failing prompts; every RUN_ERROR carries `message`, a string."""
    errors = need_items([(r, e) for r in streams(*recs) for e in r.of_type("RUN_ERROR")], "RUN_ERROR event")
    fail_all([f"{r.where}: RUN_ERROR without a string message: {truncate(e, 160, quoted=True)}" for r, e in errors
              if not isinstance(e.get("message"), str)])
    codes = sorted({str(e.get("code")) for _, e in errors if "code" in e})
    return f"RUN_ERROR codes seen (not judged, AGUI-OPEN-001): {', '.join(codes) or 'none'}"


# -- interrupt and resume ----------------------------------------------------------------------------
@check("AGUI-INT-001", scenarios=["agui.interrupt"])
def question_pauses_run(rec):
    """Runs `ask What is your name?`; the stream ends with RUN_FINISHED whose outcome.type is `interrupt`, no RUN_ERROR."""
    r = one_run(rec, "ask")
    end = r.terminal()
    outcome = end.get("outcome")
    assert end.get("type") == "RUN_FINISHED" and not r.of_type("RUN_ERROR") and isinstance(outcome, dict) \
        and outcome.get("type") == "interrupt", (
        f"{r.where}: expected RUN_FINISHED with outcome.type 'interrupt', got {truncate(end, 300, quoted=True)} (events {r.types()})")
    return f"interrupts listed (AGUI-OPEN-003, not judged): {truncate(outcome.get('interrupts'), 300, quoted=True)}"


def resumed_run(rec: Recording, requirement: str) -> Run:
    """The resumed run, as judged for `requirement`.

    The resume was built only from what the paused run showed (or the profile's shape), so a refusal is evidence:
    `invalid_request` says a resume without messages was not taken as one (AGUI-INT-003); any other refusal, or
    no stream, says the paused run did not continue (AGUI-INT-002). Each is judged on its own requirement only;
    the others are not assessed with that reason. Nothing sent (nothing to answer): not assessed, with why."""
    if not any(e.label == "resume" for e in rec.exchanges):
        raise NotAssessed(rec.facts.get("no_resume") or f"scenario {rec.scenario} sent no resume")
    ex = rec.get("resume")
    if answered_stream(ex):
        return one_run(rec, "resume")
    code = (error_of(ex) or {}).get('code')
    refused = describe_answer(ex)
    if code == "invalid_request":
        assert requirement != "AGUI-INT-003", (
            f"{rec.scenario} [resume]: a request with `resume` and no `messages` was refused with invalid_request "
            f"({refused}); sent {truncate(_sent_body(ex), 300, quoted=True)}")
        raise NotAssessed(f"the resume was refused with invalid_request ({refused}): judged by AGUI-INT-003")
    if requirement == "AGUI-INT-002":
        raise AssertionError(
            f"{rec.scenario} [resume]: the run paused on threadId {rec.facts.get('thread')!r} listing interrupts "
            f"{truncate(rec.facts.get('interrupts'), 200, quoted=True)}; the resume built from them "
            f"({rec.facts.get('resume_basis')}) was sent as {truncate(_sent_body(ex), 300, quoted=True)}; expected the paused run to "
            f"continue (200 event stream), got {refused}: {truncate(ex.body.decode('utf-8', 'replace'), 300, quoted=True)}. "
            f"(A server that takes another resume shape can name it with the profile entry `[resume] agui`.)")
    raise NotAssessed(f"the resume was not answered with a stream ({refused}): judged by AGUI-INT-002")


def _sent_body(ex: Exchange) -> Any:
    try:
        return json.loads(ex.request_body or b"null")
    except ValueError:
        return ex.request_body


@check("AGUI-INT-002", scenarios=["agui.interrupt"])
def resume_continues_run(rec):
    """Answers the paused run with `resume` built from the interrupts it listed (payload {"name":"Ada"}); the run continues."""
    r = resumed_run(rec, "AGUI-INT-002")
    end = r.terminal()
    outcome = end.get("outcome")
    problems = []
    if end.get("type") != "RUN_FINISHED" or not isinstance(outcome, dict) or outcome.get("type") != "success":
        problems.append(f"{r.where}: the resumed run ended with {truncate(end, 300, quoted=True)}, expected RUN_FINISHED with "
                        f"outcome.type 'success'")
    if r.want.get("reply") is not None and r.text() != r.want["reply"]:
        problems.append(f"{r.where}: the resumed run replied {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)} "
                        f"(the answer, then the rest of the script)")
    fail_all(problems)
    return f"resume sent as {rec.facts.get('resume_basis')} (the spec does not show the shape)"


@check("AGUI-INT-003", scenarios=["agui.interrupt"])
def resume_without_messages_accepted(rec):
    """Sends a request with `resume` and no `messages`; it is not refused with `invalid_request`: 200 with a stream."""
    resumed_run(rec, "AGUI-INT-003")


@check("AGUI-INT-004", scenarios=["agui.interrupt"])
def resume_keeps_thread(rec):
    """Resumes on the paused run's threadId; the resumed run's RUN_STARTED.threadId equals it."""
    r = resumed_run(rec, "AGUI-INT-004")
    got = r.first("RUN_STARTED").get("threadId")
    assert got == rec.facts["thread"], (f"{r.where}: resumed on threadId {rec.facts['thread']!r}, RUN_STARTED.threadId "
                                        f"is {truncate(got, 80, quoted=True)}")


def describe_answer(ex: Exchange) -> str:
    if ex.status is None:
        return f"no response ({ex.error})"
    if ex.stream is not None:
        events = [v for f in ex.stream.dispatched if isinstance(v := _safe_json(f), dict)]
        end = next((e for e in reversed(events) if e.get("type") in TERMINAL), None)
        outcome = end.get("outcome") if isinstance(end, dict) else None
        detail = (end.get("type") if end else "no terminal event") + (
            f" ({outcome.get('type')})" if isinstance(outcome, dict) else "")
        return f"{ex.status} stream ending {detail}"
    return f"{ex.status} {(error_of(ex) or {}).get('code') or ex.header('content-type')}"


@check("AGUI-INT-002", scenarios=["agui.resume_open"], supplementary=True)
def open_resume_cases(rec):
    """Reports (does not judge) answers to an unknown interrupt, an empty `resume`, and a stale repeated resume.

    Not assessed, never info: what it reports is open (AGUI-OPEN-003), and an info must not satisfy a MUST.
    Supplementary, so that reporting it never keeps AGUI-INT-002 from being judged by its own checks."""
    if rec.facts.get("no_resume"):
        raise NotAssessed(rec.facts["no_resume"])
    seen = {label: describe_answer(rec.get(label))
            for label in ("unknown-interrupt", "empty-resume", "answer", "stale-answer")}
    raise NotAssessed("reported, not judged: the spec leaves partial and stale resumes open (AGUI-OPEN-003); seen: "
                      + "; ".join(f"{k}: {v}" for k, v in seen.items()))


# -- limits --------------------------------------------------------------------------------------
@check("AGUI-LIM-001", scenarios=["agui.big"])
def half_megabyte_accepted(rec):
    """Sends an echo-mode prompt making the body about 0.5 MB; it streams, ends with RUN_FINISHED, reply = prompt."""
    r = one_run(rec, "half-mb")
    assert r.terminal().get("type") == "RUN_FINISHED", f"{r.where}: ended with {truncate(r.terminal(), 160, quoted=True)}"
    assert r.text() == r.want["reply"], f"{r.where}: the echo differs from the prompt: {text_diff(r.text(), r.want['reply'])}"


# -- upstream compatibility ------------------------------------------------------------------------
@cache
def _event_adapter():
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    return TypeAdapter(Event)


def _pydantic_reason(err: dict[str, Any]) -> str:
    if err.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        return "`type` names no AG-UI 1.0 event"
    where = ".".join(str(x) for x in err.get("loc", ())[1:]) or "$"
    return f"{where}: {str(err.get('msg'))[:160]}"


def upstream_problems(r: Run) -> list[str]:
    from pydantic import ValidationError

    problems = []
    for i, e in enumerate(r.events, 1):
        try:
            _event_adapter().validate_python(e)
        except ValidationError as exc:
            why = "; ".join(_pydantic_reason(err) for err in exc.errors()[:3])
            problems.append(f"{r.where}: event {i} {truncate(e.get('type'), 40, quoted=True)} is not an AG-UI 1.0 event ({why}): "
                            f"{truncate(e, 200, quoted=True)}")
    return problems


@check("AGUI-COMPAT-001", scenarios=STREAMS + ["agui.upstream_input"])
def events_validate_upstream(*recs):
    """Runs every stream scenario; every event validates against the AG-UI 1.0 models (ag_ui.core, camelCase)."""
    fail_all([m for r in streams(*recs) for m in upstream_problems(r)], "AG-UI 1.0 (ag-ui-protocol) rejects:")


@check("AGUI-COMPAT-002", scenarios=["agui.upstream_input"])
def upstream_input_accepted(rec):
    """Sends a full AG-UI 1.0 RunAgentInput as the official client does; it streams upstream-valid events to RUN_FINISHED."""
    r = one_run(rec, "upstream")
    problems = upstream_problems(r)
    for family in LIFECYCLES:
        found = lifecycle_problems(r, family)
        problems += found["use"] + found["finish"]
    if r.terminal().get("type") != "RUN_FINISHED":
        problems.append(f"{r.where}: ended with {truncate(r.terminal(), 160, quoted=True)}, expected RUN_FINISHED")
    if r.want.get("reply") is not None and r.text() != r.want["reply"]:
        problems.append(f"{r.where}: replied {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)}")
    fail_all(problems)
