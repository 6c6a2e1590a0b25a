"""POST /v1/agents/{agentId}/invoke: one JSON result, or a server-sent event stream.

The spec names four of the eight invoke event types (``text``, ``tool_call_start``,
``done``, ``error``). The other four, chosen here:

* ``tool_result``: ``{v, type, id, name, result}``: the tool call ``id`` (also on
  ``tool_call_start``, which carries ``id``, ``name`` and ``args``), the tool's name
  and its result (a string).
* ``step_start`` and ``step_end``: ``{v, type, name}``.
* ``interrupt``: ``{v, type, id, question}``: the agent asked a question. Invoke
  has no ``resume`` in the spec, so the run then ends normally (``completed``,
  ``done``); the question can be answered over AG-UI or MCP on the same session
  key, where the run is not kept paused by invoke.

``done`` carries ``status`` (``completed``), ``sessionId``, ``agentId``,
``versionNumber``, ``requestId`` and ``durationMs``; ``error`` carries ``code``
and ``message``. Every event carries ``v: 1``.

Fields the service interprets: ``prompt``, ``sessionId``, ``stream``, ``messages``;
every other field (the extra data field, named by ``ServerConfig.extra_data_field``,
``data`` by default, included) reaches the agent unchanged in ``params``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from conformance.agent import Ask, Fail, RunContext, Step, Text, ToolCall, canonical_json, new_id, paced
from .asgi import DisconnectWatch, Request, Send, dumps, send_json, start_stream, stream_end, stream_write
from .refusal import SESSION_KEY_RULE, Refusal, is_session_key

if TYPE_CHECKING:
    from .app import Service

INTERPRETED = ("prompt", "sessionId", "stream", "messages")
AGENT_ERROR = "agent_error"


def validate(service: Service, body: dict[str, Any]) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    prompt = body.get("prompt")
    if "prompt" not in body:
        errors.append(("prompt", "is required"))
    elif not isinstance(prompt, str):
        errors.append(("prompt", "must be a string"))
    if "sessionId" in body:
        sid = body["sessionId"]
        if not is_session_key(sid):
            errors.append(("sessionId", SESSION_KEY_RULE))
    if "stream" in body and not isinstance(body["stream"], bool):
        errors.append(("stream", "must be a boolean"))
    if "messages" in body and not isinstance(body["messages"], list):
        errors.append(("messages", "must be an array"))
    field = service.config.extra_data_field
    if field in body and field not in INTERPRETED:
        size = len(canonical_json(body[field]).encode("utf-8", "surrogatepass"))
        if size > service.config.max_extra_bytes:
            errors.append((field, f"is {size} bytes as JSON, over the limit of {service.config.max_extra_bytes}"))
    return errors


def _elapsed_ms(started: float) -> int:
    """Rounded up: the event loop may wake a sleep a clock tick early, and a run that slept 300 ms took 300 ms."""
    return math.ceil((time.monotonic() - started) * 1000)


def _event(type_: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "type": type_, **fields}


def events_of(event: Any) -> list[dict[str, Any]]:
    """Invoke events for one non-text agent event."""
    t = type(event)
    if t is ToolCall:
        return [
            _event("tool_call_start", id=event.id, name=event.name, args=event.args),
            _event("tool_result", id=event.id, name=event.name, result=event.result),
        ]
    if t is Step:
        return [_event("step_start", name=event.name), _event("step_end", name=event.name)]
    if t is Ask:
        return [_event("interrupt", id=event.id, question=event.question)]
    return []


async def handle(service: Service, req: Request, send: Send, agent_id: str) -> None:
    try:
        gate = service.gate(req, agent_id)
        body = await service.json_object(req, gate.headers)
        errors = validate(service, body)
        if errors:
            raise service.validation_failed(errors, gate.headers)
    except Refusal as refusal:
        await service.refuse(send, req, refusal)
        return

    stream = body["stream"] if "stream" in body else req.accepts("text/event-stream")
    session_id = body.get("sessionId") or new_id("ses_")
    params = {k: v for k, v in body.items() if k not in INTERPRETED}
    messages = body.get("messages") or []

    agent = gate.agent
    instance = service.org.sessions.get(agent.id, session_id)
    instance.paused = None  # a new run leaves any question the instance was waiting on
    ctx = RunContext(params=params, messages=messages, run_number=instance.start_run())
    script = service.interpreter.parse(body["prompt"])
    started = time.monotonic()
    common = {"sessionId": session_id, "agentId": agent.id, "versionNumber": agent.version_number,
              "requestId": req.request_id}
    headers = gate.headers

    events = service.interpreter.steps(script, ctx)
    if stream:
        await _stream(req, send, events, common, started, headers)
    else:
        await _collect(req, send, script, events, common, started, headers)


async def _collect(req, send, script, agent_events, common, started, headers) -> None:
    texts: list[str] = []
    events: list[dict[str, Any]] = []
    failure: Fail | None = None

    def take(event: Any) -> None:
        nonlocal failure
        if type(event) is Text:
            texts.append(event.text)
        elif type(event) is Fail:
            failure = event
        else:
            events.extend(events_of(event))

    if script.sleeps:
        async with DisconnectWatch(req.receive):
            async for event in paced(agent_events):
                take(event)
    else:  # no sleep: no pacing and no disconnect watch, the fast path of the common case
        for event in agent_events:
            take(event)
    result: dict[str, Any] = {
        "status": "failed" if failure else "completed",
        "result": "".join(texts),
        "events": events,
        **common,
        "durationMs": _elapsed_ms(started),
    }
    if failure is not None:
        result["error"] = {"code": AGENT_ERROR, "message": failure.message}
    await send_json(send, 200, result, headers)


def _frame(event: dict[str, Any]) -> bytes:
    return b"event: " + event["type"].encode() + b"\ndata: " + dumps(event) + b"\n\n"


async def _stream(req, send, agent_events, common, started, headers) -> None:
    await start_stream(send, headers)
    failure: Fail | None = None
    async with DisconnectWatch(req.receive):
        async for event in paced(agent_events):
            t = type(event)
            if t is Text:
                await stream_write(send, _frame(_event("text", delta=event.text)))
            elif t is Fail:
                failure = event
            else:
                for e in events_of(event):
                    await stream_write(send, _frame(e))
    if failure is not None:
        last = _event("error", code=AGENT_ERROR, message=failure.message, sessionId=common["sessionId"],
                      requestId=common["requestId"])
    else:
        last = _event("done", status="completed", **common,
                      durationMs=_elapsed_ms(started))
    await stream_end(send, _frame(last))
