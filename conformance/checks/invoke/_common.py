"""What the invoke check modules share: constants and readers."""
from __future__ import annotations

import json
import re

from typing import Any, Callable, Iterable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, judge_all, precondition
from conformance.registry import Step, rule
from conformance.vocab import is_json_media_type
from conformance.vocab.constants import RUNS
from conformance.vocab.readers import error_of, frame_json, is_4xx
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
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
    """The invoke result of a non-streaming exchange. Unless it is 200 with a JSON object, the exchange broke
    INV-RES-001, and nothing else of the result can be read on it."""
    if ex.status != 200:
        raise precondition("INV-RES-001", ex, f"expected 200 with the invoke result, got {what(ex)}")
    try:
        body = ex.json()
    except AssertionError as exc:
        raise precondition("INV-RES-001", ex, str(exc)) from None
    if not isinstance(body, dict):
        raise precondition("INV-RES-001", ex, f"the invoke result is not a JSON object: "
                                              f"{truncate(json.dumps(body), 200, count=True)}")
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


def is_json_answer(ex: Exchange) -> bool:
    """Content-Type application/json or any +json type (RFC 6839), parameters aside."""
    return is_json_media_type(ex.content_type)


def joined(problems: list[str]) -> str:
    more = f"; … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return "; ".join(problems[:MAX_LISTED]) + more


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
    `id:`/`retry:`/unknown fields is legal SSE and no frame)."""
    assert ex.status == 200 and ex.stream is not None, \
        f"{ex.label}: expected a 200 `text/event-stream` answer, got {what(ex)}"
    return [f for f in ex.stream.events if any(name in ("event", "data") for name, _ in f.fields)]


def data(frame: SSEEvent) -> Any:
    """The frame's parsed data, or _BAD when it has none or it is not JSON."""
    ok, value = frame_json(frame) if frame.dispatched else (False, None)
    return value if ok else _BAD


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
    "runs": ("invoke.runs", steps.RUN_SSE),
    "generated": ("generated.round_trip", generated_steps.INVOKE_SSE),
    "timing": ("invoke.timing", steps.TIMED_SSE),
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


def generated(rec: Recording, family: Step) -> list[tuple[Exchange, str]]:
    """(exchange, text sent) of each run of a generated scenario's label family (run i is `family.of(i)`)."""
    texts = rec.facts.get("texts") or []
    out = [(ex, texts[i]) for i, ex in family.members(rec.labelled(family)) if i < len(texts)]
    if not out:
        raise NotAssessed(f"scenario {rec.scenario} recorded no {family} exchange")
    return out


def exact(ex: Exchange, got: str, expected: str) -> None:
    if got == expected:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    raise AssertionError(
        f"{ex.label}: the reply differs from the text sent at code point {at} (expected {len(expected)} code points, "
        f"got {len(got)}): expected …{expected[max(0, at - 20):at + 20]!r}…, got …{got[max(0, at - 20):at + 20]!r}…")


def count_is(ex: Exchange, expected: int, why: str) -> None:
    got = reply_of(ex)
    assert got.strip() == str(expected), f"{ex.label}: {why}: `count` must reply {expected}, got {truncate(got, 200, count=True)!r}"
