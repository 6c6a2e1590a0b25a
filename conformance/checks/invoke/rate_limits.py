"""invoke checks: GEN-RATE: rate-limit headers."""
from __future__ import annotations

from typing import Iterable

from conformance.engine import Recording
from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import Deviation, NotAssessed, Observation, joined
from conformance.registry import check
from conformance.wire.exchange import Exchange
from conformance.vocab.values import digits_only


RATE_SCENARIOS = ["invoke.runs", "invoke.selection", "invoke.refusals"]


def values_seen(pairs: list[tuple[Exchange, str | None]]) -> str:
    """`'unlimited' on json-plain_reply, json-step; …`: each header value and the steps that carried it."""
    labels: dict[str | None, list[str]] = {}
    for ex, value in pairs:
        labels.setdefault(value, []).append(ex.label)
    return joined([f"{value!r} on {', '.join(steps[:3])}" + (f" and {len(steps) - 3} more" if len(steps) > 3 else "")
                   for value, steps in labels.items()])


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
    values = [(ex, v) for ex in all_exchanges(recs) for v in remaining_values(ex)]
    bad = [(ex, v) for ex, v in values if not digits_only(v.strip())]
    if bad:
        raise Deviation("`X-RateLimit-Remaining` must be a non-negative integer, got " + values_seen(bad),
                        [ex for ex, _ in bad])
    if not values:
        raise NotAssessed("no invoke answer carried `X-RateLimit-Remaining`: nothing to judge")
    return f"{len(values)} values seen"


def remaining_values(ex: Exchange) -> list[str]:
    """The answer's `X-RateLimit-Remaining` as a client reads it: its field lines combined into one value (RFC 9110
    §5.3: `9998, 9998` from two lines, which is no count); [] without one."""
    lines = ex.headers.get_list("x-ratelimit-remaining") if ex.headers is not None else []
    return [", ".join(lines)] if lines else []


def remaining_is_count(ex: Exchange, target: object) -> None:
    bad = [v for v in remaining_values(ex) if not digits_only(v.strip())]
    assert not bad, f"`X-RateLimit-Remaining` must be a non-negative integer, got {values_seen([(ex, v) for v in bad])}"


register(ExchangeRule("GEN-RATE-002", "remaining_is_count", ("invoke", "agui", "mcp", "metadata"),
                      lambda ex, target: bool(remaining_values(ex)), remaining_is_count,
                      doc="wherever an answer carries `X-RateLimit-Remaining`, its value is a non-negative integer, "
                          "whatever the request and its operation."))


@check("GEN-RATE-003", scenarios=RATE_SCENARIOS, supplementary=True)   # a 429 here is by chance; the probe judges
def retry_after_is_seconds(*recs: Recording) -> str:
    """Collects every 429 of the invoke scenarios; each carries `Retry-After` in whole seconds."""
    exchanges = all_exchanges(recs)
    waited = sum(len(ex.waited_429) for ex in exchanges)     # the client waited only on a digits-only Retry-After
    final = [ex for ex in exchanges if ex.status == 429]
    if not waited and not final:
        raise NotAssessed("no 429 was observed (the suite does not provoke rate limiting)")
    bad = [ex for ex in final if not digits_only((ex.header("retry-after") or "").strip())]
    if bad:
        raise Deviation("a 429 must carry `Retry-After` in whole seconds, got "
                        + values_seen([(ex, ex.header("retry-after")) for ex in bad]), bad)
    return f"{waited + len(final)} 429 answer(s), each with a whole-second Retry-After"
