"""Pacing: send no faster than the server's rate limit allows.

One :class:`Pacer` is shared by every client of a run (they may live on different event loops, so it is
guarded by a thread lock and never sleeps itself: a request asks :meth:`Pacer.try_send` and, when told to
wait, sleeps on its own loop and asks again).

It keeps an estimate of the tokens left in the server's bucket, re-anchored on every
``X-RateLimit-Remaining`` the server sends (minus the requests sent since the one answered). Requests
queue in order while the estimate is at the reserve and go as the bucket refills. The refill rate is not
shown by the server, so it is learned from two observations while the bucket is not full (the requests between
them that spent nothing, answered 401 or 429 or sent without a credential, left out: counting them would learn a
rate faster than the bucket's and run into 429s); until then a cautious one request a second is assumed. After a
429, nothing paced goes before its ``Retry-After``, and then the resends go first, down to the last token.
An optional cap (``--rate-limit N/SECONDS``, schemathesis's format) is a token bucket of our own.

Only requests sent with ``paced=False`` (the 429 probe) may drive the server's bucket to zero.

A `grant` is a place in the line for several requests at once: it waits until the bucket holds them all, then they
go without waiting (a client the suite does not drive, whose own time-outs a wait in the middle would trip).

The pacer also keeps what a run's plan reads (`state`): the requests sent, the tokens it thinks are left, the refill
rate and whether it was learned, and how long the run was held back by the rate limit (`held_seconds`: the wall time
during which at least one request waited for the bucket or a 429's Retry-After). `RunDeadline` turns that into the
run's deadline: a budget of time not spent waiting for the rate limit, never beyond a cap.
"""
from __future__ import annotations

import contextvars
import itertools
import re
import threading
import time
from dataclasses import dataclass

__all__ = ["Pacer", "PaceState", "RunDeadline", "Grant", "GRANT", "parse_rate_limit", "parse_duration"]

RESERVE = 2               # tokens left in the server's bucket for nobody but the 429 probe
DEFAULT_RATE = 1.0        # requests per second while the refill rate is still unknown
MIN_LEARN_SPAN = 2.0      # seconds between two observations before a refill rate is derived from them
KNOWN_SPAN = 20.0         # ... and before a plan calls it learnt (over 2 s it paces well; a length needs more)
UNOBSERVED_BURST = 8      # requests in flight before the server first shows its X-RateLimit-Remaining
SILENT_ANSWERS = 3        # answers without the header after which the server is taken not to show it
POLL = 0.1                # seconds a queued request sleeps before asking again (at most)
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*")


def parse_rate_limit(text: str) -> tuple[int, float]:
    """``"20/10s"`` -> (20, 10.0). Accepts schemathesis's ``N/s``, ``N/m``, ``N/h`` and ``N/<number><unit>``
    (unit s, m, h or d; a bare number is seconds)."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*([smhd]?)\s*", text or "")
    if not m or not (m.group(2) or m.group(3)):
        raise ValueError(f"rate limit {text!r}: expected N/SECONDS such as 20/10s, 100/m or 5/s")
    n = int(m.group(1))
    seconds = float(m.group(2) or 1.0) * _UNITS[m.group(3)]
    if n < 1 or seconds <= 0:
        raise ValueError(f"rate limit {text!r}: both the count and the period must be positive")
    return n, seconds


def parse_duration(text: str) -> float:
    """``"30m"`` -> 1800.0: a number of seconds, or with a unit s, m, h or d (``90``, ``90s``, ``2.5m``, ``1h``)."""
    m = _DURATION.fullmatch(str(text or ""))
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"duration {text!r}: expected a positive number of seconds, or with a unit: 90s, 30m, 1h")
    return float(m.group(1)) * _UNITS[m.group(2)]


def duration_text(seconds: float) -> str:
    """1800 -> '30m', 5400 -> '90m', 7200 -> '2h', 90 -> '90s': a duration as a duration option takes it back."""
    whole = max(0, round(seconds))
    if whole and whole % 3600 == 0:
        return f"{whole // 3600}h"
    if whole and whole % 60 == 0:
        return f"{whole // 60}m"
    return f"{whole}s"


@dataclass(frozen=True)
class PaceState:
    """What the pacer knows at one moment (`Pacer.state`), for a run's plan."""
    now: float
    sent: int                      # requests sent so far, resends included
    tokens: float | None           # the server's tokens the pacer thinks are left now (None: never shown)
    rate: float                    # requests per second the bucket refills (learned, capped or assumed)
    rate_known: bool               # learned from the server's answers (or our own --rate-limit cap)
    largest_remaining: int         # the largest X-RateLimit-Remaining seen (about the bucket's size)
    blocked_until: float           # after a 429: nothing paced goes before this
    reserve: int
    shows_remaining: bool          # the server shows X-RateLimit-Remaining (or has not yet answered without it)
    limited: bool                  # a rate limit was met: a 429, or the pacer held a request back
    held_seconds: float
    own_tokens: float | None = None  # what our own --rate-limit bucket holds now (None: no such cap)
    unspent: int = 0               # answered requests that spent nothing of the bucket (401, 429, no credential)
    rate_seen: bool = False        # a refill rate was derived from the answers, over too short a span to call it learnt


@dataclass
class Grant:
    """Requests set aside in the server's bucket for one block of work (`Client.granted`): those left to send."""
    left: int

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


#: the grant the current task's requests draw on (set by `Client.granted`; None: each request waits its turn)
GRANT: contextvars.ContextVar[Grant | None] = contextvars.ContextVar("conformance_grant", default=None)


@dataclass
class _Bucket:
    """Our own token bucket (the --rate-limit cap)."""
    capacity: float
    rate: float
    tokens: float
    stamp: float

    def wait(self, now: float) -> float:
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate


class Pacer:
    def __init__(self, rate_limit: tuple[int, float] | None = None, *, reserve: int = RESERVE,
                 clock=time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self.reserve = reserve
        now = clock()
        self._cap = _Bucket(rate_limit[0], rate_limit[0] / rate_limit[1], float(rate_limit[0]), now) \
            if rate_limit else None
        self._tickets = itertools.count(1)
        self._queue: list[int] = []        # paced requests waiting for the server's bucket: resends, then the rest
        self._weight: dict[int, int] = {}  # tokens a ticket in the queue waits for (a grant's: several)
        self._retries: set[int] = set()    # tickets of resends after a 429 (they may spend the reserve)
        self._promised = 0                 # tokens granted and not yet spent
        self._sent = 0                     # requests sent so far (their sequence numbers)
        self._answered = 0
        self._silent = 0                   # answers that carried no X-RateLimit-Remaining
        self._seen_seq = 0                 # the newest request whose answer re-anchored the estimate
        self._tokens: float | None = None  # estimated server tokens at _stamp (None: not shown yet)
        self._stamp = now
        self._max_seen = 0                 # the largest Remaining ever seen (about the bucket's size)
        self._rate: float | None = rate_limit[0] / rate_limit[1] if rate_limit else None
        self._anchor: tuple[int, int, float] | None = None  # (seq, remaining, t) to learn the rate from
        self._learnt_span = 0.0            # the span of the observations the rate was last learned from
        self._free: set[int] = set()       # requests that spent nothing of the bucket (refused for their credential)
        self._unspent = 0                  # how many, over the run
        self._blocked_until = 0.0          # after a 429: nothing paced before this
        self._holding = 0                  # requests waiting for the bucket or a Retry-After right now
        self._held_since = 0.0
        self._held = 0.0                   # closed stretches of holding, in seconds
        self._limited = False

    @property
    def rate(self) -> float:
        """The server's refill rate as far as we know (requests per second)."""
        return self._rate or DEFAULT_RATE

    # -- waiting -------------------------------------------------------------------------------------
    def hold(self) -> None:
        """A request starts waiting for the rate limit (the bucket, or a 429's Retry-After)."""
        with self._lock:
            if self._holding == 0:
                self._held_since = self._clock()
            self._holding += 1
            self._limited = True

    def release(self) -> None:
        with self._lock:
            self._holding -= 1
            if self._holding == 0:
                self._held += self._clock() - self._held_since

    def held_seconds(self) -> float:
        """Wall time during which at least one request of the run waited for the rate limit."""
        with self._lock:
            return self._held_locked(self._clock())

    def _held_locked(self, now: float) -> float:
        return self._held + (now - self._held_since if self._holding else 0.0)

    def state(self) -> PaceState:
        with self._lock:
            now = self._clock()
            tokens = None
            if self._tokens is not None:
                self._refill(now)
                tokens = self._tokens
            rate_known = self._cap is not None or self._learnt_span >= KNOWN_SPAN
            return PaceState(now=now, sent=self._sent, tokens=tokens, rate=self.rate, rate_known=rate_known,
                             largest_remaining=self._max_seen, blocked_until=self._blocked_until,
                             reserve=self.reserve, shows_remaining=self._silent < SILENT_ANSWERS,
                             limited=self._limited, held_seconds=self._held_locked(now),
                             own_tokens=self._own_tokens(now), unspent=self._unspent,
                             rate_seen=self._learnt_span > 0)

    def _own_tokens(self, now: float) -> float | None:
        if self._cap is None:
            return None
        return min(self._cap.capacity, self._cap.tokens + (now - self._cap.stamp) * self._cap.rate)

    # -- sending -------------------------------------------------------------------------------------
    def ticket(self, paced: bool = True, retry: bool = False, *, tokens: int = 1) -> int:
        """A place in the queue for one request (a grant: for `tokens`). ``retry``: a resend after a 429's
        Retry-After: it goes before the requests not sent yet, and may spend the reserve."""
        with self._lock:
            t = next(self._tickets)
            if paced:
                self._weight[t] = tokens
                if retry:
                    self._retries.add(t)
                    self._queue.insert(sum(1 for q in self._queue if q in self._retries), t)
                else:
                    self._queue.append(t)
            return t

    def leave(self, ticket: int) -> None:
        """The request went, or gave up waiting."""
        with self._lock:
            self._forget(ticket)

    def _forget(self, ticket: int) -> None:
        if ticket in self._queue:
            self._queue.remove(ticket)
        self._weight.pop(ticket, None)
        self._retries.discard(ticket)

    def try_send(self, ticket: int, paced: bool = True, *, granted: bool = False) -> tuple[int | None, float]:
        """(sequence number, 0) when the request may go now (it is counted as sent); otherwise (None, seconds
        to sleep before asking again). ``granted``: one of a grant's requests, whose tokens were set aside."""
        with self._lock:
            now = self._clock()
            if paced:
                wait = self._cap.wait(now) if self._cap else 0.0
                if not granted:
                    wait = max(wait, self._blocked_until - now, self._server_wait(ticket, now))
                if wait > 0:
                    return None, min(wait, POLL)
                if self._cap is not None:
                    self._cap.tokens -= 1.0
            if granted:
                self._promised = max(0, self._promised - 1)
            self._forget(ticket)
            if self._tokens is not None:
                self._refill(now)
                self._tokens -= 1.0
            self._sent += 1
            return self._sent, 0.0

    def grant_size(self, n: int) -> int:
        """How many requests one grant may hold: never more than the server's bucket shows, less the reserve."""
        with self._lock:
            if self._tokens is None:
                return n
            return max(1, min(n, self._max_seen - self.reserve))

    def try_grant(self, ticket: int) -> tuple[bool, float]:
        """(True, 0) when the bucket holds the grant's tokens (they are set aside now); else (False, wait)."""
        with self._lock:
            now = self._clock()
            wait = max(self._blocked_until - now, self._server_wait(ticket, now))
            if wait > 0:
                return False, min(wait, POLL)
            self._promised += self._weight.get(ticket, 1)
            self._forget(ticket)
            return True, 0.0

    def return_grant(self, unused: int) -> None:
        """A grant's tokens that were not spent go back to the line."""
        with self._lock:
            self._promised = max(0, self._promised - unused)

    def _server_wait(self, ticket: int, now: float) -> float:
        if ticket not in self._queue:       # not paced
            return 0.0
        at = self._queue.index(ticket)
        ahead = sum(self._weight.get(q, 1) for q in self._queue[:at])
        if self._tokens is None:
            shown = self._silent < SILENT_ANSWERS
            return POLL if shown and self._sent - self._answered + ahead >= UNOBSERVED_BURST else 0.0
        self._refill(now)
        reserve = 0 if ticket in self._retries else self.reserve
        # tokens this request (or grant) needs, beyond those there and not set aside for a grant
        short = reserve + self._weight.get(ticket, 1) + ahead - (self._tokens - self._promised)
        return 0.0 if short <= 0 else short / self.rate

    def _refill(self, now: float) -> None:
        if self._tokens is not None:
            # no more than the server ever showed, but always enough for one request to go and ask again
            top = max(self._max_seen, self._tokens, self.reserve + 1.0)
            self._tokens = min(top, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    # -- learning ------------------------------------------------------------------------------------
    def observe(self, seq: int, remaining: str | None, retry_after: float | None = None, *,
                spent: bool = True) -> None:
        """What the answer to request ``seq`` said: its X-RateLimit-Remaining and, for a 429, Retry-After
        (already capped by the caller). ``spent``: False for a request that cannot have spent the bucket (refused
        for its credential, or sent without one)."""
        r = remaining_count(remaining)
        with self._lock:
            now = self._clock()
            self._answered += 1
            if not spent or retry_after is not None:     # a 429 spent nothing either
                self._free.add(seq)
                self._unspent += 1
            if retry_after is not None:
                self._limited = True
                # Retry-After says when one request may go again, not the refill rate (a fixed window would
                # mislead), so the rate is still learned from Remaining only.
                self._blocked_until = max(self._blocked_until, now + retry_after)
                if r is None and self._tokens is not None:
                    r = 0
            if r is None:
                self._silent += remaining is None and retry_after is None
                return
            if seq < self._seen_seq:
                return
            self._max_seen = max(self._max_seen, r)
            self._learn(seq, r, now)
            self._seen_seq = seq
            self._stamp = now
            # requests sent after `seq` were not yet counted in this answer
            self._tokens = float(r - (self._sent - seq))

    def _learn(self, seq: int, r: int, now: float) -> None:
        if r >= self._max_seen:         # a full bucket hides its refill
            self._anchor = None
            return
        if self._anchor is None:
            self._anchor = (seq, r, now)
            return
        seq0, r0, t0 = self._anchor
        span = now - t0
        if span >= MIN_LEARN_SPAN:
            self._free = {s for s in self._free if s > seq0}
            refilled = r - r0 + (seq - seq0) - sum(1 for s in self._free if s <= seq)
            if refilled > 0:   # measured over the whole span since the anchor: the longer, the less noisy
                learned = refilled / span
                self._rate = min(learned, self._cap.rate) if self._cap is not None else learned
                self._learnt_span = span


def remaining_count(value: str | None) -> int | None:
    """An X-RateLimit-Remaining value as a count; None when absent or not a whole number in ASCII digits."""
    v = (value or "").strip()
    return int(v) if v.isascii() and v.isdigit() else None


class RunDeadline:
    """When a run stops recording: after `budget` seconds of time not spent waiting for the server's rate limit
    (`held`: the pacer's held_seconds), and never later than `cap` seconds after it started. Waiting for the bucket
    is the server's pace, not its silence, so it does not spend the budget; the cap bounds the whole."""

    def __init__(self, start: float, budget: float, cap: float | None, held=lambda: 0.0, *,
                 budget_words: str = "the run's deadline (profile [timeouts] run)",
                 cap_words: str = "the run's cap") -> None:
        self.start, self.budget, self.cap = start, budget, cap
        self._held = held
        self._words = (budget_words, cap_words)

    @property
    def cap_at(self) -> float:
        return self.start + self.cap if self.cap is not None else float("inf")

    def at(self) -> float:
        """The deadline as it stands now (it moves later while the run waits for the rate limit, up to the cap)."""
        return min(self.cap_at, self.start + self.budget + self._held())

    def capped(self) -> bool:
        """Whether the cap, not the budget, sets the deadline now."""
        return self.cap_at <= self.start + self.budget + self._held()

    def left(self, now: float) -> float:
        return self.at() - now

    def later(self, seconds: float) -> "RunDeadline":
        """The same deadline `seconds` later (a client's backstop behind the scenarios')."""
        return RunDeadline(self.start, self.budget + seconds, None if self.cap is None else self.cap + seconds,
                           self._held, budget_words=self._words[0], cap_words=self._words[1])

    def words(self) -> str:
        """What sets the deadline now, in words ("the run's deadline (…)" or "the run's cap (…)")."""
        return self._words[self.capped()]
