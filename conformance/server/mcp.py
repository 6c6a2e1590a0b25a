"""POST /v1/agents/{agentId}/mcp: the agent as a stateless MCP server (2026-07-28, and the 2025-11-25 handshake).

Methods: ``initialize`` (the 2025-11-25 handshake), ``server/discover``,
``tools/list``, ``tools/call``, ``ping``; a notification (no ``id``) is answered
``202``. Exactly one tool, ``ask_<slug with - → _>``.

Refusals keep their HTTP status and carry a JSON-RPC error body. Where this
follows the service spec's table rather than the upstream SDK: headers that do
not match the body (``MCP-Protocol-Version`` ≠ ``_meta`` version, ``Mcp-Method``
≠ method, ``Mcp-Name`` ≠ tool name, a routing header sent twice) answer
400/-32022 with ``data.supported`` and ``data.requested``, where the SDK uses
-32020. Other choices:

* unknown method: 404 with -32601 (the SDK's status table);
* invalid params, unknown tool, a ``resume`` with nothing paused: 400/-32602;
* Content-Type other than application/json: 415/-32005; body over the limit:
  413/-32600; not JSON: 400/-32700; not one JSON-RPC request object: 400/-32600;
* over the rate limit: 429/-32000 with ``Retry-After``;
* a request at 2025-11-25 (after ``initialize``) needs ``MCP-Protocol-Version:
  2025-11-25``; ``Mcp-Method`` and a ``_meta`` version are checked when sent.

``tools/call`` result: one text block holding the reply, ``structuredContent``
``{"sessionId"}``, ``resultType: "complete"``, ``isError``. A failed run is a tool
result with ``isError: true`` whose text is the failure message;
``structuredContent`` then also has ``result`` (the text sent before the
failure) and ``error`` (``code``, ``message``). With ``_meta.progressToken`` the
answer is an event stream: one ``notifications/progress`` per agent event
(``progress`` 1, 2, …; ``message``: the text piece, ``tool NAME`` or ``step NAME``)
then the response.

A paused run (``ask``):

* a 2026-07-28 client whose ``io.modelcontextprotocol/clientCapabilities``
  declares form elicitation gets an ``input_required`` result: ``inputRequests``
  holds one ``elicitation/create`` form request under the interrupt id, asking for
  ``{"answer": string}``, and ``requestState`` names the paused run. The client
  retries the same call with ``inputResponses`` and ``requestState``; the agent gets
  the elicitation answer's ``content``. ``decline``/``cancel`` fails the run.
* any other client (including every 2025-11-25 client) gets a complete result
  whose text is the question, with ``structuredContent`` ``{"sessionId",
  "question", "interruptId", "awaitingResume": true}``. It continues with a
  ``tools/call`` carrying ``arguments.session_id`` (that session) and
  ``arguments.resume`` (the answer, any JSON value, which the agent gets).

The result that ends a resumed run holds the whole reply of the run, the text
from before the question included (a paused result carries no reply text).
A resumed run is the same run: ``count`` does not go up. A new run on the
session abandons the question.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.agent import Ask, Fail, Paused, RunContext, Step, Text, ToolCall, new_id, paced
from .asgi import (
    BadJSON, DisconnectWatch, Request, Send, dumps, loads, send_bytes, send_empty, start_stream, stream_end,
    stream_write,
)
from .agent import Interpreter
from .metadata import SCOPE, metadata_url
from .refusal import MAX_SESSION_KEY, SESSION_KEY_RULE, Refusal, is_session_key

if TYPE_CHECKING:
    from .app import Service

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SUPPORTED = [MODERN, LEGACY]
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = {"name": "conformance-reference-server", "version": "0.1.0"}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
CONTENT_TYPE_NOT_SUPPORTED = -32005
UNSUPPORTED_VERSION = -32022
RATE_LIMITED = -32000
INTERPRETED_ARGS = ("prompt", "session_id", "resume")


class RpcError(Exception):
    def __init__(self, status: int, code: int, message: str, data: Any = None,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.data = status, code, message, data
        self.headers = headers or []


def _version_error(requested: Any, message: str, headers: list[tuple[bytes, bytes]]) -> RpcError:
    shown = requested if isinstance(requested, str) else ("" if requested is None else json.dumps(requested))
    return RpcError(400, UNSUPPORTED_VERSION, message, {"supported": list(SUPPORTED), "requested": shown}, headers)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _decode_header(value: str | None) -> str | None:
    """Mcp-Name may carry a ``=?base64?…?=`` sentinel for values that are not plain ASCII."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def tool_description(service: Service, agent) -> dict[str, Any]:
    return {
        "name": agent.tool_name,
        "title": f"Ask {agent.name}",
        "description": f"Send a prompt to the agent {agent.slug!r} and get its reply. Pass session_id to continue "
                       "a conversation; pass resume (with session_id) to answer a question the agent asked.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "The input to the agent."},
                "session_id": {"type": "string", "minLength": 1, "maxLength": MAX_SESSION_KEY,
                               "description": "Session key; calls with the same value reach the same instance."},
                "resume": {"description": "The answer to a question the paused run asked (any JSON value)."},
            },
        },
    }


class Call:
    """One JSON-RPC request on the MCP endpoint."""

    def __init__(self, service: Service, req: Request, send: Send, agent_id: str) -> None:
        self.service, self.req, self.send, self.agent_id = service, req, send, agent_id
        self.rid: Any = None
        self.headers: list[tuple[bytes, bytes]] = [(b"x-request-id", req.request_id.encode())]

    async def reply(self, result: dict[str, Any]) -> None:
        await send_bytes(self.send, 200, dumps({"jsonrpc": "2.0", "id": self.rid, "result": result}),
                         [(b"content-type", b"application/json")] + self.headers)

    async def fail(self, err: RpcError) -> None:
        error: dict[str, Any] = {"code": err.code, "message": err.message}
        if err.data is not None:
            error["data"] = err.data
        headers = err.headers or self.headers
        await send_bytes(self.send, err.status, dumps({"jsonrpc": "2.0", "id": self.rid, "error": error}),
                         [(b"content-type", b"application/json")] + headers)


async def handle(service: Service, req: Request, send: Send, agent_id: str) -> None:
    call = Call(service, req, send, agent_id)
    try:
        await _handle(call)
    except RpcError as err:
        await call.fail(err)


async def _handle(call: Call) -> None:
    service, req = call.service, call.req
    if req.method != "POST":
        raise RpcError(405, INVALID_REQUEST, "Use POST.", headers=call.headers + [(b"allow", b"POST")])
    limit = service.config.max_body_bytes
    raw = await req.read_body(limit)
    decoded: Any = None
    parse_problem: str | None = None
    if raw is not None:
        try:
            decoded = loads(raw)
        except BadJSON as exc:
            parse_problem = str(exc)
        if isinstance(decoded, dict) and _valid_id(decoded.get("id")):
            call.rid = decoded["id"]

    try:
        gate = service.gate(req, call.agent_id)
    except Refusal as refusal:
        headers = refusal.headers
        if refusal.status == 401:
            challenge = (f'Bearer resource_metadata="{metadata_url(service, call.agent_id)}", '
                         f'scope="{SCOPE}"')
            headers = headers + [(b"www-authenticate", challenge.encode())]
            raise RpcError(401, INVALID_REQUEST, refusal.message, headers=headers) from None
        if refusal.status == 429:
            raise RpcError(429, RATE_LIMITED, refusal.message, headers=headers) from None
        raise RpcError(refusal.status, INVALID_REQUEST, refusal.message, headers=headers) from None
    call.headers = gate.headers

    if req.media_type() != "application/json":
        raise RpcError(415, CONTENT_TYPE_NOT_SUPPORTED, "Content-Type must be application/json.")
    if raw is None:
        raise RpcError(413, INVALID_REQUEST, f"The body is over {limit} bytes.")
    if parse_problem is not None:
        raise RpcError(400, PARSE_ERROR, f"Parse error: {parse_problem}")
    if not isinstance(decoded, dict):
        raise RpcError(400, INVALID_REQUEST, "The body must be one JSON-RPC request object.")
    if decoded.get("jsonrpc") != "2.0" or not isinstance(decoded.get("method"), str):
        raise RpcError(400, INVALID_REQUEST, "Not a JSON-RPC 2.0 request: jsonrpc must be \"2.0\" and method a string.")
    params = decoded.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise RpcError(400, INVALID_REQUEST, "params must be an object.")
    method: str = decoded["method"]

    header_version = req.headers.get("mcp-protocol-version")
    if "id" not in decoded:  # a notification: accepted and dropped
        if header_version is not None and header_version not in SUPPORTED:
            raise _version_error(header_version, "Unsupported protocol version.", call.headers)
        await send_empty(call.send, 202, call.headers)
        return
    if not _valid_id(decoded["id"]):
        raise RpcError(400, INVALID_REQUEST, "id must be a string or an integer.")

    version, meta = _check_envelope(call, method, params, header_version)

    if method == "initialize":
        await call.reply({
            "protocolVersion": LEGACY,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
            "instructions": _instructions(gate.agent),
        })
    elif method == "server/discover":
        await call.reply({
            "supportedVersions": list(SUPPORTED),
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": _instructions(gate.agent),
            "cacheScope": "private",
            "ttlMs": 30_000,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        })
    elif method == "tools/list":
        result: dict[str, Any] = {"tools": [tool_description(service, gate.agent)]}
        if version == MODERN:
            result.update(resultType="complete", cacheScope="private", ttlMs=30_000)
        await call.reply(result)
    elif method == "ping":
        await call.reply({"resultType": "complete"} if version == MODERN else {})
    elif method == "tools/call":
        await _tools_call(call, gate.agent, version, meta, params)
    else:
        raise RpcError(404, METHOD_NOT_FOUND, f"Method not found: {method}")


def _instructions(agent) -> str:
    return (f"This server exposes one tool, {agent.tool_name}, which sends a prompt to the agent "
            f"{agent.slug!r} and returns its reply.")


def _check_envelope(call: Call, method: str, params: dict[str, Any], header_version: str | None):
    """(protocol version of the request, its _meta); raises 400/-32022 for versions and mismatched headers."""
    req = call.req
    for name in (b"mcp-protocol-version", b"mcp-method", b"mcp-name"):
        if req.header_count(name) > 1:
            raise _version_error(header_version, f"The {name.decode()} header appears more than once.", call.headers)
    meta = params.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        raise RpcError(400, INVALID_PARAMS, "params._meta must be an object.")
    meta = meta or {}
    if method == "initialize":
        requested = params.get("protocolVersion")
        if requested != LEGACY:
            raise _version_error(requested, "Unsupported protocol version.", call.headers)
        if header_version is not None and header_version not in SUPPORTED:
            raise _version_error(header_version, "Unsupported protocol version.", call.headers)
        version = LEGACY
    else:
        body_version = meta.get(PV_KEY)
        if header_version is None:
            raise _version_error(body_version, "The MCP-Protocol-Version header is required.", call.headers)
        if header_version not in SUPPORTED:
            raise _version_error(header_version, "Unsupported protocol version.", call.headers)
        if header_version == MODERN or PV_KEY in meta:
            if body_version != header_version:
                raise _version_error(
                    body_version if PV_KEY in meta else header_version,
                    "The MCP-Protocol-Version header does not match params._meta's protocol version.",
                    call.headers,
                )
        version = header_version
        if version == MODERN and not isinstance(meta.get(CAPS_KEY), dict):
            raise RpcError(400, INVALID_PARAMS, f"params._meta must carry {CAPS_KEY!r} (an object).")
    method_header = req.headers.get("mcp-method")
    if (method_header is None and version == MODERN) or (method_header is not None and method_header != method):
        raise _version_error(version, "The Mcp-Method header does not match the request's method.", call.headers)
    if method == "tools/call":
        name_header = req.headers.get("mcp-name")
        if name_header is not None and _decode_header(name_header) != params.get("name"):
            raise _version_error(version, "The Mcp-Name header does not match params.name.", call.headers)
    return version, meta


def _can_elicit_form(version: str, meta: dict[str, Any]) -> bool:
    if version != MODERN:
        return False
    caps = meta.get(CAPS_KEY)
    elicitation = caps.get("elicitation") if isinstance(caps, dict) else None
    if not isinstance(elicitation, dict):
        return False
    return "form" in elicitation or "url" not in elicitation  # an empty object means form support


def _encode_state(agent_id: str, session_id: str, interrupt_id: str) -> str:
    raw = json.dumps({"a": agent_id, "s": session_id, "i": interrupt_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode("utf-8", "surrogatepass")).decode("ascii")


def _decode_state(state: Any) -> tuple[str, str, str] | None:
    if not isinstance(state, str):
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(state.encode("ascii")).decode("utf-8", "surrogatepass"))
        return value["a"], value["s"], value["i"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        return None


def _elicitation(question: str) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": question,
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": {"type": "string", "title": "Answer", "description": question}},
                "required": ["answer"],
            },
        },
    }


@dataclass
class Turn:
    """Where a tools/call starts: a fresh run, or the continuation of a paused one."""
    session_id: str
    instance: Any
    paused: Paused | None = None
    answer: Any = None
    declined: str | None = None
    unanswered: bool = False      # an elicitation retry that carries no answer: the question is asked again


async def _tools_call(call: Call, agent, version: str, meta: dict[str, Any], params: dict[str, Any]) -> None:
    args, session_id = _tool_arguments(agent, params)
    progress_token = _progress_token(meta)
    turn = _turn(call, agent, version, params, args, session_id)
    if turn.unanswered:
        return await _reply_result(call, progress_token, _input_required(agent, turn.session_id, turn.paused.ask), [])
    prefix, script, ctx, events = _run_of(call.service.interpreter, turn, args)

    async def finish(texts: list[str], ending: Any) -> dict[str, Any]:
        return _tool_result(agent, turn, script, ctx, prefix + "".join(texts), ending,
                            can_elicit=_can_elicit_form(version, meta))

    if progress_token is not None and (not call.req.headers.get("accept") or call.req.accepts("text/event-stream")):
        await _stream_run(call, progress_token, events, finish)
        return
    texts, ending = await _collect(call, script, events)
    await call.reply(await finish(texts, ending))


def _tool_arguments(agent, params: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The call's `arguments`, validated; raises RpcError -32602 for what the tool cannot take."""
    if params.get("name") != agent.tool_name:
        raise RpcError(400, INVALID_PARAMS, f"Unknown tool: {params.get('name')!r}; this server has {agent.tool_name!r}.")
    args = params.get("arguments")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise RpcError(400, INVALID_PARAMS, "arguments must be an object.")
    session_id = args.get("session_id")
    if "session_id" in args and not is_session_key(session_id):
        raise RpcError(400, INVALID_PARAMS, f"session_id {SESSION_KEY_RULE}.")
    if "prompt" in args and not isinstance(args["prompt"], str):
        raise RpcError(400, INVALID_PARAMS, "prompt must be a string.")
    return args, session_id


def _progress_token(meta: dict[str, Any]) -> Any:
    token = meta.get("progressToken")
    if token is not None and not (isinstance(token, str) or _valid_id(token)):
        raise RpcError(400, INVALID_PARAMS, "progressToken must be a string or an integer.")
    return token


def _elicited(call: Call, agent, params: dict[str, Any]) -> tuple[str, Any, Paused]:
    """(session key, instance, paused run) an elicitation retry's `requestState` names; RpcError when none."""
    decoded = _decode_state(params.get("requestState"))
    if decoded is None or decoded[0] != agent.id:
        raise RpcError(400, INVALID_PARAMS, "requestState is not one this server issued.")
    _, session_id, interrupt_id = decoded
    instance = call.service.org.sessions.peek(agent.id, session_id)
    paused = instance.paused if instance is not None else None
    if paused is None or paused.ask.id != interrupt_id:
        raise RpcError(400, INVALID_PARAMS, "No paused run waits on this requestState.")
    return session_id, instance, paused


def _turn(call: Call, agent, version: str, params: dict[str, Any], args: dict[str, Any], session_id: Any) -> Turn:
    """A new run, a resume (`resume` argument), or an elicitation retry (`requestState`)."""
    sessions = call.service.org.sessions
    if version == MODERN and params.get("requestState") is not None:
        session_id, instance, paused = _elicited(call, agent, params)
        responses = params.get("inputResponses")
        response = responses.get(paused.ask.id) if isinstance(responses, dict) else None
        if not isinstance(response, dict) or response.get("action") not in ("accept", "decline", "cancel"):
            return Turn(session_id, instance, paused, unanswered=True)
        declined = response["action"] if response["action"] != "accept" else None
        return Turn(session_id, instance, paused, response.get("content"), declined)
    if "resume" in args:
        if session_id is None:
            raise RpcError(400, INVALID_PARAMS, "session_id is required with resume.")
        instance = sessions.peek(agent.id, session_id)
        paused = instance.paused if instance is not None else None
        if paused is None:
            raise RpcError(400, INVALID_PARAMS, "No paused run on this session_id.")
        return Turn(session_id, instance, paused, args["resume"])
    if not isinstance(args.get("prompt"), str):
        raise RpcError(400, INVALID_PARAMS, "arguments.prompt (a string) is required.")
    session_id = session_id if session_id is not None else new_id("ses_")
    return Turn(session_id, sessions.get(agent.id, session_id))


def _run_of(interpreter: Interpreter, turn: Turn, args: dict[str, Any]):
    """(reply so far, script, context, events) of the run this call starts or continues."""
    turn.instance.paused = None
    paused = turn.paused
    if paused is not None:
        if turn.declined is not None:
            verb = "declined" if turn.declined == "decline" else "cancelled"
            return paused.reply_so_far, paused.script, paused.context, iter([Fail(f"The question was {verb}.")])
        return (paused.reply_so_far, paused.script, paused.context,
                interpreter.resumed_steps(paused, turn.answer))
    run_params = {k: v for k, v in args.items() if k not in INTERPRETED_ARGS}
    ctx = RunContext(params=run_params, messages=[], run_number=turn.instance.start_run())
    script = interpreter.parse(args["prompt"])
    return "", script, ctx, interpreter.steps(script, ctx)


def _tool_result(agent, turn: Turn, script, ctx, reply: str, ending: Any, *, can_elicit: bool) -> dict[str, Any]:
    session_id = turn.session_id
    if type(ending) is Fail:
        return {"content": [{"type": "text", "text": ending.message}],
                "structuredContent": {"sessionId": session_id, "result": reply,
                                      "error": {"code": "agent_error", "message": ending.message}},
                "isError": True, "resultType": "complete"}
    if type(ending) is Ask:
        turn.instance.paused = Paused(script=script, context=ctx, ask=ending, reply_so_far=reply)
        if can_elicit:
            return _input_required(agent, session_id, ending)
        return {"content": [{"type": "text", "text": ending.question}],
                "structuredContent": {"sessionId": session_id, "question": ending.question,
                                      "interruptId": ending.id, "awaitingResume": True},
                "isError": False, "resultType": "complete"}
    return {"content": [{"type": "text", "text": reply}], "structuredContent": {"sessionId": session_id},
            "isError": False, "resultType": "complete"}


async def _collect(call: Call, script, events) -> tuple[list[str], Any]:
    """The run's text pieces and how it ended (Ask, Fail or None), paced only when the script sleeps."""
    texts: list[str] = []
    ending: Any = None

    def take(event: Any) -> None:
        nonlocal ending
        if type(event) is Text:
            texts.append(event.text)
        elif type(event) in (Ask, Fail):
            ending = event

    if script.sleeps:
        async with DisconnectWatch(call.req.receive):
            async for event in paced(events):
                take(event)
    else:
        for event in events:
            take(event)
    return texts, ending


def _input_required(agent, session_id: str, ask: Ask) -> dict[str, Any]:
    return {
        "resultType": "input_required",
        "inputRequests": {ask.id: _elicitation(ask.question)},
        "requestState": _encode_state(agent.id, session_id, ask.id),
    }


def _sse(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + dumps(message) + b"\n\n"


async def _reply_result(call: Call, progress_token: Any, result: dict[str, Any], _texts: list[str]) -> None:
    if progress_token is None:
        await call.reply(result)
        return
    await start_stream(call.send, call.headers)
    await stream_end(call.send, _sse({"jsonrpc": "2.0", "id": call.rid, "result": result}))


def _progress_message(event: Any) -> str | None:
    t = type(event)
    if t is Text:
        return event.text
    if t is ToolCall:
        return f"tool {event.name}"
    if t is Step:
        return f"step {event.name}"
    return None


async def _stream_run(call: Call, token: Any, events, finish) -> None:
    await start_stream(call.send, call.headers)
    texts: list[str] = []
    ending: Any = None
    progress = 0
    async with DisconnectWatch(call.req.receive):
        async for event in paced(events):
            t = type(event)
            if t is Ask or t is Fail:
                ending = event
                continue
            if t is Text:
                texts.append(event.text)
            message = _progress_message(event)
            if message is None:
                continue
            progress += 1
            await stream_write(call.send, _sse({
                "jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": progress, "message": message},
            }))
    result = await finish(texts, ending)
    await stream_end(call.send, _sse({"jsonrpc": "2.0", "id": call.rid, "result": result}))

