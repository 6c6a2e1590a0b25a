"""Invoke checks (`POST /v1/agents/{agentId}/invoke`), plus the general error-body, transport and rate-limit rules
as far as invoke shows them.

Every check reads recordings of `conformance/scenarios/invoke.py` (and of the shared
`generated.round_trip` / `generated.params`). Stream checks read the strict recorder's frames:
CRLF or CR line endings, `id:` and `retry:` fields, comments and unknown fields are legal SSE
and never fail a check; only what the spec says about frames is judged.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, Observation
from conformance.registry import check, rule
from conformance.vocab import is_json_integer, is_json_media_type
from conformance.vocab.constants import COMPLETED_RUNS, FAILED_RUNS, INVOKE_INTERPRETED as INTERPRETED, RUNS
from conformance.vocab.readers import error_of, is_4xx, request_json as sent
from conformance.vocab.text import truncate
from conformance.wire.http import Exchange
from conformance.wire.sse import SSEEvent, strict_json_loads

TERMINAL = ("done", "error")
CLOSE_WITHIN_S = 5.0          # the server closes the stream this soon after the terminal frame
DURATION_FLOOR_MS = 1500      # for a run that sleeps 2 s (catalog INV-RES-013)
EARLY_LEAD_S = 1.0            # the text before a 2 s sleep arrives this long before the end (INV-STREAM-009)
MAX_LISTED = 8
_DIGITS = re.compile(r"[0-9]+")
_BAD = object()               # data that is not JSON


# -- reading exchanges ---------------------------------------------------------------------
def what(ex: Exchange) -> str:
    """What came back, in one line: status, content type and a short body excerpt (or the error)."""
    if ex.status is None:
        return f"no response ({ex.error})"
    body = truncate(ex.body.decode("utf-8", "replace"), 200, count=True)
    out = f"status {ex.status}, Content-Type {ex.header('content-type')!r}, body {body!r}"
    return out + (f" ({ex.error})" if ex.error else "")


def result_of(ex: Exchange) -> dict[str, Any]:
    """The invoke result of a non-streaming exchange; AssertionError unless 200 with a JSON object."""
    assert ex.status == 200, f"{ex.label}: expected 200 with the invoke result, got {what(ex)}"
    body = ex.json()
    assert isinstance(body, dict), f"{ex.label}: the invoke result is not a JSON object: {truncate(json.dumps(body), 200, count=True)}"
    return body


def reply_of(ex: Exchange) -> str:
    body = result_of(ex)
    assert isinstance(body.get("result"), str), \
        f"{ex.label}: `result` is not a string: {truncate(json.dumps(body.get('result')), 200, count=True)}"
    return body["result"]


def echoed(ex: Exchange) -> Any:
    """The JSON value the agent echoed (`echo params` / `echo messages`) as the whole reply."""
    text = reply_of(ex)
    try:
        return strict_json_loads(text)
    except ValueError:
        raise AssertionError(f"{ex.label}: the reply is not the echoed JSON: {truncate(text, 200, count=True)!r}") from None


def refused(ex: Exchange, code: str | None = None, details: bool = False) -> None:
    """Asserts a refusal: a 4xx with the error body (`error` an object), optionally of `code`, with `details`."""
    assert is_4xx(ex), f"{ex.label}: expected a refusal (a 4xx with the error body), got {what(ex)}"
    err = error_of(ex)
    assert err is not None, f"{ex.label}: the refusal's body is not the error body {{error: {{…}}}}: {what(ex)}"
    if code is not None:
        assert err.get("code") == code, f"{ex.label}: expected error.code {code!r}, got {err.get('code')!r}"
    if details:
        assert isinstance(err.get("details"), dict), \
            f"{ex.label}: `error.details` must be an object on {code}, got {truncate(json.dumps(err.get('details')), 200, count=True)}"


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, but true is not 1 and 1 is not "1"."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def is_int(value: Any) -> bool:
    """A JSON integer, judged by value: 1.0 is 1 (JSON has one number type); "1" and true are not."""
    return is_json_integer(value)


def is_json_answer(ex: Exchange) -> bool:
    """Content-Type application/json or any +json type (RFC 6839), parameters aside."""
    return is_json_media_type(ex.content_type)


def joined(problems: list[str]) -> str:
    more = f"; … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return "; ".join(problems[:MAX_LISTED]) + more


def judge_each(items: Iterable[Any], rule: Callable[[Any], None]) -> None:
    """Applies `rule` to every item; one AssertionError listing every failure. Items the rule cannot judge
    (NotAssessed) are left out; when none could be judged, the check is not assessed, never passed."""
    problems, unjudged, judged = [], [], 0
    for item in items:
        try:
            rule(item)
            judged += 1
        except NotAssessed as exc:
            unjudged.append(str(exc))
        except AssertionError as exc:
            problems.append(str(exc))
            judged += 1
    assert not problems, joined(problems)
    if not judged:
        raise NotAssessed("; ".join(dict.fromkeys(unjudged)) or "nothing to judge")


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


def runs_of(rec: Recording, kind: str, names: Iterable[str] = RUNS) -> list[tuple[str, Exchange]]:
    """(agent scenario, exchange) of `invoke.runs` for `kind` "json" or "sse"; NotAssessed when none ran."""
    out = [(n, ex) for n in names for ex in rec.exchanges if ex.label == f"{kind}-{n}"]
    if not out:
        raise NotAssessed(f"none of the agent scenarios {', '.join(names)} was run "
                          f"({'; '.join(rec.facts.get('skipped', {}).values()) or 'no prompt'})")
    return out


# -- reading streams ------------------------------------------------------------------------
def frames(ex: Exchange) -> list[SSEEvent]:
    """The frames of a 200 event stream: blocks with an `event:` or `data:` field (a block of only
    `id:`/`retry:`/unknown fields is legal SSE and no frame)."""
    assert ex.status == 200 and ex.stream is not None, \
        f"{ex.label}: expected a 200 `text/event-stream` answer, got {what(ex)}"
    return [f for f in ex.stream.events if any(name in ("event", "data") for name, _ in f.fields)]


def data(frame: SSEEvent) -> Any:
    """The frame's parsed data, or _BAD when it has none or it is not JSON."""
    if not frame.dispatched:
        return _BAD
    try:
        return strict_json_loads(frame.data)
    except ValueError:
        return _BAD


def objects(ex: Exchange) -> list[tuple[SSEEvent, dict[str, Any]]]:
    """(frame, data) for every frame whose data is a JSON object (the others are INV-STREAM-002's business)."""
    return [(f, d) for f in frames(ex) if isinstance(d := data(f), dict)]


def name_of(frame: SSEEvent) -> str:
    return repr(frame.event) if frame.event is not None else "(unnamed)"


def text_of(ex: Exchange) -> str:
    """The `delta`s of the frames named `text`, joined in order."""
    return "".join(d["delta"] for f, d in objects(ex) if f.event == "text" and isinstance(d.get("delta"), str))


def terminals(ex: Exchange) -> list[SSEEvent]:
    return [f for f in frames(ex) if f.event in TERMINAL]


STREAM_GROUPS = {
    "runs": ("invoke.runs", "sse-"),
    "generated": ("generated.round_trip", "invoke-sse-"),
    "timing": ("invoke.timing", "sse"),
}


def stream_rule(*requirements: str, groups: Iterable[str] = tuple(STREAM_GROUPS)):
    """Decorator: `judge(ex)` (AssertionError when one stream breaks it) as one check per group of streams
    (`<judge>__<group>`, registered by `registry.rule`)."""

    def over_streams(judge: Callable[[Exchange], None], group: str) -> Callable[[Recording], None]:
        scenario, prefix = STREAM_GROUPS[group]

        def fn(rec: Recording) -> None:
            streams = rec.labelled(prefix)
            if not streams:
                raise NotAssessed(f"scenario {scenario} recorded no invoke stream")
            judge_each(streams, judge)
        return fn

    def register(judge: Callable[[Exchange], None]):
        rule(lambda group: over_streams(judge, group), over=groups, requirements=requirements,
             scenarios=lambda group: [STREAM_GROUPS[group][0]], name=lambda group: f"{judge.__name__}__{group}",
             doc=judge.__doc__)
        return judge

    return register


# -- INV-SEL: selection of streaming ----------------------------------------------------------
def is_stream(ex: Exchange) -> bool:
    return ex.status == 200 and ex.content_type == "text/event-stream"


def assert_stream(ex: Exchange, why: str) -> None:
    assert is_stream(ex), f"{ex.label}: {why} must select server-sent events (200, text/event-stream); got {what(ex)}"


def assert_json_result(ex: Exchange, why: str) -> None:
    assert ex.status == 200 and is_json_answer(ex), \
        f"{ex.label}: {why} must answer one JSON body (200, application/json); got {what(ex)}"
    result_of(ex)


@check("INV-SEL-001", scenarios=["invoke.selection"])
def stream_true_selects_sse(rec: Recording) -> None:
    """Sends `stream: true` without an Accept header; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get("stream-true-no-accept"), "`stream: true` (no Accept header)")


@check("INV-SEL-002", scenarios=["invoke.selection"])
def accept_selects_sse(rec: Recording) -> None:
    """Sends `Accept: text/event-stream` without a `stream` field; the answer is a 200 `text/event-stream`."""
    assert_stream(rec.get("accept-sse-no-stream"), "`Accept: text/event-stream` (no `stream` field)")


@check("INV-SEL-003", scenarios=["invoke.selection"])
def default_is_json(rec: Recording) -> None:
    """Sends no `stream` field, with no Accept header and with `Accept: application/json`; both answer one JSON result."""
    assert_json_result(rec.get("no-stream-no-accept"), "no `stream` field and no Accept header")
    assert_json_result(rec.get("no-stream-accept-json"), "no `stream` field and `Accept: application/json`")


@check("INV-SEL-004", scenarios=["invoke.selection"])
def stream_false_is_json(rec: Recording) -> None:
    """Sends `stream: false` without an Accept header; the answer is one JSON result, not a stream."""
    assert_json_result(rec.get("stream-false-no-accept"), "`stream: false` (no Accept header)")


@check("INV-SEL-005", scenarios=["invoke.selection"])
def stream_false_with_accept_sse(rec: Recording) -> None:
    """Sends `stream: false` with `Accept: text/event-stream`; reports which form came back (the spec conflicts)."""
    ex = rec.get("stream-false-accept-sse")
    if is_stream(ex):
        form = "an event stream (the Accept header won)"
    elif ex.status == 200 and is_json_answer(ex):
        form = "one JSON result (the `stream` field won)"
    else:
        form = f"neither form: {what(ex)}"
    raise Observation(f"`stream: false` with `Accept: text/event-stream` answered {form}")


# -- INV-RES: the result body ----------------------------------------------------------------
def json_rule(*requirements: str, names: Iterable[str] = RUNS):
    """Registers `rule(name, ex, rec)` over the non-streaming results of `invoke.runs` for the agent scenarios `names`."""
    names = tuple(names)

    def register(judge):
        def fn(rec: Recording) -> None:
            judge_each(runs_of(rec, "json", names), lambda item: judge(item[0], item[1], rec))

        check(*requirements, scenarios=["invoke.runs"], name=judge.__name__, doc=judge.__doc__)(fn)
        return judge

    return register


@json_rule("INV-RES-001")
def result_is_json_200(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every answer is 200, `application/json`, one JSON object, once the run is over."""
    assert ex.status == 200 and is_json_answer(ex), \
        f"{ex.label}: expected 200 with Content-Type application/json, got {what(ex)}"
    result_of(ex)


@json_rule("INV-RES-002", names=COMPLETED_RUNS)
def status_completed(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; `status` is `completed`."""
    got = result_of(ex).get("status")
    assert got == "completed", f"{ex.label}: expected status 'completed', got {got!r}"


@json_rule("INV-RES-003", names=COMPLETED_RUNS)
def result_is_whole_reply(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; `result` equals the agent's whole reply."""
    expected = expected_reply(rec, name)
    got = reply_of(ex)
    assert got == expected, f"{ex.label}: expected result {expected!r}, got {truncate(got, 200, count=True)!r}"


@json_rule("INV-RES-005")
def events_is_array(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `events` is an array, not empty for the tool call and the step."""
    events = result_of(ex).get("events")
    assert isinstance(events, list), f"{ex.label}: `events` is not an array: {truncate(json.dumps(events), 200, count=True)}"
    if name in ("tool_call", "step"):
        assert events, f"{ex.label}: `events` is empty, but the run made a {name.replace('_', ' ')}"


def events_of(ex: Exchange) -> list[Any]:
    events = result_of(ex).get("events")
    return events if isinstance(events, list) else []


@json_rule("INV-RES-006")
def events_hold_no_text(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; no element of `events` has `type` `text`."""
    texts = [e for e in events_of(ex) if isinstance(e, dict) and e.get("type") == "text"]
    assert not texts, f"{ex.label}: `events` holds text events (text belongs in `result`): {truncate(json.dumps(texts), 200, count=True)}"


@json_rule("INV-RES-007")
def events_carry_v1(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every element of `events` is an object with `v` the integer 1."""
    bad = [e for e in events_of(ex) if not (isinstance(e, dict) and is_int(e.get("v")) and e["v"] == 1)]
    assert not bad, f"{ex.label}: events without `v: 1`: {truncate(json.dumps(bad), 200, count=True)}"


@json_rule("INV-RES-008")
def events_carry_type(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every element of `events` has `type`, a string."""
    bad = [e for e in events_of(ex) if not (isinstance(e, dict) and isinstance(e.get("type"), str))]
    assert not bad, f"{ex.label}: events without a string `type`: {truncate(json.dumps(bad), 200, count=True)}"


@json_rule("INV-RES-009")
def session_id_is_key(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `sessionId` is a string of 1 to 256 characters."""
    sid = result_of(ex).get("sessionId")
    assert isinstance(sid, str) and 1 <= len(sid) <= 256, \
        f"{ex.label}: `sessionId` is not a string of 1 to 256 characters: {truncate(json.dumps(sid), 200, count=True)}"


@json_rule("INV-RES-010")
def agent_id_is_path(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `agentId` equals the agent of the request path."""
    got = result_of(ex).get("agentId")
    assert got == rec.target.agent_id, f"{ex.label}: expected agentId {rec.target.agent_id!r}, got {got!r}"


@json_rule("INV-RES-011")
def version_is_integer(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `versionNumber` is a JSON integer."""
    got = result_of(ex).get("versionNumber")
    assert is_int(got), f"{ex.label}: `versionNumber` is not an integer: {json.dumps(got)}"


@json_rule("INV-RES-013")
def duration_is_integer(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `durationMs` is a non-negative JSON integer."""
    got = result_of(ex).get("durationMs")
    assert is_int(got) and got >= 0, f"{ex.label}: `durationMs` is not a non-negative integer: {json.dumps(got)}"


@check("INV-RES-012", scenarios=["invoke.runs"])
def request_ids_differ(rec: Recording) -> None:
    """Sends each agent scenario without streaming; every `requestId` is a non-empty string, and no two are equal."""
    ids = {}
    for _, ex in runs_of(rec, "json"):
        rid = result_of(ex).get("requestId")
        assert isinstance(rid, str) and rid, f"{ex.label}: `requestId` is not a non-empty string: {json.dumps(rid)}"
        assert rid not in ids, f"{ex.label} and {ids.get(rid)} got the same requestId {rid!r}"
        ids[rid] = ex.label


@check("INV-RES-013", scenarios=["invoke.timing"])
def duration_covers_sleep(rec: Recording) -> None:
    """Sends `say early`, `sleep 2`, `say late` without streaming; `durationMs` is an integer of at least 1500."""
    ex = rec.get("json")
    got = result_of(ex).get("durationMs")
    assert is_int(got) and got >= DURATION_FLOOR_MS, \
        f"{ex.label}: the run slept {rec.facts['sleep_s']:g} s, so `durationMs` must be an integer of at least " \
        f"{DURATION_FLOOR_MS}; got {json.dumps(got)}"


@json_rule("INV-RES-014", names=FAILED_RUNS)
def failed_run_is_200_failed(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends both failure prompts without streaming; each answers 200 with `status` `failed` (a failed run is no refusal)."""
    got = result_of(ex).get("status")
    assert got == "failed", f"{ex.label}: expected status 'failed', got {got!r}"


@json_rule("INV-RES-015", names=FAILED_RUNS)
def failed_run_has_error(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends both failure prompts without streaming; `error` is an object with `code` a non-empty string and `message` a string."""
    body = result_of(ex)
    if body.get("status") != "failed":
        raise NotAssessed(f"{ex.label}: the run did not report `failed` (INV-RES-014)")
    err = body.get("error")
    assert isinstance(err, dict), f"{ex.label}: a failed result must carry an `error` object, got {json.dumps(err)}"
    assert isinstance(err.get("code"), str) and err["code"], \
        f"{ex.label}: `error.code` is not a non-empty string: {json.dumps(err.get('code'))}"
    assert isinstance(err.get("message"), str), f"{ex.label}: `error.message` is not a string: {json.dumps(err.get('message'))}"


@json_rule("INV-RES-016", names=FAILED_RUNS)
def failed_result_holds_sent_text(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends `say partial`+`fail boom` and `fail boom` without streaming; `result` is `partial` and `` respectively."""
    expected = expected_reply(rec, name)
    got = reply_of(ex)
    assert got == expected, f"{ex.label}: a failed run's result is the text sent before the failure, " \
                            f"{expected!r}; got {truncate(got, 200, count=True)!r}"


@json_rule("INV-RES-017", names=COMPLETED_RUNS)
def completed_has_no_error(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; the result has no `error` (or null)."""
    body = result_of(ex)
    assert body.get("error") is None, f"{ex.label}: a completed result carries error {truncate(json.dumps(body['error']), 200, count=True)}"


@check("INV-RES-004", scenarios=["generated.round_trip"])
def generated_result_exact(rec: Recording) -> None:
    """Sends generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json` without streaming; `result` equals each exactly."""
    judge_each(generated(rec, "invoke-json-"), lambda item: exact(item[0], reply_of(item[0]), item[1]))


def generated(rec: Recording, prefix: str) -> list[tuple[Exchange, str]]:
    texts = rec.facts.get("texts") or []
    out = []
    for ex in rec.labelled(prefix):
        index = ex.label[len(prefix):]
        if index.isdigit() and int(index) < len(texts):
            out.append((ex, texts[int(index)]))
    if not out:
        raise NotAssessed(f"scenario {rec.scenario} recorded no {prefix}* exchange")
    return out


def exact(ex: Exchange, got: str, expected: str) -> None:
    if got == expected:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    raise AssertionError(
        f"{ex.label}: the reply differs from the text sent at code point {at} (expected {len(expected)} code points, "
        f"got {len(got)}): expected …{expected[max(0, at - 20):at + 20]!r}…, got …{got[max(0, at - 20):at + 20]!r}…")


# -- INV-STREAM and INV-TERM: framing and termination of every stream ---------------------------
@stream_rule("INV-STREAM-001")
def frames_are_named(ex: Exchange) -> None:
    """Streams each agent scenario; every frame has an `event:` field with a non-empty name."""
    bad = [f"frame {f.index}" for f in frames(ex) if not f.event]
    assert not bad, f"frames without an `event:` name: {', '.join(bad[:MAX_LISTED])}"


@stream_rule("INV-STREAM-002")
def frames_carry_json_object(ex: Exchange) -> None:
    """Streams each agent scenario; every frame has `data:` that parses (lines joined per SSE) as one JSON object."""
    bad = []
    for f in frames(ex):
        if not f.dispatched:
            bad.append(f"frame {f.index} {name_of(f)} has no `data:` line")
        elif not isinstance(data(f), dict):
            bad.append(f"frame {f.index} {name_of(f)} data is not one JSON object: {truncate(f.data, 120, count=True)!r}")
    assert not bad, "; ".join(bad[:MAX_LISTED])


@stream_rule("INV-STREAM-003")
def frames_end_with_blank_line(ex: Exchange) -> None:
    """Streams each agent scenario; every frame, the last too, ends with a blank line, and no frame carries two events."""
    frames(ex)
    st = ex.stream
    assert st.end != "eof_mid_block", \
        f"the stream ended inside a frame with no blank line after it: {truncate(st.pending.decode('utf-8', 'replace'), 200, count=True)!r}"
    for f in frames(ex):
        lines = f.data.split("\n")
        if len(lines) > 1 and data(f) is _BAD and all(isinstance(_loads_or_bad(x), dict) for x in lines):
            raise AssertionError(f"frame {f.index} carries {len(lines)} events (one JSON object per `data:` line)")


def _loads_or_bad(text: str) -> Any:
    try:
        return strict_json_loads(text)
    except ValueError:
        return _BAD


@stream_rule("INV-STREAM-004")
def frames_carry_v1(ex: Exchange) -> None:
    """Streams each agent scenario; the data of every frame, `done` and `error` included, has `v` the integer 1."""
    bad = [f"frame {f.index} {name_of(f)} has v={json.dumps(d.get('v'))}"
           for f, d in objects(ex) if not (is_int(d.get("v")) and d["v"] == 1)]
    assert not bad, "; ".join(bad[:MAX_LISTED])


@stream_rule("INV-STREAM-005")
def frames_carry_type(ex: Exchange) -> None:
    """Streams each agent scenario; the data of every frame has `type`, a string."""
    bad = [f"frame {f.index} {name_of(f)} has type={truncate(json.dumps(d.get('type')), 60, count=True)}"
           for f, d in objects(ex) if not isinstance(d.get("type"), str)]
    assert not bad, "; ".join(bad[:MAX_LISTED])


@stream_rule("INV-STREAM-006")
def text_frames_carry_delta(ex: Exchange) -> None:
    """Streams each agent scenario; every frame named `text` has data with `type` `text` and `delta` a string."""
    bad = []
    for f in frames(ex):
        if f.event != "text":
            continue
        d = data(f)
        if not (isinstance(d, dict) and d.get("type") == "text" and isinstance(d.get("delta"), str)):
            bad.append(f"frame {f.index}: {truncate(f.data, 120, count=True)!r}")
    assert not bad, "`text` frames must carry {v: 1, type: text, delta: <string>}: " + "; ".join(bad[:MAX_LISTED])


@stream_rule("INV-STREAM-007")
def type_matches_event_name(ex: Exchange) -> None:
    """Streams each agent scenario; the data's `type` equals the frame's `event:` name."""
    bad = [f"frame {f.index} is named {name_of(f)} but has type {json.dumps(d.get('type'))}"
           for f, d in objects(ex) if d.get("type") != f.event]
    assert not bad, "; ".join(bad[:MAX_LISTED])


@stream_rule("INV-TERM-001")
def one_terminal_frame(ex: Exchange) -> None:
    """Streams each agent scenario; exactly one frame is named `done` or `error`."""
    found = [f"frame {f.index} {name_of(f)}" for f in terminals(ex)]
    assert len(found) == 1, f"expected exactly one `done` or `error` frame, found {len(found)}" + \
        (f": {', '.join(found[:MAX_LISTED])}" if found else f" ({ex.stream.end}; {len(frames(ex))} frames)")


@stream_rule("INV-TERM-002")
def terminal_is_last_and_closes(ex: Exchange) -> None:
    """Streams each agent scenario; the `done`/`error` frame is the last one and the server closes the stream within 5 s."""
    fs = frames(ex)
    assert fs, f"the stream has no frame ({ex.stream.end})"
    last = fs[-1]
    assert last.event in TERMINAL, f"the last frame is {name_of(last)} (frame {last.index}), not `done` or `error`"
    st = ex.stream
    assert st.end == "eof", f"after the terminal frame the stream did not end cleanly: {st.end}" + \
        (f" ({ex.error})" if ex.error else "")
    lag = (st.t_end or 0.0) - last.t
    assert lag <= CLOSE_WITHIN_S, f"the server closed the stream {lag:.1f} s after the terminal frame " \
                                  f"(expected within {CLOSE_WITHIN_S:g} s)"


@stream_rule("INV-TERM-006", groups=("runs",))
def error_frames_carry_message(ex: Exchange) -> None:
    """Streams each agent scenario (both failures included); every `error` frame's data has `message`, a string."""
    bad = [f"frame {f.index}: {truncate(f.data, 120, count=True)!r}" for f in frames(ex)
           if f.event == "error" and not (isinstance(d := data(f), dict) and isinstance(d.get("message"), str))]
    assert not bad, "`error` frames must carry `message` (a string): " + "; ".join(bad)


# -- INV-STREAM / INV-TERM: what particular runs stream -------------------------------------------
@check("INV-STREAM-008", scenarios=["invoke.runs"])
def deltas_join_to_reply(rec: Recording) -> None:
    """Streams each agent scenario; the `text` deltas joined in order equal the reply (`hello, conformance` for the streamed reply)."""
    def rule(item: tuple[str, Exchange]) -> None:
        name, ex = item
        exact(ex, text_of(ex), expected_reply(rec, name))

    judge_each(runs_of(rec, "sse"), rule)


@check("INV-STREAM-008", scenarios=["generated.round_trip"])
def generated_deltas_exact(rec: Recording) -> None:
    """Streams generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json`; the deltas join to each exactly."""
    judge_each(generated(rec, "invoke-sse-"), lambda item: exact(item[0], text_of(item[0]), item[1]))


@check("INV-STREAM-009", scenarios=["invoke.timing"])
def text_arrives_early(rec: Recording) -> None:
    """Streams `say early`, `sleep 2`, `say late`; the frame carrying `early` arrives at least 1 s before the terminal frame."""
    ex = rec.get("sse")
    first = rec.facts["first"]
    early, text = None, ""
    for f, d in objects(ex):                  # the frame that completes the text before the pause
        if f.event == "text" and isinstance(d.get("delta"), str):
            text += d["delta"]
            if text.startswith(first):
                early = f
                break
    assert early is not None, f"the `text` frames never carry {first!r} ({len(frames(ex))} frames, text {truncate(text, 200, count=True)!r})"
    ends = terminals(ex)
    assert ends, "the stream has no terminal frame"
    lead = ends[-1].t - early.t
    assert lead >= EARLY_LEAD_S, f"the text sent before a {rec.facts['sleep_s']:g} s pause arrived only {lead:.2f} s " \
                                 f"before the terminal frame: the stream was held back, not delivered as produced"


def sse_run(rec: Recording, name: str) -> tuple[dict[str, Any], Exchange]:
    return scenario_of(rec, name), rec.get(f"sse-{name}")


@check("INV-STREAM-010", scenarios=["invoke.runs"])
def tool_call_start_names_tool(rec: Recording) -> None:
    """Streams the tool-call prompt (`tool lookup {"q":"x"}`, `say done`); a `tool_call_start` frame has `name` `lookup`."""
    s, ex = sse_run(rec, "tool_call")
    tool = s.get("tool")
    if tool is None:
        raise NotAssessed("the profile's tool_call scenario names no `tool`")
    starts = [d for f, d in objects(ex) if f.event == "tool_call_start"]
    assert starts, f"no `tool_call_start` frame; frames: {[f.event for f in frames(ex)][:20]}"
    names = [d.get("name") for d in starts]
    assert tool in names, f"`tool_call_start` must carry name {tool!r}; got {names}"


@check("INV-STREAM-011", scenarios=["invoke.runs"])
def tool_call_start_precedes_text(rec: Recording) -> None:
    """Streams the tool-call prompt; the `tool_call_start` frame comes before the `text` frames carrying `done`."""
    s, ex = sse_run(rec, "tool_call")
    reply = s.get("reply")
    if not reply:
        raise NotAssessed("the profile's tool_call scenario names no reply")
    fs = objects(ex)
    start = next((i for i, (f, _) in enumerate(fs) if f.event == "tool_call_start"), None)
    assert start is not None, "no `tool_call_start` frame"
    after = "".join(d["delta"] for f, d in fs[start + 1:] if f.event == "text" and isinstance(d.get("delta"), str))
    assert after.endswith(reply), f"the reply {reply!r} must be streamed after the `tool_call_start` frame; " \
                                  f"the text after it is {truncate(after, 200, count=True)!r}"


@check("INV-TERM-003", scenarios=["invoke.runs"])
def completed_stream_ends_done(rec: Recording) -> str:
    """Streams the runs that end normally; each ends with `done` and has no `error` frame."""
    def rule(item: tuple[str, Exchange]) -> None:
        name, ex = item
        fs = frames(ex)
        errors = [f.index for f in fs if f.event == "error"]
        assert not errors, f"{ex.label}: a run that ends normally streamed `error` frame(s) {errors}"
        assert fs and fs[-1].event == "done", \
            f"{ex.label}: expected the stream to end with `done`, it ends with {name_of(fs[-1]) if fs else 'no frame'}"

    judge_each(runs_of(rec, "sse", COMPLETED_RUNS), rule)
    return open_event_note(rec)


def open_event_note(rec: Recording) -> str:
    """INV-OPEN-002/004 (reported, not judged): the event names and `done` keys seen."""
    seen: dict[str, set[str]] = {}
    for _, ex in runs_of(rec, "sse"):
        try:
            for f, d in objects(ex):
                seen.setdefault(str(f.event), set()).update(k for k in d if k not in ("v", "type"))
        except AssertionError:
            continue
    return "event names seen (data keys besides v/type): " + ", ".join(
        f"{n} ({', '.join(sorted(k)) or '-'})" for n, k in sorted(seen.items()))


@check("INV-TERM-004", scenarios=["invoke.runs"])
def failure_after_output_ends_error(rec: Recording) -> None:
    """Streams `say partial`, `fail boom`; status 200, `text` frames carrying `partial`, then an `error` frame, no `done`."""
    s, ex = sse_run(rec, "failure_after_output")
    fs = frames(ex)
    names = [f.event for f in fs]
    assert "done" not in names, f"a failed run's stream carries `done` (frames: {names[:20]})"
    assert fs and fs[-1].event == "error", f"the stream must end with an `error` frame; frames: {names[:20]}"
    reply = s.get("reply")
    if reply:   # (no expected text in a custom profile: the frame order above is still judged)
        before = "".join(d["delta"] for f, d in objects(ex)[:-1] if f.event == "text" and isinstance(d.get("delta"), str))
        assert before == reply, f"the text before the `error` frame must be {reply!r}, got {truncate(before, 200, count=True)!r}"


@check("INV-TERM-005", scenarios=["invoke.runs"])
def failure_before_output_ends_error(rec: Recording) -> None:
    """Streams `fail boom`; the answer is 200 (not a refusal) and the stream ends with an `error` frame, no `done`."""
    _, ex = sse_run(rec, "failure_before_output")
    fs = frames(ex)
    names = [f.event for f in fs]
    assert "done" not in names, f"a failed run's stream carries `done` (frames: {names[:20]})"
    assert fs and fs[-1].event == "error", f"the stream must end with an `error` frame; frames: {names[:20]}"


# -- INV-SESS: sessions -------------------------------------------------------------------------
def count_is(ex: Exchange, expected: int, why: str) -> None:
    got = reply_of(ex)
    assert got.strip() == str(expected), f"{ex.label}: {why}: `count` must reply {expected}, got {truncate(got, 200, count=True)!r}"


@check("INV-SESS-001", scenarios=["invoke.selection", "invoke.sessions"])
def generated_session_ids(rec: Recording, sessions: Recording) -> None:
    """Sends invokes without `sessionId`; each result has a generated `sessionId` of 1 to 256 characters, no two equal."""
    seen: dict[str, str] = {}
    candidates = [ex for ex in rec.exchanges if ex.status == 200 and is_json_answer(ex)] \
        + sessions.labelled("generated-1")
    for ex in candidates:
        sid = result_of(ex).get("sessionId")
        assert isinstance(sid, str) and 1 <= len(sid) <= 256, \
            f"{ex.label}: sent without `sessionId`, the result must carry a generated one of 1 to 256 characters; " \
            f"got {truncate(json.dumps(sid), 200, count=True)}"
        assert sid not in seen, f"{ex.label} and {seen.get(sid)}, both sent without `sessionId`, got the same {sid!r}"
        seen[sid] = ex.label
    if len(seen) < 2:
        raise NotAssessed(f"fewer than two JSON results without `sessionId` to compare ({len(seen)})")


@check("INV-SESS-002", scenarios=["invoke.sessions"])
def same_key_same_instance(rec: Recording) -> None:
    """Sends `count` twice with one fresh `sessionId`; the replies are 1 then 2."""
    count_is(rec.get("count-1"), 1, "the first run on a fresh key")
    count_is(rec.get("count-2"), 2, "the second run on the same key reaches the same instance")


@check("GEN-SESS-002", scenarios=["invoke.sessions"])
def other_key_new_instance(rec: Recording) -> None:
    """Sends `count` on a fresh key after two runs on another key; the reply is 1 (a different key, a new instance)."""
    count_is(rec.get("count-other"), 1, "a fresh key after two runs on another key")


@check("INV-SESS-004", scenarios=["invoke.sessions"])
def generated_key_reaches_instance(rec: Recording) -> None:
    """Sends `count` without `sessionId`, then `count` with the `sessionId` returned; the replies are 1 then 2."""
    count_is(rec.get("generated-1"), 1, "the first run on a generated key")
    assert rec.facts.get("generated"), "generated-1: the result carried no usable `sessionId` to send again"
    count_is(rec.get("generated-2"), 2, f"the returned key {rec.facts['generated']!r} reaches the same instance")


def session_echoed(ex: Exchange) -> None:
    key = (sent(ex) or {}).get("sessionId")
    got = result_of(ex).get("sessionId")
    assert got == key, f"{ex.label}: sent sessionId {truncate(str(key), 60, count=True)!r}, the result carries {truncate(str(got), 60, count=True)!r}"


def session_echo(scenario: str, prefix: str) -> Callable[[Recording], None]:
    def fn(rec: Recording) -> None:
        exchanges = [ex for ex in rec.labelled(prefix) if isinstance((sent(ex) or {}).get("sessionId"), str)]
        if not exchanges:
            raise NotAssessed(f"scenario {scenario} sent no `sessionId` without streaming")
        judge_each(exchanges, session_echoed)

    return fn


SESSION_ECHOES = {"invoke.runs": "json-", "invoke.sessions": ""}   # scenario: label prefix of its JSON results
rule(lambda scn: session_echo(scn, SESSION_ECHOES[scn]), over=SESSION_ECHOES, requirements="INV-SESS-003",
     scenarios=lambda scn: [scn], name=lambda scn: f"session_id_echoed__{scn.split('.')[-1]}",
     doc="Sends invokes with a `sessionId` without streaming; each result's `sessionId` equals the one sent.")


@check("INV-SESS-005", scenarios=["invoke.key_lengths"])
def key_lengths_accepted(rec: Recording) -> None:
    """Sends the plain reply with a `sessionId` of 1 and of 256 characters; both complete (200, `completed`)."""
    def rule(ex: Exchange) -> None:
        key = (sent(ex) or {}).get("sessionId", "")
        body = result_of(ex)
        assert body.get("status") == "completed", \
            f"{ex.label}: a {len(key)}-character sessionId must be accepted; status {body.get('status')!r}"

    judge_each([rec.get("key-1"), rec.get("key-256")], rule)


@check("INV-SESS-006", scenarios=["invoke.refusals"])
def key_lengths_refused(rec: Recording) -> None:
    """Sends `sessionId` of 257 characters and empty; both are refused with a 4xx and `validation_failed`."""
    judge_each([rec.get("key-257"), rec.get("key-empty")], lambda ex: refused(ex, "validation_failed"))


# -- INV-PASS: pass-through ------------------------------------------------------------------------
def params_hold(ex: Exchange, expected: dict[str, Any]) -> None:
    params = echoed(ex)
    assert isinstance(params, dict), f"{ex.label}: the echoed params are not an object: {truncate(json.dumps(params), 200, count=True)}"
    bad = [f"{k!r}: sent {truncate(json.dumps(v, ensure_ascii=False), 80, count=True)}, agent saw "
           f"{truncate(json.dumps(params[k], ensure_ascii=False), 80, count=True) if k in params else '(missing)'}"
           for k, v in expected.items() if k not in params or not same_json(params[k], v)]
    assert not bad, f"{ex.label}: fields did not reach `params` unchanged: " + "; ".join(bad[:MAX_LISTED])


@check("INV-PASS-001", scenarios=["invoke.params"])
def unknown_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with unknown fields of every JSON type and unicode; each reaches `params` unchanged."""
    params_hold(rec.get("params"), rec.facts["params"])


@check("INV-PASS-001", scenarios=["generated.params"])
def generated_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with generated extra fields (any JSON values, unicode names); each reaches `params` unchanged."""
    sent_params = rec.facts.get("params") or []
    items = [(ex, sent_params[int(ex.label[7:])]) for ex in rec.labelled("invoke-")
             if ex.label[7:].isdigit() and int(ex.label[7:]) < len(sent_params)]
    if not items:
        raise NotAssessed("generated.params recorded no invoke exchange")
    judge_each(items, lambda item: params_hold(*item))


@check("INV-PASS-002", scenarios=["invoke.params"])
def interpreted_fields_withheld(rec: Recording) -> None:
    """Sends `echo params` with `prompt`, `sessionId`, `stream` and `messages`; none of them appears in `params`."""
    ex = rec.get("params")
    params = echoed(ex)
    assert isinstance(params, dict), f"{ex.label}: the echoed params are not an object"
    leaked = [k for k in INTERPRETED if k in params]
    assert not leaked, f"{ex.label}: fields the service interprets reached `params`: {leaked}"


@check("INV-PASS-003", scenarios=["invoke.extra_data"])
def extra_data_reaches_params(rec: Recording) -> None:
    """Sends about 2 KB of structured JSON in the extra data field with `echo params`; it reaches `params` unchanged."""
    params_hold(rec.get("extra-2kb"), {rec.facts["field"]: rec.facts["inside"]})


@check("INV-PASS-004", scenarios=["invoke.messages"])
def messages_reach_agent(rec: Recording) -> None:
    """Sends `echo messages` with a `messages` list of `{role, content}`; the agent echoes the list exactly.

    The items' shape is not shown, so a refusal with the error body is not assessed (never passed);
    a 4xx without the error body contradicts "A refusal before the run starts answers with an HTTP status
    and the error body" and fails."""
    ex = rec.get("messages")
    if is_4xx(ex):
        err = error_of(ex)
        assert err is not None, \
            f"{ex.label}: `messages` was answered with a 4xx that is not the error body {{error: {{…}}}}: {what(ex)}"
        raise NotAssessed(f"the `messages` items {{role, content}} were refused ({ex.status}, {err.get('code')!r}); "
                          f"the items' shape is not shown, so whether the list reaches the agent was not judged")
    got = echoed(ex)
    assert same_json(got, rec.facts["messages"]), \
        f"{ex.label}: sent messages {json.dumps(rec.facts['messages'], ensure_ascii=False)}, the agent saw " \
        f"{truncate(json.dumps(got, ensure_ascii=False), 200, count=True)}"


# -- INV-LIM: limits ---------------------------------------------------------------------------------
@check("INV-LIM-001", scenarios=["invoke.big_body"])
def half_megabyte_accepted(rec: Recording) -> None:
    """Sends an echo-mode prompt making the body about 0.5 MB; it is accepted and `result` equals the prompt."""
    ex = rec.get("half-mb")
    prompt = (sent(ex) or {}).get("prompt", "")
    exact(ex, reply_of(ex), prompt)


@check("INV-LIM-002", scenarios=["invoke.refusals"])
def two_megabytes_refused(rec: Recording) -> None:
    """Sends a body of about 2 MB; it is refused with a 4xx and the error body."""
    refused(rec.get("body-2mb"))


@check("INV-LIM-003", scenarios=["invoke.extra_data"])
def extra_data_inside_accepted(rec: Recording) -> None:
    """Sends about 2 KB in the extra data field; the run completes and the field reaches `params`."""
    ex = rec.get("extra-2kb")
    body = result_of(ex)
    assert body.get("status") == "completed", f"{ex.label}: 2 KB of extra data must be accepted; got {what(ex)}"
    params = echoed(ex)
    assert isinstance(params, dict) and rec.facts["field"] in params, \
        f"{ex.label}: the extra data field {rec.facts['field']!r} did not reach `params`"


@check("INV-LIM-004", scenarios=["invoke.extra_data"])
def extra_data_outside_refused(rec: Recording) -> None:
    """Sends about 8 KB in the extra data field; it is refused with a 4xx and the error body."""
    refused(rec.get("extra-8kb"))


@check("INV-LIM-005", scenarios=["invoke.extra_data"])
def extra_data_outside_is_validation_failed(rec: Recording) -> None:
    """Sends about 8 KB in the extra data field; the refusal's code is `validation_failed`."""
    refused(rec.get("extra-8kb"), "validation_failed")


# -- INV-ERR: refusals ---------------------------------------------------------------------------------
@check("INV-ERR-001", scenarios=["invoke.refusals"])
def streaming_refusal_is_json(rec: Recording) -> None:
    """Sends `stream: true` to a nonexistent agent; the refusal is a 4xx JSON error body (`application/json` or a
    `+json` type such as `application/problem+json`), not a stream."""
    ex = rec.get("stream-no-agent")
    refused(ex)
    assert is_json_answer(ex), \
        f"{ex.label}: a refusal of a streaming request must be the JSON error body (application/json or +json), " \
        f"got Content-Type {ex.header('content-type')!r}"


@check("INV-ERR-002", scenarios=["invoke.refusals"])
def prompt_not_string_refused(rec: Recording) -> None:
    """Sends `prompt: 42`; it is refused with a 4xx, `validation_failed` and `details` an object."""
    refused(rec.get("prompt-number"), "validation_failed", details=True)


@check("INV-ERR-003", scenarios=["invoke.refusals"])
def stream_not_boolean_refused(rec: Recording) -> None:
    """Sends `stream: "yes"`; it is refused with a 4xx, `validation_failed` and `details` an object."""
    refused(rec.get("stream-string"), "validation_failed", details=True)


@check("INV-ERR-004", scenarios=["invoke.refusals"])
def prompt_missing_refused(rec: Recording) -> str:
    """Sends a body without `prompt`; it is refused with a 4xx and the error body."""
    ex = rec.get("prompt-missing")
    refused(ex)
    return f"code {(error_of(ex) or {}).get('code')!r} (not stated by the spec)"


@check("INV-ERR-005", scenarios=["invoke.refusals"])
def body_not_object_refused(rec: Recording) -> None:
    """Sends a body that is not JSON, and one that is a JSON array; both are refused with a 4xx and the error body."""
    judge_each([rec.get("not-json"), rec.get("json-array")], refused)


def no_run(scenario: str) -> Callable[[Recording], str]:
    def fn(rec: Recording) -> str:
        pairs = rec.facts.get("no_run") or {}
        if not pairs:
            raise NotAssessed(rec.facts.get("no_run_reason") or f"scenario {scenario} proved no refusal")
        judged, skipped = [], []

        def rule(item: tuple[str, dict[str, str]]) -> None:
            label, proof = item
            if not is_4xx(rec.get(label)):
                skipped.append(label)       # not refused: its own requirement fails, not this one
                return
            judged.append(label)
            count_is(rec.get(proof["count_label"]), 1,
                     f"`{label}` was refused, so the first run on its session key {proof['session']!r} is this one")

        judge_each(pairs.items(), rule)
        if not judged:
            raise NotAssessed(f"none of {', '.join(pairs)} was refused")
        return f"no run after: {', '.join(judged)}" + (f"; not refused: {', '.join(skipped)}" if skipped else "")

    return fn


rule(no_run, over=("invoke.refusals", "invoke.extra_data"), requirements="INV-ERR-006", scenarios=lambda scn: [scn],
     name=lambda scn: f"refusal_starts_no_run__{scn.split('.')[-1]}",
     doc="Sends requests that must be refused with a fresh `sessionId`, then `count` on it; each reply is 1 (no run "
         "started).")


# -- GEN-ERR: the error body of every refusal ------------------------------------------------------------
def refusals_of(rec: Recording) -> list[Exchange]:
    """The answered refusals: exchanges the scenario expected refused that did not answer 2xx."""
    out = [ex for label in rec.facts.get("refusals", []) for ex in [rec.get(label)]
           if ex.status is not None and not 200 <= ex.status < 300]
    if not out:
        raise NotAssessed(f"scenario {rec.scenario} saw no refusal")
    return out


def error_rule(requirement: str, *, only_with_error: bool = True):
    """Decorator: `judge(ex, err)` over every refusal of `invoke.refusals` and `invoke.extra_data`, one check per
    scenario (`<judge>__<scenario>`, registered by `registry.rule`)."""

    def over_refusals(judge) -> Callable[[Recording], str | None]:
        def fn(rec: Recording) -> str | None:
            items = refusals_of(rec)
            judge_each(items, lambda ex: judge(ex, error_of(ex)) if error_of(ex) or not only_with_error else None)
            return observed_codes(items) if requirement == "GEN-ERR-001" else None
        return fn

    def register(judge):
        rule(lambda scn: over_refusals(judge), over=("invoke.refusals", "invoke.extra_data"), requirements=requirement,
             scenarios=lambda scn: [scn], name=lambda scn: f"{judge.__name__}__{scn.split('.')[-1]}", doc=judge.__doc__)
        return judge

    return register


def observed_codes(items: list[Exchange]) -> str:
    """GEN-ERR-006/007 (reported, not judged): the (status, code) pairs and details keys seen."""
    seen = []
    for ex in items:
        err = error_of(ex) or {}
        details = err.get("details")
        keys = f" details {sorted(details)}" if isinstance(details, dict) else ""
        seen.append(f"{ex.label} {ex.status} {err.get('code')!r}{keys}")
    return "refusals seen: " + "; ".join(seen)


@error_rule("GEN-ERR-001", only_with_error=False)
def refusal_is_4xx_error_body(ex: Exchange, err: dict[str, Any] | None) -> None:
    """Provokes invoke refusals; each is a 4xx whose JSON object body has an `error` object."""
    assert is_4xx(ex), f"{ex.label}: a refusal must have a 4xx status, got {what(ex)}"
    assert err is not None, f"{ex.label}: the refusal's body is not {{error: {{…}}}}: {what(ex)}"


@error_rule("GEN-ERR-002")
def error_code_is_string(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.code` is a non-empty string in each."""
    assert isinstance(err.get("code"), str) and err["code"], \
        f"{ex.label}: `error.code` is not a non-empty string: {truncate(json.dumps(err.get('code')), 200, count=True)}"


@error_rule("GEN-ERR-003")
def error_message_is_string(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.message` is a string in each."""
    assert isinstance(err.get("message"), str), \
        f"{ex.label}: `error.message` is not a string: {truncate(json.dumps(err.get('message')), 200, count=True)}"


@error_rule("GEN-ERR-004")
def error_request_id_prefixed(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; `error.requestId` is a string `req_` followed by an identifier."""
    rid = err.get("requestId")
    assert isinstance(rid, str) and rid.startswith("req_") and len(rid) > 4, \
        f"{ex.label}: `error.requestId` must be `req_` followed by an identifier, got {truncate(json.dumps(rid), 200, count=True)}"


@error_rule("GEN-ERR-005")
def validation_failed_has_details(ex: Exchange, err: dict[str, Any]) -> None:
    """Provokes invoke refusals; wherever `error.code` is `validation_failed`, `error.details` is an object."""
    if err.get("code") == "validation_failed":
        assert isinstance(err.get("details"), dict), \
            f"{ex.label}: `validation_failed` without `details` as an object: {truncate(json.dumps(err.get('details')), 200, count=True)}"


# -- GEN-BASE: transport -----------------------------------------------------------------------------------
@check("GEN-BASE-001", scenarios=["invoke.runs"])
def served_over_tls(rec: Recording) -> None:
    """Sends the plain reply to the https base URL; the TLS handshake succeeds against the CA in use and it answers 200."""
    base = rec.target.base_url
    assert base.lower().startswith("https://"), f"the base URL {base!r} is not https: the service is HTTPS only"
    _, ex = runs_of(rec, "json", ("plain_reply",))[0]
    assert ex.status == 200, f"{ex.label}: the plain reply over https must answer 200, got {what(ex)}"


@check("GEN-BASE-002", scenarios=["invoke.cleartext"])
def cleartext_never_runs(rec: Recording) -> str:
    """Sends the plain reply over `http://` to the same host and port; no 2xx reply comes back and (by `count`) no run starts."""
    ex = rec.get("cleartext")
    assert not (ex.status is not None and 200 <= ex.status < 300), \
        f"{ex.label}: a cleartext request to {rec.facts['url']} was answered {what(ex)}: the service is HTTPS only"
    outcome = f"cleartext answered {what(ex)}" if ex.status is not None else f"cleartext: {ex.error}"
    if not rec.facts.get("count_label"):
        return outcome + " (no `count` proof: no session_affinity prompt)"
    proof = rec.get(rec.facts["count_label"])
    try:
        reply = reply_of(proof)
    except AssertionError as exc:
        raise NotAssessed(f"{outcome}; the `count` proof over https failed: {exc}") from None
    assert reply.strip() == "1", \
        f"the cleartext request ran the agent: `count` on its session key replied {truncate(reply, 200, count=True)!r}, expected 1"
    return outcome


@check("GEN-BASE-003", scenarios=["invoke.runs"])
def invoke_served_under_v1(rec: Recording) -> None:
    """Sends the plain reply to `/v1/agents/{agentId}/invoke`; that exact path answers 200 with the invoke result."""
    _, ex = runs_of(rec, "json", ("plain_reply",))[0]
    expected = f"/v1/agents/{rec.target.agent_id}/invoke"
    assert ex.url.split("://", 1)[-1].partition("/")[2].split("?")[0] == expected.lstrip("/"), \
        f"{ex.label}: sent to {ex.url}, expected the path {expected}"
    result_of(ex)


# -- GEN-RATE: rate-limit headers --------------------------------------------------------------------------
RATE_SCENARIOS = ["invoke.runs", "invoke.selection", "invoke.refusals"]


def all_exchanges(recs: Iterable[Recording]) -> list[Exchange]:
    return [ex for rec in recs for ex in rec.exchanges if ex.headers is not None]


@check("GEN-RATE-001", scenarios=RATE_SCENARIOS)
def rate_limit_remaining_seen(*recs: Recording) -> None:
    """Sends the invoke scenarios; reports on which answers `X-RateLimit-Remaining` appeared."""
    exchanges = all_exchanges(recs)
    with_header = [ex for ex in exchanges if ex.header("x-ratelimit-remaining") is not None]
    statuses = sorted({str(ex.status) for ex in with_header})
    raise Observation(f"`X-RateLimit-Remaining` on {len(with_header)} of {len(exchanges)} invoke answers"
                      + (f" (statuses {', '.join(statuses)})" if statuses else ""))


@check("GEN-RATE-002", scenarios=RATE_SCENARIOS)
def rate_limit_remaining_is_count(*recs: Recording) -> str:
    """Sends the invoke scenarios; every `X-RateLimit-Remaining` value is a non-negative decimal integer."""
    values = [(ex, v) for ex in all_exchanges(recs) for v in ex.headers.get_list("x-ratelimit-remaining")]
    bad = [f"{ex.label}: {v!r}" for ex, v in values if not _DIGITS.fullmatch(v.strip())]
    assert not bad, "`X-RateLimit-Remaining` must be a non-negative integer: " + "; ".join(bad[:MAX_LISTED])
    if not values:
        raise NotAssessed("no invoke answer carried `X-RateLimit-Remaining`: nothing to judge")
    return f"{len(values)} values seen"


@check("GEN-RATE-003", scenarios=RATE_SCENARIOS, supplementary=True)   # a 429 here is by chance; the probe judges
def retry_after_is_seconds(*recs: Recording) -> str:
    """Collects every 429 of the invoke scenarios; each carries `Retry-After` in whole seconds."""
    exchanges = all_exchanges(recs)
    waited = sum(len(ex.waited_429) for ex in exchanges)     # the client waited only on a digits-only Retry-After
    final = [ex for ex in exchanges if ex.status == 429]
    if not waited and not final:
        raise NotAssessed("no 429 was observed (the suite does not provoke rate limiting)")
    bad = [f"{ex.label}: Retry-After {ex.header('retry-after')!r}" for ex in final
           if not _DIGITS.fullmatch((ex.header("retry-after") or "").strip())]
    assert not bad, "a 429 must carry `Retry-After` in whole seconds: " + "; ".join(bad[:MAX_LISTED])
    return f"{waited + len(final)} 429 answer(s), each with a whole-second Retry-After"
