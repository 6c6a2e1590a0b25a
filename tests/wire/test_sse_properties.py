"""Property tests: the incremental recorder agrees with a whole-string
reference implementation of the WHATWG event-stream interpretation, and its
result does not depend on how the bytes were chunked."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conformance.wire.sse import SSEComment, SSEEvent, SSERecorder, StreamRecord

# ---------------------------------------------------------------------------
# reference implementation: decode everything, then split, then interpret.
# Written straight from the WHATWG text, no incremental state.
# ---------------------------------------------------------------------------

_LINE = re.compile(r"(\r\n|\r|\n)")


def reference(data: bytes) -> dict:
    text = data.decode("utf-8", "replace")  # UTF-8 decode with U+FFFD
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]  # exactly one leading BOM
    pieces = _LINE.split(text)
    lines = list(zip(pieces[0::2], pieces[1::2]))  # (line, terminator)
    tail = pieces[-1]  # text after the last terminator: never a complete line
    endings = {"LF": 0, "CRLF": 0, "CR": 0}
    items: list[tuple] = []
    last_event_id = ""
    block_raw = ""
    fields: list[tuple[str, str]] = []
    event_type: str | None = None
    data_buf: list[str] = []
    block_id: str | None = None
    block_retry: int | None = None
    for line, term in lines:
        endings[{"\n": "LF", "\r\n": "CRLF", "\r": "CR"}[term]] += 1
        block_raw += line + term
        if line == "":
            if fields:
                items.append(
                    (
                        "event",
                        event_type,
                        "\n".join(data_buf),
                        len(data_buf),
                        block_id,
                        block_retry,
                        list(fields),
                        block_raw,
                        len(data_buf) > 0,
                        last_event_id,
                    )
                )
            block_raw, fields, event_type, data_buf, block_id, block_retry = "", [], None, [], None, None
            continue
        if line.startswith(":"):
            items.append(("comment", line[1:], line + term))
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        fields.append((name, value))
        if name == "event":
            event_type = value
        elif name == "data":
            data_buf.append(value)
        elif name == "id":
            if "\x00" not in value:
                block_id = value
                last_event_id = value
        elif name == "retry":
            if value != "" and all(c in "0123456789" for c in value):
                block_retry = int(value)
    end = "eof_mid_block" if (tail != "" or fields) else "eof"
    return {
        "items": items,
        "endings": endings,
        "bom": bom,
        "end": end,
        "pending": block_raw + tail,
    }


def as_comparable(rec: StreamRecord) -> dict:
    items: list[tuple] = []
    for it in rec.items:
        if isinstance(it, SSEComment):
            items.append(("comment", it.text, it.raw.decode("utf-8", "replace")))
        else:
            assert isinstance(it, SSEEvent)
            items.append(
                (
                    "event",
                    it.event,
                    it.data,
                    it.data_lines,
                    it.id,
                    it.retry,
                    list(it.fields),
                    it.raw.decode("utf-8", "replace"),
                    it.dispatched,
                    it.last_event_id,
                )
            )
    return {
        "items": items,
        "endings": dict(rec.line_endings),
        "bom": rec.bom,
        "end": rec.end,
        "pending": rec.pending.decode("utf-8", "replace"),
    }


def record(chunks: list[bytes]) -> StreamRecord:
    r = SSERecorder(t0=0.0, clock=lambda: 0.0)
    for c in chunks:
        r.feed(c, 0.0)
    return r.finish("eof", 0.0)


# ---------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------

SPECIAL = ["\u2028", "\u2029", "\x85", "\x00", "é", "€", "😀", "中", ":", " ", "  ", "\ufeff", "\t", "\x0b", "\x0c"]
value_text = st.lists(
    st.one_of(
        st.sampled_from(SPECIAL),
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            max_size=6,
        ),
    ),
    max_size=4,
).map("".join)

field_name = st.sampled_from(["event", "data", "data", "data", "id", "retry", "foo", "Data", "data ", "", "événement"])
separator = st.sampled_from([":", ": ", ":  ", "", ":\t"])
retry_value = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["", "1a", "-1", "١٢", " 5", "5 "]))


@st.composite
def a_line(draw) -> str:
    kind = draw(st.sampled_from(["blank", "blank", "comment", "field", "field", "field", "field"]))
    if kind == "blank":
        return ""
    if kind == "comment":
        return ":" + draw(value_text)
    name = draw(field_name)
    sep = draw(separator)
    value = draw(retry_value) if name == "retry" else draw(value_text)
    if sep == "":
        return name + value.replace(":", "")  # a line without a colon
    return name + sep + value


terminator = st.sampled_from(["\n", "\r\n", "\r"])
INVALID = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\x80", b"\xc0\xaf", b"\xef\xbb"]


@st.composite
def sse_stream(draw) -> bytes:
    lines = draw(st.lists(st.tuples(a_line(), terminator), max_size=14))
    text = "".join(line + term for line, term in lines)
    if draw(st.booleans()):
        text += draw(a_line())  # unterminated tail
    data = text.encode("utf-8")
    if draw(st.integers(0, 3)) == 0:  # sometimes corrupt the UTF-8
        for _ in range(draw(st.integers(1, 3))):
            pos = draw(st.integers(0, len(data)))
            data = data[:pos] + draw(st.sampled_from(INVALID)) + data[pos:]
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
        if draw(st.integers(0, 5)) == 0:
            data = b"\xef\xbb\xbf" + data  # a second BOM is content
    return data


TOKENS = [
    b"data", b"event", b"id", b"retry", b"foo", b":", b": ", b" ", b"\r", b"\n", b"\r\n", b"x", b"1", b"42",
    b"\x00", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"\xc2\x85", b"\xff", b"\xe2", b"\x82\xac", b"\xf0\x9f\x98\x80",
    b"\xc3\xa9", b"{\"a\":1}",
]
chaos_stream = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=40).map(b"".join),
    st.binary(max_size=60),
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------


@SETTINGS
@given(sse_stream())
@example("retry: ١٢\ndata: x\n\n".encode())
@example(b"retry:  7\nretry: 8\nid: a\x00\ndata\n\n")
@example(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\r\r\n\n")
def test_agrees_with_reference(data: bytes) -> None:
    assert as_comparable(record([data])) == reference(data)


@st.composite
def field_heavy_stream(draw) -> bytes:
    """Mostly id / retry / event / data lines, to stress the field rules."""
    lines = []
    for _ in range(draw(st.integers(0, 10))):
        name = draw(st.sampled_from(["retry", "id", "event", "data", ""]))
        if name == "":
            lines.append("")
            continue
        value = draw(retry_value) if name == "retry" else draw(value_text)
        lines.append(name + draw(st.sampled_from([":", ": "])) + value)
    return ("\n".join(lines) + "\n\n").encode()


@SETTINGS
@given(field_heavy_stream())
def test_field_rules_agree_with_reference(data: bytes) -> None:
    assert as_comparable(record([data])) == reference(data)


@SETTINGS
@given(chaos_stream)
def test_agrees_with_reference_on_chaos(data: bytes) -> None:
    assert as_comparable(record([data])) == reference(data)


@SETTINGS
@given(sse_stream())
def test_raw_bytes_are_exact_for_valid_utf8(data: bytes) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    rec = record([data])
    ref = reference(data)
    raws = [it.raw for it in rec.items if isinstance(it, SSEEvent)]
    ref_raws = [i[7].encode("utf-8") for i in ref["items"] if i[0] == "event"]
    assert raws == ref_raws
    # nothing is lost: BOM + every line's bytes == input
    assert rec.total_bytes == len(data)
    assert rec.pending == ref["pending"].encode("utf-8")


def _every_split(data: bytes) -> None:
    whole = record([data])
    for k in range(len(data) + 1):
        assert record([data[:k], data[k:]]) == whole, f"split at {k}: {data[:k]!r} | {data[k:]!r}"
    assert record([data[i : i + 1] for i in range(len(data))]) == whole, "byte by byte"


@SETTINGS
@given(sse_stream())
def test_every_chunk_boundary_gives_identical_record(data: bytes) -> None:
    _every_split(data)


@SETTINGS
@given(chaos_stream)
def test_every_chunk_boundary_gives_identical_record_chaos(data: bytes) -> None:
    _every_split(data)


@SETTINGS
@given(sse_stream(), st.lists(st.integers(0, 400), max_size=8))
def test_random_multi_splits_give_identical_record(data: bytes, cuts: list[int]) -> None:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0] + points, points + [len(data)])]
    assert record(chunks) == record([data])


@SETTINGS
@given(sse_stream())
def test_items_returned_by_feed_are_the_items(data: bytes) -> None:
    r = SSERecorder(t0=0.0, clock=lambda: 0.0)
    got = []
    for i in range(len(data)):
        got += r.feed(data[i : i + 1], 0.0)
    rec = r.finish("eof", 0.0)
    assert rec.items[: len(got)] == got
    # only a CR held back at the very end can complete an item in finish()
    assert len(got) == len(rec.items) or data.endswith(b"\r")


def test_specific_boundaries() -> None:
    # inside a multi-byte character, between CR and LF, inside the BOM
    for data in [
        "\ufeffdata: €😀\u2028x\r\n\r\n".encode(),
        b"data: a\r\n\r\ndata: b\r\r\n",
        b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n",
        b"data: \xe2\x82\r\n\r\n",
    ]:
        _every_split(data)
        assert as_comparable(record([data])) == reference(data)
