"""The recording's codec: what is written is what a check reads back (streams, bytes, headers, tagged facts),
redacted; a fact the recording cannot hold leaves the reports whole and says why."""
from __future__ import annotations

import json
import math

from conformance import canned, engine, recording
from conformance.recording import codec
from conformance.target import Profile
from conformance.wire.redact import MASK, Redactor

SECRET = "ais_live_s3cr3tS3cr3tS3cr3t"


def round_trip(ex, redact=lambda s: s):
    return codec.decode_exchange(json.loads(json.dumps(codec.encode_exchange(ex, redact))), Redactor())


def test_a_stream_reads_back_as_the_strict_recorder_saw_it():
    chunks = [(0.0, b"\xef\xbb\xbf: hello\r\n\r\n"), (0.25, b"event: a\rdata: {\"x\":1}\r"),
              (0.5, b"\rid: 7\ndata: two\ndata: lines\n\n"), (0.75, b"retry: x\nfoo\n\n: ping\n\n"),
              (1.0, b"data: \xff\xfe not utf-8\n\ndata: unterminated")]
    latin1 = [(b"content-type", b"text/event-stream"), (b"x-n", "é".encode("latin-1"))]   # httpx: latin-1
    ex = canned.exchange(200, latin1, sse=chunks, label="agui", request_body={"prompt": "é"})
    again = round_trip(ex)
    assert again.stream == ex.stream and again.body == ex.body and again.request_body == ex.request_body
    assert again.headers.multi_items() == ex.headers.multi_items() and again.header("x-n") == "é"
    assert [i.t for i in again.stream.items] == [i.t for i in ex.stream.items]
    assert again.stream.pending == b"data: unterminated" and again.stream.bom
    assert (again.status, again.t_headers, again.t_end, again.label) == (ex.status, ex.t_headers, ex.t_end, ex.label)


def test_bytes_that_are_not_utf8_survive():
    ex = canned.exchange(200, {"content-type": "application/octet-stream"}, body=b"\x00\xff\xfe" + SECRET.encode())
    encoded = codec.encode_exchange(ex, Redactor([SECRET]).redact)
    assert set(encoded["body"]) == {"base64"}
    again = codec.decode_exchange(encoded, Redactor())
    assert again.body == b"\x00\xff\xfe" + MASK.encode()


def test_facts_keep_their_python_types():
    facts = {"t": (1, "a"), "s": {"x", "y"}, "b": b"\x00\x01", "n": math.inf, "d": {1: "one", (2, 3): "pair"},
             "dollar": {"$tuple": "a key a server chose"}, "nested": [{"k": ("v",)}], "none": None}
    again = codec.decode_value(json.loads(json.dumps(codec.encode_value(facts, str))))
    assert again == facts and isinstance(again["t"], tuple) and isinstance(again["nested"][0]["k"], tuple)


def test_everything_is_redacted_and_credentials_keep_their_form():
    ex = canned.exchange(200, {"content-type": "application/json", "x-echo": SECRET}, body={"key": SECRET},
                         url=f"https://server.test/v1/agents/a/invoke?key={SECRET}",
                         request_headers={"authorization": f"Bearer {MASK}"})
    text = json.dumps(codec.encode_exchange(ex, Redactor([SECRET]).redact), ensure_ascii=False)
    assert SECRET not in text and MASK in text
    target = canned.DEFAULT_TARGET
    kept = codec.encode_target(target, Redactor([target.api_key]).redact)
    assert kept["api_key"] == f"ais_live_{MASK}" and target.api_key not in json.dumps(kept)
    assert codec.credential_placeholder("no-form-at-all") == MASK
    assert codec.decode_target(json.loads(json.dumps(kept))).profile == target.profile


def test_a_fact_the_recording_cannot_hold_leaves_the_reports_whole(tmp_path):
    session = engine.Session(canned.DEFAULT_TARGET, [])
    rec = canned.recording("invoke.plain_json", [canned.exchange(200, body={"status": "completed"})],
                           facts={"odd": object()})
    session.outcomes = lambda: {"invoke.plain_json": rec}
    kept = recording.keep(session, tmp_path, checks=[], error=None,
                          report={"options": {}, "started_at": "2026-01-01T00:00:00Z",
                                  "finished_at": "2026-01-01T00:00:01Z"})
    assert kept["error"].startswith("recording.json.gz not written: scenario invoke.plain_json's fact 'odd'")
    session.outcomes = lambda: {"invoke.plain_json": canned.recording("invoke.plain_json", [])}
    kept = recording.keep(session, tmp_path, checks=[], error=None,
                          report={"options": {}, "started_at": "2026-01-01T00:00:00Z",
                                  "finished_at": "2026-01-01T00:00:01Z"})
    doc = recording.read(tmp_path / recording.FILE)
    assert kept["bytes"] == (tmp_path / recording.FILE).stat().st_size and doc["scenarios"][0]["outcome"] == "recorded"
    assert recording.Replay(doc).recording("invoke.plain_json").exchanges == []
    assert isinstance(recording.Replay(doc).recording("never.recorded"), engine.NotAssessed)


def test_profile_round_trips():
    profile = Profile(agent="custom", scenarios={"plain_reply": {"prompt": "hi", "reply": "hello"}},
                      resume={"agui": {"answer": "$payload"}})
    target = canned.DEFAULT_TARGET.__class__(base_url="https://x.test", profile=profile, seed=4)
    again = codec.decode_target(json.loads(json.dumps(codec.encode_target(target, str))))
    assert again.profile == profile and again.seed == 4


def test_a_scenario_encoded_while_the_run_records_is_written_as_it_would_be_at_the_end():
    session = engine.Session(canned.DEFAULT_TARGET, [])
    early = canned.recording("invoke.plain_json", [canned.exchange(200, body={"status": "completed", "k": SECRET})])
    late = canned.recording("agui.silence", [canned.exchange(200, body={"late": True})])
    session.seen = {"invoke.plain_json": early, "agui.silence": late}
    session.outcomes = lambda: dict(session.seen)
    session.redactor = Redactor([SECRET])
    what = dict(checks=[], options={}, error=None, started_at="2026-01-01T00:00:00Z",
                finished_at="2026-01-01T00:00:01Z")
    encoded = {"invoke.plain_json": recording.encode_outcome(session, "invoke.plain_json")}
    assert SECRET.encode() not in encoded["invoke.plain_json"]
    def written(**more):
        return b"".join(p if isinstance(p, bytes) else p.encode() for p in recording.pieces(session, **what, **more))
    assert written(encoded=encoded) == written()
