"""What a run says about its pace while it runs: the plan when it starts (requests, and how long the server's rate limit
makes it last, learnt from the first answers), the pace once the refill rate is learnt, and progress (requests sent of
planned, time left); as lines for people (`terminal`) and as JSON events (`--format json`).

`Ticker` decides when: the plan once, the pace once (when the refill is learnt, or the bucket turns out to keep up,
after a plan that had to assume a rate), and progress on every tick
where a live line can be rewritten, otherwise at most every `QUIET_EVERY` seconds and only while the rate limit sets
the run's length: a CI log gets a line now and then, never a stream of them. CI is told by its usual variables.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Mapping

from conformance import plan

CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL", "TEAMCITY_VERSION",
                "CIRCLECI", "BITBUCKET_BUILD_NUMBER")
QUIET_EVERY = 60.0      # seconds between progress lines (or events) in CI or without a terminal
EVENTS_EVERY = 10.0     # seconds between progress events elsewhere
LIVE_EVERY = 0.5        # seconds between rewrites of a live line


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(name, "").strip().lower() not in ("", "0", "false") for name in CI_VARIABLES)


# -- words ------------------------------------------------------------------------------------------------------
def plan_line(est: plan.Estimate, cap: float) -> str:
    """'plan: 290 requests, about 4 min 50 s (…) · cap 30 min (--max-run-time)'."""
    return (f"plan: {est.planned} requests, about {plan.minutes_text(est.total)} ({est.basis()}) · "
            f"cap {plan.minutes_text(cap)} (--max-run-time)")


def pace_line(est: plan.Estimate) -> str:
    return (f"pace: {est.basis()}: about {plan.minutes_text(est.total)} in all, "
            f"{plan.minutes_text(est.left)} left")


def progress_line(est: plan.Estimate) -> str:
    return f"requests {est.sent}/{est.planned} · {plan.minutes_text(est.left)} left"


def event(kind: str, est: plan.Estimate | None = None, **more: Any) -> dict[str, Any]:
    """One JSON event: `kind` and, with an estimate, where the run stands."""
    out: dict[str, Any] = {"event": kind}
    if est is not None:
        out.update(requests_planned=est.planned, requests_sent=est.sent, elapsed_seconds=round(est.elapsed, 1),
                   seconds_left=round(est.left, 1), estimated_seconds=round(est.total, 1),
                   rate_limited=est.limited, rate_per_second=None if est.rate is None else round(est.rate, 3),
                   rate_learnt=est.rate_known, basis=est.basis())
    out.update(more)
    return out


def event_line(ev: dict[str, Any]) -> str:
    return json.dumps(ev, ensure_ascii=False, separators=(",", ":"))


# -- when ---------------------------------------------------------------------------------------------------------
class Ticker:
    """Says the plan, the pace and progress of one run through `say(kind, estimate)` (kind: plan, pace, progress),
    no more often than its output can take: `live` (a line rewritten in place) on every tick, else every `every`
    seconds while the rate limit sets the run's length."""

    def __init__(self, estimate: Callable[[], plan.Estimate], say: Callable[[str, plan.Estimate], None], *,
                 live: bool, every: float, clock: Callable[[], float] | None = None) -> None:
        self.estimate, self.say, self.live, self.every = estimate, say, live, every
        self.clock = clock or (lambda: time.monotonic())
        self._last = float("-inf")       # when progress (or the plan, or the pace) was last said
        self._looked = float("-inf")     # when the estimate was last read
        self._paced = False

    def start(self) -> None:
        est = self.estimate()
        self._paced = est.rate is None or est.rate_known or not est.limited
        self.say("plan", est)
        self._last = self._looked = self.clock()

    def tick(self) -> None:
        now = self.clock()
        if now - self._looked < LIVE_EVERY:
            return
        self._looked = now
        est = self.estimate()
        if not self._paced and (est.rate_known or not est.limited):   # learnt, or the bucket keeps up: say it
            self._paced = True
            self._last = now
            self.say("pace", est)
        elif now - self._last >= (LIVE_EVERY if self.live else self.every) and (self.live or est.limited):
            self._last = now
            self.say("progress", est)
