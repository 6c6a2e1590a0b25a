"""Cross-protocol checks: the same generated input gives the same reply and params on every protocol.

Over the lead's `generated.round_trip` (the same `say-json` prompts over invoke
JSON, invoke stream, AG-UI and MCP) and `generated.params` (the same extra fields
with `echo params` over invoke and AG-UI). A difference is shown side by side:
every protocol's reply escaped with repr and cut around the first difference, so
one mangled character on one protocol is visible at a glance.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from conformance.outcomes import NotAssessed
from conformance.vocab.protocols import agui_events, agui_text, invoke_stream_text, mcp_response, mcp_text
from conformance.registry import Step, check
from conformance.vocab.steps import generated as steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json

CONTEXT_BEFORE = 24
CONTEXT_AFTER = 40


# -- reading one reply per protocol (None plus a reason when the answer holds no reply) -----------
def _invoke_json(ex) -> str:
    body = ex.json()
    assert isinstance(body, dict) and isinstance(body.get("result"), str), \
        f"no string `result` in the invoke body: {ex.body[:200]!r}"
    return body["result"]


def _invoke_sse(ex) -> str:
    return invoke_stream_text(ex)


def _agui(ex) -> str:
    return agui_text(agui_events(ex))


def _mcp(ex) -> str:
    msg = mcp_response(ex)
    result = msg.get("result")
    assert isinstance(result, dict), f"the MCP answer is not a result: {json.dumps(msg)[:200]}"
    return mcp_text(result)


def protocol_of(family: Step) -> str:
    """The name a label family's replies are shown under: `invoke-json-*` -> `invoke-json`."""
    return family[:-2]


# Each scenario's label families (one per protocol, in the order their replies are shown) and their reply's reader.
READERS: dict[Step, Callable[[Any], str]] = {steps.INVOKE_JSON: _invoke_json, steps.INVOKE_SSE: _invoke_sse,
                                             steps.AGUI: _agui, steps.MCP: _mcp}
PARAM_READERS: dict[Step, Callable[[Any], str]] = {steps.INVOKE: _invoke_json, steps.AGUI: _agui}


def read_reply(family: Step, ex) -> tuple[str | None, str]:
    """(reply, "") or (None, why): a protocol whose answer cannot be read is shown, not compared."""
    if ex.status != 200:
        return None, f"status {ex.status}" + (f" ({ex.error})" if ex.error else "")
    try:
        return READERS[family](ex), ""
    except (AssertionError, ValueError, TypeError, AttributeError) as exc:
        return None, str(exc).splitlines()[0][:160]


# -- showing a difference -----------------------------------------------------------------------
def first_difference(values: list[str]) -> int:
    """Index of the first code point where the strings differ (the shortest length if one is a prefix)."""
    shortest = min(len(v) for v in values)
    for i in range(shortest):
        if len({v[i] for v in values}) > 1:
            return i
    return shortest


def side_by_side(replies: dict[str, str | None], reasons: dict[str, str], expected: str | None = None) -> str:
    """The replies (and the expected text) escaped with repr, cut around their first difference."""
    shown = {**({"expected": expected} if expected is not None else {}),
             **{k: v for k, v in replies.items() if v is not None}}
    at = first_difference(list(shown.values())) if shown else 0
    start = max(0, at - CONTEXT_BEFORE)
    width = max(len(k) for k in [*shown, *reasons]) if shown or reasons else 8
    lines = [f"first difference at code point {at}; showing [{start}:{at + CONTEXT_AFTER}]:"]
    for name, text in shown.items():
        cut = text[start:at + CONTEXT_AFTER]
        lines.append(f"  {name:<{width}} {'…' if start else ' '}{cut!r}{'…' if len(text) > at + CONTEXT_AFTER else ''}"
                     f"  ({len(text)} code points)")
    for name, why in reasons.items():
        lines.append(f"  {name:<{width}} (no reply: {why})")
    return "\n".join(lines)


def _runs(rec, families: Iterable[Step]) -> dict[int, dict[Step, Any]]:
    """Exchanges of a generated scenario grouped by run index: {i: {INVOKE_JSON: ex, ...}} (a member of a family
    that names no run index, such as a lookup, is left out)."""
    runs: dict[int, dict[Step, Any]] = {}
    for family in families:
        for i, ex in family.members(rec.labelled(family)):
            runs.setdefault(i, {})[family] = ex
    return runs


@check("GEN-XPROTO-001", scenarios=["generated.round_trip"])
def same_reply_on_every_protocol(rec) -> str:
    """Sends the same generated say-json prompts over invoke JSON, invoke stream, AG-UI and MCP; every reply is the same text."""
    texts = rec.facts.get("texts") or []
    runs = _runs(rec, READERS)
    if not runs:
        raise NotAssessed("the round-trip scenario sent no generated prompt")
    problems, compared = [], 0
    for i, by_family in sorted(runs.items()):
        replies, reasons = {}, {}
        for family in READERS:
            if family in by_family:
                kind = protocol_of(family)
                replies[kind], why = read_reply(family, by_family[family])
                if why:
                    reasons[kind] = why
        readable = {k: v for k, v in replies.items() if v is not None}
        if len(readable) < 2:
            continue                        # nothing to compare: each protocol's own checks judge the answer
        compared += 1
        if len(set(readable.values())) > 1:
            expected = texts[i] if i < len(texts) and isinstance(texts[i], str) else None
            problems.append(f"run {i}: the replies differ\n" + side_by_side(replies, reasons, expected))
    if not compared:
        raise NotAssessed("no generated prompt produced a readable reply on two protocols or more")
    assert not problems, "the same prompt gave different replies over the protocols:\n" + "\n".join(problems[:3])
    missing = sorted({protocol_of(f) for r in runs.values() for f in READERS if f not in r})
    return f"{compared} generated prompts gave one reply on every protocol" + \
        (f" (not sent: {', '.join(missing)})" if missing else "")


def _echoed_params(family: Step, ex) -> tuple[Any, str]:
    if ex.status != 200:
        return None, f"status {ex.status}"
    try:
        text = PARAM_READERS[family](ex)
        return json.loads(text), ""
    except (AssertionError, ValueError, TypeError) as exc:
        return None, f"the reply is not canonical JSON of params: {str(exc).splitlines()[0][:120]}"


@check("GEN-XPROTO-002", scenarios=["generated.params"])
def same_params_on_every_protocol(rec) -> str:
    """Sends the same generated extra fields with `echo params` over invoke and AG-UI; both params hold them unchanged."""
    sent_all = rec.facts.get("params") or []
    runs = _runs(rec, PARAM_READERS)
    problems, compared = [], 0
    for i, by_family in sorted(runs.items()):
        if i >= len(sent_all) or not isinstance(sent_all[i], dict):
            continue
        sent = sent_all[i]
        echoed = {protocol_of(f): _echoed_params(f, ex) for f, ex in sorted(by_family.items())}
        readable = {k: v for k, (v, why) in echoed.items() if not why}
        if len(readable) < 2:
            continue
        compared += 1
        for key, value in sent.items():
            got = {k: (p.get(key, "<absent>") if isinstance(p, dict) else "<params not an object>")
                   for k, p in readable.items()}
            if any(not same_json(g, value) for g in got.values()):
                rows = "\n".join(f"  {k:<7} {_repr(g)}" for k, g in got.items())
                problems.append(f"run {i}, field {key!r}:\n  sent    {_repr(value)}\n{rows}")
                break
    if not compared:
        raise NotAssessed("no run echoed params on two protocols")
    assert not problems, "the same extra fields reached the agent differently:\n" + "\n".join(problems[:3])
    return f"{compared} generated field sets reached params unchanged over invoke and AG-UI"


def _repr(value: Any, limit: int = 160) -> str:
    return truncate(json.dumps(value, ensure_ascii=True, sort_keys=True) if value != "<absent>" else value, limit)
