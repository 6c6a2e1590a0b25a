"""One unit test per WHATWG rule and per finding of the SSE recorder."""

from __future__ import annotations

import time

import pytest

from conformance.wire.sse import SSEComment, SSEEvent, SSERecorder, parse_sse


def only_event(data: bytes) -> SSEEvent:
    rec = parse_sse(data)
    assert len(rec.events) == 1, rec.items
    return rec.events[0]


def test_named_and_unnamed_frames() -> None:
    rec = parse_sse(b"event: text\ndata: {\"delta\":\"hi\"}\n\ndata: {\"type\":\"RUN_STARTED\"}\n\n")
    a, b = rec.events
    assert (a.event, a.data, a.data_lines, a.dispatched) == ("text", '{"delta":"hi"}', 1, True)
    assert a.json() == {"delta": "hi"}
    assert b.event is None and b.event_type == "message"
    assert (a.index, b.index) == (1, 2)
    assert rec.end == "eof" and rec.pending == b"" and rec.findings == []


def test_last_event_field_wins_and_empty_event_name() -> None:
    assert only_event(b"event: a\nevent: b\ndata: x\n\n").event == "b"
    ev = only_event(b"event:\ndata: x\n\n")
    assert ev.event == "" and ev.event_type == "message"


def test_multiline_data_joined_with_lf() -> None:
    ev = only_event(b"data: a\ndata:b\ndata\ndata:  c\n\n")
    assert ev.data == "a\nb\n\n c"
    assert ev.data_lines == 4
    assert ev.fields == [("data", "a"), ("data", "b"), ("data", ""), ("data", " c")]


def test_only_one_space_removed_and_only_first_colon_splits() -> None:
    ev = only_event(b"data:  two spaces: here\n\n")
    assert ev.data == " two spaces: here"
    ev = only_event(b"data:\ttab\n\n")
    assert ev.data == "\ttab"


def test_line_endings_lf_crlf_cr_counted() -> None:
    rec = parse_sse(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n")
    assert [e.data for e in rec.events] == ["a", "b", "c"]
    assert rec.line_endings == {"LF": 2, "CRLF": 2, "CR": 2}
    assert any("mixed line endings" in f for f in rec.findings)


def test_unicode_line_separators_are_not_line_ends() -> None:
    ev = only_event("data: a\u2028b\u2029c\x85d\x0be\x0cf\n\n".encode())
    assert ev.data == "a\u2028b\u2029c\x85d\x0be\x0cf"
    assert ev.data_lines == 1


def test_comments_kept_exactly() -> None:
    rec = parse_sse(b": ping\n:\n::x\n\ndata: 1\n: inside\n\n")
    assert [c.text for c in rec.comments] == [" ping", "", ":x", " inside"]
    assert rec.comments[0].raw == b": ping\n"
    # a comment-only block is not an event; a block with fields is
    assert len(rec.events) == 1
    assert rec.events[0].raw == b"data: 1\n: inside\n\n"
    assert isinstance(rec.items[0], SSEComment) and isinstance(rec.items[-1], SSEEvent)


def test_blank_lines_alone_dispatch_nothing() -> None:
    rec = parse_sse(b"\n\n\r\n\r\r")
    assert rec.items == [] and rec.end == "eof"


def test_fields_without_data_are_not_dispatched_and_reported() -> None:
    rec = parse_sse(b"event: done\n\n")
    ev = rec.events[0]
    assert ev.event == "done" and ev.dispatched is False and ev.data_lines == 0
    assert any("no data line" in f and "frame 1" in f for f in rec.findings)


def test_id_rules() -> None:
    rec = parse_sse(b"id: 1\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid\ndata: d\n\n")
    a, b, c, d = rec.events
    assert (a.id, a.last_event_id) == ("1", "1")
    assert (b.id, b.last_event_id) == (None, "1")  # the last event id persists
    assert (c.id, c.last_event_id) == (None, "1")  # NUL: ignored
    assert (d.id, d.last_event_id) == ("", "")  # empty id resets
    assert any("NUL" in f for f in rec.findings)


def test_retry_rules() -> None:
    assert only_event(b"retry: 1500\ndata: x\n\n").retry == 1500
    rec = parse_sse(b"retry: 15s\ndata: x\n\nretry:  10\ndata: y\n\nretry: -1\ndata: z\n\nretry: \xd9\xa1\ndata: w\n\n")
    assert [e.retry for e in rec.events] == [None, None, None, None]
    assert sum("retry field" in f for f in rec.findings) == 4


def test_unknown_fields_kept_and_reported() -> None:
    ev_rec = parse_sse(b"Data: x\nfoo: bar\ndata: y\n\n")
    ev = ev_rec.events[0]
    assert ev.data == "y"
    assert ev.fields == [("Data", "x"), ("foo", "bar"), ("data", "y")]
    assert sum("unknown field" in f for f in ev_rec.findings) == 2


def test_field_line_without_colon() -> None:
    rec = parse_sse(b"data\nevent\n\n")
    ev = rec.events[0]
    assert ev.fields == [("data", ""), ("event", "")]
    assert ev.data == "" and ev.data_lines == 1 and ev.dispatched and ev.event == ""
    assert any("without colon" in f for f in rec.findings)


def test_bom_stripped_once_and_reported() -> None:
    rec = parse_sse(b"\xef\xbb\xbfdata: x\n\n")
    assert rec.bom and rec.events[0].data == "x"
    assert rec.events[0].raw == b"data: x\n\n"
    assert any("byte order mark" in f for f in rec.findings)
    rec = parse_sse(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n")
    assert rec.events[0].fields == [("\ufeffdata", "x")]  # second BOM is content
    assert rec.events[0].dispatched is False


def test_bom_split_across_chunks() -> None:
    r = SSERecorder(t0=0.0)
    assert r.feed(b"\xef", 0.0) == []
    assert r.feed(b"\xbb", 0.0) == []
    out = r.feed(b"\xbfdata: x\n\n", 0.0)
    assert [e.data for e in out] == ["x"]
    assert r.finish(t=0.0).bom


def test_short_bom_prefix_at_eof_is_not_a_bom() -> None:
    rec = parse_sse(b"\xef\xbb")
    assert not rec.bom and rec.end == "eof_mid_block" and rec.pending == b"\xef\xbb"


def test_invalid_utf8_replaced_and_reported() -> None:
    rec = parse_sse(b"data: a\xffb\xe2\x82\n\n")
    assert rec.events[0].data == "a\ufffdb\ufffd"
    assert rec.events[0].raw == b"data: a\xffb\xe2\x82\n\n"
    assert any("invalid UTF-8 at byte 7" in f for f in rec.findings)


def test_multibyte_character_split_across_chunks() -> None:
    data = "data: €😀\n\n".encode()
    r = SSERecorder(t0=0.0)
    for b in data:
        r.feed(bytes([b]), 0.0)
    rec = r.finish(t=0.0)
    assert rec.events[0].data == "€😀" and rec.findings == []


def test_cr_at_chunk_end_waits_for_next_chunk() -> None:
    r = SSERecorder(t0=0.0)
    assert r.feed(b"data: x\n\r", 1.0) == []  # the blank line might be CRLF
    out = r.feed(b"\ndata: y\n\n", 2.0)
    assert [e.data for e in out] == ["x", "y"]
    x = out[0]
    assert x.raw == b"data: x\n\r\n"
    assert x.t == 1.0  # the block was complete when the CR arrived
    assert out[1].t == 2.0
    rec = r.finish(t=3.0)
    assert rec.line_endings == {"LF": 3, "CRLF": 1, "CR": 0}


def test_cr_at_end_of_stream_is_a_line_end() -> None:
    r = SSERecorder(t0=0.0)
    r.feed(b"data: x\r\r", 1.0)  # second CR is held back
    rec = r.finish(t=5.0)
    assert rec.end == "eof" and rec.events[0].data == "x" and rec.events[0].t == 1.0


def test_unterminated_final_block_discarded_and_reported() -> None:
    rec = parse_sse(b"data: a\n\ndata: b\n")
    assert [e.data for e in rec.events] == ["a"]
    assert rec.end == "eof_mid_block"
    assert rec.pending == b"data: b\n"
    assert any("unterminated block" in f for f in rec.findings)
    rec = parse_sse(b"data: a\n\ndata: b")  # partial line
    assert rec.end == "eof_mid_block" and rec.pending == b"data: b"


def test_trailing_comment_line_is_a_clean_end() -> None:
    rec = parse_sse(b"data: a\n\n: bye\n")
    assert rec.end == "eof" and rec.comments[0].text == " bye"


def test_finish_keeps_cut_reasons() -> None:
    r = SSERecorder(t0=0.0)
    r.feed(b"data: a\n\ndata: b\n", 0.5)
    rec = r.finish("deadline", 2.0)
    assert rec.end == "deadline" and rec.t_end == 2.0 and rec.pending == b"data: b\n"
    assert rec.total_bytes == len(b"data: a\n\ndata: b\n")


def test_times_are_relative_to_t0() -> None:
    now = [100.0]
    r = SSERecorder(clock=lambda: now[0])
    now[0] = 100.25
    (ev,) = r.feed(b"data: x\n\n")
    assert ev.t == pytest.approx(0.25)
    now[0] = 101.0
    assert r.finish().t_end == pytest.approx(1.0)


def test_json_helper_errors() -> None:
    rec = parse_sse(b"data: {\"a\": 1}\n\ndata: not json\n\ndata: NaN\n\n")
    assert rec.events[0].json() == {"a": 1}
    with pytest.raises(AssertionError, match=r"frame 2: data is not JSON: 'not json'"):
        rec.events[1].json()
    with pytest.raises(AssertionError, match="frame 3"):
        rec.events[2].json()  # NaN is not JSON


def test_json_error_is_redacted() -> None:
    r = SSERecorder(t0=0.0, redact=lambda s: s.replace("sk_live_secret", "«redacted»"))
    r.feed(b"data: oops sk_live_secret\n\n", 0.0)
    ev = r.finish(t=0.0).events[0]
    with pytest.raises(AssertionError) as info:
        ev.json()
    assert "sk_live_secret" not in str(info.value)


def test_findings_are_bounded() -> None:
    rec = parse_sse(b"foo: x\n" * 1000 + b"data: y\n\n")
    assert len(rec.findings) < 10
    assert any("995 more 'unknown' findings" in f for f in rec.findings)


def test_max_items_bounds_memory() -> None:
    r = SSERecorder(t0=0.0, max_items=10)
    r.feed(b":\n" * 50, 0.0)
    rec = r.finish(t=0.0)
    assert len(rec.items) == 10 and rec.items_dropped == 40


def test_feed_after_finish_refused() -> None:
    r = SSERecorder(t0=0.0)
    r.finish(t=0.0)
    with pytest.raises(RuntimeError):
        r.feed(b"data: x\n\n")


def test_large_frame_in_small_chunks_is_linear() -> None:
    payload = b"data: " + b"x" * (8 * 2**20) + b"\n\n"
    r = SSERecorder(t0=0.0)
    start = time.monotonic()
    for i in range(0, len(payload), 4096):
        r.feed(payload[i : i + 4096], 0.0)
    rec = r.finish(t=0.0)
    assert time.monotonic() - start < 5
    assert len(rec.events[0].data) == 8 * 2**20
