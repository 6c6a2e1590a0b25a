"""MCP checks: progress streams."""
from __future__ import annotations

from typing import Any, Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, judge_all, precondition
from conformance.registry import check, rule
from conformance.vocab import protocols as p, silences
from conformance.vocab.readers import frame_json, got
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import (as_json, is_response, response_last, result_of, served_by,
                                            stream_messages, stream_of, text_block)


def notifications(ex: Exchange) -> list[dict[str, Any]]:
    """The JSON objects of a progress stream other than the JSON-RPC response (where that stands is MCP-PROG-003's)."""
    return [m for m in stream_messages(ex) if isinstance(m, dict) and not is_response(m)]


def progress_notifications(ex: Exchange) -> list[tuple[int, dict[str, Any]]]:
    """(frame number among the notifications, notification) of every notifications/progress; NotAssessed if none."""
    found = [(n, m) for n, m in enumerate(notifications(ex), 1) if m.get("method") == "notifications/progress"]
    if not found:
        raise NotAssessed("no progress notification arrived (MCP-PROG-009)")
    return found


def params_of(msg: dict[str, Any]) -> dict[str, Any]:
    return msg["params"] if isinstance(msg.get("params"), dict) else {}


def streams(rec: Recording) -> list[Exchange]:
    return [rec.get(label) for label in steps.MCP_PROGRESS]


def each_stream(rec: Recording, judge: Callable[[Exchange], None], nothing: str = "no progress stream") -> str | None:
    return judge_all(streams(rec), judge, nothing=nothing)


def is_stream(ex: Exchange) -> None:
    """HTTP 200 with Content-Type text/event-stream."""
    if ex.status != 200:
        raise precondition(served_by(ex), ex, f"expected HTTP 200 with text/event-stream, got {got(ex)}")
    assert ex.content_type == p.SSE, f"expected 200 text/event-stream, got {got(ex)}"


def framed(ex: Exchange) -> None:
    """Every frame is `event: message` with JSON-object data."""
    dispatched = stream_of(ex)
    assert dispatched, "the stream dispatched no frame"
    for n, frame in enumerate(dispatched, 1):
        assert frame.event == "message", f"frame {n} has event name {frame.event!r}, expected 'message'"
        ok, value = frame_json(frame)
        assert ok and isinstance(value, dict), f"frame {n} data is not a JSON object: {truncate(frame.data, 160)}"


@check("MCP-PROG-001", scenarios=["mcp.progress"])
def token_gets_stream(rec: Recording):
    """Sends tools/call with `_meta.progressToken` and Accept of both types; 200 with Content-Type text/event-stream."""
    return each_stream(rec, is_stream)


@check("MCP-PROG-002", scenarios=["mcp.progress"])
def frames_are_messages(rec: Recording):
    """Every frame of the progress stream is `event: message` with JSON-object data."""
    return each_stream(rec, framed)


@check("MCP-PROG-003", scenarios=["mcp.progress"])
def response_is_last(rec: Recording):
    """The last frame is the JSON-RPC response to the request's id, it occurs once, and nothing follows it."""
    return each_stream(rec, response_last)


def only_progress(ex: Exchange) -> None:
    """every frame but the response is a notification (no `id`) with method `notifications/progress`."""
    others = notifications(ex)
    if not others:
        raise NotAssessed("no frame preceded the response (MCP-PROG-009)")
    for n, msg in enumerate(others, 1):
        assert msg.get("method") == "notifications/progress" and "id" not in msg, \
            f"notification {n} is not a notifications/progress notification: {truncate(msg)}"


@check("MCP-PROG-004", scenarios=["mcp.progress"])
def others_are_progress(rec: Recording):
    """Every frame but the response is a notification (no `id`) with method `notifications/progress`."""
    return each_stream(rec, only_progress)


@check("MCP-PROG-005", scenarios=["mcp.progress"])
def token_echoed(rec: Recording):
    """Every progress notification's `params.progressToken` equals the token sent, its JSON type kept (string and
    integer tokens; JSON has one number type, so 7.0 is the token 7)."""
    tokens = rec.facts.get("tokens", {})

    def echoed(ex: Exchange) -> None:
        want = tokens.get(ex.label)
        for n, msg in progress_notifications(ex):
            token = params_of(msg).get("progressToken")
            assert same_json(token, want), \
                f"notification {n}: progressToken {as_json(token)}, expected {as_json(want)}"
    return each_stream(rec, echoed)


def _param_type(name: str, ok: Callable[[Any], bool], kind: str, doc: str):
    def fn(rec: Recording):
        def typed(ex: Exchange) -> None:
            for n, msg in progress_notifications(ex):
                value = params_of(msg).get(name)
                assert ok(value), f"notification {n}: `params.{name}` is {as_json(value)}, expected {kind}"
        return each_stream(rec, typed)
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

    def complete(ex: Exchange) -> None:
        result = result_of(ex)
        text = text_block(result)
        if reply is not None:
            assert text == reply, f"the final text is {truncate(text, quoted=True)}, expected {reply!r}"
        assert result.get("resultType") == "complete", f"`resultType` is {as_json(result.get('resultType'))}"
    return each_stream(rec, complete)


def progresses(ex: Exchange) -> None:
    """at least one progress notification precedes the result."""
    assert notifications(ex), "no progress notification before the result"


@check("MCP-PROG-009", scenarios=["mcp.progress"])
def some_progress(rec: Recording):
    """At least one progress notification precedes the result of the streamed-reply prompt."""
    return each_stream(rec, progresses)


def increases(ex: Exchange) -> None:
    """`params.progress` strictly increases from one notification to the next."""
    numbers = [v for m in notifications(ex) if _is_number(v := params_of(m).get("progress"))]
    if len(numbers) < 2:
        raise NotAssessed("no stream had two numeric progress values to compare")
    assert all(a < b for a, b in zip(numbers, numbers[1:])), f"progress values {numbers} do not strictly increase"


@check("MCP-PROG-010", scenarios=["mcp.progress"])
def progress_increases(rec: Recording):
    """`params.progress` strictly increases from one notification to the next (upstream MCP rule)."""
    return each_stream(rec, increases)


# -- silences at every position of a run (conformance.vocab.silences) ------------------------------------------------
def silent_streams(rec: Recording, resumed: bool | None = None) -> list[tuple[Exchange, silences.Silence]]:
    """(exchange, silence) of every progress stream of the recording that holds a silence (only those after a resume,
    or only the others, when `resumed` says)."""
    found = [(ex, s) for ex, s in silences.held(rec) if resumed is None or s.resumed == resumed]
    if not found:
        unsent = "; ".join(f"{name}: {why}" for name, why in (rec.facts.get("unsent") or {}).items())
        raise NotAssessed(f"scenario {rec.scenario} recorded no such silent stream"
                          + (f" ({unsent})" if unsent else ""))
    return found


def over_silent_streams(judge: Callable[[Exchange], None]) -> Callable[[Recording], str | None]:
    return lambda rec: judge_all([ex for ex, _ in silent_streams(rec)], judge)


SILENT = {  # requirement -> (check name, what is judged on every silent stream)
    "MCP-PROG-001": ("token_gets_stream", is_stream),
    "MCP-PROG-002": ("frames_are_messages", framed),
    "MCP-PROG-003": ("response_is_last", response_last),
}
rule(lambda req: over_silent_streams(SILENT[req][1]), over=SILENT, requirements=lambda req: req,
     scenarios=["mcp.silences"], supplementary=True, name=lambda req: f"{SILENT[req][0]}__silences",
     doc=lambda req: f"Calls with a progress token whose runs fall silent for 15.5 s at each position of a run (before "
                     f"the first output, after text, after a tool call, after a resume): {SILENT[req][1].__doc__}")


@check("MCP-PROG-008", scenarios=["mcp.silences"], supplementary=True)
def result_after_silence(rec: Recording):
    """Calls with a progress token whose runs fall silent for 15.5 s before the first output, after text, after a tool
    call; the final response holds one text block with the reply, the piece said after the silence included, and
    `resultType` complete."""
    def complete(item: tuple[Exchange, silences.Silence]) -> None:
        ex, silence = item
        result = result_of(ex)
        text = text_block(result)
        assert text == silence.reply, f"the final text is {truncate(text, quoted=True)}, expected {silence.reply!r}"
        assert result.get("resultType") == "complete", f"`resultType` is {as_json(result.get('resultType'))}"
    return judge_all(silent_streams(rec, resumed=False), complete, exchange=lambda item: item[0])
