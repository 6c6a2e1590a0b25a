"""A run's plan (conformance.plan): the estimate on a fake pace, the run's deadline following the time held back by the
rate limit up to its cap, when progress is said (reporting.progress), and the table of what each scenario sends held to
a default run of the embedded server."""
from __future__ import annotations

import gzip
import json
from dataclasses import replace

import pytest

from conformance import engine, plan, registry, versions
from conformance.reporting import progress
from conformance.wire.pace import PaceState, Pacer, RunDeadline, duration_text, parse_duration
from tests.runner.conftest import DEFAULT_RUN

START = 1000.0


def pace(**kw) -> PaceState:
    """What the pacer knows at START + 10 s: nothing shown, unless `kw` says so."""
    base = PaceState(now=START + 10, sent=0, tokens=None, rate=1.0, rate_known=False, largest_remaining=0,
                     blocked_until=0.0, reserve=2, shows_remaining=True, limited=False, held_seconds=0.0)
    return replace(base, **kw)


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# -- the estimate -------------------------------------------------------------------------------------------------
def test_without_a_rate_limit_a_run_lasts_its_longest_scenario():
    got = plan.estimate(300, 17.0, pace(sent=40), START)
    assert (got.elapsed, got.left, got.total, got.limited, got.rate) == (10.0, 7.0, 17.0, False, None)
    assert got.basis() == "no rate limit shown"


def test_a_bucket_that_holds_the_whole_plan_costs_no_wait():
    got = plan.estimate(300, 17.0, pace(sent=4, tokens=520.0), START)
    assert got.left == 7.0 and not got.limited
    assert got.basis() == "520 left in the server's bucket covers what is left to send"


def test_beyond_the_bucket_the_refill_rate_sets_the_length():
    """60 a minute: 58 left after the preflight, 1 a second learnt; 296 requests to go, 56 of them from the bucket."""
    got = plan.estimate(300, 17.0, pace(sent=4, tokens=58.0, rate=1.0, rate_known=True, limited=True), START)
    assert got.limited and got.left == pytest.approx(240 + plan.TAIL)
    assert got.basis() == "58 left in the server's bucket, refill 1 request/s learnt from X-RateLimit-Remaining"


def test_a_rate_not_learnt_yet_is_said_to_be_assumed():
    got = plan.estimate(300, 17.0, pace(sent=4, tokens=50.0), START)
    assert got.limited and not got.rate_known
    assert "refill not shown yet, 1 request/s assumed until the bucket runs low" in got.basis()


def test_a_rate_read_over_a_short_span_is_said_to_be_so_far():
    got = plan.estimate(300, 17.0, pace(sent=4, tokens=5.0, rate=0.9, rate_seen=True, limited=True), START)
    assert got.basis() == "5 left in the server's bucket, refill about 0.9 requests/s so far"


def test_a_retry_after_still_running_adds_its_wait():
    shown = pace(sent=100, tokens=0.0, rate=2.0, rate_known=True, limited=True, blocked_until=START + 40)
    got = plan.estimate(300, 17.0, shown, START)
    assert got.left == pytest.approx(30 + 200 / 2.0 + plan.TAIL)


def test_a_429_with_no_remaining_shown_is_a_rate_limit_too():
    got = plan.estimate(300, 17.0, pace(sent=100, limited=True, blocked_until=START + 12), START)
    assert got.limited and got.left == pytest.approx(2 + 200 / 1.0 + plan.TAIL)


def test_our_own_rate_limit_paces_a_server_that_shows_none():
    got = plan.estimate(300, 17.0, pace(sent=100, own_tokens=10.0, rate=5.0, rate_known=True), START)
    assert got.limited and got.left == pytest.approx((200 - 8) / 5.0 + plan.TAIL)


def test_planned_requests_count_twins_depth_and_the_thorough_probe():
    base = plan.planned_requests(["invoke.runs", "fuzz.invoke"])
    assert base == plan.PREFLIGHT + plan.REQUESTS["invoke.runs"] + plan.REQUESTS["fuzz.invoke"]
    assert plan.planned_requests(["invoke.runs", "invoke.runs@h2"]) == plan.PREFLIGHT + 2 * plan.REQUESTS["invoke.runs"]
    assert plan.planned_requests(["fuzz.invoke"], depth=3) == plan.PREFLIGHT + 3 * plan.REQUESTS["fuzz.invoke"]
    assert plan.planned_requests(["mcp.rate_limit"], thorough=True, remaining=40, probe_max=1000) == \
        plan.PREFLIGHT + 40 + plan.PROBE_BATCH
    assert plan.planned_requests(["mcp.rate_limit"], thorough=True, remaining=None, probe_max=300) == \
        plan.PREFLIGHT + 300
    assert plan.planned_requests(["a.scenario.nobody.listed"]) == plan.PREFLIGHT + plan.UNLISTED
    # the probe is sent unpaced to empty the bucket: the pacer never waits for it
    assert plan.planned_requests(["mcp.rate_limit"], thorough=True, remaining=40, free=True) == \
        plan.PREFLIGHT_FREE + 40 + plan.PROBE_BATCH


@pytest.mark.parametrize("seconds,text", [(17.2, "17 s"), (250, "4 min 10 s"), (240, "4 min"), (3900, "1 h 5 min")])
def test_lengths_for_people(seconds, text):
    assert plan.minutes_text(seconds) == text


def test_the_cap_suggested_finishes_the_run_and_is_more_than_the_one_that_cut_it():
    assert plan.suggested_cap(2000, 1800) == 2700          # 2500 s, rounded up to 5 minutes
    assert plan.suggested_cap(500, 1800) == 2100           # more than the cap that cut it
    assert plan.suggested_cap(212, 120) == 300             # 265 s, rounded up to a minute
    assert plan.cap_option(2700) == "--max-run-time 45m" and plan.cap_option(300) == "--max-run-time 5m"


@pytest.mark.parametrize("text,seconds", [("900", 900), ("90s", 90), ("30m", 1800), ("1.5h", 5400), ("1d", 86400)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds
    assert parse_duration(duration_text(seconds)) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5", "5x", "m", "1h30"])
def test_durations_refused(text):
    with pytest.raises(ValueError):
        parse_duration(text)


# -- the run's deadline follows the pace, up to the cap -----------------------------------------------------------
def test_the_deadline_does_not_count_time_held_back_by_the_rate_limit():
    held = [0.0]
    d = RunDeadline(START, 150.0, 1800.0, lambda: held[0], budget_words="the run's deadline (b)",
                    cap_words="the run's cap (c)")
    assert d.at() == START + 150 and not d.capped() and d.words() == "the run's deadline (b)"
    held[0] = 600.0
    assert d.at() == START + 750 and d.left(START + 700) == 50
    held[0] = 1700.0
    assert d.at() == START + 1800 and d.capped() and d.words() == "the run's cap (c)"
    assert d.later(1.0).at() == START + 1801 and d.later(1.0).cap_at == START + 1801


def test_the_pacer_counts_wall_time_held_once_however_many_requests_wait():
    clock = Clock()
    p = Pacer(clock=clock)
    p.hold()
    clock.now += 5
    p.hold()             # a second request waits meanwhile: the run is still held back once
    clock.now += 5
    p.release()
    assert p.held_seconds() == 10.0
    p.release()
    clock.now += 20      # nobody waits
    assert p.held_seconds() == 10.0 and p.state().limited


# -- when progress is said ------------------------------------------------------------------------------------------
def ticked(live: bool, estimates: list[plan.Estimate], ticks: int, step: float) -> list[tuple[str, float]]:
    """What a Ticker says (kind, when) over `ticks` ticks `step` seconds apart, reading `estimates` in turn (the last
    one again once they run out)."""
    clock = Clock()
    said: list[tuple[str, float]] = []
    it = iter(estimates)
    last = [estimates[-1]]

    def estimate() -> plan.Estimate:
        last[0] = next(it, last[0])
        return last[0]

    t = progress.Ticker(estimate, lambda kind, est: said.append((kind, clock.now)), live=live,
                        every=progress.QUIET_EVERY, clock=clock)
    t.start()
    for _ in range(ticks):
        clock.now += step
        t.tick()
    return said


def est(*, limited: bool, known: bool) -> plan.Estimate:
    return plan.Estimate(300, 10, 5.0, 200.0, limited, 1.0, known, 50.0)


def test_a_quiet_log_gets_the_plan_the_pace_once_learnt_and_a_line_a_minute():
    said = ticked(False, [est(limited=True, known=False), est(limited=True, known=True)], 240, 1.0)   # four minutes
    kinds = [k for k, _ in said]
    assert kinds[:2] == ["plan", "pace"] and kinds.count("pace") == 1
    assert kinds.count("progress") == 3          # at most one a minute
    assert all(b - a >= progress.QUIET_EVERY for (_, a), (_, b) in zip(said[1:], said[2:]))


def test_a_plan_that_assumed_a_rate_is_followed_by_the_pace_once_the_bucket_keeps_up():
    said = ticked(False, [est(limited=True, known=False), est(limited=False, known=False)], 30, 1.0)
    assert [k for k, _ in said] == ["plan", "pace"]


def test_a_quiet_log_of_a_run_without_a_rate_limit_gets_the_plan_alone():
    assert [k for k, _ in ticked(False, [est(limited=False, known=False)], 90, 1.0)] == ["plan"]


def test_a_live_line_follows_every_tick_but_no_faster_than_it_can_be_read():
    said = ticked(True, [est(limited=False, known=False)], 20, 0.25)
    assert [k for k, _ in said].count("progress") == 10


@pytest.mark.parametrize("env,ci", [({}, False), ({"CI": "true"}, True), ({"GITHUB_ACTIONS": "true"}, True),
                                    ({"CI": "false"}, False), ({"GITLAB_CI": "1"}, True)])
def test_ci_is_told_by_its_variables(env, ci):
    assert progress.in_ci(env) is ci


def test_events_carry_where_the_run_stands():
    ev = progress.event("progress", est(limited=True, known=True))
    assert ev == {"event": "progress", "requests_planned": 300, "requests_sent": 10, "elapsed_seconds": 5.0,
                  "seconds_left": 200.0, "estimated_seconds": 205.0, "rate_limited": True, "rate_per_second": 1.0,
                  "rate_learnt": True, "basis": est(limited=True, known=True).basis()}
    assert json.loads(progress.event_line(ev)) == ev


# -- the table, held to a default run ------------------------------------------------------------------------------
@pytest.mark.xdist_group(DEFAULT_RUN)
def test_the_table_is_what_a_default_run_sends(default_run):
    """Each scenario's requests in plan.REQUESTS are those a default run of the embedded server sends (its exchanges
    but those read from the preflight), and the plan is the run's request count."""
    doc = json.loads(gzip.decompress((default_run / "recording.json.gz").read_bytes()))
    report = json.loads((default_run / "report.json").read_text())
    sent, free = {}, {}
    for rec in doc["scenarios"]:
        kept = set((rec.get("facts") or {}).get("kept") or {})
        mine = [ex for ex in rec.get("exchanges") or [] if ex["label"] not in kept]
        sent[rec["scenario"]] = len(mine)
        spent_nothing = sum(1 for ex in mine if ex["status"] in (None, 401, 429)
                            or "authorization" not in {k.lower() for k in ex["request_headers"]})
        if spent_nothing:
            free[rec["scenario"]] = spent_nothing
    differ = {name: (plan.REQUESTS.get(name), n) for name, n in sent.items() if plan.REQUESTS.get(name) != n}
    assert not differ, f"plan.REQUESTS differs from a default run (table, run): {differ}; the run's: {sent}"
    assert free == plan.FREE, f"plan.FREE differs from a default run: the run's {free}"
    cost = report["cost"]
    assert cost["planned_requests"] == plan.PREFLIGHT + sum(sent.values()) == cost["requests"]


@pytest.mark.xdist_group(DEFAULT_RUN)
def test_the_late_scenarios_meet_a_server_that_has_worked_for_seconds(default_run):
    """The scenarios marked late (other forms of what the early ones send) start halfway through the run's floor, so
    a default run sends requests of every operation both in its first seconds and after them: a server whose fault
    shows only once it has run a while (a cache expired, a key evicted) meets the refusal sweeps and the histories."""
    doc = json.loads(gzip.decompress((default_run / "recording.json.gz").read_bytes()))
    sent = [(rec["scenario"], ex["url"].rstrip("/").rpartition("/")[2], ex["started_at"])
            for rec in doc["scenarios"] for ex in rec.get("exchanges") or []
            if ex.get("started_at") is not None and ex["label"] not in ((rec.get("facts") or {}).get("kept") or {})]
    t0 = min(t for _, _, t in sent)
    late_at = engine.LATE_SHARE * plan.floor_seconds([plan.SLOWEST])
    registry.load_scenarios()
    late = {name for name, _, _ in sent if registry.SCENARIOS[name.removesuffix(versions.TWIN)].late}
    assert {"forms.invoke_refusals", "forms.agui_refusals", "forms.mcp_refusals", "agui.histories"} <= late
    assert all(t - t0 >= late_at - 1.0 for name, _, t in sent if name in late)
    for op in ("invoke", "agui", "mcp"):
        times = [t - t0 for _, path, t in sent if path == op]
        assert min(times) < late_at - 1.0 < late_at <= max(times), op
