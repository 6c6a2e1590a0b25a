"""Invoke rules over every exchange (`conformance.exchange_rules`), whatever scenario sent it: a request the spec
says must run is answered in the form it asked for (a JSON result or an event stream, by `stream` or by `Accept`),
however it was written or framed; the result names the session key sent; every refusal is a 4xx with the error
body, and each kind of invalid request (a refused credential, an agent that is not there, a key outside 1 to 256,
a body over 1 MB, a wrong-typed field) is refused as its rule says, in whatever form it came (streamed or not).
A rule about one problem of a request reads the requests with that problem alone: the spec does not say which of
two problems a server reports first. The stream framing rules register themselves (`_common.stream_rule`).
"""
from __future__ import annotations

from typing import Any, Callable

from conformance.checks.invoke._common import (EARLY_LEAD_S, assert_ends_with_error, delivered_early, ending,
                                              failed_before_output, is_event_stream, named, quoted, reply_of,
                                              result_of, run_status, terminals, text_completed, text_of, what)
from conformance.checks.invoke.passthrough import interpreted_withheld, params_hold
from conformance.checks.invoke.results import no_error_member
from conformance.checks.invoke.runs import ends_with_done
from conformance.vocab.constants import INVOKE_INTERPRETED
from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import NotAssessed, precondition
from conformance.vocab import replies, requests as rq
from conformance.vocab.readers import error_of, is_4xx
from conformance.vocab.refusals import credential_rules, refused_with, served, shared_refusal_rules
from conformance.vocab import is_json_integer
from conformance.vocab.values import differs, is_json_media_type
from conformance.wire.exchange import Exchange

INVOKE = ("invoke",)


def must_run(*modes: str) -> Callable[[Exchange, Any], bool]:
    """A request the spec says must run (`requests.invoke_problems` finds nothing: `messages` too, once the service
    ran it, and the access token once the service took it; or it addresses another deployed agent,
    `requests.runs_elsewhere`), asking in one of `modes`."""
    return lambda ex, target: rq.invoke_mode(ex) in modes and (rq.only()(ex, target) or rq.runs_elsewhere(ex, target))


def json_result(ex: Exchange, target: Any) -> None:
    """answered 200 with one JSON object, the invoke result."""
    if is_event_stream(ex):
        raise precondition("INV-SEL-004" if rq.fields(ex).get("stream") is False else "INV-SEL-003", ex,
                           f"expected one JSON result, got an event stream ({what(ex)})")
    served(ex)
    assert is_json_media_type(ex.header("content-type")), \
        f"the result must be sent as application/json, got Content-Type {ex.header('content-type')!r}"
    body = ex.json()
    assert isinstance(body, dict), f"the invoke result is not a JSON object: {quoted(body)}"


def no_stream(ex: Exchange, target: Any) -> None:
    """answered as one JSON body, not an event stream (when it was answered 200)."""
    if ex.status == 200:
        assert not is_event_stream(ex), f"asked for no stream, got an event stream ({what(ex)})"


def event_stream(ex: Exchange, target: Any) -> None:
    """answered 200 with `text/event-stream`."""
    served(ex)
    assert ex.content_type == "text/event-stream", \
        f"a request asking for a stream must be answered with text/event-stream, got {what(ex)}"


def failure_streams_error(ex: Exchange, target: Any) -> None:
    """answered 200 with `text/event-stream`, ending with an `error` frame and no `done`."""
    failed_before_output(ex)
    assert_ends_with_error(ex)


def session_echoed(ex: Exchange, target: Any) -> None:
    sent = rq.fields(ex)["sessionId"]
    body = ex.json()
    got = body.get("sessionId") if isinstance(body, dict) else None
    assert got == sent, f"sent sessionId, the result names another: {differs(sent, got)}"


def carries_key(ex: Exchange, target: Any) -> bool:
    return (ex.status == 200 and not is_event_stream(ex) and is_json_media_type(ex.header("content-type"))
            and rq.key_length(rq.fields(ex).get("sessionId")) == "inside" and rq.valid_key(ex)
            and rq.addressed(ex, target) == "agent")


def echoes_params(ex: Exchange, target: Any) -> bool:
    """A run of the agent's `echo params` prompt (the profile's), answered 200 with a JSON result."""
    prompt = rq.echo_params_prompt(target)
    return bool(prompt) and rq.fields(ex).get("prompt") == prompt and ex.status == 200 and not is_event_stream(ex) \
        and rq.only()(ex, target)


def unknown_fields_echoed(ex: Exchange, target: Any) -> None:
    """every field sent that the service does not interpret (but the extra data field, INV-PASS-003's) is in the
    agent's params, unchanged."""
    extra = getattr(target, "extra_data_field", None)
    params_hold(ex, {k: v for k, v in rq.fields(ex).items() if k not in INVOKE_INTERPRETED and k != extra})


def extra_data_echoed(ex: Exchange, target: Any) -> None:
    field = target.extra_data_field
    params_hold(ex, {field: rq.fields(ex)[field]})


def sole(problem: str, test: Callable[[dict[str, Any]], bool]) -> Callable[[Exchange, Any], bool]:
    return lambda ex, target: rq.only(problem)(ex, target) and test(rq.fields(ex))


# fields each invalid by its type: a request with several of them is refused as with any one (`validation_failed`)
MISTYPED = ("prompt", "stream")


def mistyped(problem: str) -> Callable[[Exchange, Any], bool]:
    """The request's problems are `problem` and maybe other fields of the wrong type, each present (`MISTYPED`)."""
    def applies(ex: Exchange, target: Any) -> bool:
        found = rq.problems(ex, target)
        return ex.status not in rq.NOT_JUDGED_STATUSES and problem in found and set(found) <= set(MISTYPED) and \
            len(found) == len(set(found)) and "prompt" in rq.fields(ex)
    return applies


def refusal_is_error_body(ex: Exchange, target: Any) -> None:
    """a refusal is a 4xx whose body is the JSON error body, and not an event stream for a request that asked for
    one (INV-ERR-001)."""
    if ex.content_type == "text/event-stream" and rq.invoke_mode(ex) != "json":
        raise precondition("INV-ERR-001", ex, f"the refusal of a request asking for a stream came as an event "
                                              f"stream: {what(ex)}")
    assert is_4xx(ex), f"a refusal must have a 4xx status, got {what(ex)}"
    if not is_json_media_type(ex.header("content-type")) and rq.invoke_mode(ex) in STREAM_MODES:
        raise precondition("INV-ERR-001", ex, f"the refusal of a request asking for a stream is not sent as JSON "
                                              f"(application/json or +json): {what(ex)}")
    assert is_json_media_type(ex.header("content-type")), \
        f"a refusal must be sent as JSON (application/json or +json), got Content-Type {ex.header('content-type')!r}"
    assert error_of(ex) is not None, f"the refusal's body is not the error body {{error: {{…}}}}: {what(ex)}"


STREAM_MODES = ("stream-field", "accept")


def stream_refusal_is_json(ex: Exchange, target: Any) -> None:
    """the refusal of a request asking for a stream is the JSON error body: not an event stream, nor any other
    type."""
    assert ex.content_type != "text/event-stream", \
        f"a refusal of a request asking for a stream must be the JSON error body, not an event stream: {what(ex)}"
    assert is_json_media_type(ex.header("content-type")), \
        f"a refusal of a request asking for a stream must be sent as JSON (application/json or +json), got " \
        f"Content-Type {ex.header('content-type')!r}"


def result_is_reply(ex: Exchange, target: Any) -> None:
    """a completed run's `result` is the agent's reply (a failed run's is INV-RES-016's)."""
    if run_status(ex) != "completed":
        raise NotAssessed(f"{ex.label}: the run did not complete, so its `result` is not the whole reply")
    replies.known(ex, target).judge(reply_of(ex), "`result`")


def deltas_are_reply(ex: Exchange, target: Any) -> None:
    """the `text` deltas of a run that ended with `done` join to the agent's reply."""
    if "done" not in [f.event for f, _ in named(ex)]:
        raise NotAssessed(f"{ex.label}: the stream did not end with `done`, so its text is not the whole reply")
    replies.known(ex, target).judge(text_of(ex), "the `text` deltas joined")


DURATION_SLACK_MS = 2000   # over the time the suite waited for the answer: clocks, and rounding up to the second


def result_names_agent(ex: Exchange, target: Any) -> None:
    got = result_of(ex).get("agentId")
    sent = rq.path_agent(ex)
    assert got == sent, f"the result's `agentId` is not the agent of the request path: {differs(sent, got)}"


def duration_within(ex: Exchange, target: Any) -> None:
    """`durationMs` is no longer than the suite waited for the answer, and at least half the seconds the prompt
    slept (the run lies inside the exchange and lasts its sleeps)."""
    got = result_of(ex).get("durationMs")
    if not is_json_integer(got) or ex.t_end is None:
        raise NotAssessed(f"{ex.label}: no integer `durationMs` (the schema's) or no time recorded")
    ceiling = round(ex.t_end * 1000) + DURATION_SLACK_MS
    slept = replies.slept(replies.prompt_of(ex)) * 1000
    assert slept / 2 <= got <= ceiling, \
        f"`durationMs` is {got}, but the run slept {slept / 1000:g} s and the whole exchange took " \
        f"{ex.t_end * 1000:.0f} ms: the run's duration lies between {slept / 2:.0f} and {ceiling} ms"


def tools_called(ex: Exchange) -> list[str]:
    """The tools the conformance agent's prompt calls (`tool NAME ARGS`), in order."""
    return [name for _, name in replies.tool_lines(replies.prompt_of(ex))]


def made_events(ex: Exchange) -> int:
    return replies.events_made(replies.prompt_of(ex))


def completed_with_events(ex: Exchange, target: Any) -> bool:
    """A completed JSON result of a conformance agent's run whose prompt says its reply and makes tool calls or
    steps."""
    return ran_json(ex, target) and replies.known(ex, target) is not None and run_status(ex) == "completed" \
        and made_events(ex) > 0


def every_event_listed(ex: Exchange, target: Any) -> None:
    """`events` holds at least one element for each tool call and each step the run made (how many a call and its
    result take, or a step, is not shown: one each at least)."""
    events = result_of(ex).get("events")
    if not isinstance(events, list):
        raise NotAssessed(f"{ex.label}: `events` is no array (the array's own rule judges it)")
    assert len(events) >= made_events(ex), \
        f"the run made {made_events(ex)} tool calls and steps, but `events` holds {len(events)} element(s): " \
        f"{quoted(events, 300)}"


def calls_tools(ex: Exchange, target: Any) -> bool:
    return says_reply("stream-field", "accept")(ex, target) and is_event_stream(ex) and bool(tools_called(ex))


def tool_starts_named(ex: Exchange, target: Any) -> None:
    """each tool call the prompt makes has a `tool_call_start` frame naming its tool (a tool called twice, two)."""
    frames = named(ex)
    if "done" not in [f.event for f, _ in frames]:
        raise NotAssessed(f"{ex.label}: the stream did not end with `done`, so its tool calls are not all there")
    started = [d.get("name") for f, d in frames if f.event == "tool_call_start"]
    called = tools_called(ex)
    missing = sorted({tool for tool in called if started.count(tool) < called.count(tool)})
    assert not missing, f"the prompt calls {quoted(missing)} {', '.join(str(called.count(t)) for t in missing)} " \
                        f"time(s), fewer `tool_call_start` frames name it; names: {quoted(started)}"


def tool_starts_in_order(ex: Exchange, target: Any) -> None:
    """each `tool_call_start` comes where its tool line stands in the prompt: the text before it is the reply of the
    lines before that one (what was said before the call is streamed before it, what follows after)."""
    frames = named(ex)
    prompt = replies.prompt_of(ex)
    lines = prompt.split("\n")
    calls = [i for i, _ in replies.tool_lines(prompt)]
    starts = [k for k, (f, _) in enumerate(frames) if f.event == "tool_call_start"]
    if "done" not in [f.event for f, _ in frames] or len(starts) != len(calls):
        raise NotAssessed(f"{ex.label}: not one `tool_call_start` per tool line of a run that ended `done` "
                          f"(INV-STREAM-010 reads which are there)")
    for k, i in zip(starts, calls):
        before = replies.reply_of("\n".join(lines[:i])) if i else replies.Reply("")
        if before is not None:
            before.judge(text_of(ex, frames[:k]), f"the text streamed before the `tool_call_start` of line {i + 1}")


def ends_done(ex: Exchange, target: Any) -> None:
    """a streamed run whose prompt says its reply (it cannot fail) ends with `done`, with no `error` frame."""
    if not {"done", "error"} & {f.event for f, _ in named(ex)}:
        raise NotAssessed(f"{ex.label}: the stream has no terminal frame (INV-TERM-001's)")
    ends_with_done(ending(ex))


def pauses_after_text(ex: Exchange, target: Any) -> bool:
    """A streamed run of the conformance agent whose prompt says fixed text, then sleeps twice `EARLY_LEAD_S` or
    more (`say early`, `sleep 2`, `say late` is invoke.timing's; the long runs sleep 15 s)."""
    return is_event_stream(ex) and replies.by_the_conformance_agent(target) and must_run("stream-field", "accept")(
        ex, target) and replies.said_before_a_pause(replies.prompt_of(ex), 2 * EARLY_LEAD_S) is not None


def text_arrives_before_the_pause_ends(ex: Exchange, target: Any) -> None:
    """the frame that completes the text said before the pause arrives `EARLY_LEAD_S` or more before the terminal
    frame: the stream delivers text as it is produced, not held back to the end."""
    said, seconds = replies.said_before_a_pause(replies.prompt_of(ex), 2 * EARLY_LEAD_S)
    early, ends = text_completed(ex, said), terminals(ex)
    if early is None or not ends:
        raise NotAssessed(f"{ex.label}: the stream has no text {said!r} or no terminal frame (the reply and "
                          f"termination rules judge it)")
    delivered_early(early, ends[-1], seconds)


def answers_json(ex: Exchange, target: Any) -> bool:
    """A request that must run, asking for JSON; or leaving the form open (INV-SEL-005) and answered without the
    event stream: a non-streaming answer either way, so one JSON body with status 200 (INV-RES-001)."""
    return must_run("json")(ex, target) or (must_run("either")(ex, target) and not is_event_stream(ex))


def ran_json(ex: Exchange, target: Any) -> bool:
    return answers_json(ex, target) and ex.status == 200 and not is_event_stream(ex)


def says_reply(*modes: str) -> Callable[[Exchange, Any], bool]:
    return lambda ex, target: must_run(*modes)(ex, target) and ex.status == 200 \
        and replies.known(ex, target) is not None


register(
    ExchangeRule("INV-RES-003", "result_is_reply", INVOKE, says_reply("json"), result_is_reply,
                 doc="every run asking for JSON whose prompt says its reply (docs/agent.md) has that reply as "
                     "`result`, whatever else the request carried."),
    ExchangeRule("INV-STREAM-008", "deltas_are_reply", INVOKE, says_reply("stream-field", "accept"), deltas_are_reply,
                 doc="every streamed run whose prompt says its reply sends that reply as its `text` deltas."),
    ExchangeRule("INV-STREAM-009", "text_arrives_before_the_pause_ends", INVOKE, pauses_after_text,
                 text_arrives_before_the_pause_ends,
                 doc="every streamed run whose prompt says text, then sleeps 2 s or more, delivers that text at "
                     "least 1 s before its end."),
    ExchangeRule("INV-RES-005", "every_event_listed", INVOKE, completed_with_events, every_event_listed,
                 doc="every completed result of a run that made tool calls or steps has an element of `events` for "
                     "each at least."),
    ExchangeRule("INV-STREAM-010", "tool_call_start_names_tool", INVOKE, calls_tools, tool_starts_named,
                 doc="every streamed run whose prompt calls a tool has a `tool_call_start` naming it."),
    ExchangeRule("INV-STREAM-011", "tool_call_start_in_order", INVOKE, calls_tools, tool_starts_in_order,
                 doc="every streamed run whose prompt calls a tool streams its `tool_call_start` where the tool line "
                     "stands: after the text of the lines before it, before the text of those after."),
    ExchangeRule("INV-TERM-003", "normal_run_ends_done", INVOKE,
                 lambda ex, target: says_reply("stream-field", "accept")(ex, target) and is_event_stream(ex),
                 ends_done, doc="every streamed run whose prompt says its reply ends with `done`, not `error`."),
    ExchangeRule("INV-RES-017", "completed_has_no_error", INVOKE,
                 lambda ex, target: ran_json(ex, target) and run_status(ex) == "completed",
                 lambda ex, target: no_error_member(ex),
                 doc="every completed invoke result has no `error` (or null)."),
    ExchangeRule("INV-RES-010", "result_names_agent", INVOKE, ran_json, result_names_agent,
                 doc="every invoke result's `agentId` is the agent of its request path."),
    ExchangeRule("INV-RES-013", "duration_within_exchange", INVOKE, ran_json, duration_within,
                 doc="every invoke result's `durationMs` lies between half the seconds its prompt slept and the time "
                     "the suite waited for the answer (plus 2 s for clocks)."),
    ExchangeRule("INV-SEL-003", "json_when_not_asked", INVOKE,
                 lambda ex, target: must_run("json")(ex, target) and "stream" not in rq.fields(ex), no_stream,
                 basic=True, doc="an invoke without `stream` and without the event stream in Accept is answered "
                                 "with one JSON body."),
    ExchangeRule("INV-SEL-004", "json_when_stream_false", INVOKE,
                 lambda ex, target: must_run("json")(ex, target) and rq.fields(ex).get("stream") is False, no_stream,
                 basic=True, doc="an invoke with `stream: false` is answered with one JSON body."),
    ExchangeRule("INV-RES-001", "result_is_json_200", INVOKE, answers_json, json_result, basic=True,
                 doc="an invoke that must run, asking for JSON (or leaving the form open and answered without the "
                     "event stream), is answered 200 with one JSON object, however the request was written or "
                     "framed."),
    # a streamed run that fails before any output: a refusal status for it is INV-TERM-005's (the failure's rule),
    # not the selection's, which every other stream of the request's form reads
    ExchangeRule("INV-TERM-005", "failure_before_output_streams_error", INVOKE,
                 lambda ex, target: must_run("stream-field", "accept")(ex, target) and
                 replies.fails_before_output(ex, target), failure_streams_error, basic=True,
                 doc="every streamed run that fails before any output answers 200 and ends with an `error` frame, "
                     "not a refusal status."),
    ExchangeRule("INV-SEL-001", "stream_true_streams", INVOKE, must_run("stream-field"), event_stream,
                 basic=True, doc="`stream: true` is answered 200 with an event stream."),
    ExchangeRule("INV-SEL-002", "accept_streams", INVOKE, must_run("accept"), event_stream, basic=True,
                 doc="no `stream` and `Accept: text/event-stream` (in any case, with a weight) is answered 200 with "
                     "an event stream."),
    ExchangeRule("GEN-ERR-001", "invoke_refusal_is_error_body", INVOKE, rq.is_refusal, refusal_is_error_body,
                 basic=True, refusals=True, doc="every invoke refusal is a 4xx with the JSON error body."),
    ExchangeRule("INV-ERR-001", "stream_refusal_is_json", INVOKE,
                 lambda ex, target: rq.is_refusal(ex, target) and rq.invoke_mode(ex) in STREAM_MODES,
                 stream_refusal_is_json, doc="a refusal of a request asking for a stream is JSON, not a stream."),
    ExchangeRule("INV-SESS-003", "session_id_echoed", INVOKE, carries_key, session_echoed,
                 doc="the result's `sessionId` equals the key sent, exactly."),
    ExchangeRule("INV-PASS-001", "unknown_fields_echoed", INVOKE, echoes_params, unknown_fields_echoed,
                 doc="on every run of `echo params`, each unknown field reached the agent's params unchanged."),
    ExchangeRule("INV-PASS-002", "interpreted_fields_withheld", INVOKE, echoes_params,
                 lambda ex, target: interpreted_withheld(ex),
                 doc="on every run of `echo params`, none of the fields the service interprets is in params."),
    ExchangeRule("INV-PASS-003", "extra_data_echoed", INVOKE,
                 lambda ex, target: echoes_params(ex, target) and rq.extra_size(ex, target) == "inside",
                 extra_data_echoed, doc="on every run of `echo params`, the extra data reached params unchanged."),
    *shared_refusal_rules("invoke"),
    *credential_rules(),
    ExchangeRule("INV-ERR-002", "prompt_not_string_refused", INVOKE, mistyped("prompt"),
                 refused_with("validation_failed", details=True),
                 doc="a `prompt` that is not a string is refused `validation_failed` with `details` (an object), "
                     "also when `stream` is not a boolean either."),
    ExchangeRule("INV-ERR-003", "stream_not_boolean_refused", INVOKE, mistyped("stream"),
                 refused_with("validation_failed", details=True),
                 doc="a `stream` that is not a boolean is refused `validation_failed` with `details` (an object), "
                     "also when `prompt` is not a string either."),
    ExchangeRule("INV-ERR-004", "prompt_missing_refused", INVOKE,
                 sole("prompt", lambda sent: "prompt" not in sent), refused_with(None),
                 doc="an invoke without `prompt` is refused with the error body."),
    ExchangeRule("INV-ERR-005", "body_not_object_refused", INVOKE, rq.only("body", "prompt"), refused_with(None),
                 doc="a body that is not a JSON object is refused with the error body."),
    ExchangeRule("INV-LIM-004", "extra_data_outside_refused", INVOKE,
                 lambda ex, target: rq.only("extra-data")(ex, target) and rq.extra_size(ex, target) == "outside",
                 refused_with(None), doc="extra data well over 4 KB as JSON is refused."),
    ExchangeRule("INV-LIM-005", "extra_data_outside_validation_failed", INVOKE,
                 lambda ex, target: rq.only("extra-data")(ex, target) and rq.extra_size(ex, target) == "outside",
                 refused_with("validation_failed"), doc="... with `validation_failed`."),
)
