"""Strict, incremental server-sent-events recorder.

Parses a byte stream by the WHATWG HTML "server-sent events" interpretation
rules (event-stream-interpretation) while keeping everything friendly parsers
throw away: comments, raw bytes of every block, line-ending kinds, a leading
BOM, arrival times, undispatched blocks and trailing bytes.

Rules implemented (WHATWG):

* the stream is UTF-8 decoded; invalid bytes become U+FFFD (recorded as a
  finding); one leading BOM is stripped (recorded);
* lines end with CRLF, LF or CR; a CR that is the last byte received so far
  is held back until the next chunk shows whether an LF follows;
* a blank line dispatches the block; a line starting with ``:`` is a comment;
  otherwise the field name is everything before the first ``:`` (the whole
  line when there is no colon) and one leading space of the value is dropped;
* ``event`` sets the event type, ``data`` appends a line, ``id`` sets the last
  event id unless the value contains NUL, ``retry`` is taken only when it is
  ASCII digits, other fields are ignored (but kept here);
* a block whose data buffer is empty is not dispatched;
* at end of stream, an unterminated block is discarded.

Decoding is done per line on the byte level: CR and LF can never be part of a
multi-byte UTF-8 sequence, so this is equivalent to decoding the whole stream
first, and it lets the recorder keep the exact raw bytes of every block.
"""

from __future__ import annotations

import json as _json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = [
    "SSEEvent",
    "SSEComment",
    "StreamRecord",
    "SSERecorder",
    "parse_sse",
    "strict_json_loads",
]

BOM = b"\xef\xbb\xbf"
_EOL = re.compile(rb"[\r\n]")
_DIGITS = re.compile(r"[0-9]+")
_MAX_FINDINGS_PER_KIND = 5
_EXCERPT = 120


def _excerpt(text: str, n: int = _EXCERPT) -> str:
    if len(text) <= n:
        return text
    return text[:n] + f"… ({len(text):,} chars)"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def strict_json_loads(text: str) -> Any:
    """``json.loads`` that also rejects NaN / Infinity / -Infinity (not JSON)."""
    return _json.loads(text, parse_constant=_reject_constant)


@dataclass
class SSEEvent:
    """One blank-line-terminated block that had at least one field line."""

    event: str | None
    data: str
    data_lines: int
    id: str | None
    retry: int | None
    fields: list[tuple[str, str]]
    raw: bytes
    t: float
    dispatched: bool
    #: 1-based position of this frame among the stream's events
    index: int = 0
    #: WHATWG "last event ID" at this block's end (persists across blocks)
    last_event_id: str = ""
    _redact: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    _parsed: tuple[Any] | tuple[()] = field(default=(), repr=False, compare=False)

    @property
    def event_type(self) -> str:
        """The type a WHATWG client would dispatch (``message`` when unnamed/empty)."""
        return self.event or "message"

    def json(self) -> Any:
        """The data as JSON (an AssertionError saying why when it is not), parsed once: every rule over every
        exchange reads each frame, none changes what it reads."""
        if self._parsed:
            return self._parsed[0]
        try:
            value = strict_json_loads(self.data)
            self._parsed = (value,)
            return value
        except ValueError as exc:
            ex = _excerpt(self.data, 200)
            if self._redact is not None:
                ex = self._redact(ex)
            name = f" ({self.event!r})" if self.event is not None else ""
            raise AssertionError(
                f"frame {self.index}{name}: data is not JSON: {ex!r} ({exc})"
            ) from None


@dataclass
class SSEComment:
    text: str
    raw: bytes
    t: float


@dataclass(repr=False)
class StreamRecord:
    items: list[SSEEvent | SSEComment]
    line_endings: dict[str, int]
    bom: bool
    end: str
    pending: bytes
    findings: list[str]
    total_bytes: int
    t_end: float | None
    #: items completed but not kept because of the recorder's max_items
    items_dropped: int = 0

    @property
    def events(self) -> list[SSEEvent]:
        return [i for i in self.items if isinstance(i, SSEEvent)]

    @property
    def comments(self) -> list[SSEComment]:
        return [i for i in self.items if isinstance(i, SSEComment)]

    @property
    def dispatched(self) -> list[SSEEvent]:
        """Events a WHATWG client would actually dispatch."""
        return [i for i in self.items if isinstance(i, SSEEvent) and i.dispatched]

    def __repr__(self) -> str:
        return (
            f"StreamRecord(end={self.end!r}, events={len(self.events)}, "
            f"comments={len(self.comments)}, total_bytes={self.total_bytes}, "
            f"line_endings={self.line_endings}, bom={self.bom}, "
            f"pending={len(self.pending)} bytes, findings={len(self.findings)})"
        )


class SSERecorder:
    """Incremental WHATWG event-stream parser that records everything."""

    def __init__(
        self,
        t0: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_items: int = 100_000,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._clock = clock
        self.t0 = clock() if t0 is None else t0
        self._max_items = max_items
        self._redact = redact
        # byte buffer of not yet processed input
        self._buf = bytearray()
        self._scan = 0  # index in _buf from which to look for the next EOL
        self._offset = 0  # stream offset of _buf[0]
        self._bom_decided = False
        self._cr_t: float | None = None  # arrival time of a held-back CR
        # current block
        self._block = bytearray()
        self._fields: list[tuple[str, str]] = []
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._last_event_id = ""
        # results
        self._items: list[SSEEvent | SSEComment] = []
        self._dropped = 0
        self._n_events = 0
        self._le = {"LF": 0, "CRLF": 0, "CR": 0}
        self._bom = False
        self._findings: list[str] = []
        self._finding_counts: dict[str, int] = {}
        self._total = 0
        self._record: StreamRecord | None = None

    # -- public -----------------------------------------------------------
    @property
    def items(self) -> list[SSEEvent | SSEComment]:
        return self._items

    @property
    def dropped(self) -> int:
        """Items completed but not kept (over max_items)."""
        return self._dropped

    @property
    def events_so_far(self) -> int:
        return self._n_events

    @property
    def total_bytes(self) -> int:
        return self._total

    def feed(self, chunk: bytes, t: float | None = None) -> list[SSEEvent | SSEComment]:
        if self._record is not None:
            raise RuntimeError("SSERecorder.feed() after finish()")
        if t is None:
            t = self._clock() - self.t0
        if not chunk:
            return []
        self._total += len(chunk)
        self._buf += chunk
        out: list[SSEEvent | SSEComment] = []
        if not self._bom_decided:
            if len(self._buf) < len(BOM) and BOM.startswith(bytes(self._buf)):
                return out  # cannot tell yet
            self._decide_bom()
        self._process(t, out, final=False)
        return out

    def finish(self, end: str = "eof", t: float | None = None) -> StreamRecord:
        if self._record is not None:
            return self._record
        if t is None:
            t = self._clock() - self.t0
        out: list[SSEEvent | SSEComment] = []
        if not self._bom_decided:
            self._decide_bom()
        # a held-back CR is a line end after all (end of stream)
        self._process(self._cr_t if self._cr_t is not None else t, out, final=True)
        pending = bytes(self._block) + bytes(self._buf)
        mid_block = bool(self._buf) or bool(self._fields)
        if mid_block:
            if end == "eof":
                end = "eof_mid_block"
            where = "ended" if end == "eof_mid_block" else f"was cut ({end})"
            self._finding(
                "unterminated",
                f"stream {where} inside an unterminated block: {len(pending):,} bytes "
                f"never dispatched ({_excerpt(pending.decode('utf-8', 'replace'))!r})",
            )
        if sum(1 for v in self._le.values() if v) > 1:
            kinds = ", ".join(f"{k}×{v}" for k, v in self._le.items() if v)
            self._findings.append(f"mixed line endings: {kinds}")
        for kind, count in self._finding_counts.items():
            if count > _MAX_FINDINGS_PER_KIND:
                self._findings.append(
                    f"… {count - _MAX_FINDINGS_PER_KIND:,} more '{kind}' findings not listed"
                )
        if self._dropped:
            self._findings.append(
                f"{self._dropped:,} items beyond the first {self._max_items:,} were parsed but not kept"
            )
        self._record = StreamRecord(
            items=self._items,
            line_endings=dict(self._le),
            bom=self._bom,
            end=end,
            pending=pending,
            findings=self._findings,
            total_bytes=self._total,
            t_end=t,
            items_dropped=self._dropped,
        )
        return self._record

    # -- internals ----------------------------------------------------------
    def _finding(self, kind: str, text: str) -> None:
        n = self._finding_counts.get(kind, 0) + 1
        self._finding_counts[kind] = n
        if n <= _MAX_FINDINGS_PER_KIND:
            if self._redact is not None:
                text = self._redact(text)
            self._findings.append(text)

    def _decide_bom(self) -> None:
        self._bom_decided = True
        if self._buf.startswith(BOM):
            self._bom = True
            del self._buf[: len(BOM)]
            self._offset += len(BOM)
            self._finding("bom", "stream starts with a UTF-8 byte order mark (stripped)")

    def _add(self, item: SSEEvent | SSEComment, out: list) -> None:
        out.append(item)
        if len(self._items) < self._max_items:
            self._items.append(item)
        else:
            self._dropped += 1

    def _process(self, t: float, out: list, final: bool) -> None:
        buf = self._buf
        n = len(buf)
        pos = 0
        while True:
            m = _EOL.search(buf, self._scan)
            if m is None:
                self._scan = n
                break
            i = m.start()
            line_t = t
            if buf[i] == 0x0A:
                term, kind = 1, "LF"
            elif i + 1 < n:
                if self._cr_t is not None:
                    line_t = self._cr_t
                    self._cr_t = None
                term, kind = (2, "CRLF") if buf[i + 1] == 0x0A else (1, "CR")
            elif final:
                term, kind = 1, "CR"
                self._cr_t = None
            else:
                # CR is the last byte so far: wait for the next chunk
                if self._cr_t is None:
                    self._cr_t = t
                self._scan = i
                break
            self._le[kind] += 1
            self._line(bytes(buf[pos:i]), bytes(buf[pos : i + term]), self._offset + pos, line_t, out)
            pos = i + term
            self._scan = pos
        if pos:
            del buf[:pos]
            self._offset += pos
            self._scan -= pos

    def _decode(self, line: bytes, offset: int) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._finding(
                "utf8",
                f"invalid UTF-8 at byte {offset + exc.start:,} ({line[exc.start:exc.start + 4]!r}…), "
                "replaced with U+FFFD",
            )
            return line.decode("utf-8", "replace")

    def _line(self, line: bytes, raw: bytes, offset: int, t: float, out: list) -> None:
        self._block += raw
        if not line:
            self._dispatch(t, out)
            return
        text = self._decode(line, offset)
        if line[0] == 0x3A:  # ':'
            self._add(SSEComment(text=text[1:], raw=raw, t=t), out)
            return
        name, colon, value = text.partition(":")
        if not colon:
            self._finding(
                "nocolon",
                f"field line without colon: {_excerpt(text, 60)!r} (taken as field "
                f"{_excerpt(name, 60)!r} with an empty value)",
            )
        elif value.startswith(" "):
            value = value[1:]
        self._fields.append((name, value))
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\x00" in value:
                self._finding("id_nul", f"id field contains NUL and is ignored: {_excerpt(value, 60)!r}")
            else:
                self._id = value
                self._last_event_id = value
        elif name == "retry":
            if _DIGITS.fullmatch(value) and len(value) <= 4000:
                self._retry = int(value)
            else:
                self._finding("retry", f"retry field is not ASCII digits only, ignored: {_excerpt(value, 60)!r}")
        else:
            self._finding("unknown", f"unknown field {_excerpt(name, 60)!r} (ignored by WHATWG clients)")

    def _dispatch(self, t: float, out: list) -> None:
        raw = bytes(self._block)
        self._block = bytearray()
        if self._fields:
            self._n_events += 1
            ev = SSEEvent(
                event=self._event,
                data="\n".join(self._data),
                data_lines=len(self._data),
                id=self._id,
                retry=self._retry,
                fields=self._fields,
                raw=raw,
                t=t,
                dispatched=bool(self._data),
                index=self._n_events,
                last_event_id=self._last_event_id,
                _redact=self._redact,
            )
            if not ev.dispatched:
                names = ", ".join(sorted({n for n, _ in self._fields}))
                self._finding(
                    "nodata",
                    f"frame {ev.index} has fields ({_excerpt(names, 60)}) but no data line: "
                    "WHATWG clients dispatch nothing for it",
                )
            self._add(ev, out)
        self._fields = []
        self._event = None
        self._data = []
        self._id = None
        self._retry = None


def parse_sse(data: bytes) -> StreamRecord:
    """Parse a complete byte string (all times 0.0)."""
    rec = SSERecorder(t0=0.0, clock=lambda: 0.0)
    rec.feed(data, 0.0)
    return rec.finish("eof", 0.0)
