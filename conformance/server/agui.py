"""POST /v1/agents/{agentId}/agui: an AG-UI 1.0 run, always streamed.

Unnamed ``data:`` frames, one AG-UI event each (camelCase, as the ag_ui 1.0
models serialize). Mapping of agent events:

* text pieces: one assistant message (TEXT_MESSAGE_START, one CONTENT per piece,
  TEXT_MESSAGE_END) for each run of consecutive pieces;
* a tool call: TOOL_CALL_START, TOOL_CALL_ARGS (canonical JSON of the arguments),
  TOOL_CALL_END, TOOL_CALL_RESULT (role ``tool``, content = the tool's result);
* a step: STEP_STARTED then STEP_FINISHED;
* ``ask``: RUN_FINISHED with outcome ``{"type": "interrupt", "interrupts": [...]}``
  (one Interrupt: ``id``, ``reason: "question"``, ``message``: the question);
* ``fail``: RUN_ERROR (``message``, ``code: "agent_error"``), and no RUN_FINISHED;
* silence: a ``: ping`` comment every ``ping_interval`` seconds since the last write.

RUN_FINISHED.result is the text this stream carried.

Resuming: a request with a non-empty ``resume`` (a list of AG-UI ResumeEntry, or
one entry as an object) on the ``threadId`` of a paused run continues that run.
The entries must answer exactly the interrupts the run ended with: an unknown
``interruptId``, a missing or duplicated answer, or a thread with no paused run
is refused with ``validation_failed`` before any stream, and the paused run is
left as it was. The agent gets the entry's ``payload`` (the whole entry when it
has none). A resumed run is the same run continuing: ``count`` does not go up,
and it keeps the params and messages it started with. A new run (no ``resume``)
on a paused thread abandons the question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.agent import Ask, Fail, Idle, Paused, RunContext, Step, Text, ToolCall, new_id, paced
from .asgi import DisconnectWatch, Request, Send, dumps, start_stream, stream_end, stream_write
from .refusal import SESSION_KEY_RULE, Refusal, is_session_key

if TYPE_CHECKING:
    from .app import Service

INTERPRETED = ("threadId", "runId", "messages", "resume")
PING = b": ping\n\n"


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return None


def _resume_entries(value: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    entries = [value] if isinstance(value, dict) else value
    if not isinstance(entries, list):
        return None, "must be an array of resume entries (or one entry)"
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            return None, f"entry {i} must be an object"
        if not isinstance(entry.get("interruptId"), str):
            return None, f"entry {i}: interruptId must be a string"
        if entry.get("status") not in ("resolved", "cancelled"):
            return None, f"entry {i}: status must be 'resolved' or 'cancelled'"
    return entries, None


def validate(body: dict[str, Any]) -> tuple[list[tuple[str, str]], str | None, list[dict[str, Any]]]:
    """(errors, prompt, resume entries)."""
    errors: list[tuple[str, str]] = []
    if "threadId" in body:
        tid = body["threadId"]
        if not is_session_key(tid):
            errors.append(("threadId", SESSION_KEY_RULE))
    if "runId" in body and not isinstance(body["runId"], str):
        errors.append(("runId", "must be a string"))
    prompt: str | None = None
    messages = body.get("messages", [])
    if not isinstance(messages, list):
        errors.append(("messages", "must be an array of messages"))
    else:
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                errors.append((f"messages[{i}]", "must be a message object with a string role"))
                break
        else:
            for message in reversed(messages):
                if message["role"] == "user":
                    prompt = _text_of(message.get("content"))
                    if prompt is None:
                        errors.append(("messages", "the last user message has no text content"))
                    break
    entries: list[dict[str, Any]] = []
    if "resume" in body and body["resume"] is not None:
        parsed, problem = _resume_entries(body["resume"])
        if problem:
            errors.append(("resume", problem))
        else:
            entries = parsed or []
    return errors, prompt, entries


@dataclass
class Start:
    """An accepted AG-UI request: the thread, its instance, and (on a resume) the paused run and its answer."""
    gate: Any
    body: dict[str, Any]
    prompt: str | None
    thread_id: str
    instance: Any
    paused: Paused | None = None
    answer: Any = None


async def handle(service: Service, req: Request, send: Send, agent_id: str) -> None:
    try:
        start = await _accept(service, req, agent_id)
    except Refusal as refusal:
        await service.refuse(send, req, refusal)
        return
    run_id = start.body["runId"] if "runId" in start.body else new_id("run_")
    script, ctx, events = _run_of(service, start)
    await start_stream(send, start.gate.headers)
    await stream_write(send, _frame({"type": "RUN_STARTED", "threadId": start.thread_id, "runId": run_id}))
    async with DisconnectWatch(req.receive):
        texts, ending = await _stream_events(service, send, start, script, ctx, events, run_id)
    if ending["type"] == "RUN_FINISHED":
        ending["result"] = "".join(texts)
    await stream_end(send, _frame(ending))


async def _accept(service: Service, req: Request, agent_id: str) -> Start:
    """Every refusal happens here, before the stream starts."""
    gate = service.gate(req, agent_id)
    body = await service.json_object(req, gate.headers)
    errors, prompt, entries = validate(body)
    if errors:
        raise service.validation_failed(errors, gate.headers)
    if prompt is None and not entries:
        raise Refusal(400, "invalid_request", "Send at least one user message, or a resume.", headers=gate.headers)
    thread_id = body.get("threadId") or new_id("thr_")
    sessions = service.org.sessions
    if not entries:
        return Start(gate, body, prompt, thread_id, sessions.get(gate.agent.id, thread_id))
    instance = sessions.peek(gate.agent.id, thread_id)
    paused = instance.paused if instance is not None else None
    answer = _check_resume(service, paused, entries, gate.headers)
    instance.paused = None  # type: ignore[union-attr]  # _check_resume proved it exists
    return Start(gate, body, prompt, thread_id, instance, paused, answer)


def _run_of(service: Service, start: Start):
    """(script, context, events) of the run this request starts or resumes."""
    agent = service.interpreter
    if start.paused is not None:
        return start.paused.script, start.paused.context, agent.resumed_steps(start.paused, start.answer)
    start.instance.paused = None
    params = {k: v for k, v in start.body.items() if k not in INTERPRETED}
    ctx = RunContext(params=params, messages=start.body.get("messages") or [], run_number=start.instance.start_run())
    script = agent.parse(start.prompt or "")
    return script, ctx, agent.steps(script, ctx)


async def _stream_events(service: Service, send: Send, start: Start, script, ctx, events,
                         run_id: str) -> tuple[list[str], dict[str, Any]]:
    """Writes the run's events as AG-UI frames; returns the text pieces and the closing event."""
    texts: list[str] = []
    message_id: str | None = None
    ending: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": start.thread_id, "runId": run_id,
                              "outcome": {"type": "success"}}
    async for event in paced(events, service.config.ping_interval):
        t = type(event)
        if t is Idle:
            await stream_write(send, PING)
            continue
        if t is Text:
            if message_id is None:
                message_id = new_id("msg_")
                await stream_write(send, _frame({"type": "TEXT_MESSAGE_START", "messageId": message_id,
                                                 "role": "assistant"}))
            texts.append(event.text)
            await stream_write(send, _frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id,
                                             "delta": event.text}))
            continue
        if message_id is not None:
            await stream_write(send, _frame({"type": "TEXT_MESSAGE_END", "messageId": message_id}))
            message_id = None
        if t is ToolCall:
            await _tool_call(send, event)
        elif t is Step:
            await stream_write(send, _frame({"type": "STEP_STARTED", "stepName": event.name}))
            await stream_write(send, _frame({"type": "STEP_FINISHED", "stepName": event.name}))
        elif t is Ask:
            start.instance.paused = Paused(script=script, context=ctx, ask=event)
            ending["outcome"] = {"type": "interrupt", "interrupts": [
                {"id": event.id, "reason": "question", "message": event.question}]}
        elif t is Fail:
            ending = {"type": "RUN_ERROR", "message": event.message, "code": "agent_error"}
    if message_id is not None:
        await stream_write(send, _frame({"type": "TEXT_MESSAGE_END", "messageId": message_id}))
    return texts, ending


def _check_resume(service: Service, paused: Paused | None, entries: list[dict[str, Any]], headers) -> Any:
    """The answer the agent gets; raises validation_failed unless the entries answer every interrupt."""
    if paused is None:
        raise service.validation_failed([("resume", "no paused run on this threadId")], headers)
    ids = [e["interruptId"] for e in entries]
    expected = paused.ask.id
    unknown = [i for i in ids if i != expected]
    if unknown:
        raise service.validation_failed([("resume", f"unknown interruptId {unknown[0]!r}")], headers)
    if len(ids) != 1:
        raise service.validation_failed([("resume", "each interrupt must be answered exactly once")], headers)
    entry = entries[0]
    return entry["payload"] if "payload" in entry else entry


async def _tool_call(send: Send, call: ToolCall) -> None:
    await stream_write(send, _frame({"type": "TOOL_CALL_START", "toolCallId": call.id, "toolCallName": call.name}))
    await stream_write(send, _frame({"type": "TOOL_CALL_ARGS", "toolCallId": call.id, "delta": call.result}))
    await stream_write(send, _frame({"type": "TOOL_CALL_END", "toolCallId": call.id}))
    await stream_write(send, _frame({"type": "TOOL_CALL_RESULT", "messageId": new_id("msg_"),
                                     "toolCallId": call.id, "content": call.result, "role": "tool"}))


def _frame(event: dict[str, Any]) -> bytes:
    return b"data: " + dumps(event) + b"\n\n"
