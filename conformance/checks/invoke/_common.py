"""What the invoke check modules share: constants and readers.

A reader that cannot read an exchange because it broke a more basic rule raises `precondition(ROOT, ex, …)`:
a plain failure for ROOT's own checks, `Blocked` by ROOT for every other one (one deviation, one failure).
ROOT's own checks judge that rule directly, on every exchange the reader raises it for:

| reader | the exchange broke | ROOT | judged directly by |
|---|---|---|---|
| `result_of` | an event stream came back for a JSON request | INV-SEL-003 / INV-SEL-004 (the `stream` field sent) | `selection.py` |
| `result_of` | not 200 with a JSON object body | INV-RES-001 | `results.result_is_json_200` |
| `reply_of` | `result` is not a string | INV-RES-003 | `results.result_is_whole_reply` |
| `session_key_of` | `sessionId` is not a string of 1 to 256 characters | INV-RES-009 | `results.session_id_is_key` |
| `run_status` | `status` neither `completed` nor `failed` | INV-RES-002 | `results.status_completed` |
| `count_is` | the result names another session than the key sent | INV-SESS-003 | `sessions.session_id_echoed__*` |
| `frames` | not a 200 event stream for `stream: true` | INV-SEL-001 | `selection.stream_true_answers_stream` |
| `objects`, `frame_data` | a frame's data is not one JSON object | INV-STREAM-002 | `streams.frames_carry_json_object` |
| `named` | a frame without an `event:` name | INV-STREAM-001 | `streams.frames_are_named` |
| `text_of` | a `text` frame without a string `delta` | INV-STREAM-006 | `streams.text_frames_carry_delta` |
| `whole_text` | the deltas do not join to the reply | INV-STREAM-008 | `runs.deltas_join_to_reply` |
| `ending` | the stream ended inside an unterminated frame | INV-STREAM-003 | `streams.frames_end_with_blank_line` |
| `refused`, `error_body` | a refusal that is not a 4xx with the error body | GEN-ERR-001 | `errors.refusal_is_4xx_error_body` |
| (`errors.refusal_is_4xx_error_body`) | a refusal of a request asking for a stream sent as one | INV-ERR-001 | `refusals.streaming_refusal_is_json` |
| (`refusals.streaming_refusal_is_json`) | a refusal sent as another type than JSON or a stream | GEN-ERR-001 | `errors.refusal_is_4xx_error_body` |
| `refused` | `error.code` not a non-empty string; `validation_failed` without `details` | GEN-ERR-002 / GEN-ERR-005 | `errors.py` |

What a check asserts itself (an answer that must be accepted is 200, a request that must be refused is not
2xx, a code other than the one expected) stays its own failure.
"""
from __future__ import annotations

import json

from typing import Any, Callable, Iterable

from conformance import exchange_rules
from conformance.engine import Recording
from conformance.outcomes import Deviation, NotAssessed, judge_all, joined, on, precondition
from conformance.registry import Step, rule
from conformance.vocab import agent_readings, is_json_media_type, replies, requests as rq
from conformance.vocab.constants import RUNS
from conformance.vocab.readers import error_of, frame_json, is_4xx, request_json
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.steps import sequences as sequence_steps
from conformance.vocab.steps import silences as silence_steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent

TERMINAL = ("done", "error")
RUN_STATES = ("completed", "failed")
CLOSE_WITHIN_S = 5.0          # the server closes the stream this soon after the terminal frame
DURATION_FLOOR_MS = 1500      # for a run that sleeps 2 s (catalog INV-RES-013)
EARLY_LEAD_S = 1.0            # the text before a 2 s sleep arrives this long before the end (INV-STREAM-009)


# -- reading exchanges ---------------------------------------------------------------------
def what(ex: Exchange) -> str:
    """What came back, in one line: status, content type and a short body excerpt (or the error)."""
    if ex.status is None:
        return f"no response ({ex.error})"
    body = truncate(ex.body.decode("utf-8", "replace"), 200, count=True)
    out = f"status {ex.status}, Content-Type {ex.header('content-type')!r}, body {body!r}"
    return out + (f" ({ex.error})" if ex.error else "")


def quoted(value: Any, limit: int = 200) -> str:
    """A JSON value as it appears in a message (shortened)."""
    return truncate(json.dumps(value, ensure_ascii=False), limit, count=True)


def sent_stream(ex: Exchange) -> Any:
    """The `stream` field the suite sent (None when absent)."""
    body = request_json(ex)
    return body.get("stream") if isinstance(body, dict) else None


def selects_stream(ex: Exchange) -> bool:
    """The request selects a stream by one of the spec's two ways alone: `stream: true`, or `Accept:
    text/event-stream` without a `stream` field."""
    return rq.invoke_mode(ex) in ("stream-field", "accept")


def asked_for_stream(ex: Exchange) -> bool:
    """The suite asked for an event stream: `stream: true` or `Accept: text/event-stream`."""
    accept = next((v for k, v in ex.request_headers.items() if k.lower() == "accept"), "") or ""
    return sent_stream(ex) is True or "text/event-stream" in accept.lower()


def is_sse_answer(ex: Exchange) -> bool:
    """Any answer sent as `text/event-stream` (a refusal too)."""
    return ex.content_type == "text/event-stream"


def is_event_stream(ex: Exchange) -> bool:
    """A 200 `text/event-stream` answer (recorded frame by frame)."""
    return ex.status == 200 and ex.content_type == "text/event-stream" and ex.stream is not None


def accepted(ex: Exchange, why: str, root: str | None = None) -> None:
    """Asserts that a request the spec says must run was answered 200: the check's own failure, or, when another
    requirement `root` is the one that says this request is accepted, a precondition of `root`."""
    if ex.status == 200:
        return
    message = f"{why} must be accepted and run (200 with the invoke result), got {what(ex)}"
    raise precondition(root, ex, message) if root else Deviation(message, ex)


def result_of(ex: Exchange) -> dict[str, Any]:
    """The invoke result of a non-streaming exchange. An event stream broke the selection rule of what was sent;
    anything else but 200 with a JSON object broke INV-RES-001: nothing of the result can be read on it."""
    if is_event_stream(ex):
        root = "INV-SEL-004" if sent_stream(ex) is False else "INV-SEL-003"
        raise precondition(root, ex, f"expected one JSON result, got an event stream ({what(ex)})")
    if ex.status != 200:
        raise precondition("INV-RES-001", ex, f"expected 200 with the invoke result, got {what(ex)}")
    try:
        body = ex.json()
    except AssertionError as exc:
        raise precondition("INV-RES-001", ex, str(exc)) from None
    if not isinstance(body, dict):
        raise precondition("INV-RES-001", ex, f"the invoke result is not a JSON object: {quoted(body)}")
    return body


def reply_of(ex: Exchange) -> str:
    """`result` of the invoke result; one that is not a string broke INV-RES-003."""
    body = result_of(ex)
    if not isinstance(body.get("result"), str):
        raise precondition("INV-RES-003", ex, f"`result` is not a string: {quoted(body.get('result'))}")
    return body["result"]


def run_status(ex: Exchange) -> str:
    """`status` of the invoke result; one that is neither `completed` nor `failed` broke INV-RES-002 (the states of
    a run result)."""
    status = result_of(ex).get("status")
    if not any(same_json(status, state) for state in RUN_STATES):
        raise precondition("INV-RES-002", ex, f"`status` is {quoted(status)}, not a state of a run result "
                                              f"(`completed` or `failed`)")
    return status


def session_key_of(ex: Exchange) -> str:
    """`sessionId` of the invoke result; one that is not a string of 1 to 256 characters broke INV-RES-009."""
    sid = result_of(ex).get("sessionId")
    if not (isinstance(sid, str) and 1 <= len(sid) <= 256):
        raise precondition("INV-RES-009", ex, f"`sessionId` is not a string of 1 to 256 characters: {quoted(sid)}")
    return sid


def echoed(ex: Exchange, reading: str = "echo params") -> Any:
    """The JSON value the agent echoed (`echo params` / `echo messages`) as the whole reply; a reply that is no JSON
    is the agent's, not the service's (`agent_readings.echoed`)."""
    return agent_readings.echoed(reply_of(ex), reading, ex)


def error_body(ex: Exchange) -> dict[str, Any]:
    """The `error` object of a refusal's body; a body that is not the error body `{error: {…}}` broke GEN-ERR-001."""
    err = error_of(ex)
    if err is None:
        raise precondition("GEN-ERR-001", ex, f"the refusal's body is not the error body {{error: {{…}}}}: {what(ex)}")
    return err


def refused(ex: Exchange, code: str | None = None, details: bool = False, root: str | None = None) -> None:
    """Asserts a refusal: not 2xx (the check's own rule, or a precondition of `root` when another requirement is the
    one that says this request is refused), then a 4xx with the error body (GEN-ERR-001), `error.code` a string
    (GEN-ERR-002) equal to `code`, and with `details` an object on `validation_failed` (GEN-ERR-005)."""
    if ex.status is None or 200 <= ex.status < 300:
        message = f"expected a refusal (a 4xx with the error body), got {what(ex)}"
        raise precondition(root, ex, message) if root else Deviation(message, ex)
    if not is_4xx(ex):
        raise precondition("GEN-ERR-001", ex, f"a refusal must have a 4xx status, got {what(ex)}")
    err = error_body(ex)
    if code is not None:
        got = err.get("code")
        if not (isinstance(got, str) and got):
            raise precondition("GEN-ERR-002", ex, f"`error.code` is not a non-empty string: {quoted(got)}")
        with on(ex):
            assert same_json(got, code), f"expected error.code {code!r}, got {got!r}"
    if details and not isinstance(err.get("details"), dict):
        raise precondition("GEN-ERR-005", ex, f"`validation_failed` without `details` as an object: "
                                              f"{quoted(err.get('details'))}")


def is_json_answer(ex: Exchange) -> bool:
    """Content-Type application/json or any +json type (RFC 6839), parameters aside."""
    return is_json_media_type(ex.content_type)


def judge_each(items: Iterable[Any], rule: Callable[[Any], None]) -> str | None:
    """`outcomes.judge_all` over items that are exchanges or tuples holding one."""
    return judge_all(items, rule, exchange=lambda item: next((x for x in item if isinstance(x, Exchange)), None)
                     if isinstance(item, tuple) else item)


def scenario_of(rec: Recording, name: str) -> dict[str, Any]:
    entry = rec.facts.get("scenarios", {}).get(name)
    if entry is None:
        raise NotAssessed(rec.facts.get("skipped", {}).get(name, f"the agent scenario {name!r} was not run"))
    return entry


def expected_reply(rec: Recording, name: str) -> str:
    reply = scenario_of(rec, name).get("reply")
    if reply is None:
        raise NotAssessed(f"the profile gives no expected reply for the scenario {name!r}")
    return reply


def runs_of(rec: Recording, kind: Step, names: Iterable[str] = RUNS) -> list[tuple[str, Exchange]]:
    """(agent scenario, exchange) of `invoke.runs` for `kind` `steps.RUN_JSON` or `steps.RUN_SSE`; NotAssessed when
    none ran."""
    out = [(n, ex) for n in names for ex in rec.exchanges if ex.label == kind.of(n)]
    if not out:
        raise NotAssessed(f"none of the agent scenarios {', '.join(names)} was run "
                          f"({'; '.join(rec.facts.get('skipped', {}).values()) or 'no prompt'})")
    return out


# -- reading streams ------------------------------------------------------------------------
def frames(ex: Exchange) -> list[SSEEvent]:
    """The frames of a 200 event stream: blocks with an `event:` or `data:` field (a block of only
    `id:`/`retry:`/unknown fields is legal SSE and no frame). Every stream the checks read was asked for with
    `stream: true` or by `Accept: text/event-stream` alone: an answer that is no event stream broke INV-SEL-001 or
    INV-SEL-002."""
    if not is_event_stream(ex):
        failed_before_output(ex)
        if rq.invoke_mode(ex) == "accept":
            raise precondition("INV-SEL-002", ex, f"`Accept: text/event-stream` (no `stream` field) must answer a "
                                                  f"200 `text/event-stream`, got {what(ex)}")
        raise precondition("INV-SEL-001", ex, f"`stream: true` must answer a 200 `text/event-stream`, got {what(ex)}")
    return [f for f in ex.stream.events if any(name in ("event", "data") for name, _ in f.fields)]


def failed_before_output(ex: Exchange) -> None:
    """A streamed run that fails before any output, answered otherwise than with a stream: INV-TERM-005's deviation
    (the failure is told in the stream), not the selection's."""
    if not is_event_stream(ex) and replies.fails_before_output(ex, None):
        raise precondition("INV-TERM-005", ex, f"a streamed run that fails before any output must answer 200 and end "
                                               f"with an `error` frame, not a refusal status: got {what(ex)}")


def data_or_none(frame: SSEEvent) -> dict[str, Any] | None:
    """The frame's data when it is one JSON object, else None (never raises: for INV-STREAM-002's own check)."""
    ok, value = frame_json(frame) if frame.dispatched else (False, None)
    return value if ok and isinstance(value, dict) else None


def frame_data(ex: Exchange, frame: SSEEvent) -> dict[str, Any]:
    """The frame's data, one JSON object; a frame without it broke INV-STREAM-002."""
    value = data_or_none(frame)
    if value is None:
        raise precondition("INV-STREAM-002", ex, f"frame {frame.index} {name_of(frame)} does not carry one JSON "
                                                 f"object as data: {truncate(frame.data, 120, count=True)!r}")
    return value


def objects(ex: Exchange) -> list[tuple[SSEEvent, dict[str, Any]]]:
    """(frame, data) for every frame (INV-STREAM-002 blocks a stream with a frame whose data cannot be read)."""
    return [(f, frame_data(ex, f)) for f in frames(ex)]


def ending(ex: Exchange) -> list[SSEEvent]:
    """The frames of a stream whose end can be read: one that ended inside an unterminated frame (never dispatched,
    so its last frame is lost) broke INV-STREAM-003."""
    fs = frames(ex)
    if ex.stream.end == "eof_mid_block":
        raise precondition("INV-STREAM-003", ex, f"the stream ended inside a frame with no blank line after it: "
                                                 f"{truncate(ex.stream.pending.decode('utf-8', 'replace'), 200, count=True)!r}")
    return fs


def name_of(frame: SSEEvent) -> str:
    return repr(frame.event) if frame.event is not None else "(unnamed)"


def named(ex: Exchange) -> list[tuple[SSEEvent, dict[str, Any]]]:
    """(frame, data) for every frame, each telling what it is by its `event:` name: a frame without one broke
    INV-STREAM-001 (whether it is text or the end cannot be told)."""
    out = objects(ex)
    unnamed = [f"frame {f.index}" for f, _ in out if not f.event]
    if unnamed:
        raise precondition("INV-STREAM-001", ex, f"frames without an `event:` name: {joined(unnamed)}")
    return out


def assert_ends_with_error(ex: Exchange) -> None:
    """A failed run's stream ends with an `error` frame and carries no `done`."""
    names = [f.event for f in ending(ex)]
    with on(ex):
        assert "done" not in names, f"a failed run's stream carries `done` (frames: {names[:20]})"
        assert names and names[-1] == "error", f"the stream must end with an `error` frame; frames: {names[:20]}"


def text_of(ex: Exchange, fs: Iterable[tuple[SSEEvent, dict[str, Any]]] | None = None) -> str:
    """The `delta`s of the frames named `text` (of `fs`, by default all of `ex`), joined in order; a `text` frame
    without a string `delta` broke INV-STREAM-006."""
    texts = [(f, d) for f, d in (named(ex) if fs is None else fs) if f.event == "text"]
    bad = [f"frame {f.index}" for f, d in texts if not isinstance(d.get("delta"), str)]
    if bad:
        raise precondition("INV-STREAM-006", ex, f"`text` frames without a string `delta`: {joined(bad)}")
    return "".join(d["delta"] for _, d in texts)


def whole_text(ex: Exchange, reply: str) -> str:
    """The stream's text, when it is the whole reply: a check of where the text sits relies on it all being there,
    which INV-STREAM-008 judges (the deltas joined equal the reply)."""
    text = text_of(ex)
    if text != reply:
        raise precondition("INV-STREAM-008", ex, f"the `text` deltas join to {truncate(text, 200, count=True)!r}, "
                                                 f"not the reply {reply!r}")
    return text


def inside_limit(rec: Recording) -> Exchange:
    """The extra-data run inside the 4 KB limit, read back with the params_passthrough prompt (not sent without one)."""
    if rec.facts.get("no_echo"):
        raise NotAssessed(f"the 2 KB extra-data run reads `params` back: {rec.facts['no_echo']}")
    return rec.get(steps.EXTRA_2KB)


def text_completed(ex: Exchange, said: str) -> SSEEvent | None:
    """The `text` frame whose delta completes `said`, the text the stream starts with; None when it never does."""
    text = ""
    for f, d in named(ex):
        if f.event == "text" and isinstance(d.get("delta"), str):
            text += d["delta"]
            if text.startswith(said):
                return f
    return None


def delivered_early(early: SSEEvent, end: SSEEvent, seconds: float) -> None:
    """The text said before a pause of `seconds` (its last frame `early`) arrived `EARLY_LEAD_S` or more before the
    terminal frame `end` (INV-STREAM-009): delivered as produced, not held back to the end."""
    lead = end.t - early.t
    assert lead >= EARLY_LEAD_S, f"the text said before a {seconds:g} s pause arrived only {lead:.2f} s before the " \
                                 f"terminal frame: the stream was held back, not delivered as produced"


def terminals(ex: Exchange) -> list[SSEEvent]:
    return [f for f in ending(ex) if f.event in TERMINAL]


def terminated(ex: Exchange) -> list[SSEEvent]:
    """The frames of a stream that ended with a `done` or `error` frame; one that has none (cut short, or never
    ended) broke INV-TERM-001, and nothing of how it ended can be read on it."""
    fs = ending(ex)
    if not any(f.event in TERMINAL for f in fs):
        raise precondition("INV-TERM-001", ex, f"the stream has no `done` or `error` frame ({ex.stream.end}"
                                               f"{'; ' + ex.error if ex.error else ''}; {len(fs)} frames)")
    return fs


STREAM_GROUPS = {
    "runs": ("invoke.runs", steps.RUN_SSE),
    "generated": ("generated.round_trip", generated_steps.INVOKE_SSE),
    "timing": ("invoke.timing", steps.TIMED_SSE),
    "long": ("invoke.slow_run", sequence_steps.LONG),
    "silences": ("invoke.silences", silence_steps.SILENT),
}
# Streams of prompts only the conformance agent answers (generated `say-json` texts, a `sleep`, long runs, silences):
# extra evidence of a rule the mapped runs already show, so an agent of the team's own is judged on the runs its
# profile maps.
DIRECTIVE_GROUPS = ("generated", "timing", "long", "silences")


def stream_rule(*requirements: str, groups: Iterable[str] = tuple(STREAM_GROUPS)):
    """Decorator: `judge(ex)` (AssertionError when one stream breaks it) as one check per group of streams
    (`<judge>__<group>`, registered by `registry.rule`)."""

    def over_streams(judge: Callable[[Exchange], None], group: str) -> Callable[[Recording], str | None]:
        scenario, prefix = STREAM_GROUPS[group]

        def fn(rec: Recording) -> str | None:
            streams = [ex for ex in rec.labelled(prefix) if selects_stream(ex)]   # a group may hold JSON runs
            if not streams:
                raise NotAssessed(f"scenario {scenario} recorded no invoke stream")
            return judge_each(streams, judge)
        return fn

    def register(judge: Callable[[Exchange], None]):
        rule(lambda group: over_streams(judge, group), over=groups, requirements=requirements,
             scenarios=lambda group: [STREAM_GROUPS[group][0]], name=lambda group: f"{judge.__name__}__{group}",
             doc=judge.__doc__, supplementary=lambda group: group in DIRECTIVE_GROUPS)
        if set(groups) != {"timing"}:     # a rule timed on a lane of its own is read there alone
            exchange_rules.register(*(exchange_rules.ExchangeRule(
                rid, judge.__name__, ("invoke",), lambda ex, target: is_event_stream(ex),
                lambda ex, target: judge(ex), doc=f"every invoke event stream: {judge.__doc__.split(';')[-1].strip()}")
                for rid in requirements))
        return judge

    return register


def generated(rec: Recording, family: Step) -> list[tuple[Exchange, str]]:
    """(exchange, text sent) of each run of a generated scenario's label family (run i is `family.of(i)`)."""
    texts = rec.facts.get("texts") or []
    out = [(ex, texts[i]) for i, ex in family.members(rec.labelled(family)) if i < len(texts)]
    if not out:
        raise NotAssessed(f"scenario {rec.scenario} recorded no {family} exchange")
    return out


def exact(ex: Exchange, got: str, expected: str) -> None:
    """The reply is the text expected, code point for code point; else a Deviation naming `ex` that says the smallest
    difference and, when a transformation explains it, what the service did (`vocab.values.differs`)."""
    if got == expected:
        return
    from conformance.vocab.values import differs
    raise Deviation(f"the reply differs from the text sent: {differs(expected, got)}", ex)


def count_is(ex: Exchange, expected: int, why: str, *context: Exchange, zero_based: bool = False,
             others: tuple[tuple[str, int], ...] = ()) -> None:
    """The `count` reply of `ex` is `expected`, or differs only as the agent's contract explains
    (`agent_readings.judge_count`); a failure names `ex`, then the earlier calls it relies on. When the result names
    another session than the key sent, the call reached that session: INV-SESS-003's deviation."""
    got = reply_of(ex)
    if got.strip() != str(expected):
        key = (request_json(ex) or {}).get("sessionId")
        reached = result_of(ex).get("sessionId")
        if isinstance(key, str) and not same_json(reached, key):
            raise precondition("INV-SESS-003", (ex, *context), f"{why}: `count` replied {truncate(got, 60, count=True)!r}"
                                                               f" on session {quoted(reached, 80)}, not the key sent "
                                                               f"{truncate(key, 80, count=True)!r}")
    agent_readings.judge_count(agent_readings.Count(got, (expected,), zero_based, others=others), what=why,
                               exchanges=(ex, *context))


def counts_from_zero(rec: Recording, wanted: dict[str, int]) -> bool:
    """Whether the agent counts from 0, by the `count` replies of these steps (`agent_readings.counts_from_zero`)."""
    replies = [(agent_readings.reply_text("invoke", ex), [n]) for label, n in wanted.items()
               for ex in rec.exchanges if ex.label == label]
    return agent_readings.counts_from_zero(replies)
