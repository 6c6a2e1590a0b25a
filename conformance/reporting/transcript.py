"""An exchange as a person reads it in a report: request, answer, stream items with their times, redacted.

The wire layer records; this module only formats what it recorded (`Exchange`, `StreamRecord`).
"""
from __future__ import annotations

from conformance.vocab.text import truncate_redacted
from conformance.wire.exchange import SENSITIVE_HEADERS, Exchange
from conformance.wire.redact import MASK
from conformance.wire.sse import SSEComment, StreamRecord

LIMIT = 4000  # characters of one transcript


def transcript(ex: Exchange, limit: int = LIMIT) -> str:
    """The exchange, redacted, cut at `limit` characters."""
    lines = _Lines(budget=limit + 2000)
    _request(ex, lines)
    _notes(ex, lines)
    _answer(ex, lines)
    if ex.error:
        lines.force(f"!! error: {ex.redact(ex.error)}")
    text = ex.redact("\n".join(lines.lines))
    if len(text) > limit:
        text = text[: max(0, limit - 40)] + f"\n… [transcript cut at {limit:,} chars]"
    return text


class _Lines:
    """Lines up to a character budget: `add` says False once it is spent; `force` adds regardless (the summary
    lines after a cut)."""

    def __init__(self, budget: int) -> None:
        self.budget, self.size, self.lines = budget, 0, []

    def add(self, line: str) -> bool:
        if self.size > self.budget:
            return False
        self.force(line)
        return True

    def force(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line) + 1


def _request(ex: Exchange, lines: _Lines) -> None:
    lines.add(f"{ex.method} {ex.url}" + (f"    [{ex.label}]" if ex.label else ""))
    for k, v in ex.request_headers.items():
        lines.add(f"> {k}: {v}")
    if ex.request_body:
        lines.add(">")
        lines.add("> " + truncate_redacted(ex.redact, ex.request_body, 1500))


def _notes(ex: Exchange, lines: _Lines) -> None:
    """What the client did around the request: pacing, 429 waits, a resend."""
    if ex.waited_pace:
        lines.add(f"(held back {ex.waited_pace:.1f}s before sending, to stay under the rate limit)")
    if ex.waited_429:
        lines.add("(after 429 Retry-After waits: " + ", ".join(f"{w:g}s" for w in ex.waited_429) + ")")
    if ex.retried_transport:
        lines.add(f"(resent on a fresh connection: the first attempt failed on a reused one: {ex.retried_transport})")
    if ex.rate_limited:
        lines.add("(still answered 429 when no more resends were allowed (the run's deadline, or the client's retry "
                  "limit): the server did not judge this request)")


def _answer(ex: Exchange, lines: _Lines) -> None:
    if ex.status is None:
        lines.add("< (no response" + (f" over {ex.http_version})" if ex.http_version else ")"))
        return
    lines.add(f"< {ex.http_version or 'HTTP'} {ex.status}"
              + (f"   (+{ex.t_headers:.3f}s)" if ex.t_headers is not None else ""))
    if ex.headers is not None:
        for k, v in ex.headers.multi_items():
            lines.add(f"< {k}: {MASK if k.lower() in SENSITIVE_HEADERS else v}")
    lines.add("<")
    if ex.stream is not None:
        _stream(ex, ex.stream, lines)
    elif ex.body:
        lines.add(truncate_redacted(ex.redact, ex.body, lines.budget))
        if ex.t_end is not None:
            lines.force(f"+{ex.t_end:.3f}s -- body end ({len(ex.body):,} bytes)")


def _stream(ex: Exchange, st: StreamRecord, lines: _Lines) -> None:
    """Every comment and field line with its arrival time, then how the stream ended."""
    shown = 0
    for item in st.items:
        if not lines.add(_stream_item(ex, item)):
            break
        shown += 1
    rest = len(st.items) - shown + st.items_dropped
    if rest > 0:
        lines.force(f"… {rest:,} more stream items")
    t_end = f"+{st.t_end:.3f}s " if st.t_end is not None else ""
    endings = ", ".join(f"{k}×{v}" for k, v in st.line_endings.items() if v) or "none"
    lines.force(f"{t_end}-- stream end: {st.end}; {len(st.events)} frames, {len(st.comments)} comments, "
                f"{st.total_bytes:,} bytes, line endings {endings}" + (", BOM" if st.bom else ""))
    if st.pending:
        lines.force("   pending: " + truncate_redacted(ex.redact, st.pending, 300))
    for finding in st.findings[:20]:
        lines.force("   finding: " + ex.redact(finding))


def _stream_item(ex: Exchange, item) -> str:
    if isinstance(item, SSEComment):
        return f"+{item.t:.3f}s :{truncate_redacted(ex.redact, item.text, 300)}"
    line = f"+{item.t:.3f}s " + " / ".join(f"{n}: {truncate_redacted(ex.redact, v, 400)}" for n, v in item.fields)
    return line if item.dispatched else line + "   (not dispatched: no data)"
