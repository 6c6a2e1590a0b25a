"""Map the conformance agent's events onto invoke, AG-UI and MCP: a sketch to adapt.

Standard library only. Each function takes a `conformance.agent.Run` and returns
(or yields) what a server would put on the wire for it. Shapes the Agent
Invocation Service specification shows are followed; where it leaves a shape
open (invoke's tool and step events, AG-UI tool/step events, the MCP question
form) this sketch uses one reasonable choice and says so. Session lookup,
credentials, refusals and HTTP are your server's business and are left out.

    python docs/examples/adapter.py     # prints each mapping for a small script
"""
from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

from conformance.agent import Ask, ConformanceAgent, Fail, Idle, Run, Step, Text, ToolCall


def _id(prefix: str) -> str:
    return prefix + secrets.token_hex(8)


# -- invoke ---------------------------------------------------------------------------------
def _invoke_event(event) -> dict[str, Any] | None:
    """The invoke event for a non-text agent event (tool and step shapes are our choice)."""
    if isinstance(event, ToolCall):
        return {"v": 1, "type": "tool_call_start", "id": event.id, "name": event.name, "args": event.args}
    if isinstance(event, Step):
        return {"v": 1, "type": "step_start", "name": event.name}
    return None


def invoke_json(run: Run, *, session_id: str, agent_id: str) -> dict[str, Any]:
    """The non-streaming invoke result, once the run is over."""
    started = time.monotonic()
    events: list[dict[str, Any]] = []
    for event in run:
        if isinstance(event, ToolCall):
            events += [_invoke_event(event), {"v": 1, "type": "tool_result", "id": event.id, "result": event.result}]
        elif isinstance(event, Step):
            events += [_invoke_event(event), {"v": 1, "type": "step_end", "name": event.name}]
    body = {"status": "failed" if run.outcome == "failed" else "completed", "result": run.reply,
            "events": events, "sessionId": session_id, "agentId": agent_id, "versionNumber": 1,
            "requestId": _id("req_"), "durationMs": int((time.monotonic() - started) * 1000)}
    if run.outcome == "failed":
        body["error"] = {"code": "agent_error", "message": run.error}
    return body


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def invoke_sse(run: Run, *, session_id: str) -> Iterator[str]:
    """Server-sent event frames: one per event, ending in exactly one `done` or `error`."""
    for event in run:
        if isinstance(event, Text):
            yield _sse("text", {"v": 1, "type": "text", "delta": event.text})
        elif isinstance(event, Fail):
            yield _sse("error", {"v": 1, "type": "error", "message": event.message, "sessionId": session_id})
            return
        elif (data := _invoke_event(event)) is not None:
            yield _sse(data["type"], data)
    yield _sse("done", {"v": 1, "type": "done", "status": "completed", "sessionId": session_id})


# -- AG-UI ----------------------------------------------------------------------------------
def agui_events(run: Run, *, thread_id: str, run_id: str, ping_every: float = 15.0) -> Iterator[dict | str]:
    """AG-UI events as dicts (one `data:` frame each), and ": ping" comments while the agent is silent."""
    yield {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    message_id = None
    for event in run.events(idle_interval=ping_every):
        if isinstance(event, Idle):
            yield ": ping"
            continue
        if not isinstance(event, Text) and message_id is not None:
            yield {"type": "TEXT_MESSAGE_END", "messageId": message_id}
            message_id = None
        if isinstance(event, Text):
            if message_id is None:
                message_id = _id("msg_")
                yield {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
            yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": event.text}
        elif isinstance(event, ToolCall):
            yield {"type": "TOOL_CALL_START", "toolCallId": event.id, "toolCallName": event.name}
            yield {"type": "TOOL_CALL_ARGS", "toolCallId": event.id, "delta": json.dumps(event.args)}
            yield {"type": "TOOL_CALL_END", "toolCallId": event.id}
            yield {"type": "TOOL_CALL_RESULT", "messageId": _id("msg_"), "toolCallId": event.id,
                   "content": event.result}
        elif isinstance(event, Step):
            yield {"type": "STEP_STARTED", "stepName": event.name}
            yield {"type": "STEP_FINISHED", "stepName": event.name}
        elif isinstance(event, Fail):
            yield {"type": "RUN_ERROR", "message": event.message, "code": "agent_error"}
            return
    if message_id is not None:
        yield {"type": "TEXT_MESSAGE_END", "messageId": message_id}
    finished = {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id, "result": run.reply,
                "outcome": {"type": "success"}}
    if isinstance(run.question, Ask):
        finished["outcome"] = {"type": "interrupt",
                               "interrupts": [{"id": run.question.id, "reason": "question",
                                               "message": run.question.question}]}
    yield finished


# -- MCP ------------------------------------------------------------------------------------
def mcp_messages(run: Run, *, request_id: int | str, session_id: str,
                 progress_token: str | int | None = None) -> Iterator[dict[str, Any]]:
    """JSON-RPC messages for a `tools/call`: progress notifications (with a token), then the result.

    A question goes to a client that cannot elicit as text (`structuredContent`
    says the run awaits a `resume` argument); eliciting a form is left out.
    """
    progress = 0
    for event in run:
        label = {Text: lambda e: e.text, ToolCall: lambda e: f"tool {e.name}",
                 Step: lambda e: f"step {e.name}"}.get(type(event))
        if label is not None and progress_token is not None:
            progress += 1
            yield {"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": progress_token, "progress": progress, "message": label(event)}}
    structured: dict[str, Any] = {"sessionId": session_id}
    text = run.whole_reply
    if run.outcome == "paused":
        text = run.question.question
        structured.update(question=text, interruptId=run.question.id, awaitingResume=True)
    elif run.outcome == "failed":
        text = run.error
    yield {"jsonrpc": "2.0", "id": request_id,
           "result": {"content": [{"type": "text", "text": text}], "structuredContent": structured,
                      "resultType": "complete", "isError": run.outcome == "failed"}}


def demo() -> dict[str, Any]:
    agent = ConformanceAgent()
    script = 'say hello\ntool lookup {"q":"x"}\nstep plan\nask What is your name?\nsay thanks'
    out = {
        "invoke_json": invoke_json(agent.run("say partial\nfail boom"), session_id="s1", agent_id="agt_demo"),
        "invoke_sse": list(invoke_sse(agent.run("chunks 3 abc"), session_id="s2")),
        "agui": list(agui_events(agent.run(script, session="t1"), thread_id="t1", run_id="r1")),
        "agui_resumed": list(agui_events(agent.resume("t1", {"name": "Ada"}), thread_id="t1", run_id="r2")),
        "mcp": list(mcp_messages(agent.run("count", session="m1"), request_id=1, session_id="m1",
                                 progress_token="p1")),
    }
    return out


if __name__ == "__main__":
    for name, value in demo().items():
        print(f"--- {name}")
        print(value if isinstance(value, dict) else "".join(v if isinstance(v, str) else json.dumps(v) + "\n"
                                                             for v in value))
