"""What the agui check modules share: constants, the readers of a run, and the roots their preconditions name.

One deviation, one failure. A reader that finds the exchange already broke a more basic rule raises
`precondition(ROOT, ex, …)`: a Deviation for ROOT's own checks (they judge exactly that, directly), Blocked by ROOT
for every other check.

    a run that did not answer a 200 event stream ............................ AGUI-FRAME-001 (every run streams)
    a frame holding two JSON values or an unfinished one, or one that no blank line closed ..... AGUI-FRAME-004
    a frame whose data is not JSON at all ................................................ AGUI-FRAME-003
    no RUN_STARTED ......................................................................... AGUI-ORDER-001
    no RUN_FINISHED or RUN_ERROR ........................................................... AGUI-ORDER-002
    an event after the terminal one ........................................................ AGUI-ORDER-003
    a run that should end normally ended with RUN_ERROR .................................... AGUI-ORDER-004
    … or with an outcome other than success or interrupt ................................... AGUI-PROMPT-004
    content deltas that lost the reply RUN_FINISHED.result still carries ................... AGUI-ORDER-006
    a 4xx refusal that is not the error body ............................................... AGUI-ERR-005
"""
from __future__ import annotations

import json

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable

from conformance.engine import Recording
from conformance.outcomes import Blocked, NotAssessed, judge_all, joined, precondition
from conformance.registry import CHECKS, Check, check
from conformance.vocab import replies
from conformance.vocab.readers import error_of, got, is_4xx, request_json
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent, StreamRecord

PING_INTERVAL = 15.0
PING_TEXT = " ping"                      # SSEComment.text of the line `: ping` (the exact form, AGUI-PING-003)
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")

# Scenarios whose every run is judged by the framing, order, id and upstream-compatibility checks.
STREAMS = ["agui.plain", "agui.streamed", "agui.tool", "agui.step", "agui.fail_after", "agui.fail_before",
           "agui.interrupt"]

EVERY_RUN_STREAMS = "AGUI-FRAME-001"
RESUME_CONTINUES = "AGUI-INT-002"        # a resume streams its paused run's continuation
RESUME_WITHOUT_MESSAGES = "AGUI-INT-003"
THREAD_ECHOED = "AGUI-ID-001"
JSON_EVENT_PER_FRAME = "AGUI-FRAME-003"
ONE_EVENT_PER_FRAME = "AGUI-FRAME-004"
RUN_STARTED_FIRST = "AGUI-ORDER-001"
ONE_TERMINAL = "AGUI-ORDER-002"
TERMINAL_LAST = "AGUI-ORDER-003"
NORMAL_RUN_FINISHES = "AGUI-ORDER-004"
DELTAS_CARRY_REPLY = "AGUI-ORDER-006"
SUCCESS_OUTCOME = "AGUI-PROMPT-004"
REFUSAL_IS_ERROR_BODY = "AGUI-ERR-005"


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_STRICT = json.JSONDecoder(parse_constant=_not_json)


# -- frames -------------------------------------------------------------------------------------
def frame_value(frame: SSEEvent, ex: Exchange) -> Any:
    """The frame's data as one JSON value. A frame that holds two values, or an unfinished one (an event split
    across frames), broke AGUI-FRAME-004; any other data that is not JSON broke AGUI-FRAME-003."""
    text = frame.data.strip()
    shown = truncate(frame.data, 160, quoted=True)
    try:
        value, end = _STRICT.raw_decode(text)
    except ValueError as exc:
        if text and (getattr(exc, "msg", "").startswith("Unterminated string") or getattr(exc, "pos", 0) >= len(text)):
            raise precondition(ONE_EVENT_PER_FRAME, ex, f"frame {frame.index} holds an unfinished JSON value (an event "
                                                        f"split across frames?): {shown}") from None
        raise precondition(JSON_EVENT_PER_FRAME, ex, f"frame {frame.index}: its data is not JSON ({exc}): {shown}") from None
    if text[end:].strip():
        raise precondition(ONE_EVENT_PER_FRAME, ex, f"frame {frame.index}: more follows its first JSON value: {shown}")
    return value


def is_event(value: Any) -> bool:
    """An AG-UI event: a JSON object with a non-empty string `type`."""
    return isinstance(value, dict) and isinstance(value.get("type"), str) and bool(value["type"])


def answered_stream(ex: Exchange) -> bool:
    return ex.status == 200 and ex.stream is not None


# -- runs ----------------------------------------------------------------------------------------
@dataclass
class Run:
    """One AG-UI answer a scenario expected to stream, with what the scenario sent (`want`)."""
    rec: Recording
    label: str
    ex: Exchange
    want: dict[str, Any]

    @property
    def stream(self) -> StreamRecord:
        if not answered_stream(self.ex):
            raise precondition(streamed_by(self.ex), self.ex, f"expected a 200 text/event-stream answer to "
                                                              f"{self.ex.method} {self.ex.url}, got {got(self.ex)}")
        return self.ex.stream

    @property
    def frames(self) -> list[SSEEvent]:
        return self.stream.dispatched

    @cached_property
    def events(self) -> list[dict[str, Any]]:
        """The AG-UI events, in order. A frame holding other JSON is no event (AGUI-FRAME-003 alone judges it);
        a frame that is not one JSON value, or one no blank line closed, hides what it held: nothing of the
        stream can be read on it."""
        stream = self.stream
        if stream.end == "eof_mid_block":
            unclosed = truncate(stream.pending.decode("utf-8", "replace"), 160, quoted=True)
            raise precondition(ONE_EVENT_PER_FRAME, self.ex, f"the stream ended inside a frame that no blank line "
                                                             f"closed: {unclosed}")
        values = [frame_value(f, self.ex) for f in self.frames]
        return [v for v in values if is_event(v)]

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] in types]

    def types(self, limit: int = 14) -> str:
        names = [e["type"] for e in self.events]
        shown = ", ".join(names[:limit]) + (f", … ({len(names)} events)" if len(names) > limit else "")
        return f"[{shown}]"

    def started(self) -> dict[str, Any]:
        """The (first) RUN_STARTED."""
        found = self.of_type("RUN_STARTED")
        if not found:
            raise precondition(RUN_STARTED_FIRST, self.ex, f"no RUN_STARTED event; the stream held {self.types()}")
        return found[0]

    def terminal(self) -> dict[str, Any]:
        """The (last) RUN_FINISHED or RUN_ERROR."""
        found = self.of_type(*TERMINAL)
        if not found:
            raise precondition(ONE_TERMINAL, self.ex, f"no RUN_FINISHED or RUN_ERROR event; the stream held {self.types()}")
        return found[-1]

    def ends_with_terminal(self) -> dict[str, Any]:
        """The terminal event, which is the last event."""
        end = self.terminal()
        if self.events[-1] is not end:
            raise precondition(TERMINAL_LAST, self.ex, f"events follow the terminal {end['type']}: {self.types()}")
        return end

    def finished(self) -> dict[str, Any]:
        """The RUN_FINISHED that ends a run expected to end normally (or pause)."""
        end = self.terminal()
        if end["type"] != "RUN_FINISHED":
            raise precondition(NORMAL_RUN_FINISHES, self.ex, f"a run that should end normally ended with "
                                                             f"{truncate(end, 160, quoted=True)}")
        return end

    def outcome_type(self) -> str:
        """RUN_FINISHED.outcome.type of a run expected to end normally: `success` or `interrupt`."""
        outcome = self.finished().get("outcome")
        kind = outcome.get("type") if isinstance(outcome, dict) else None
        if kind not in ("success", "interrupt"):
            raise precondition(SUCCESS_OUTCOME, self.ex, f"RUN_FINISHED.outcome is {truncate(outcome, 160, quoted=True)}, "
                                                         f"neither type 'success' nor 'interrupt'")
        return kind

    def text(self) -> str:
        """The `delta`s of the TEXT_MESSAGE_CONTENT events, joined in order, of a run that replied to its prompt
        (`replied_to_its_prompt`)."""
        text = self._deltas()
        self.replied_to_its_prompt(text)
        return text

    def _deltas(self) -> str:
        return "".join(e["delta"] for e in self.of_type("TEXT_MESSAGE_CONTENT") if isinstance(e.get("delta"), str))

    def replied_to_its_prompt(self, text: str | None = None, paused: bool = False) -> None:
        """A run with a history that replied to another message of it is AGUI-PROMPT-001's deviation: every other
        reading of the run is blocked by that one (a reader of anything but its text asks this first). Read where
        the prompt says the reply, where it echoes (an echo writes JSON, whatever it echoes), and, `paused`, on a
        run its prompt pauses that ended otherwise."""
        text = self._deltas() if text is None else text
        prompt = replies.prompt_of(self.ex)
        reply = replies.scripted_reply(prompt)
        mine = _passes(lambda t: reply.judge(t, "the reply"), text) if reply is not None else \
            not paused and (not replies.echoes(prompt) or _is_json(text))
        if not mine and replies.replied_to_another(self.ex, text):
            raise precondition("AGUI-PROMPT-001", self.ex,
                               f"the run replied {truncate(text, 160, quoted=True)}, the reply of another message of "
                               f"its history, not of its last user message (the text of the last user message is "
                               f"the prompt)")


def judge_reply(r: Run, judge: Callable[[str], Any]) -> None:
    """`judge(text)` on the reply the content deltas carry. When it fails there but passes on RUN_FINISHED.result,
    the agent replied as expected and the deltas lost it: that is AGUI-ORDER-006's deviation, not this check's."""
    text = r.text()
    try:
        judge(text)
    except AssertionError as exc:
        finishes = r.of_type("RUN_FINISHED")
        result = finishes[-1].get("result") if finishes else None
        if not isinstance(result, str) or result == text or not _passes(judge, result):
            raise
        raise precondition(DELTAS_CARRY_REPLY, r.ex, f"the content deltas join to {truncate(text, 160, quoted=True)} "
                                                     f"while RUN_FINISHED.result is {truncate(result, 160, quoted=True)}, "
                                                     f"which holds the reply: {exc}") from None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _passes(judge: Callable[[str], Any], text: str) -> bool:
    try:
        judge(text)
    except AssertionError:
        return False
    return True


def ends_with_error(r: Run) -> None:
    """RUN_STARTED … RUN_ERROR, and no RUN_FINISHED. That RUN_STARTED comes first (AGUI-ORDER-001) and that
    nothing follows the terminal event (AGUI-ORDER-003) are their own rules."""
    end = r.terminal()
    assert end["type"] == "RUN_ERROR" and not r.of_type("RUN_FINISHED"), \
        f"a failing run must end with RUN_ERROR and send no RUN_FINISHED; got {r.types()}"
    if r.events[0] is not r.started():
        raise precondition(RUN_STARTED_FIRST, r.ex, f"the failing run does not start with RUN_STARTED: {r.types()}")
    r.ends_with_terminal()


def streamed_by(ex: Exchange) -> str:
    """The rule that says this run is answered with a stream: a resume's own (its paused run continues; refused with
    `invalid_request` without `messages`, the rule that a resume needs none), AGUI-FRAME-001 for any other run. A
    refused resume is then one deviation, the resume's, whatever else reads its answer."""
    body = request_json(ex)
    if not isinstance(body, dict) or "resume" not in body:
        return EVERY_RUN_STREAMS
    refused_so = (error_of(ex) or {}).get("code") == "invalid_request" and not body.get("messages")
    return RESUME_WITHOUT_MESSAGES if refused_so else RESUME_CONTINUES


def runs(*recs: Recording, kinds: Iterable[str] | None = None, labels: Iterable[str] | None = None,
         keep: Callable[[dict[str, Any]], bool] | None = None) -> list[Run]:
    """Every run the recordings expected to stream (optionally only some kinds, labels, or expectations), for
    the checks that own them: a run that did not stream is read through `Run.stream` (AGUI-FRAME-001)."""
    return [Run(rec, label, rec.get(label), want)
            for rec in recs for label, want in rec.facts.get("runs", {}).items()
            if (kinds is None or want["kind"] in kinds) and (labels is None or label in labels)
            and (keep is None or keep(want))]


def streams(*recs: Recording, **filters: Any) -> list[Run]:
    """The runs that streamed, for the checks that read runs others own: a run that did not stream is its
    owner's failure (each run has one, see `__init__`), or AGUI-FRAME-001's when none did."""
    found = runs(*recs, **filters)
    streamed = [r for r in found if answered_stream(r.ex)]
    if found and not streamed:
        raise precondition(EVERY_RUN_STREAMS, [r.ex for r in found], joined(
            [f"{r.label}: expected a 200 text/event-stream answer, got {got(r.ex)}" for r in found]))
    return streamed


def one_run(rec: Recording, label: str) -> Run:
    found = runs(rec, labels=[label])
    if not found:
        raise NotAssessed(rec.facts.get("no_resume") or f"scenario {rec.scenario} did not send {label!r}")
    return found[0]


def one_run_of(rec: Recording, label: str, reply: str) -> Run:
    return Run(rec, label, rec.get(label), {"kind": "success", "reply": reply})


def round_trips(rec: Recording) -> list[tuple[Run, str]]:
    texts = rec.facts.get("texts") or []
    if not texts:
        raise NotAssessed("the round-trip scenario generated no texts")
    return [(one_run_of(rec, generated_steps.AGUI.of(i), text), text) for i, text in enumerate(texts)]


# -- judging ------------------------------------------------------------------------------------
def judge_every(items: Iterable[Any], rule: Callable[[Any], Any], *, exchange: Callable[[Any], Exchange] = lambda r: r.ex,
                nothing: str = "no AG-UI run was recorded") -> str | None:
    """`outcomes.judge_all` over runs (or other items: `exchange(item)` names each), with one more rule: a check
    never passes over an item it could not read. An item blocked by a more basic rule blocks the check unless
    another item broke the check's own rule: the root may not be judged on that exchange, and the report then
    fails the check with the blocked item's message instead of losing it."""
    unread: list[Blocked] = []

    def read(item: Any) -> Any:
        try:
            return rule(item)
        except Blocked as exc:
            unread.append(exc)
            raise

    note = judge_all(items, read, exchange=exchange, nothing=nothing)
    if unread:
        raise Blocked(unread[0].root, joined([b.message for b in unread]), [ex for b in unread for ex in b.exchanges])
    return note


def needs_events(r: Run) -> list[dict[str, Any]]:
    """The run's events; a stream of none has nothing to judge."""
    if not r.events:
        raise NotAssessed(f"{r.label}: the stream held no AG-UI event")
    return r.events


def events_of(r: Run, *types: str) -> list[dict[str, Any]]:
    """The run's events of these types; a run with none has nothing to judge."""
    found = r.of_type(*types)
    if not found:
        raise NotAssessed(f"{r.label}: no {' or '.join(types)} event")
    return found


# -- refusals -------------------------------------------------------------------------------------
def refusal_error(ex: Exchange) -> dict[str, Any]:
    """The `error` object of an answer expected to refuse the request before any stream. Not a 4xx: plain
    AssertionError (the requirement of what was refused owns that). A 4xx that is not the error body (a stream,
    not JSON, no `error` object) broke AGUI-ERR-005."""
    assert is_4xx(ex), f"expected a 4xx refusal before any stream, got {got(ex)}"
    if ex.stream is not None:
        raise precondition(REFUSAL_IS_ERROR_BODY, ex, f"the {ex.status} refusal is an event stream, not the JSON error "
                                                      f"body: {got(ex)}")
    err = error_of(ex)
    if err is None:
        raise precondition(REFUSAL_IS_ERROR_BODY, ex, f"the {ex.status} refusal's body is not the error body "
                                                      f"{{error: {{code, message, requestId}}}}: {got(ex)}")
    return err


# -- comparing -----------------------------------------------------------------------------------
def text_diff(got_text: str, want: str) -> str:
    """`difference: …; cause: …` of the text expected and the one streamed (`vocab.values.differs`)."""
    from conformance.vocab.values import differs
    return differs(want, got_text)


def json_key(value: Any) -> str:
    """A hashable reading of a JSON value that keys equal values alike (`vocab.values.same_json`: 1 and 1.0 are
    one number, true is not 1)."""
    return json.dumps(_canonical(value), sort_keys=True, default=repr)


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    return value


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
        t, k = e["type"], json_key(e.get(key))
        if t == opener:
            if k in open_:
                out["use"].append(f"event {i} {t} for {noun} {truncate(e.get(key), 60, quoted=True)}, already open")
            open_[k] = e.get(key)
        elif t in users or t == closer:
            if k not in open_:
                out["use"].append(f"event {i} {t} for {noun} {truncate(e.get(key), 60, quoted=True)}, which is not open")
            elif t == closer:
                del open_[k]
        elif t == "RUN_FINISHED" and open_:
            out["finish"].append(f"RUN_FINISHED while {noun}(s) {', '.join(truncate(v, 40, quoted=True) for v in open_.values())} "
                                 f"are still open")
    return out


# -- the same rules over more runs ------------------------------------------------------------------------------
def register_again(keep: Callable[[Check], bool], scenarios: list[str], suffix: str, what: str) -> None:
    """Every scripted AG-UI check that `keep` selects, registered again over `scenarios` as supplementary evidence
    (`<name>__<suffix>`, its doc prefixed with `what`): they read `facts["runs"]`, so they judge those scenarios'
    runs with the same function."""
    for c in [c for c in list(CHECKS.values()) if c.module == "conformance.checks.agui" and not c.supplementary
              and keep(c)]:
        check(*c.requirements, scenarios=scenarios, supplementary=True, name=f"{c.id.split('.', 1)[1]}__{suffix}",
              doc=f"{what}: {c.doc}")(_again(c.fn))


def _again(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The same check function under another registration (its own docstring; the steps it reads followed)."""
    def judge(*recs: Recording) -> str | None:
        return fn(*recs)
    judge.__wrapped__ = fn
    return judge
