"""AG-UI rules over every exchange (`conformance.exchange_rules`), whatever scenario sent it: a run the spec says must stream is answered with an event stream of unnamed
frames, one JSON event each, `RUN_STARTED` first and once, one terminal event last, the thread and run ids sent
echoed; a request without a user message or a resume is refused `invalid_request`, a refusal is never a stream.
"""
from __future__ import annotations

from typing import Any

from conformance.checks.agui._common import TERMINAL, Run, frame_value, is_event
from conformance.checks.agui.order import finished, tool_or_step_inside
from conformance.checks.agui.passthrough import interpreted_withheld, reach_params
from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import NotAssessed, Observation, precondition
from conformance.vocab import replies, requests as rq
from conformance.vocab.constants import AGUI_FORWARDED
from conformance.vocab.readers import error_of, got, is_4xx
from conformance.vocab.refusals import refused_with, served, shared_refusal_rules
from conformance.vocab.values import differs, is_json_media_type
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange

AGUI = ("agui",)


def run_of(ex: Exchange) -> Run:
    """The answer as the AG-UI checks read a run, with what the request sent (read once: every rule reads it)."""
    def read() -> Run:
        sent = rq.fields(ex)
        return Run(None, ex.label, ex, {"thread": sent.get("threadId"), "run": sent.get("runId")})
    return ex.remembered("agui run", read)


def is_stream(ex: Exchange, target: Any) -> bool:
    return ex.status == 200 and ex.stream is not None and ex.content_type == "text/event-stream"


def must_stream(ex: Exchange, target: Any) -> bool:
    """A run the spec says must stream (to another deployed agent too: `requests.runs_elsewhere`; with an access token
    or an empty runId the service took, `requests.agui_problems`)."""
    return ex.status not in rq.NOT_JUDGED_STATUSES and (not rq.problems(ex, target) or rq.runs_elsewhere(ex, target))


def streams(ex: Exchange, target: Any) -> None:
    """answered 200 with `text/event-stream`."""
    served(ex)
    assert ex.content_type == "text/event-stream", f"a valid AG-UI run must stream (200 text/event-stream), got " \
                                                   f"{got(ex)}"


def unnamed(ex: Exchange, target: Any) -> None:
    named = [f"frame {f.index} ({f.event!r})" for f in ex.stream.dispatched if f.event]
    assert not named, f"AG-UI frames carry no event name: {', '.join(named[:5])}"


def one_value_each(ex: Exchange, target: Any) -> None:
    """each frame is blank-line terminated and holds one whole JSON value."""
    if ex.stream.end == "eof_mid_block":
        raise AssertionError("the stream ended inside a frame that no blank line closed: "
                             f"{truncate(ex.stream.pending.decode('utf-8', 'replace'), 160, quoted=True)}")
    for f in ex.stream.dispatched:
        frame_value(f, ex)


def json_events(ex: Exchange, target: Any) -> None:
    bad = [f"frame {f.index}: {truncate(f.data, 80, quoted=True)}" for f in ex.stream.dispatched
           if not is_event(frame_value(f, ex))]
    assert not bad, f"frames whose data is not a JSON object with a string `type`: {'; '.join(bad[:4])}"


def started_first(ex: Exchange, target: Any) -> None:
    r = run_of(ex)
    types = [e["type"] for e in r.events]
    assert types and types[0] == "RUN_STARTED" and types.count("RUN_STARTED") == 1, \
        f"expected RUN_STARTED first and once, got {r.types()}"


def one_terminal(ex: Exchange, target: Any) -> None:
    r = run_of(ex)
    count = len(r.of_type(*TERMINAL))
    assert count == 1, f"expected exactly one RUN_FINISHED or RUN_ERROR, got {count}: {r.types()}"


def terminal_last(ex: Exchange, target: Any) -> None:
    r = run_of(ex)
    r.terminal()
    values = [frame_value(f, ex) for f in r.frames]
    last = max(i for i, v in enumerate(values) if is_event(v) and v["type"] in TERMINAL)
    after = r.frames[last + 1:]
    assert not after, f"{len(after)} frame(s) after the terminal event: " + \
        ", ".join(truncate(f.data, 60, quoted=True) for f in after[:3])


def echoed(event_type: str, field: str):
    def judge(ex: Exchange, target: Any) -> None:
        r = run_of(ex)
        sent = rq.fields(ex)[field]
        event = r.started() if event_type == "RUN_STARTED" else r.finished()
        assert same_json(event.get(field), sent), f"sent {field}, {event_type}.{field} is another: " \
                                                  f"{differs(sent, event.get(field))}"
    return judge


def sent(field: str, finished: bool = False):
    def applies(ex: Exchange, target: Any) -> bool:
        value = rq.fields(ex).get(field)
        # a threadId is a session key of 1 to 256 characters; a runId is any string, "" too (once the run started)
        if not (is_stream(ex, target) and isinstance(value, str)
                and (field == "runId" or rq.key_length(value) == "inside")):
            return False
        return not finished or any(e["type"] == "RUN_FINISHED" for e in run_of(ex).events)
    return applies


def same_thread(ex: Exchange, target: Any) -> None:
    r = run_of(ex)
    start = r.started().get("threadId")
    differ = [e.get("threadId") for e in r.of_type("RUN_FINISHED") if not same_json(e.get("threadId"), start)]
    assert not differ, f"RUN_STARTED.threadId {truncate(start, 60, quoted=True)} but RUN_FINISHED.threadId " \
                       f"{truncate(differ[0], 60, quoted=True)}"


def refusal_is_error_body(ex: Exchange, target: Any) -> None:
    """a refusal is a 4xx whose body is the JSON error body, never an event stream (AGUI-ERR-005)."""
    if ex.content_type == "text/event-stream":
        raise precondition("AGUI-ERR-005", ex, f"an AG-UI refusal came as an event stream: {got(ex)}")
    assert is_4xx(ex), f"a refusal must have a 4xx status, got {got(ex)}"
    assert is_json_media_type(ex.header("content-type")), \
        f"a refusal must be sent as JSON (application/json or +json), got Content-Type {ex.header('content-type')!r}"
    assert error_of(ex) is not None, f"the refusal's body is not the error body {{error: {{…}}}}: {got(ex)}"




def echoes_params(ex: Exchange, target: Any) -> bool:
    """An AG-UI run of the agent's `echo params` prompt (its last user message), answered with a stream."""
    prompt = rq.echo_params_prompt(target)
    messages = rq.fields(ex).get("messages")
    last = next((m.get("content") for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"),
                None) if isinstance(messages, list) else None
    return bool(prompt) and last == prompt and is_stream(ex, target) and not rq.problems(ex, target)


def params_echoed(forwarded: bool):
    def judge(ex: Exchange, target: Any) -> None:
        sent = {k: v for k, v in rq.fields(ex).items() if (k in AGUI_FORWARDED) == forwarded}
        if not sent:
            raise NotAssessed("no such field sent")
        reach_params(run_of(ex), sent)
    return judge


def no_user_message(test):
    return lambda ex, target: rq.only("user-message")(ex, target) and test(rq.fields(ex))


def stream_refusal(ex: Exchange, target: Any) -> None:
    assert ex.content_type != "text/event-stream", f"an AG-UI refusal must be the JSON error body, not an event " \
                                                   f"stream: {got(ex)}"


def resume_not_invalid(ex: Exchange, target: Any) -> None:
    """a request with `resume` and no `messages` is not refused `invalid_request`."""
    if ex.status is not None and 400 <= ex.status < 500:
        code = (error_of(ex) or {}).get("code")
        assert code != "invalid_request", f"a request with `resume` was refused `invalid_request`: {got(ex)}"
        raise Observation(f"refused {ex.status} {code!r} (the resume's own rules judge what it answered)")


def finished_with_success(ex: Exchange, why: str = "") -> tuple[Run, dict[str, Any]]:
    """(the run, its terminal event) of a run that finished with outcome `success`; NotAssessed (`why`) otherwise."""
    r = run_of(ex)
    end = r.terminal()
    outcome = end.get("outcome")
    if end["type"] != "RUN_FINISHED" or not (isinstance(outcome, dict) and outcome.get("type") == "success"):
        raise NotAssessed(f"{ex.label}: the run did not finish with outcome `success`{why}")
    return r, end


def reply_judged(ex: Exchange, target: Any) -> tuple[str | None, bool]:
    """(how the content deltas of a run that finished with outcome `success` differ from the agent's reply, or None
    when they are it; whether they show another message of the run's history)."""
    r, _ = finished_with_success(ex, ", so its text is not the whole reply")
    text = r.text()
    try:
        replies.known(ex, target).judge(text, "the TEXT_MESSAGE_CONTENT deltas joined")
    except AssertionError as exc:
        return str(exc), replies.replied_to_another(ex, text)
    return None, False


def deltas_are_reply(ex: Exchange, target: Any) -> None:
    """the content deltas of a run that finished with outcome `success` join to the agent's reply (a run with a
    message history that replied to another message of it is AGUI-PROMPT-001's deviation)."""
    wrong, another = reply_judged(ex, target)
    if another:
        raise precondition("AGUI-PROMPT-001", ex, f"{wrong} (the text of the last user message is the prompt)")
    assert wrong is None, wrong


def result_is_reply(ex: Exchange, target: Any) -> None:
    """RUN_FINISHED.result of a run that finished with outcome `success` is the reply: the one its prompt says, or,
    where the prompt does not say it (a resumed run), a text that holds what the run streamed (whether it also holds
    what was said before the pause is not shown)."""
    r, end = finished_with_success(ex)
    result, said = end.get("result"), r.text()
    reply = replies.known(ex, target)
    if reply is None:
        assert isinstance(result, str) and said in result, \
            f"RUN_FINISHED.result is {truncate(result, 160, quoted=True)}, which does not hold the text the run " \
            f"streamed, {truncate(said, 160, quoted=True)}"
        return
    try:
        reply.judge(said, "the TEXT_MESSAGE_CONTENT deltas joined")
    except AssertionError as exc:     # the reply itself went wrong: AGUI-ORDER-006's deviation (on a run with a
        # message history, AGUI-PROMPT-001's: the reply of another message)
        raise precondition("AGUI-PROMPT-001" if with_history(ex, target) else "AGUI-ORDER-006", ex, str(exc)) from None
    reply.judge(result, "RUN_FINISHED.result")


def resumed_by_the_agent(ex: Exchange, target: Any) -> bool:
    """A run of the conformance agent that continues a paused one (`resume`, nothing else wrong with the request):
    what it replies is not in its request."""
    return replies.by_the_conformance_agent(target) and rq.fields(ex).get("resume") is not None \
        and set(rq.problems(ex, target)) <= {"resume", "user-message"}


def with_history(ex: Exchange, target: Any) -> bool:
    """A run whose messages hold more than its last user message (earlier user messages, or messages after it) and
    whose prompt, that last user message, says its reply."""
    messages = rq.fields(ex).get("messages")
    if not isinstance(messages, list) or len(messages) < 2:
        return False
    users = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"]
    return bool(users) and (len(users) > 1 or users[-1] != len(messages) - 1) and must_stream(ex, target) \
        and is_stream(ex, target) and replies.known(ex, target) is not None


def last_user_is_prompt(ex: Exchange, target: Any) -> None:
    """the reply is that of the last user message, not of another message of the history (whatever came before or
    after it); a reply that went wrong otherwise is AGUI-ORDER-006's."""
    wrong, another = reply_judged(ex, target)
    if wrong is not None and not another:
        raise precondition("AGUI-ORDER-006", ex, wrong)
    assert wrong is None, f"{wrong} (the text of the last user message is the prompt)"


def finishes(ex: Exchange, target: Any) -> None:
    """a run whose prompt says its reply (it cannot fail) ends with RUN_FINISHED, not RUN_ERROR."""
    try:
        end = run_of(ex).terminal()
    except AssertionError:
        raise NotAssessed(f"{ex.label}: no one terminal event (AGUI-ORDER-002's)") from None
    finished(end)


def tool_or_step_between(ex: Exchange, target: Any) -> None:
    """a run whose prompt calls a tool or takes a step shows an event of it between start and end."""
    r = run_of(ex)
    if r.terminal()["type"] != "RUN_FINISHED":
        raise NotAssessed(f"{ex.label}: the run did not finish, so what it did is not all there")
    r.replied_to_its_prompt()
    tool_or_step_inside(r)


register(
    ExchangeRule("AGUI-ORDER-005", "tool_and_step_events_between", AGUI,
                 lambda ex, target: must_stream(ex, target) and is_stream(ex, target)
                 and replies.calls_tool_or_step(ex, target), tool_or_step_between,
                 doc="every run whose prompt calls a tool or takes a step (docs/agent.md) shows a tool call or step "
                     "event between RUN_STARTED and its terminal event, whatever else the request carried."),
    ExchangeRule("AGUI-ORDER-006", "deltas_are_reply", AGUI,
                 lambda ex, target: must_stream(ex, target) and is_stream(ex, target)
                 and replies.known(ex, target) is not None, deltas_are_reply,
                 doc="every run whose prompt says its reply (docs/agent.md) sends that reply as its content deltas, "
                     "whatever else the request carried (the reply of another message of its history: "
                     "AGUI-PROMPT-001's)."),
    ExchangeRule("AGUI-PROMPT-003", "result_is_reply", AGUI,
                 lambda ex, target: is_stream(ex, target) and (
                     must_stream(ex, target) and replies.known(ex, target) is not None
                     or resumed_by_the_agent(ex, target)), result_is_reply,
                 doc="every run that ends normally, whatever else the request carried, reports its reply as "
                     "RUN_FINISHED.result: the one its prompt says, or on a resumed run a text holding what it "
                     "streamed."),
    ExchangeRule("AGUI-ORDER-004", "normal_run_finishes", AGUI,
                 lambda ex, target: must_stream(ex, target) and is_stream(ex, target)
                 and replies.known(ex, target) is not None, finishes,
                 doc="every run whose prompt says its reply ends with RUN_FINISHED, not RUN_ERROR."),
    ExchangeRule("AGUI-PROMPT-001", "last_user_message_is_prompt", AGUI, with_history, last_user_is_prompt,
                 doc="every run with a message history replies to its last user message, whatever came before."),
    ExchangeRule("AGUI-FRAME-001", "valid_run_streams", AGUI, must_stream, streams, basic=True,
                 doc="a valid AG-UI run is answered 200 with an event stream, however it was written or framed."),
    ExchangeRule("GEN-ERR-001", "agui_refusal_is_error_body", AGUI, rq.is_refusal, refusal_is_error_body,
                 basic=True, refusals=True, doc="every AG-UI refusal is a 4xx with the JSON error body."),
    ExchangeRule("AGUI-ERR-005", "refusal_is_not_a_stream", AGUI, rq.is_refusal, stream_refusal,
                 doc="an AG-UI refusal is JSON, not an event stream."),
    ExchangeRule("AGUI-FRAME-002", "frames_unnamed", AGUI, is_stream, unnamed, doc="no frame is named."),
    ExchangeRule("AGUI-FRAME-004", "one_value_per_frame", AGUI, is_stream, one_value_each,
                 doc="every frame holds one whole JSON value."),
    ExchangeRule("AGUI-FRAME-003", "frames_are_events", AGUI, is_stream, json_events,
                 doc="every frame is one JSON event."),
    ExchangeRule("AGUI-ORDER-001", "run_started_first", AGUI, is_stream, started_first,
                 doc="RUN_STARTED comes first, once."),
    ExchangeRule("AGUI-ORDER-002", "one_terminal", AGUI, is_stream, one_terminal,
                 doc="exactly one RUN_FINISHED or RUN_ERROR."),
    ExchangeRule("AGUI-ORDER-003", "terminal_last", AGUI, is_stream, terminal_last,
                 doc="the terminal event is the last frame."),
    ExchangeRule("AGUI-ID-001", "thread_id_echoed", AGUI, sent("threadId"), echoed("RUN_STARTED", "threadId"),
                 doc="RUN_STARTED.threadId equals the threadId sent."),
    ExchangeRule("AGUI-ID-002", "run_id_echoed_on_start", AGUI, sent("runId"), echoed("RUN_STARTED", "runId"),
                 doc="RUN_STARTED.runId equals the runId sent."),
    ExchangeRule("AGUI-ID-003", "run_id_echoed_on_finish", AGUI, sent("runId", finished=True),
                 echoed("RUN_FINISHED", "runId"), doc="RUN_FINISHED.runId equals the runId sent."),
    ExchangeRule("AGUI-PASS-001", "forwarded_fields_echoed", AGUI, echoes_params, params_echoed(True),
                 doc="on every run of `echo params`, tools, state, context and forwardedProps reached params unchanged."),
    ExchangeRule("AGUI-PASS-002", "unknown_fields_echoed", AGUI, echoes_params, params_echoed(False),
                 doc="on every run of `echo params`, each unknown field reached params unchanged."),
    ExchangeRule("AGUI-PASS-003", "interpreted_fields_withheld", AGUI, echoes_params,
                 lambda ex, target: interpreted_withheld(run_of(ex)),
                 doc="on every run of `echo params`, none of the fields the service interprets is in params."),
    ExchangeRule("AGUI-ID-004", "finish_thread_matches_start", AGUI, is_stream, same_thread,
                 doc="RUN_FINISHED.threadId equals RUN_STARTED.threadId."),
    ExchangeRule("AGUI-ERR-001", "no_messages_no_resume", AGUI,
                 no_user_message(lambda s: "messages" not in s), refused_with("invalid_request"),
                 doc="neither messages nor resume: refused `invalid_request`."),
    ExchangeRule("AGUI-ERR-002", "empty_messages", AGUI, no_user_message(lambda s: s.get("messages") == []),
                 refused_with("invalid_request"), doc="`messages: []` and no resume: refused `invalid_request`."),
    ExchangeRule("AGUI-ERR-003", "no_user_message", AGUI,
                 no_user_message(lambda s: isinstance(s.get("messages"), list) and s["messages"] != []),
                 refused_with("invalid_request"), doc="messages without a user message and no resume: refused "
                                                      "`invalid_request`."),
    ExchangeRule("AGUI-INT-003", "resume_without_messages", AGUI,
                 lambda ex, target: ex.status not in rq.NOT_JUDGED_STATUSES and "messages" not in rq.fields(ex)
                 and isinstance(rq.fields(ex).get("resume"), (list, dict)) and bool(rq.fields(ex)["resume"])
                 and set(rq.problems(ex, target)) == {"resume", "user-message"},
                 resume_not_invalid, doc="`resume` without messages is not refused `invalid_request`."),
    *shared_refusal_rules("agui"),
)
