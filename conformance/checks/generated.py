"""Cross-protocol checks: the same generated input gives the same reply and params on every protocol.

Over the lead's `generated.round_trip` (the same `say-json` prompts over invoke
JSON, invoke stream, AG-UI and MCP) and `generated.params` (the same extra fields
with `echo params` over invoke and AG-UI). A difference is shown side by side:
every protocol's reply escaped with repr and cut around the first difference, so
one mangled character on one protocol is visible at a glance.

A failure names the exchange(s) that broke the rule, the side by side shows the others: the protocol whose reply is
not the expected text (or, when none is, not the majority's), the protocol whose params lost or changed a field. A
protocol whose answer holds no reply (a refusal: MCP's size limits are not shown, for one) is shown, not compared;
a run with fewer than two replies is not judged.
"""
from __future__ import annotations

import collections
import json
from typing import Any, Callable, Iterable

from conformance.outcomes import Deviation, NotAssessed, judge_all, precondition
from conformance.vocab.protocols import agui_events, agui_text, invoke_stream_text, mcp_response, mcp_text
from conformance.vocab import agent_readings, replies as replies_of
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
# The requirement that a protocol's reply to a generated say-json prompt is exactly the text sent.
ROUND_TRIP_RULE = {steps.INVOKE_JSON: "INV-RES-004", steps.INVOKE_SSE: "INV-STREAM-008", steps.AGUI: "AGUI-ORDER-006",
                   steps.MCP: "MCP-TOOL-002"}
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


def _breakers(replies: dict[Step, str], expected: str | None) -> list[Step]:
    """The protocols whose reply is not the expected text; when none is, those not giving the majority's."""
    if expected is not None and expected in replies.values():
        return [f for f, text in replies.items() if text != expected]
    common = collections.Counter(replies.values()).most_common(1)[0][0]
    return [f for f, text in replies.items() if text != common] or list(replies)


@check("GEN-XPROTO-001", scenarios=["generated.round_trip"])
def same_reply_on_every_protocol(rec) -> str:
    """Sends the same generated say-json prompts over invoke JSON, invoke stream, AG-UI and MCP; every reply is the same text."""
    texts = rec.facts.get("texts") or []
    runs = _runs(rec, READERS)
    if not runs:
        raise NotAssessed("the round-trip scenario sent no generated prompt")
    compared: list[int] = []

    def same_reply(run: tuple[int, dict[Step, Any]]) -> None:
        i, by_family = run
        replies, reasons, readable = {}, {}, {}
        for family in (f for f in READERS if f in by_family):
            kind = protocol_of(family)
            replies[kind], why = read_reply(family, by_family[family])
            if why:
                reasons[kind] = why
            else:
                readable[family] = replies[kind]
        if len(readable) < 2:
            raise NotAssessed(f"run {i}: fewer than two protocols gave a readable reply "
                              f"({'; '.join(f'{k}: {w}' for k, w in reasons.items())})")
        compared.append(i)
        if len(set(readable.values())) > 1:
            expected = texts[i] if i < len(texts) and isinstance(texts[i], str) else None
            odd = _breakers(readable, expected)
            message = (f"run {i}: the same prompt gave a different reply over "
                       f"{', '.join(protocol_of(f) for f in odd)}\n" + side_by_side(replies, reasons, expected))
            for f in odd:    # a run that replied to another message of its history: AGUI-PROMPT-001's
                if protocol_of(f) == "agui" and replies_of.replied_to_another(by_family[f], readable[f]):
                    raise precondition("AGUI-PROMPT-001", by_family[f], message)
            if expected is not None and expected in readable.values():
                # the odd protocol's reply is not the text sent: its own round-trip rule, judged on this exchange
                raise precondition(ROUND_TRIP_RULE[odd[0]], [by_family[f] for f in odd], message)
            raise Deviation(message, [by_family[f] for f in odd])

    judge_all(sorted(runs.items()), same_reply, exchange=lambda run: next(iter(run[1].values())),
              nothing="no generated prompt produced a readable reply on two protocols or more")
    missing = sorted({protocol_of(f) for r in runs.values() for f in READERS if f not in r})
    return f"{len(compared)} generated prompts gave one reply on every protocol" + \
        (f" (not sent: {', '.join(missing)})" if missing else "")


def _echoed_params(family: Step, ex) -> tuple[Any, str]:
    if ex.status != 200:
        return None, f"status {ex.status}"
    try:
        return agent_readings.echoed(PARAM_READERS[family](ex), "echo params", ex), ""
    except (AssertionError, TypeError) as exc:
        return None, f"the reply is not canonical JSON of params: {str(exc).splitlines()[0][:120]}"


@check("GEN-XPROTO-002", scenarios=["generated.params"])
def same_params_on_every_protocol(rec) -> str:
    """Sends the same generated extra fields with `echo params` over invoke and AG-UI; both params hold them unchanged."""
    sent_all = rec.facts.get("params") or []
    runs = _runs(rec, PARAM_READERS)
    compared: list[int] = []

    def same_params(run: tuple[int, dict[Step, Any]]) -> None:
        i, by_family = run
        if i >= len(sent_all) or not isinstance(sent_all[i], dict):
            raise NotAssessed(f"run {i}: no generated fields noted for it")
        sent = sent_all[i]
        echoed = {f: _echoed_params(f, ex) for f, ex in sorted(by_family.items())}
        readable = {f: v for f, (v, why) in echoed.items() if not why}
        if len(readable) < 2:
            unread = "; ".join(f"{protocol_of(f)}: {why}" for f, (_, why) in echoed.items() if why)
            raise NotAssessed(f"run {i}: fewer than two protocols echoed params ({unread})")
        compared.append(i)
        for key, value in sent.items():
            got = {f: (p.get(key, "<absent>") if isinstance(p, dict) else "<params not an object>")
                   for f, p in readable.items()}
            odd = [f for f, g in got.items() if not same_json(g, value)]
            if odd:
                rows = "\n".join(f"  {protocol_of(f):<7} {_repr(g)}" for f, g in got.items())
                raise Deviation(f"run {i}, field {key!r} reached the agent changed over "
                                f"{', '.join(protocol_of(f) for f in odd)}:\n  sent    {_repr(value)}\n{rows}",
                                [by_family[f] for f in odd])

    judge_all(sorted(runs.items()), same_params, exchange=lambda run: next(iter(run[1].values())),
              nothing="no run echoed params on two protocols")
    return f"{len(compared)} generated field sets reached params unchanged over invoke and AG-UI"


def _repr(value: Any, limit: int = 160) -> str:
    return truncate(json.dumps(value, ensure_ascii=True, sort_keys=True) if value != "<absent>" else value, limit)
