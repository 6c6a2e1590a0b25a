"""Pacing: send no faster than the server's rate limit allows.

One :class:`Pacer` is shared by every client of a run (they may live on different event loops, so it is
guarded by a thread lock and never sleeps itself: a request asks :meth:`Pacer.try_send` and, when told to
wait, sleeps on its own loop and asks again).

It keeps an estimate of the tokens left in the server's bucket, re-anchored on every
``X-RateLimit-Remaining`` the server sends (minus the requests sent since the one answered). Requests
queue in order while the estimate is at the reserve and go as the bucket refills. The refill rate is not
shown by the server, so it is learned from two observations while the bucket is not full; until then a
cautious one request a second is assumed. After a 429, nothing paced goes before its ``Retry-After``.
An optional cap (``--rate-limit N/SECONDS``, schemathesis's format) is a token bucket of our own.

Only requests sent with ``paced=False`` (the 429 probe) may drive the server's bucket to zero.
"""
from __future__ import annotations

import itertools
import re
import threading
import time
from dataclasses import dataclass

__all__ = ["Pacer", "parse_rate_limit"]

RESERVE = 2               # tokens left in the server's bucket for nobody but the 429 probe
DEFAULT_RATE = 1.0        # requests per second while the refill rate is still unknown
MIN_LEARN_SPAN = 2.0      # seconds between two observations before a refill rate is derived from them
UNOBSERVED_BURST = 8      # requests in flight before the server first shows its X-RateLimit-Remaining
SILENT_ANSWERS = 3        # answers without the header after which the server is taken not to show it
POLL = 0.1                # seconds a queued request sleeps before asking again (at most)
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


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
        self._queue: list[int] = []        # paced first sends waiting for the server's bucket, oldest first
        self._sent = 0                     # requests sent so far (their sequence numbers)
        self._answered = 0
        self._silent = 0                   # answers that carried no X-RateLimit-Remaining
        self._seen_seq = 0                 # the newest request whose answer re-anchored the estimate
        self._tokens: float | None = None  # estimated server tokens at _stamp (None: not shown yet)
        self._stamp = now
        self._max_seen = 0                 # the largest Remaining ever seen (about the bucket's size)
        self._rate: float | None = rate_limit[0] / rate_limit[1] if rate_limit else None
        self._anchor: tuple[int, int, float] | None = None  # (seq, remaining, t) to learn the rate from
        self._blocked_until = 0.0          # after a 429: nothing paced before this

    @property
    def rate(self) -> float:
        """The server's refill rate as far as we know (requests per second)."""
        return self._rate or DEFAULT_RATE

    # -- sending -------------------------------------------------------------------------------------
    def ticket(self, paced: bool = True, retry: bool = False) -> int:
        """A place in the queue for one request. ``retry``: a resend after a 429's Retry-After, which does
        not wait for the reserve to refill (the server said when to come back)."""
        with self._lock:
            t = next(self._tickets)
            if paced and not retry:
                self._queue.append(t)
            return t

    def leave(self, ticket: int) -> None:
        """The request went, or gave up waiting."""
        with self._lock:
            if ticket in self._queue:
                self._queue.remove(ticket)

    def try_send(self, ticket: int, paced: bool = True) -> tuple[int | None, float]:
        """(sequence number, 0) when the request may go now (it is counted as sent); otherwise (None, seconds
        to sleep before asking again)."""
        with self._lock:
            now = self._clock()
            if paced:
                wait = max(self._blocked_until - now, self._cap.wait(now) if self._cap else 0.0,
                           self._server_wait(ticket, now))
                if wait > 0:
                    return None, min(wait, POLL)
                if self._cap is not None:
                    self._cap.tokens -= 1.0
            if ticket in self._queue:
                self._queue.remove(ticket)
            if self._tokens is not None:
                self._refill(now)
                self._tokens -= 1.0
            self._sent += 1
            return self._sent, 0.0

    def _server_wait(self, ticket: int, now: float) -> float:
        if ticket not in self._queue:       # a retry: Retry-After already said when
            return 0.0
        ahead = self._queue.index(ticket)
        if self._tokens is None:
            shown = self._silent < SILENT_ANSWERS
            return POLL if shown and self._sent - self._answered + ahead >= UNOBSERVED_BURST else 0.0
        self._refill(now)
        short = self.reserve + 1 + ahead - self._tokens   # tokens this request needs, beyond those there
        return 0.0 if short <= 0 else short / self.rate

    def _refill(self, now: float) -> None:
        if self._tokens is not None:
            # no more than the server ever showed, but always enough for one request to go and ask again
            top = max(self._max_seen, self._tokens, self.reserve + 1.0)
            self._tokens = min(top, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    # -- learning ------------------------------------------------------------------------------------
    def observe(self, seq: int, remaining: str | None, retry_after: float | None = None) -> None:
        """What the answer to request ``seq`` said: its X-RateLimit-Remaining and, for a 429, Retry-After
        (already capped by the caller)."""
        r = remaining_count(remaining)
        with self._lock:
            now = self._clock()
            self._answered += 1
            if retry_after is not None:
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
            refilled = r - r0 + (seq - seq0)
            if refilled > 0:   # measured over the whole span since the anchor: the longer, the less noisy
                learned = refilled / span
                self._rate = min(learned, self._cap.rate) if self._cap is not None else learned


def remaining_count(value: str | None) -> int | None:
    """An X-RateLimit-Remaining value as a count; None when absent or not a whole number in ASCII digits."""
    v = (value or "").strip()
    return int(v) if v.isascii() and v.isdigit() else None
