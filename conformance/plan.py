"""A run's plan: how many requests it sends, how long the server's rate limit makes it last, and where it stands.

The requests come from `REQUESTS` (what each scenario sends a conformant server, measured on the embedded reference
server; tests/runner/test_plan.py holds the table to a run). The length comes from the pacer (`wire.pace`): the tokens
the server's `X-RateLimit-Remaining` leaves, the refill rate it learns from two of them (until then one request a
second is assumed, and the estimate says so), a 429's `Retry-After`, and our own `--rate-limit`. Without a rate limit
a run lasts about as long as its longest scenario (`floor`). Everything here is a pure function of a `PaceState`, so
the estimate is tested on a fake clock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from conformance import versions
from conformance.wire.pace import PaceState, duration_text

# Requests each scenario sends a conformant server in a default run (every fact given, depth 1, HTTP/1.1): a default
# run of the embedded reference server, scenario by scenario. A scenario not listed counts UNLISTED.
REQUESTS: dict[str, int] = {
    "access.agui": 10, "access.invoke": 10, "access.mcp": 13, "forms.agui_limits": 5, "forms.agui_refusals": 12,
    "forms.invoke_limits": 5, "forms.invoke_refusals": 23, "forms.mcp_limits": 5, "forms.mcp_refusals": 38,
    "forms.triples": 0,
    "agui.big": 1, "agui.chain": 6, "agui.cross_chain": 8,
    "agui.cross_session": 3, "agui.fail_after": 1, "agui.fail_before": 1, "agui.histories": 52,
    "agui.input_forms": 2, "agui.interrupt": 2, "agui.key_lengths": 2, "agui.last_user": 2, "agui.messages": 1,
    "agui.params": 3, "agui.params_falsy": 1, "agui.plain": 2, "agui.refusals": 7, "agui.resume_open": 5,
    "agui.session": 5, "agui.silence": 1, "agui.silence_long": 0, "agui.silences": 5, "agui.slow_run": 3,
    "agui.step": 1, "agui.streamed": 1, "agui.together": 7, "agui.tool": 1, "agui.upstream_input": 1,
    "fuzz.agui": 11, "fuzz.invoke": 12, "fuzz.mcp": 8, "fuzz.metadata": 2, "generated.params": 6,
    "generated.round_trip": 8, "invoke.big_body": 1, "invoke.chain": 4, "invoke.cleartext": 2,
    "invoke.extra_data": 3, "invoke.input_forms": 4, "invoke.key_lengths": 2, "invoke.messages": 0,
    "invoke.params": 3, "invoke.refusals": 14, "invoke.runs": 12, "invoke.selection": 5, "invoke.sessions": 5,
    "invoke.silences": 4, "invoke.slow_run": 3, "invoke.timing": 2, "invoke.together": 4, "mcp.chain": 12,
    "mcp.failures": 2, "mcp.input_forms": 3, "mcp.legacy": 3, "mcp.modern": 4, "mcp.official_client": 11,
    "mcp.pause_elicit": 2, "mcp.pause_falsy": 2, "mcp.pause_text": 2, "mcp.progress": 3, "mcp.rate_limit": 0,
    "mcp.refusals": 12, "mcp.sessions": 4, "mcp.silences": 5, "mcp.slow_run": 3, "mcp.together": 7,
    "metadata.challenge": 1, "metadata.document": 9,
}
# Of those, the requests that spend nothing of the server's bucket on the reference server: refused for their
# credential (401), sent without one (the metadata document), or never answered (cleartext http://). They are sent
# at the pace of the others, but the bucket's refill is spent on the rest alone.
FREE: dict[str, int] = {
    "access.agui": 5, "access.invoke": 5, "access.mcp": 9, "forms.agui_refusals": 5, "forms.invoke_refusals": 10,
    "forms.mcp_refusals": 20, "fuzz.agui": 1, "fuzz.invoke": 1, "fuzz.mcp": 1,
    "fuzz.metadata": 2, "invoke.cleartext": 2, "invoke.refusals": 1, "metadata.challenge": 1, "metadata.document": 7,
}
UNLISTED = 3
DEPTH_SCALED = ("fuzz.", "generated.")     # their generated requests grow with --depth
PREFLIGHT = 5                              # the metadata document, a plain call per protocol, a conversation
PREFLIGHT_FREE = 1                         # the metadata document
# what --thorough adds (the 429 probe: `probe_requests`); the rows of the covering arrays of triples the rest left,
# about as many for every seed
THOROUGH = {"agui.silence_long": 1, "forms.triples": 243}
PROBE_BATCH = 25                           # the 429 probe sends what X-RateLimit-Remaining leaves plus a batch
SLOWEST = 16.0                             # seconds the slowest scenario but agui.silence takes (the 15 s runs)
QUICK = 1.0                                # seconds any other scenario takes
TAIL = 2.0                                 # seconds the last requests take to be answered
CAP_STEPS = (60.0, 300.0)                  # a suggested --max-run-time is rounded up to a minute, past 10 to 5


def planned_requests(scenarios: Iterable[str], *, depth: int = 1, thorough: bool = False,
                     remaining: int | None = None, probe_max: int = 1000, free: bool = False,
                     preflight: int | None = None) -> int:
    """Requests a run of these scenarios sends a conformant server, the preflight's included (`preflight` of them
    when the run knows; `free`: only those the pacer never waits for: those that spend nothing of the bucket, and
    the 429 probe's, sent unpaced to empty it)."""
    total = preflight if preflight is not None else PREFLIGHT_FREE if free else PREFLIGHT
    for name in scenarios:
        base = name.removesuffix(versions.TWIN)
        n = FREE.get(base, 0) if free else REQUESTS.get(base, UNLISTED)
        if base.startswith(DEPTH_SCALED):
            n *= max(1, depth)
        if thorough:
            n += 0 if free else THOROUGH.get(base, 0)
            if base == "mcp.rate_limit":
                n += probe_requests(remaining, probe_max)
        total += n
    return total


def probe_requests(remaining: int | None, probe_max: int) -> int:
    """What the 429 probe of --thorough sends: what X-RateLimit-Remaining leaves plus a batch, at most its cap."""
    return probe_max if remaining is None else min(probe_max, remaining + PROBE_BATCH)


def floor_seconds(longest: Iterable[float]) -> float:
    """How long a run lasts with no rate limit in the way: its longest scenario (of `longest`, each scenario's
    length: the AG-UI silences', SLOWEST for the other slow ones, QUICK for the rest), and a second."""
    return max(longest, default=QUICK) + 1.0


@dataclass(frozen=True)
class Estimate:
    """Where a run stands and how long it has left, as far as the pacer knows."""
    planned: int            # requests the run sends in all
    sent: int               # requests sent so far (resends included)
    elapsed: float          # seconds since the run started
    left: float             # seconds it needs still
    limited: bool           # the rate limit sets its length (without it, the longest scenario does)
    rate: float | None      # requests per second the rate limit allows (None: none shown)
    rate_known: bool        # that rate was learned (or is our own --rate-limit); False: assumed
    tokens: float | None    # what the server's bucket holds for us now (None: not shown)
    rate_seen: bool = False  # the rate was read from the answers, over a span too short to call it learnt

    @property
    def total(self) -> float:
        return self.elapsed + self.left

    def basis(self) -> str:
        """Where the estimate comes from, in words."""
        if self.rate is None:
            return "no rate limit shown"
        left = f"{max(0, int(self.tokens))} left in the server's bucket" if self.tokens is not None else ""
        rate = f"{self.rate:.3g} request{'s' if self.rate != 1 else ''}/s"
        if not self.limited:
            if self.rate_known:
                return f"{left + ', ' if left else ''}refill {rate} learnt from X-RateLimit-Remaining: it keeps up"
            return f"{left or 'the rate limit'} covers what is left to send"
        pace = (f"refill {rate} learnt from X-RateLimit-Remaining" if self.rate_known
                else f"refill about {rate} so far" if self.rate_seen
                else f"refill not shown yet, {rate} assumed until the bucket runs low")
        return f"{left}, {pace}" if left else pace


def estimate(planned: int, floor: float, state: PaceState, started: float, free: int = 0) -> Estimate:
    """How long the run has left: the requests still to send that spend the bucket (of `planned`, `free` spend
    nothing), beyond what the bucket holds now (less the pacer's reserve), at the refill rate, after any Retry-After
    still running; never less than its longest scenario."""
    elapsed = max(0.0, state.now - started)
    to_send = max(0, (planned - free) - (state.sent - state.unspent))
    by_floor = max(0.0, floor - elapsed)
    held = [t for t in (state.tokens, state.own_tokens) if t is not None]
    tokens = min(held) if held else None
    shown = tokens is not None or state.limited
    if not shown:
        return Estimate(planned, state.sent, elapsed, by_floor, False, None, False, None)
    usable = max(0.0, (tokens or 0.0) - state.reserve)
    blocked = max(0.0, state.blocked_until - state.now)
    beyond = max(0.0, to_send - usable)
    paced = blocked + beyond / state.rate + (TAIL if beyond else 0.0)
    return Estimate(planned, state.sent, elapsed, max(by_floor, paced), paced > by_floor, state.rate,
                    state.rate_known, tokens, state.rate_seen)


def suggested_cap(total: float, cap: float) -> float:
    """A --max-run-time that lets a run of this estimated length finish: a quarter more, and a minute more than the
    cap that cut it at least, rounded up to a minute (to 5 minutes past 10)."""
    want = max(total * 1.25, cap + CAP_STEPS[0])
    step = CAP_STEPS[0] if want <= 600 else CAP_STEPS[1]
    return math.ceil(want / step) * step


def minutes_text(seconds: float) -> str:
    """'17 s', '4 min 10 s', '1 h 5 min': a length for people."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        m, s = divmod(s, 60)
        return f"{m} min" + (f" {s} s" if s else "")
    h, m = divmod(round(seconds / 60), 60)
    return f"{h} h" + (f" {m} min" if m else "")


def cap_words(seconds: float) -> str:
    """The cap in the words every message that names it uses: 'the run's cap of 2 min (--max-run-time 2m)'."""
    return f"the run's cap of {minutes_text(seconds)} ({cap_option(seconds)})"


def cap_option(seconds: float) -> str:
    """The option that sets this cap, as a user types it."""
    return f"--max-run-time {duration_text(seconds)}"
