"""The pacer alone, on a fake clock: it spends the server's bucket down to the reserve, then follows the refill."""
from __future__ import annotations

import pytest

from conformance.wire.pace import DEFAULT_RATE, KNOWN_SPAN, RESERVE, Pacer, parse_rate_limit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("text,expected", [
    ("20/10", (20, 10.0)), ("20/10s", (20, 10.0)), ("5/s", (5, 1.0)), ("100/m", (100, 60.0)),
    ("1000/h", (1000, 3600.0)), ("30/5s", (30, 5.0)), ("7/2m", (7, 120.0)), (" 3 / 1 ", (3, 1.0)),
])
def test_parse_rate_limit(text, expected) -> None:
    assert parse_rate_limit(text) == expected


@pytest.mark.parametrize("text", ["", "20", "x/10", "20/", "0/10", "20/0", "20/10y", "-1/5"])
def test_parse_rate_limit_rejects(text) -> None:
    with pytest.raises(ValueError):
        parse_rate_limit(text)


def send(p: Pacer, paced: bool = True, retry: bool = False):
    t = p.ticket(paced, retry)
    seq, wait = p.try_send(t, paced)
    if seq is None:
        p.leave(t)
    return seq, wait


def test_no_information_no_waiting_beyond_the_first_burst() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    got = [send(p) for _ in range(10)]
    assert [s for s, _ in got[:8]] == list(range(1, 9))       # the first burst goes
    assert got[8][0] is None and got[8][1] > 0                   # then wait for a first answer
    for seq in range(1, 4):                                      # a server that never shows Remaining
        p.observe(seq, None)
    assert send(p)[0] is not None


def test_spends_down_to_the_reserve_then_follows_the_refill() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, "6")                          # six left after our first request
    sent = []
    while (s := send(p))[0] is not None:
        sent.append(s[0])
    assert len(sent) == 6 - RESERVE              # never below the reserve
    _, wait = send(p)
    assert 0 < wait
    clock.now += 1.0 / DEFAULT_RATE               # one token refilled (at the assumed rate)
    assert send(p)[0] is not None
    assert send(p)[0] is None


def test_unpaced_probe_may_spend_the_reserve() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, str(RESERVE))
    assert send(p)[0] is None
    assert all(send(p, paced=False)[0] is not None for _ in range(RESERVE + 3))


def test_retry_after_blocks_paced_requests_but_the_retry_goes_then() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, "0", retry_after=3.0)
    assert send(p)[0] is None and send(p, retry=True)[0] is None
    clock.now += 3.0
    assert send(p, retry=True)[0] is not None    # the resend goes at its Retry-After
    assert send(p)[0] is None                    # a first send still waits for the reserve


def anchored(clock: Clock) -> Pacer:
    """A pacer that saw a full bucket of 20, then 5 left after 15 more requests: the anchor the refill is learnt
    from (each test moves the clock on from there)."""
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, "20")                         # full bucket: says nothing about the refill
    seqs = [send(p, paced=False)[0] for _ in range(15)]
    p.observe(seqs[-1], "5")
    return p


def test_learns_the_refill_rate_from_remaining() -> None:
    clock = Clock()
    p = anchored(clock)
    clock.now += 4.0
    seqs = [send(p, paced=False)[0] for _ in range(4)]
    p.observe(seqs[-1], "9")                     # 4 s: 4 spent, 5 -> 9, so 8 refilled: 2 per second
    assert p.rate == pytest.approx(2.0)


def test_requests_refused_for_their_credential_are_not_taken_for_refill() -> None:
    """401s and requests without a credential spend nothing of the bucket: counted as spent, they would make the
    refill look faster than it is, and the pacer would run into 429s."""
    clock = Clock()
    p = anchored(clock)
    clock.now += 4.0
    seqs = [send(p, paced=False)[0] for _ in range(8)]
    for free in seqs[:4]:
        p.observe(free, "9", spent=False)         # four 401s: the bucket did not move for them
    p.observe(seqs[-1], "9")                     # 4 s: 4 spent (not 8), 5 -> 9, so 8 refilled: 2 per second
    assert p.rate == pytest.approx(2.0)


def test_queue_is_first_come_first_served() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, str(RESERVE))
    first, second = p.ticket(), p.ticket()
    assert p.try_send(second)[0] is None
    clock.now += 1.0 / DEFAULT_RATE
    assert p.try_send(second)[0] is None         # one token: it belongs to the first in line
    assert p.try_send(first)[0] is not None


def test_cap_holds_whatever_the_server_says() -> None:
    clock = Clock()
    p = Pacer((3, 1.0), clock=clock)
    seq, _ = send(p)
    p.observe(seq, "1000")
    assert [send(p)[0] is not None for _ in range(3)] == [True, True, False]
    clock.now += 1.0 / 3
    assert send(p)[0] is not None


def test_a_grant_waits_for_all_its_tokens_and_sets_them_aside() -> None:
    """A grant of 4 goes once the bucket holds them over the reserve; its requests then go at once, and a request
    behind it waits for what is left."""
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, "6")                          # 6 left
    assert send(p)[0] is not None                # 5 left
    grant = p.ticket(tokens=p.grant_size(4))
    behind = p.ticket()
    assert p.try_grant(grant)[0] is False        # 4 + the reserve > 5
    assert p.try_send(behind)[0] is None         # first come, first served
    clock.now += 1.0 / DEFAULT_RATE              # one more token
    assert p.try_grant(grant) == (True, 0.0)
    assert p.try_send(behind)[0] is None         # the 6 there: 4 set aside, 2 the reserve
    sent = [p.try_send(p.ticket(False), True, granted=True)[0] for _ in range(4)]
    assert None not in sent
    assert p.try_send(behind)[0] is None
    clock.now += 1.0 / DEFAULT_RATE
    assert p.try_send(behind)[0] is not None


def test_a_grant_is_never_larger_than_the_bucket_shows() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    assert p.grant_size(6) == 6                  # nothing shown yet: no limit known
    seq, _ = send(p)
    p.observe(seq, "4")
    assert p.grant_size(6) == 4 - RESERVE


def test_resends_go_first_and_may_spend_the_reserve() -> None:
    clock = Clock()
    p = Pacer(clock=clock)
    seq, _ = send(p)
    p.observe(seq, str(RESERVE))
    first = p.ticket()
    resend = p.ticket(retry=True)
    assert p.try_send(first)[0] is None
    assert p.try_send(resend)[0] is not None     # ahead of the first send, and the reserve is its to spend


def test_a_plan_calls_the_rate_learnt_only_over_a_longer_span() -> None:
    """Two observations 2 s apart pace well enough; a run's length is told from a rate seen over KNOWN_SPAN."""
    clock = Clock()
    p = anchored(clock)
    clock.now += 4.0
    p.observe(send(p, paced=False)[0], "8")
    assert p.rate == pytest.approx(1.0) and not p.state().rate_known
    clock.now += KNOWN_SPAN
    spent = [send(p, paced=False)[0] for _ in range(int(KNOWN_SPAN))]
    p.observe(spent[-1], "8")                    # 5 + 24 s refilled - 21 spent since the anchor
    assert p.rate == pytest.approx(1.0) and p.state().rate_known
