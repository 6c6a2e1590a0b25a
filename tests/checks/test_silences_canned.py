"""The checks over silences (conformance/vocab/silences.py), proven on canned recordings (no server): a stream that
stays open through its silence and ends properly passes; one cut after it is the end rule's failure (the readings of
its text blocked by it); on AG-UI a `: ping` must lie inside each silence, read by order, never by arrival time
alone."""
from __future__ import annotations

import json

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, NotAssessed, judging
from conformance.vocab import silences
from conformance.vocab.protocols import SSE

AGUI_URL = "https://server.test/v1/agents/agt_canned/agui"
MCP_URL = "https://server.test/v1/agents/agt_canned/mcp"
STREAM = {"content-type": SSE}


def check(check_id: str):
    """The check's function, judged as the engine judges it (`outcomes.JUDGING` holds its requirements)."""
    found = registry.load_all()[check_id]

    def judged(*recs):
        with judging(found.requirements):
            return found.fn(*recs)
    return judged


def silence(name: str) -> silences.Silence:
    return silences.SILENCES[name]


def held(scenario: str, ex, s: silences.Silence, **facts):
    """A recording of `scenario` whose one exchange holds the silence `s`."""
    return canned.recording(scenario, [ex], facts={"silences": {s.label: s.name}, **facts})


def passes(rec, *check_ids: str) -> None:
    for check_id in check_ids:
        assert check(check_id)(rec) is None, check_id


# -- AG-UI ---------------------------------------------------------------------------------------------------------
def agui_block(obj) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def agui_run(s: silences.Silence, *, ping_at: float | None = 15.0, end: float | None = None, finish: bool = True,
             early_ping: bool = False, reply: str | None = None):
    """A run that falls silent after its first piece of text (`early`, or the answer of a resume) at 0.1 s, says the
    rest at `end` (default 0.1 + the silence), with a ping at `ping_at` (None: no ping) and RUN_FINISHED when
    `finish`."""
    end = 0.1 + s.seconds if end is None else end
    head = "answer: " + json.dumps(silences.ANSWER, separators=(",", ":")) if s.resumed else "early"
    tail = (reply if reply is not None else s.reply)[len(head):]
    chunks = [(0.0, agui_block({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})),
              (0.05, agui_block({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})),
              (0.1, agui_block({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": head}))]
    if early_ping:
        chunks.insert(1, (0.02, b": ping\n\n"))
    if ping_at is not None:
        chunks.append((ping_at, b": ping\n\n"))
    chunks.append((end, agui_block({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": tail})))
    chunks.append((end, agui_block({"type": "TEXT_MESSAGE_END", "messageId": "m"})))
    if finish:
        chunks.append((end, agui_block({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": head + tail,
                                        "outcome": {"type": "success"}})))
    ex = canned.exchange(200, STREAM, sse=chunks, label=s.label, url=AGUI_URL)
    want = {"kind": "success", "reply": s.reply, "thread": "t", "run": None, **({"resumed": True} if s.resumed else {})}
    return held("agui.silences", ex, s, runs={s.label: want})


AFTER_TEXT = silence("agui:after-text:16s")
PINGS = "agui.ping_inside_every_silence"


def test_a_ping_inside_the_silence_passes():
    passes(agui_run(AFTER_TEXT), PINGS, "agui.ping_is_exactly_colon_ping__silences")


def test_a_silence_without_a_ping_fails_though_no_gap_passes_15_s_and_the_tolerance():
    """16 s without a ping is inside 15 s + 1.5 s by arrival times: the order reading catches it."""
    with pytest.raises(AssertionError, match=r"0 comment line\(s\) beginning with 'ping' during the 16.0 s silence"):
        check(PINGS)(agui_run(AFTER_TEXT, ping_at=None))


def test_a_ping_elsewhere_in_the_stream_does_not_count_for_the_silence():
    with pytest.raises(AssertionError, match=r"during the 16.0 s silence between frames 3 and 4 \(1 elsewhere"):
        check(PINGS)(agui_run(AFTER_TEXT, ping_at=None, early_ping=True))


def test_a_gap_well_outside_15_s_and_the_tolerance_fails_even_with_a_ping_inside():
    with pytest.raises(AssertionError, match=r"passed between a ping at \+15.0 s and the next frame"):
        check(PINGS)(agui_run(AFTER_TEXT, end=34.0))


def test_no_ping_is_due_when_the_frames_came_less_than_15_s_apart():
    with pytest.raises(NotAssessed, match="no ping was due"):
        check(PINGS)(agui_run(AFTER_TEXT, ping_at=None, end=12.0))


def test_a_stream_cut_after_its_silence_blocks_the_ping_reading_on_the_end_rule():
    """Cut before RUN_FINISHED: AGUI-ORDER-002's deviation, not a missing ping."""
    with pytest.raises(Blocked) as caught:
        check(PINGS)(agui_run(AFTER_TEXT, ping_at=None, finish=False))
    assert caught.value.root == "AGUI-ORDER-002"
    with pytest.raises(AssertionError, match="exactly one RUN_FINISHED or RUN_ERROR, got 0"):
        check("agui.one_terminal_event__silences")(agui_run(AFTER_TEXT, ping_at=None, finish=False))


def test_the_text_after_the_silence_must_arrive():
    assert check("agui.text_after_silence__silences")(agui_run(AFTER_TEXT)) is None
    with pytest.raises(AssertionError, match="after the silence the deltas joined are 'early'"):
        check("agui.text_after_silence__silences")(agui_run(AFTER_TEXT, reply="early"))


def test_a_resumed_run_continues_through_its_silence():
    resumed = silence("agui:after-resume:16s")
    assert check("agui.resumed_after_silence")(agui_run(resumed)) is None
    assert check(PINGS)(agui_run(resumed)) is None
    with pytest.raises(AssertionError, match="the resumed run replied"):
        check("agui.resumed_after_silence")(agui_run(resumed, reply='answer: {"name":"Ada"}'))
    with pytest.raises(NotAssessed):    # the text of a resumed run is AGUI-INT-002's, not AGUI-ORDER-006's
        check("agui.text_after_silence__silences")(agui_run(resumed))


# -- invoke ----------------------------------------------------------------------------------------------------------
def invoke_frame(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps({'v': 1, 'type': event, **data})}\n\n".encode()


def invoke_run(s: silences.Silence, *, done: str | None = "done", late: bool = True):
    chunks = [(0.1, invoke_frame("text", {"delta": "early"}))]
    if late:
        chunks.append((0.1 + s.seconds, invoke_frame("text", {"delta": "late"})))
    if done:
        chunks.append((0.1 + s.seconds, invoke_frame(done, {"message": "boom"} if done == "error" else {})))
    ex = canned.exchange(200, STREAM, sse=chunks, label=s.label, request_body={"prompt": s.prompt, "stream": True})
    return held("invoke.silences", ex, s)


INVOKE_TEXT = silence("invoke:after-text:15.5s")


def test_an_invoke_stream_that_holds_through_its_silence_passes():
    passes(invoke_run(INVOKE_TEXT), "invoke.text_after_silence", "invoke.silent_stream_ends_done",
           "invoke.one_terminal_frame__silences", "invoke.terminal_is_last_and_closes__silences")


def test_an_invoke_stream_cut_after_its_silence_fails_exactly_one_done_and_blocks_the_rest():
    cut = invoke_run(INVOKE_TEXT, done=None, late=False)
    with pytest.raises(AssertionError, match="expected exactly one `done` or `error` frame, found 0"):
        check("invoke.one_terminal_frame__silences")(cut)
    for name in ("invoke.text_after_silence", "invoke.silent_stream_ends_done"):
        with pytest.raises(Blocked) as caught:
            check(name)(cut)
        assert caught.value.root == "INV-TERM-001", name


def test_an_invoke_stream_that_errs_after_its_silence_fails_the_normal_end():
    with pytest.raises(AssertionError, match="a run that ends normally streamed `error` frame"):
        check("invoke.silent_stream_ends_done")(invoke_run(INVOKE_TEXT, done="error"))


# -- MCP -------------------------------------------------------------------------------------------------------------
def mcp_frame(obj) -> bytes:
    return b"event: message\ndata: " + json.dumps(obj).encode() + b"\n\n"


def mcp_run(s: silences.Silence, *, text: str | None = None, result: bool = True):
    token = "silent-1"
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "ask_x", "arguments": {"prompt": s.prompt, "session_id": "k"},
                          "_meta": {"progressToken": token}}}
    note = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "message": "early"}}
    chunks = [(0.1, mcp_frame(note))]
    if result:
        chunks.append((0.1 + s.seconds, mcp_frame({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": s.reply if text is None else text}],
            "structuredContent": {"sessionId": "k"}, "resultType": "complete", "isError": False}})))
    ex = canned.exchange(200, STREAM, sse=chunks, label=s.label, url=MCP_URL, request_body=request,
                         request_headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                          "Mcp-Name": "ask_x"})
    return held("mcp.silences", ex, s)


MCP_TEXT = silence("mcp:after-text:15.5s")


def test_an_mcp_progress_stream_that_ends_with_its_result_after_the_silence_passes():
    passes(mcp_run(MCP_TEXT), "mcp.response_is_last__silences", "mcp.result_after_silence",
           "mcp.token_gets_stream__silences", "mcp.frames_are_messages__silences")


def test_an_mcp_progress_stream_cut_after_its_silence_fails_the_result_as_last_frame():
    cut = mcp_run(MCP_TEXT, result=False)
    with pytest.raises(AssertionError, match="no JSON-RPC response"):
        check("mcp.response_is_last__silences")(cut)
    with pytest.raises(Blocked) as caught:
        check("mcp.result_after_silence")(cut)
    assert caught.value.root == "MCP-PROG-003"


def test_an_mcp_run_resumed_into_a_silence_continues_to_its_reply():
    resumed = silence("mcp:after-resume:15.5s")
    assert check("mcp.resume_continues_through_silence")(mcp_run(resumed)) is None
    with pytest.raises(AssertionError):
        check("mcp.resume_continues_through_silence")(mcp_run(resumed, text="thanks"))
    with pytest.raises(NotAssessed):     # the text of a resumed run is MCP-PAUSE-002's, not MCP-PROG-008's
        check("mcp.result_after_silence")(mcp_run(resumed))
