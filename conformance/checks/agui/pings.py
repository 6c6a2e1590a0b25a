"""agui checks: pings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.wire.sse import SSEComment, SSEEvent
from conformance.checks.agui._common import PING_INTERVAL, PING_TEXT, Run, judge_every, register_again, runs, streams


def is_ping(comment: SSEComment) -> bool:
    """A keep-alive ping by the MUST's reading: a comment line whose text begins with `ping` (one leading space
    aside, as SSE drops one from field values): `: ping`, `:ping`, `: ping - 2026-11-22 21:59:45+00:00`
    (sse-starlette's default). `: keepalive` is not a ping."""
    text = comment.text[1:] if comment.text.startswith(" ") else comment.text
    return text.startswith("ping")


def pings_of(r: Run) -> list[SSEComment]:
    return [i for i in r.stream.items if isinstance(i, SSEComment) and is_ping(i)]


@dataclass(frozen=True)
class Quiet:
    """The silence of a run that holds one: the longest stretch between two consecutive frames."""
    before: int          # the index among the stream's items of the frame before it
    after: int           # ... of the frame after it
    seconds: float       # between their arrival times

    def holds(self, index: int) -> bool:
        return self.before < index < self.after


def quiet_of(r: Run) -> Quiet | None:
    frames = [(n, i) for n, i in enumerate(r.stream.items) if isinstance(i, SSEEvent) and i.dispatched]
    gaps = [Quiet(n, m, b.t - a.t) for (n, a), (m, b) in zip(frames, frames[1:])]
    return max(gaps, key=lambda q: q.seconds, default=None)


def ping_problems(r: Run, tolerance: float, min_pings: int, quiet: Quiet | None = None) -> list[str]:
    """Pings during the silence: at least `min_pings` comment lines beginning with `ping` (with `quiet`, between the
    frame before that silence and the frame after it: one stream keeps its order, so this reads the server's own
    timer whatever the network does), and no gap between frames or pings over 15 s + tolerance (arrival times)."""
    items = r.stream.items
    pings = pings_of(r)
    others = sorted({i.text for i in items if isinstance(i, SSEComment) and not is_ping(i)})
    ping_ids = {id(i) for i in pings}
    anchors = [(i.t, "frame" if isinstance(i, SSEEvent) else "ping") for i in items
               if (isinstance(i, SSEEvent) and i.dispatched) or id(i) in ping_ids]
    problems = []
    inside = pings if quiet is None else [i for n, i in enumerate(items) if id(i) in ping_ids and quiet.holds(n)]
    if len(inside) < min_pings:
        silence = (f"a {r.rec.facts.get('silent_seconds')} s silence" if quiet is None else
                   f"the {quiet.seconds:.1f} s silence between frames {_frame_no(r, quiet.before)} and "
                   f"{_frame_no(r, quiet.after)}" + (f" ({len(pings)} elsewhere in the stream)" if pings else ""))
        problems.append(f"{len(inside)} comment line(s) beginning with 'ping' during {silence}, expected at least "
                        f"{min_pings}"
                        + (f" (other comments seen: {', '.join(repr(':' + t) for t in others[:5])})" if others else ""))
    bound = PING_INTERVAL + tolerance
    for (t0, k0), (t1, k1) in zip(anchors, anchors[1:]):
        if t1 - t0 > bound:
            problems.append(f"{t1 - t0:.1f} s passed between a {k0} at +{t0:.1f} s and the next {k1} at "
                            f"+{t1:.1f} s with no ping comment (at most {PING_INTERVAL:g} s + {tolerance:g} s tolerance)")
    # A ping is a comment line: it carries no event by construction (an `event: ping` frame is not counted at all).
    # A comment line written just before a data line of the next frame is still a comment (WHATWG), so it counts.
    return problems


def _frame_no(r: Run, index: int) -> int:
    """The number of the frame at `index` among the stream's items, counting dispatched frames from 1."""
    return sum(1 for i in r.stream.items[:index + 1] if isinstance(i, SSEEvent) and i.dispatched)


def _ping_check(min_pings: int) -> Callable[..., None]:
    def judge(rec):
        tolerance = rec.target.profile.timeouts.ping_tolerance

        def pinged(r: Run) -> None:
            problems = ping_problems(r, tolerance, min_pings)
            assert not problems, "; ".join(problems)
        return judge_every(runs(rec), pinged, nothing="no run of the silence was recorded")
    return judge


check("AGUI-PING-001", scenarios=["agui.silence"], name="ping_during_silence",
      doc="Runs `sleep 16`; a comment beginning with `ping` comes at most 15 s (+ tolerance) after the last frame.")(_ping_check(1))
check("AGUI-PING-002", scenarios=["agui.silence_long"], name="ping_repeats",
      doc="Runs `sleep 32` (--thorough); pings repeat: two or more, no gap between frames/pings over 15 s + tolerance.")(_ping_check(2))


@check("AGUI-PING-003", scenarios=["agui.silence"])
def ping_is_exactly_colon_ping(rec):
    """Runs `sleep 16`; every keep-alive comment during the silence is exactly the line `: ping`."""
    def exact(r: Run) -> None:
        if not pings_of(r):
            raise NotAssessed(f"{r.label}: no ping comment (AGUI-PING-001 judges that)")
        inexact = [c for c in pings_of(r) if c.text != PING_TEXT]
        assert not inexact, "; ".join(f"the keep-alive comment at +{c.t:.1f} s is {':' + c.text!r}, the spec's form is ': ping'"
                                      for c in inexact[:8])
    return judge_every(streams(rec), exact, nothing="no ping comment in any stream")


# -- silences at every position of a run (conformance.vocab.silences) ------------------------------------------------
@check("AGUI-PING-001", scenarios=["agui.silences"], supplementary=True)
def ping_inside_every_silence(rec):
    """Runs that fall silent for 16 s after text, after a tool call, after a step and after a resume; inside each
    silence (between the frame before it and the frame after it) a comment beginning with `ping` arrives, and no gap
    between frames or pings exceeds 15 s + tolerance."""
    tolerance = rec.target.profile.timeouts.ping_tolerance

    def pinged(r: Run) -> None:
        r.ends_with_terminal()     # a stream that did not end with its terminal event: AGUI-ORDER-002/003 judge it
        quiet = quiet_of(r)
        if quiet is None or quiet.seconds < PING_INTERVAL:
            raise NotAssessed(f"{r.label}: no two frames arrived {PING_INTERVAL:g} s apart, so no ping was due "
                              f"(the agent's {rec.facts['silences'][r.label]} silence did not show on the wire)")
        problems = ping_problems(r, tolerance, 1, quiet)
        assert not problems, "; ".join(problems)
    held = list(rec.facts.get("silences") or {})
    return judge_every(runs(rec, labels=held), pinged, nothing="no run of the silence model was recorded")


register_again(lambda c: c.id == "agui.ping_is_exactly_colon_ping", ["agui.silences"], "silences",
               "Runs that fall silent for 16 s at each position of a run")
