"""MCP scenarios: the 2026-07-28 calls, the 2025-11-25 handshake, sessions, progress streams,
paused runs, protocol refusals, an optional rate-limit probe and the official `mcp` client.

Every request is built by `conformance.vocab` (protocols, sending); where the spec leaves a shape open
(the elicitation form, the retry of a paused call) the upstream MCP 2026-07-28 shapes of the
`mcp_types` package are used, and the checks say so.
"""
from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

from conformance.vocab import protocols as p
from conformance.vocab.steps import mcp as steps
from conformance.engine import Context
from conformance.outcomes import NotAssessed
from conformance.registry import scenario
from conformance.vocab.constants import UNKNOWN_VERSION
from conformance.vocab.sending import call_tool, rpc, tool_name
from conformance.wire.exchange import Exchange
from conformance.wire.pace import remaining_count

LEGACY_CLIENT_INFO = {"name": "aisvc-conformance", "version": "0.1"}
PAUSE_ANSWER = {"name": "Ada"}          # the `resume` value of a client that cannot elicit
RATE_PROBE_BATCH = 25
RATE_PROBE_SECONDS = 90.0               # the probe stops sending then, inside its scenario's deadline
RATE_PROBE_CHEAP = 20                   # X-RateLimit-Remaining at or below this: probe by default


# -- 2026-07-28 and 2025-11-25 basics ---------------------------------------------------------
@scenario("mcp.modern", protocol="mcp", prompts=("plain_reply", "tool_call"), steps=steps.MCP_MODERN)
async def modern(ctx: Context) -> None:
    """2026-07-28 without initialize: server/discover, tools/list, the plain-reply and tool-call prompts with
    Mcp-Name, then the plain-reply prompt once more without Mcp-Name (for MCP-HDR-004 alone: a server that requires
    the optional header fails that requirement, not the result checks)."""
    plain, tool_prompt = ctx.agent_scenario("plain_reply"), ctx.agent_scenario("tool_call")
    await rpc(ctx, "server/discover", label=steps.DISCOVER, id="disc-1")
    await rpc(ctx, "tools/list", label=steps.LIST, id=2)
    tool = await tool_name(ctx)
    ctx.note(tool=tool, replies={steps.CALL: plain.get("reply"), steps.CALL_TOOL: tool_prompt.get("reply"),
                                 steps.CALL_NONAME: plain.get("reply")})
    await call_tool(ctx, tool, plain["prompt"], label=steps.CALL, id="call-3", session=ctx.unique("mcp-plain"))
    await call_tool(ctx, tool, tool_prompt["prompt"], label=steps.CALL_TOOL, id=4, session=ctx.unique("mcp-tool"))
    await call_tool(ctx, tool, plain["prompt"], label=steps.CALL_NONAME, id=5, send_name=False,
                    session=ctx.unique("mcp-noname"))


@scenario("mcp.legacy", protocol="mcp", prompts=("plain_reply",), steps=steps.MCP_LEGACY)
async def legacy(ctx: Context) -> None:
    """2025-11-25: initialize (no version header), then tools/list and tools/call with MCP-Protocol-Version: 2025-11-25."""
    plain = ctx.agent_scenario("plain_reply")
    init = {"protocolVersion": p.MCP_LEGACY_VERSION, "capabilities": {}, "clientInfo": LEGACY_CLIENT_INFO}
    await rpc(ctx, "initialize", init, label=steps.INITIALIZE, id=1, version=None)
    await rpc(ctx, "tools/list", label=steps.LIST, id=2, version=p.MCP_LEGACY_VERSION, meta_version=None)
    tool = await tool_name(ctx)
    ctx.note(tool=tool, replies={steps.CALL: plain.get("reply")})
    await call_tool(ctx, tool, plain["prompt"], label=steps.CALL, id=3, version=p.MCP_LEGACY_VERSION, meta_version=None,
                    session=ctx.unique("mcp-legacy"))


# -- results ----------------------------------------------------------------------------------
@scenario("mcp.failures", protocol="mcp", prompts=("failure_after_output", "failure_before_output"),
          steps=steps.MCP_FAILURES)
async def failures(ctx: Context) -> None:
    """Two failing runs (after and before output) without a progress token."""
    tool = await tool_name(ctx)
    for label, name in ((steps.FAIL_AFTER, "failure_after_output"),
                        (steps.FAIL_BEFORE, "failure_before_output")):
        await call_tool(ctx, tool, ctx.prompt(name), label=label, id=label, session=ctx.unique(label))


@scenario("mcp.sessions", protocol="mcp", prompts=("session_affinity",), steps=steps.MCP_SESSIONS)
async def sessions(ctx: Context) -> None:
    """`count` twice on a fresh session_id, then once without session_id and once on the returned sessionId."""
    tool, prompt = await tool_name(ctx), ctx.prompt("session_affinity")
    key = ctx.unique("mcp-count")
    ctx.note(session=key)
    await call_tool(ctx, tool, prompt, label=steps.GIVEN_1, id=1, session=key)
    await call_tool(ctx, tool, prompt, label=steps.GIVEN_2, id=2, session=key)
    first = await call_tool(ctx, tool, prompt, label=steps.GENERATED_1, id=3)
    try:
        generated = p.mcp_response(first)["result"]["structuredContent"]["sessionId"]
    except (AssertionError, KeyError, TypeError):
        return  # the checks report the missing sessionId; nothing to continue with
    if isinstance(generated, str) and generated:
        ctx.note(generated=generated)
        await call_tool(ctx, tool, prompt, label=steps.GENERATED_2, id=4, session=generated)


# -- progress streams -------------------------------------------------------------------------
@scenario("mcp.progress", protocol="mcp", prompts=("streamed_reply",), steps=steps.MCP_PROGRESS)
async def progress(ctx: Context) -> None:
    """The streamed-reply prompt with a string progress token, then with an integer one."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("streamed_reply")
    tokens = {steps.STRING_TOKEN: ctx.unique("progress"), steps.INTEGER_TOKEN: 7301}
    ctx.note(tokens=tokens, reply=entry.get("reply"))
    for n, (label, token) in enumerate(tokens.items(), 1):
        await call_tool(ctx, tool, entry["prompt"], label=label, id=f"prog-{n}" if n == 1 else 100 + n,
                        progress_token=token, session=ctx.unique(label))


# -- paused runs ------------------------------------------------------------------------------
@scenario("mcp.pause_text", protocol="mcp", prompts=("question_and_resume",), steps=steps.MCP_PAUSE_TEXT)
async def pause_text(ctx: Context) -> None:
    """A client without elicitation asks the question prompt, then answers with the `resume` argument."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("question_and_resume")
    key = ctx.unique("mcp-pause")
    ctx.note(session=key, answer=PAUSE_ANSWER, question=entry.get("question"), **p.resume_facts(entry))
    await call_tool(ctx, tool, entry["prompt"], label=steps.ASK, id=1, session=key)
    first = await call_tool(ctx, tool, None, label=steps.RESUME, id=2, session=key, resume=PAUSE_ANSWER)
    if not answered_with_result(first):
        # The spec does not say whether `prompt` goes along with `resume`: a server that requires it gets it.
        await call_tool(ctx, tool, entry["prompt"], label=steps.RESUME_WITH_PROMPT, id=3, session=key,
                        resume=PAUSE_ANSWER)


def answered_with_result(ex: Exchange) -> bool:
    try:
        return ex.status == 200 and "result" in p.mcp_response(ex)
    except AssertionError:
        return False


FORMATTED = {"email": "ada@example.com", "uri": "https://example.com/ada", "date": "2026-01-01",
             "date-time": "2026-01-01T00:00:00Z"}   # a value of each string format MCP's forms may ask for


def form_answer(schema: Any) -> dict[str, Any]:
    """Content answering an elicitation form: every property of the requested schema filled in with a value the
    property's own schema accepts (its default, a listed choice, a number inside its bounds, a string of its
    format and length), so a server that validates the content sees a valid answer."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {name: form_value(prop if isinstance(prop, dict) else {}) for name, prop in (props or {}).items()}


def form_value(prop: dict[str, Any]) -> Any:
    choices = _choices(prop)
    kind = prop.get("type")
    if "default" in prop:
        return prop["default"]
    if choices:
        return choices[0]
    if kind in ("number", "integer"):
        return _number_inside(prop, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "array":
        items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
        options = _choices(items) or [form_value(items)]
        wanted = max(prop.get("minItems") or 0, 1)
        limit = prop.get("maxItems")
        return options[:min(wanted, limit)] if isinstance(limit, int) else options[:wanted]
    return _string_of(prop)


def _choices(prop: dict[str, Any]) -> list[Any]:
    """The values a property lists: `enum`, or the `const` of each `oneOf` / `anyOf` entry (titled choices)."""
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return list(prop["enum"])
    entries = prop.get("oneOf") or prop.get("anyOf")
    return [e["const"] for e in entries if isinstance(e, dict) and "const" in e] if isinstance(entries, list) else []


def _number_inside(prop: dict[str, Any], *, integer: bool) -> int | float:
    low, high = prop.get("minimum"), prop.get("maximum")
    if isinstance(prop.get("exclusiveMinimum"), (int, float)):
        low = prop["exclusiveMinimum"] + (1 if integer else 0.5)
    if isinstance(prop.get("exclusiveMaximum"), (int, float)):
        high = prop["exclusiveMaximum"] - (1 if integer else 0.5)
    value: int | float = 1
    if isinstance(low, (int, float)) and value < low:
        value = low
    if isinstance(high, (int, float)) and value > high:
        value = high
    if integer and not float(value).is_integer():
        return math.ceil(value)
    # a whole number is written as one (`0`, not `0.0`): canonical JSON of a double differs between languages there
    return int(value) if float(value).is_integer() else value


def _string_of(prop: dict[str, Any]) -> str:
    text = FORMATTED.get(prop.get("format"), "Ada")
    shortest, longest = prop.get("minLength"), prop.get("maxLength")
    if isinstance(shortest, int) and len(text) < shortest:
        text += "a" * (shortest - len(text))
    if isinstance(longest, int) and len(text) > longest:
        text = text[:longest]
    return text


def elicitation_requests(result: Any) -> tuple[dict[str, Any], str | None] | None:
    """(form elicitation requests by key, requestState) of an upstream 2026-07-28 InputRequiredResult, or None."""
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return None
    from mcp_types._v2026_07_28 import ElicitRequest, InputRequiredResult
    from pydantic import ValidationError
    try:
        parsed = InputRequiredResult.model_validate(result)
    except ValidationError:
        return None
    forms = {key: req.model_dump(by_alias=True, exclude_none=True) for key, req in (parsed.input_requests or {}).items()
             if isinstance(req, ElicitRequest) and getattr(req.params, "mode", "form") == "form"}
    return (forms, parsed.request_state) if forms else None


@scenario("mcp.pause_elicit", protocol="mcp", prompts=("question_and_resume",), steps=steps.MCP_PAUSE_ELICIT,
          imports=("mcp_types._v2026_07_28", "pydantic"))
async def pause_elicit(ctx: Context) -> None:
    """A client declaring form elicitation asks the question prompt, then retries with the form answered
    (upstream 2026-07-28 InputRequiredResult: inputResponses + requestState)."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("question_and_resume")
    key = ctx.unique("mcp-elicit")
    caps = {"elicitation": {"form": {}}}
    ctx.note(session=key, question=entry.get("question"), **p.resume_facts(entry))
    first = await call_tool(ctx, tool, entry["prompt"], label=steps.ASK, id=1, session=key, capabilities=caps)
    try:
        result = p.mcp_response(first).get("result")
    except AssertionError:
        return
    found = elicitation_requests(result)
    if found is None:
        ctx.note(form=None)
        return
    forms, state = found
    responses = {k: {"action": "accept", "content": form_answer(f["params"].get("requestedSchema"))}
                 for k, f in forms.items()}
    ctx.note(form=forms, answers={k: r["content"] for k, r in responses.items()})
    extra: dict[str, Any] = {"inputResponses": responses}
    if state is not None:
        extra["requestState"] = state
    await call_tool(ctx, tool, entry["prompt"], label=steps.RETRY, id=2, session=key, capabilities=caps,
                    extra_params=extra)


# -- protocol refusals (no run starts) --------------------------------------------------------
@scenario("mcp.refusals", protocol="mcp", prompts=("plain_reply",), steps=steps.MCP_REFUSALS)
async def refusals(ctx: Context) -> None:
    """Requests the spec's table refuses: unknown versions, headers that do not match the body, missing routing
    headers, a wrong Content-Type, an unsupported method, an unknown tool, a call without prompt, an unknown agent."""
    tool, prompt = await tool_name(ctx), ctx.prompt("plain_reply")
    ctx.note(tool=tool, unknown_version=UNKNOWN_VERSION)
    other_version = p.MCP_LEGACY_VERSION
    cases: list[tuple[str, dict[str, Any]]] = [
        (steps.VERSION_UNKNOWN, dict(version=UNKNOWN_VERSION)),
        (steps.VERSION_MISMATCH, dict(header_version=p.MCP_VERSION, meta_version=other_version)),
        (steps.METHOD_MISMATCH, dict(headers={"Mcp-Method": "tools/list"})),
        (steps.NAME_MISMATCH, dict(mcp_name=tool + "_other")),
        (steps.METHOD_MISSING, dict(drop_headers=("Mcp-Method",))),
        (steps.VERSION_HEADER_MISSING, dict(header_version=None)),
        (steps.CONTENT_TYPE, dict(content=None)),
        (steps.UNKNOWN_TOOL, dict(tool=tool + "_nope")),
        (steps.NO_PROMPT, dict(prompt=None)),
        (steps.UNKNOWN_AGENT, dict(agent_id="agt_" + ctx.unique("nope").replace("-", ""))),
    ]
    for n, (label, case) in enumerate(cases, 1):
        case = dict(case)
        name = case.pop("tool", tool)
        text = case.pop("prompt", prompt)
        args = {"prompt": text} if text is not None else {}
        args["session_id"] = ctx.unique("refused")
        if label == steps.CONTENT_TYPE:
            body = p.mcp_request("tools/call", {"name": name, "arguments": args}, id=n)
            await ctx.post(ctx.agent_path("mcp"), label=label, content=json.dumps(body).encode(),
                           headers={**p.mcp_headers("tools/call", name=name), "Content-Type": "text/plain"})
            continue
        if "mcp_name" not in case:
            case["mcp_name"] = name
        await rpc(ctx, "tools/call", {"name": name, "arguments": args}, label=label, id=n, **case)
    init = {"protocolVersion": UNKNOWN_VERSION, "capabilities": {}, "clientInfo": LEGACY_CLIENT_INFO}
    await rpc(ctx, "initialize", init, label=steps.INITIALIZE_UNKNOWN, id="init-x", version=None)
    await rpc(ctx, "resources/list", label=steps.UNSUPPORTED_METHOD, id="meth-x")


@scenario("mcp.rate_limit", protocol="mcp", deadline=120.0, last=True, steps=steps.MCP_RATE_LIMIT)
async def rate_limit(ctx: Context) -> None:
    """One tools/list; then, with --thorough or when its X-RateLimit-Remaining shows at most 20 requests left (a
    429 is then cheap to reach), more tools/list in batches until one answers 429: at most X-RateLimit-Remaining
    plus a batch, never more than --rate-probe-max, never longer than 90 s. Started last, so the 429s it provokes
    disturb no other scenario."""
    def send(label: str, n: int):
        return ctx.send("POST", ctx.agent_path("mcp"), label=label, retry_429=False, paced=False, record=False,
                        headers=p.mcp_headers("tools/list"), json=p.mcp_request("tools/list", id=n))

    cap = ctx.target.rate_probe_max
    first = await send(steps.PROBE, 0)
    ctx.recording.exchanges.append(first)
    remaining = _remaining(first)
    ctx.note(sent=1, cap=cap, remaining_first=remaining, remaining_last=remaining)
    if first.status != 429 and not (ctx.target.thorough or (remaining is not None and remaining <= RATE_PROBE_CHEAP)):
        raise NotAssessed("the 429 probe loads the server; it runs only with --thorough "
                          f"(or when X-RateLimit-Remaining shows at most {RATE_PROBE_CHEAP} requests left)")
    sent, budget = 1, _probe_budget(0, remaining, cap)
    stop_at = time.monotonic() + RATE_PROBE_SECONDS
    while first.status != 429 and sent < budget and time.monotonic() < stop_at:
        batch = min(RATE_PROBE_BATCH, budget - sent)
        got = await asyncio.gather(*(send(steps.BURST.of(sent + i), sent + i) for i in range(batch)))
        sent += batch
        limited = [ex for ex in got if ex.status == 429]
        if limited:
            ctx.recording.exchanges.append(limited[0])
            break
        # the bucket refills while the probe runs (slowly on a busy machine): size the rest from the latest count
        counts = [n for ex in got if (n := _remaining(ex)) is not None]
        latest = min(counts) if counts else None
        budget = _probe_budget(sent, latest, cap)
        ctx.note(remaining_last=latest)
    ctx.note(sent=sent, out_of_time=time.monotonic() >= stop_at)


def _remaining(ex: Exchange) -> int | None:
    return remaining_count(ex.header("x-ratelimit-remaining"))


def _probe_budget(sent: int, remaining: int | None, cap: int) -> int:
    """Requests the probe may send in all: what the server says is left plus a batch, never over the cap."""
    return cap if remaining is None else min(cap, sent + remaining + RATE_PROBE_BATCH)


# -- the official client ----------------------------------------------------------------------
@scenario("mcp.official_client", protocol="mcp", prompts=("plain_reply", "question_and_resume"), deadline=60.0,
          steps=steps.MCP_OFFICIAL_CLIENT,
          imports=("httpx2", "mcp_types", "mcp.client.client", "mcp.client.streamable_http"))
async def official_client(ctx: Context) -> None:
    """The official `mcp` Python client (2026-07-28 with elicitation, and the 2025-11-25 handshake) lists the tool
    and calls it with the plain-reply and the question prompts."""
    plain, question = ctx.agent_scenario("plain_reply"), ctx.agent_scenario("question_and_resume")
    ctx.note(expected=plain.get("reply"), question=question.get("question"), **p.resume_facts(question))
    runs = {}
    for mode in ("2026-07-28", "legacy"):
        runs[mode] = await drive_official_client(ctx, mode, plain["prompt"], question["prompt"],
                                                 session=ctx.unique(f"sdk-{mode}"), resume=PAUSE_ANSWER)
    ctx.note(runs=runs)


CLIENT_STEP_SECONDS = 25.0


def _client_ssl(ctx: Context):
    import ssl
    context = ssl.create_default_context()
    if ctx.target.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ctx.target.ca_bundle:
        context.load_verify_locations(cafile=ctx.target.ca_bundle)
    return context


def _count_into(ctx: Context, counts: dict[str, int]):
    """httpx2 event hooks: the official client's requests (and the runs they start) join the run's cost."""
    stats = ctx.client.stats

    async def on_request(request) -> None:
        counts["requests"] += 1
        stats.requests += 1

    async def on_response(response) -> None:
        request = response.request
        try:
            doc = json.loads(request.content) if request.method == "POST" else None
        except Exception:  # noqa: BLE001 - a streamed body: not a tools/call of ours
            doc = None
        if isinstance(doc, dict) and doc.get("method") == "tools/call" and 200 <= response.status_code < 300:
            counts["agent_runs"] += 1
            stats.agent_runs += 1

    return {"request": [on_request], "response": [on_response]}


async def drive_official_client(ctx: Context, mode: str, plain_prompt: str, question_prompt: str, *, session: str,
                                resume: Any) -> dict[str, Any]:
    """Run the official client in one mode; returns what it saw (never raises for what the server does).

    2026-07-28: with an elicitation callback (the SDK answers an InputRequiredResult and retries).
    legacy (2025-11-25 handshake): no elicitation, so the question comes back as text and is answered with the
    `resume` argument on the same session_id."""
    import httpx2
    import mcp_types as types
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    url = ctx.target.base_url.rstrip("/") + ctx.agent_path("mcp")
    counts = {"requests": 0, "agent_runs": 0}
    out: dict[str, Any] = {"step": "connect", "counts": counts, "elicited": []}

    async def elicit(_context, params):
        schema = getattr(params, "requested_schema", None)
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        content = form_answer(schema)
        out["elicited"].append({"message": getattr(params, "message", None), "content": content})
        return types.ElicitResult(action="accept", content=content)

    def text_of(result) -> tuple[str, bool]:
        return "".join(getattr(b, "text", "") for b in result.content if getattr(b, "type", None) == "text"), \
            bool(result.is_error)

    headers = {"Authorization": f"Bearer {ctx.need('api_key')}"}
    try:
        # through the suite's pacer, byte cap and run deadline: the SDK reads a body with no cap of its own
        transport = ctx.client.paced_transport(httpx2.AsyncHTTPTransport(verify=_client_ssl(ctx), trust_env=False))
        async with httpx2.AsyncClient(transport=transport, headers=headers, event_hooks=_count_into(ctx, counts),
                                      timeout=httpx2.Timeout(CLIENT_STEP_SECONDS), trust_env=False) as hc:
            kwargs: dict[str, Any] = {"mode": mode, "cache": None}
            if mode != "legacy":
                kwargs["elicitation_callback"] = elicit
            async with asyncio.timeout(CLIENT_STEP_SECONDS):
                async with Client(streamable_http_client(url, http_client=hc, terminate_on_close=False),
                                  **kwargs) as client:
                    out["protocol_version"] = client.protocol_version
                    out["step"] = "list_tools"
                    listed = await client.list_tools()
                    out["tools"] = [t.name for t in listed.tools]
                    tool = out["tools"][0] if len(out["tools"]) == 1 else await tool_name(ctx)
                    out["step"] = "call plain"
                    out["plain"], out["plain_is_error"] = text_of(await client.call_tool(tool, {"prompt": plain_prompt}))
                    out["step"] = "call question"
                    first = await client.call_tool(tool, {"prompt": question_prompt, "session_id": session})
                    out["question"], out["question_is_error"] = text_of(first)
                    if mode == "legacy":
                        out["step"] = "call resume"
                        answered = await client.call_tool(tool, {"session_id": session, "resume": resume})
                        out["resumed"], out["resumed_is_error"] = text_of(answered)
                        out["resume_value"] = resume
        out["step"] = "done"
    except BaseException as exc:  # noqa: BLE001 - the client failing is the finding, never a crash of the suite
        if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)) and not isinstance(
                exc, TimeoutError):
            raise
        out["error"] = ctx.client.redact(f"{type(exc).__name__}: {_exc_text(exc)}")[:600]
    return out


def _exc_text(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(f"{type(e).__name__}: {_exc_text(e)}" for e in exc.exceptions[:3])
    return str(exc) or "(no message)"
