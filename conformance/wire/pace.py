"""Pacing: send no faster than the server's rate limit allows.

One :class:`Pacer` is shared by every client of a run (they may live on different event loops, so it
is guarded by a thread lock and only ever computes delays; each caller sleeps on its own loop).

It keeps an estimate of the tokens left in the server's bucket, re-anchored on every
``X-RateLimit-Remaining`` the server sends, and books each request a send time (GCRA style: a request
that finds the estimate at the reserve goes into debt and waits for the refill). The refill rate is
not shown by the server, so it is learned from two observations while the bucket is not full; before
that a cautious one request a second is used. After a 429, nothing paced goes before its ``Retry-After``.
An optional cap (``--rate-limit N/SECONDS``, schemathesis's format) is a second bucket of our own.

Only requests sent with ``paced=False`` (the 429 probe) may drive the server's bucket to zero.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass

__all__ = ["Pacer", "parse_rate_limit"]

RESERVE = 2               # tokens left in the server's bucket for nobody but the 429 probe
DEFAULT_RATE = 1.0        # requests per second while the refill rate is still unknown
MIN_LEARN_SPAN = 2.0      # seconds between two observations before a refill rate is derived from them
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_rate_limit(text: str) -> tuple[int, float]:
    """``"20/10s"`` -> (20, 10.0). Accepts schemathesis's ``N/s``, ``N/m``, ``N/h`` and ``N/<number><unit>``
    (unit s, m, h or d; a bare number is seconds)."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*([smhd]?)\s*", text or "")
    if not m:
        raise ValueError(f"rate limit {text!r}: expected N/SECONDS such as 20/10s, 100/m or 5/s")
    n = int(m.group(1))
    seconds = float(m.group(2) or 1.0) * _UNITS[m.group(3)]
    if n < 1 or seconds <= 0:
        raise ValueError(f"rate limit {text!r}: both the count and the period must be positive")
    return n, seconds


@dataclass
class _Bucket:
    """Our own token bucket (the --rate-limit cap). Tokens may go negative: that is booked debt."""
    capacity: float
    rate: float
    tokens: float
    stamp: float

    def book(self, now: float) -> float:
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        self.tokens -= 1.0
        return now if self.tokens >= 0 else now + (-self.tokens) / self.rate


class Pacer:
    def __init__(self, rate_limit: tuple[int, float] | None = None, *, reserve: int = RESERVE,
                 clock=time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self.reserve = reserve
        now = clock()
        self._cap = _Bucket(rate_limit[0], rate_limit[0] / rate_limit[1], float(rate_limit[0]), now) \
            if rate_limit else None
        self._booked = 0                   # requests booked so far (their sequence numbers)
        self._seen_seq = 0                 # the newest request whose response re-anchored the estimate
        self._tokens: float | None = None  # estimated server tokens at _stamp (None: nothing seen yet)
        self._stamp = now
        self._max_seen = 0                 # the largest Remaining ever seen (about the bucket's size)
        self._rate: float | None = rate_limit[0] / rate_limit[1] if rate_limit else None
        self._anchor: tuple[int, int, float] | None = None  # (seq, remaining, t) to learn the rate from
        self._blocked_until = 0.0          # after a 429: nothing paced before this

    @property
    def rate(self) -> float:
        return self._rate or DEFAULT_RATE

    # -- booking -----------------------------------------------------------------------------------
    def book(self, paced: bool = True, retry: bool = False) -> tuple[int, float]:
        """A sequence number for the request and the monotonic time it may be sent at. A resend after a 429
        (``retry``) goes at its Retry-After, without waiting for the reserve to refill."""
        with self._lock:
            now = self._clock()
            self._booked += 1
            seq = self._booked
            at = now
            if self._tokens is not None:
                self._refill(now)
                self._tokens -= 1.0
                if paced and not retry and self._tokens < self.reserve:
                    at = now + (self.reserve - self._tokens) / self.rate
            if paced:
                at = max(at, self._blocked_until)
                if self._cap is not None:
                    at = max(at, self._cap.book(now))
            return seq, at

    def _refill(self, now: float) -> None:
        if self._tokens is not None:
            top = max(self._max_seen, self._tokens)
            self._tokens = min(top, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    # -- learning ------------------------------------------------------------------------------------
    def observe(self, seq: int, remaining: str | None, retry_after: float | None = None) -> None:
        """What the answer to request ``seq`` said: its X-RateLimit-Remaining and, for a 429, Retry-After."""
        r = _count(remaining)
        with self._lock:
            now = self._clock()
            if retry_after is not None:
                # Retry-After says when one request may go again, not the refill rate (a fixed window would
                # mislead), so the rate is still learned from Remaining only.
                self._blocked_until = max(self._blocked_until, now + retry_after)
                r = 0 if r is None and self._tokens is not None else r
            if r is None or seq < self._seen_seq:
                return
            self._max_seen = max(self._max_seen, r)
            self._learn(seq, r, now)
            self._seen_seq = seq
            self._stamp = now
            # requests booked after `seq` have not been counted by the server's answer yet
            self._tokens = float(r - (self._booked - seq))

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
            if refilled > 0:
                learned = refilled / span
                self._rate = min(learned, self._cap.rate) if self._cap is not None else learned
            self._anchor = (seq, r, now)


def _count(value: str | None) -> int | None:
    v = (value or "").strip()
    return int(v) if v.isascii() and v.isdigit() else None
