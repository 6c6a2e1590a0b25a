"""MCP checks: progress streams."""
from __future__ import annotations

from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab import protocols as p
from conformance.vocab.readers import got
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.wire.sse import SSEEvent
from conformance.vocab.readers import frame_json
from conformance.checks.mcp._common import frames, messages, result_of, sent_id, text_block


TOKENS = (steps.STRING_TOKEN, steps.INTEGER_TOKEN)


def stream_messages(ex: Exchange, what: str) -> list[Any]:
    """The JSON messages of a progress stream's dispatched frames (blocks without data are no frames; data that
    is not JSON is MCP-PROG-002's finding)."""
    assert ex.status == 200, f"{what}: expected HTTP 200, got {got(ex)}"
    assert ex.stream is not None, f"{what}: expected text/event-stream, got {got(ex)}"
    out = messages(ex)
    assert out, f"{what}: the stream has no frame with JSON data ({len(frames(ex))} dispatched frame(s))"
    return out


def notifications(ex: Exchange, what: str) -> list[dict[str, Any]]:
    return [m for m in stream_messages(ex, what)[:-1] if isinstance(m, dict)]


def each_stream(rec: Recording, fn: Callable[[str, Exchange], int | None]) -> int:
    """Runs `fn` on each progress stream; the sum of the counts it returns (how many items it judged)."""
    return sum(fn(label, rec.get(label)) or 0 for label in TOKENS)


def each_notification(rec: Recording, fn: Callable[[str, dict[str, Any], int], None]) -> None:
    seen = 0
    for label in TOKENS:
        for n, msg in enumerate(notifications(rec.get(label), f"progress stream ({label})"), 1):
            if msg.get("method") == "notifications/progress":
                seen += 1
                fn(label, msg, n)
    if not seen:
        raise NotAssessed("no progress notification arrived (MCP-PROG-009)")


@check("MCP-PROG-001", scenarios=["mcp.progress"])
def token_gets_stream(rec: Recording):
    """Sends tools/call with `_meta.progressToken` and Accept of both types; 200 with Content-Type text/event-stream."""
    def one(label, ex):
        assert ex.status == 200 and ex.content_type == p.SSE, \
            f"tools/call with a progress token ({label}): expected 200 text/event-stream, got {got(ex)}"
    each_stream(rec, one)


@check("MCP-PROG-002", scenarios=["mcp.progress"])
def frames_are_messages(rec: Recording):
    """Every frame of the progress stream is `event: message` with JSON-object data."""
    def one(label, ex):
        what = f"progress stream ({label})"
        assert ex.status == 200 and ex.stream is not None, f"{what}: expected a 200 event stream, got {got(ex)}"
        dispatched = frames(ex)
        assert dispatched, f"{what}: the stream dispatched no frame"
        for n, frame in enumerate(dispatched, 1):
            assert frame.event == "message", f"{what}: frame {n} has event name {frame.event!r}, expected 'message'"
            ok, value = frame_json(frame)
            assert ok and isinstance(value, dict), \
                f"{what}: frame {n} data is not a JSON object: {truncate(frame.data, 160)}"
    each_stream(rec, one)


@check("MCP-PROG-003", scenarios=["mcp.progress"])
def response_is_last(rec: Recording):
    """The last frame is the JSON-RPC response to the request's id, it occurs once, and nothing follows it."""
    def one(label, ex):
        what = f"progress stream ({label})"
        msgs = stream_messages(ex, what)
        want = sent_id(ex)
        is_response = [i for i, m in enumerate(msgs) if isinstance(m, dict) and ("result" in m or "error" in m)]
        assert is_response, f"{what}: no JSON-RPC response among {len(msgs)} frames"
        assert is_response == [len(msgs) - 1], \
            f"{what}: the response is frame {[i + 1 for i in is_response]} of {len(msgs)}; it must be the last, once"
        last = msgs[-1]
        assert last.get("id") == want and type(last.get("id")) is type(want) and "result" in last, \
            f"{what}: the last frame is {truncate(last)}, expected the result for id {want!r}"
        items, dispatched = ex.stream.items, frames(ex)
        tail = [i for i in items[items.index(dispatched[-1]) + 1:]
                if isinstance(i, SSEEvent) and i.dispatched]  # comments and data-less blocks are no frames
        assert not tail, f"{what}: {len(tail)} frame(s) follow the response (first: {truncate(tail[0].raw.decode('utf-8', 'replace'), 80)})"
        assert ex.stream.end == "eof" and not ex.error, f"{what}: the stream did not end cleanly after the response " \
                                                        f"(end: {ex.stream.end}; {ex.error or ''})"
    each_stream(rec, one)


@check("MCP-PROG-004", scenarios=["mcp.progress"])
def others_are_progress(rec: Recording):
    """Every frame before the last is a notification (no `id`) with method `notifications/progress`."""
    def one(label, ex) -> int:
        before_response = stream_messages(ex, f"progress stream ({label})")[:-1]
        for n, msg in enumerate(before_response, 1):
            assert isinstance(msg, dict) and msg.get("method") == "notifications/progress" and "id" not in msg, \
                f"progress stream ({label}): frame {n} is not a notifications/progress notification: {truncate(msg)}"
        return len(before_response)
    if not each_stream(rec, one):
        raise NotAssessed("no frame preceded the response (MCP-PROG-009)")


@check("MCP-PROG-005", scenarios=["mcp.progress"])
def token_echoed(rec: Recording):
    """Every progress notification's `params.progressToken` equals the token sent, type kept (string and integer)."""
    tokens = rec.facts.get("tokens", {})

    def one(label, msg, n):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        got_, want = params.get("progressToken"), tokens.get(label)
        assert got_ == want and type(got_) is type(want), \
            f"progress stream ({label}) frame {n}: progressToken {truncate(got_)}, expected {want!r}"
    each_notification(rec, one)


def _param_type(name: str, ok: Callable[[Any], bool], kind: str, doc: str):
    def fn(rec: Recording):
        def one(label, msg, n):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            assert ok(params.get(name)), \
                f"progress stream ({label}) frame {n}: `params.{name}` is {truncate(params.get(name))}, expected {kind}"
        each_notification(rec, one)
    fn.__doc__ = doc
    return fn


_is_number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
check("MCP-PROG-006", scenarios=["mcp.progress"], name="progress_is_number")(
    _param_type("progress", _is_number, "a number", "Every progress notification's `params.progress` is a number."))
check("MCP-PROG-007", scenarios=["mcp.progress"], name="message_is_string")(
    _param_type("message", lambda v: isinstance(v, str), "a string",
                "Every progress notification's `params.message` is a string."))


@check("MCP-PROG-008", scenarios=["mcp.progress"])
def streamed_result_complete(rec: Recording):
    """The stream's final response holds the same result as without a token: one text block with the reply,
    `resultType` complete."""
    reply = rec.facts.get("reply")

    def one(label, ex):
        what = f"progress stream ({label})"
        result = result_of(ex, what)
        text = text_block(result, what)
        if reply is not None:
            assert text == reply, f"{what}: the final text is {truncate(text)}, expected {reply!r}"
        assert result.get("resultType") == "complete", f"{what}: `resultType` is {truncate(result.get('resultType'))}"
    each_stream(rec, one)


@check("MCP-PROG-009", scenarios=["mcp.progress"])
def some_progress(rec: Recording):
    """At least one progress notification precedes the result of the streamed-reply prompt."""
    def one(label, ex):
        assert notifications(ex, f"progress stream ({label})"), \
            f"progress stream ({label}): no progress notification before the result"
    each_stream(rec, one)


@check("MCP-PROG-010", scenarios=["mcp.progress"])
def progress_increases(rec: Recording):
    """`params.progress` strictly increases from one notification to the next (upstream MCP rule)."""
    def one(label, ex) -> int:
        values = [m.get("params", {}).get("progress") for m in notifications(ex, f"progress stream ({label})")
                  if isinstance(m.get("params"), dict)]
        numbers = [v for v in values if _is_number(v)]
        assert all(a < b for a, b in zip(numbers, numbers[1:])), \
            f"progress stream ({label}): progress values {numbers} do not strictly increase"
        return max(0, len(numbers) - 1)
    if not each_stream(rec, one):
        raise NotAssessed("no stream had two numeric progress values to compare")
