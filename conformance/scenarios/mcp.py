"""MCP scenarios: the 2026-07-28 calls, the 2025-11-25 handshake, sessions, progress streams,
paused runs, protocol refusals, an optional rate-limit probe and the official `mcp` client.

Every request is built by `conformance.vocab` (protocols, sending); where the spec leaves a shape open
(the elicitation form, the retry of a paused call) the upstream MCP 2026-07-28 shapes of the
`mcp_types` package are used, and the checks say so.
"""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from conformance.vocab import forms, inputs, official_client as official, protocols as p, sequences, silences
from conformance.vocab.elicitation import (  # noqa: F401 (read through this module by the docs' tests)
    FORMATTED, answered_form, elicitation_requests, form_answer, form_value)
from conformance.vocab.steps import mcp as steps
from conformance.vocab.steps import sequences as seq_steps
from conformance.vocab.steps import silences as silence_steps
from conformance.engine import Context, plain_call
from conformance.outcomes import NotAssessed
from conformance.registry import scenario
from conformance.vocab.constants import MCP_MODERN_METHODS, UNKNOWN_VERSION
from conformance.vocab.sending import call_tool, rpc, tool_name
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.wire.pace import remaining_count
from conformance.wire.sdk import RecordingTransport, paced_timeout

LEGACY_CLIENT_INFO = {"name": "aisvc-conformance", "version": "0.1"}
PAUSE_ANSWER = {"name": "Ada"}          # the `resume` value of a client that cannot elicit
# refusals of a tools/call's own params (`_meta` and its version are the spec's on tools/call only)
CALL_REFUSALS = (steps.NAME_MISMATCH, steps.UNKNOWN_TOOL, steps.NO_PROMPT)   # the others rotate over every method
RATE_PROBE_BATCH = 25
RATE_PROBE_SECONDS = 90.0               # the probe stops sending then, inside its scenario's deadline


# -- 2026-07-28 and 2025-11-25 basics ---------------------------------------------------------
@scenario("mcp.modern", protocol="mcp", prompts=("plain_reply", "tool_call"), steps=steps.MCP_MODERN)
async def modern(ctx: Context) -> None:
    """2026-07-28 without initialize: server/discover, tools/list (the preflight's plain call of MCP, when there was
    one), the plain-reply and tool-call prompts with Mcp-Name, then the plain-reply prompt once more without Mcp-Name
    (for MCP-HDR-004 alone: a server that requires the optional header fails that requirement, not the result
    checks)."""
    plain, tool_prompt = ctx.agent_scenario("plain_reply"), ctx.agent_scenario("tool_call")
    await rpc(ctx, "server/discover", label=steps.DISCOVER, id="disc-1")
    listed = ctx.preflight(plain_call("mcp"))
    if listed is not None:
        ctx.keep(listed, steps.LIST)
    else:
        await rpc(ctx, "tools/list", label=steps.LIST, id=2)
    tool = await tool_name(ctx)
    ctx.note(tool=tool, replies={steps.CALL: plain.get("reply"), steps.CALL_TOOL: tool_prompt.get("reply"),
                                 steps.CALL_NONAME: plain.get("reply")})
    await call_tool(ctx, tool, plain["prompt"], label=steps.CALL, id="call-3", session=ctx.unique("mcp-plain"),
                    form={"mcp-progress": "none"})     # MCP-PROG-011's call: without a token
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
    key = inputs.keyed(ctx, "mcp-count", steps.GIVEN_1, steps.GIVEN_2)
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
    """The streamed-reply prompt with a string progress token (beyond ASCII, outside the BMP, with escapes), then with
    the falsy tokens 0 (`integer-token`) and "" (`empty-token`), input classes of progress-token."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("streamed_reply")
    zero, empty = inputs.values(ctx.target, "progress-token:falsy", lambda i: (7301, ctx.unique("progress"))[i])
    tokens = {steps.STRING_TOKEN: inputs.tagged(ctx, "progress", "progress-token", steps.STRING_TOKEN),
              steps.INTEGER_TOKEN: zero, steps.EMPTY_TOKEN: empty}
    for label in (steps.INTEGER_TOKEN, steps.EMPTY_TOKEN):
        inputs.carry(ctx, label, "progress-token:falsy")
    ctx.note(tokens=tokens, reply=entry.get("reply"))
    for n, (label, token) in enumerate(tokens.items(), 1):
        await call_tool(ctx, tool, entry["prompt"], label=label, id=f"prog-{n}" if n == 1 else 100 + n,
                        progress_token=token, session=ctx.unique(label))


# -- paused runs ------------------------------------------------------------------------------
@scenario("mcp.pause_text", protocol="mcp", prompts=("question_and_resume",), steps=steps.MCP_PAUSE_TEXT)
async def pause_text(ctx: Context, answer: Any = PAUSE_ANSWER) -> None:
    """A client without elicitation asks the question prompt, then answers with the `resume` argument."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("question_and_resume")
    key = ctx.unique("mcp-pause")
    ctx.note(session=key, answer=answer, question=entry.get("question"), **p.resume_facts(entry))
    await call_tool(ctx, tool, entry["prompt"], label=steps.ASK, id=1, session=key)
    first = await call_tool(ctx, tool, None, label=steps.RESUME, id=2, session=key, resume=answer)
    if not answered_with_result(first):
        # The spec does not say whether `prompt` goes along with `resume`: a server that requires it gets it.
        await call_tool(ctx, tool, entry["prompt"], label=steps.RESUME_WITH_PROMPT, id=3, session=key,
                        resume=answer)


@scenario("mcp.pause_falsy", protocol="mcp", prompts=("question_and_resume",), steps=steps.MCP_PAUSE_TEXT)
async def pause_falsy(ctx: Context) -> None:
    """As mcp.pause_text, answering with a falsy `resume` value (false, 0 or "": input class resume:falsy)."""
    for label in (steps.RESUME, steps.RESUME_WITH_PROMPT):
        inputs.carry(ctx, label, "resume:falsy")
    await pause_text(ctx, inputs.value(ctx.target, "resume:falsy", PAUSE_ANSWER))


def answered_with_result(ex: Exchange) -> bool:
    try:
        return ex.status == 200 and "result" in p.mcp_response(ex)
    except AssertionError:
        return False


@scenario("mcp.pause_elicit", protocol="mcp", prompts=("question_and_resume",), steps=steps.MCP_PAUSE_ELICIT,
          imports=("mcp_types._v2026_07_28", "pydantic"))
async def pause_elicit(ctx: Context) -> None:
    """A client declaring form (and URL) elicitation asks the question prompt, then retries with the form answered
    (upstream 2026-07-28 InputRequiredResult: inputResponses + requestState)."""
    tool, entry = await tool_name(ctx), ctx.agent_scenario("question_and_resume")
    key = ctx.unique("mcp-elicit")
    caps = {"elicitation": {"form": {}, "url": {}}}     # both modes, as the official SDKs declare: asked for a form
    ctx.note(session=key, question=entry.get("question"), **p.resume_facts(entry))
    first = await call_tool(ctx, tool, entry["prompt"], label=steps.ASK, id=1, session=key, capabilities=caps)
    answered = answered_form(first)
    if answered is None:
        ctx.note(form=None)
        return
    extra, _ = answered
    forms = elicitation_requests(p.mcp_response(first).get("result"))[0]
    ctx.note(form=forms, answers={k: r["content"] for k, r in extra["inputResponses"].items()})
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
    start = forms.offset(ctx.target.seed, ctx.scenario.name, len(MCP_MODERN_METHODS))
    for n, (label, case) in enumerate(cases, 1):
        case = dict(case)
        name = case.pop("tool", tool)
        text = case.pop("prompt", prompt)
        args = {"prompt": text} if text is not None else {}
        args["session_id"] = ctx.unique("refused")
        # a refusal of the request itself holds whatever it asks: the method (and a progress token) rotate by seed
        method = "tools/call" if label in CALL_REFUSALS else MCP_MODERN_METHODS[(start + n) % len(MCP_MODERN_METHODS)]
        params = {"name": name, "arguments": args} if method == "tools/call" else {}
        if method == "tools/call" and (start + n) % 2:
            case["progress_token"] = f"refused-{n}"
        if label == steps.METHOD_MISMATCH:
            case["headers"] = {"Mcp-Method": "tools/list" if method != "tools/list" else "server/discover"}
        if label == steps.CONTENT_TYPE:
            body = p.mcp_request(method, params, id=n, progress_token=case.get("progress_token"))
            await ctx.post(ctx.agent_path("mcp"), label=label, content=json.dumps(body).encode(),
                           headers={**p.mcp_headers(method, name=name if method == "tools/call" else None),
                                    "Content-Type": "text/plain"})
            continue
        if "mcp_name" not in case and method == "tools/call":
            case["mcp_name"] = name
        await rpc(ctx, method, params, label=label, id=n, **case)
    init = {"protocolVersion": UNKNOWN_VERSION, "capabilities": {}, "clientInfo": LEGACY_CLIENT_INFO}
    await rpc(ctx, "initialize", init, label=steps.INITIALIZE_UNKNOWN, id="init-x", version=None)
    await rpc(ctx, "resources/list", label=steps.UNSUPPORTED_METHOD, id="meth-x")


@scenario("mcp.rate_limit", protocol="mcp", deadline=120.0, last=True, steps=steps.MCP_RATE_LIMIT)
async def rate_limit(ctx: Context) -> None:
    """With --thorough only (a default run sends nothing here, so every default run judges the same requirements
    whatever the bucket holds when it starts): tools/list in batches until one answers 429, at most
    X-RateLimit-Remaining plus a batch, never more than --rate-probe-max, never longer than 90 s. Started last, so
    the 429s it provokes disturb no other scenario."""
    def send(label: str, n: int):
        return ctx.send("POST", ctx.agent_path("mcp"), label=label, retry_429=False, paced=False, record=False,
                        headers=p.mcp_headers("tools/list"), json=p.mcp_request("tools/list", id=n))

    if not ctx.target.thorough:
        raise NotAssessed("the 429 probe loads the server; it runs only with --thorough")
    cap = ctx.target.rate_probe_max
    first = await send(steps.PROBE, 0)
    ctx.recording.exchanges.append(first)
    remaining = _remaining(first)
    ctx.note(sent=1, cap=cap, remaining_first=remaining, remaining_last=remaining)
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
CLIENT_STEP_SECONDS = 25.0
CLIENT_REQUESTS = 6       # what the official client sends in one mode (discover or initialize, list, three calls)


@scenario("mcp.official_client", protocol="mcp", prompts=("plain_reply", "question_and_resume"), deadline=60.0,
          steps=steps.MCP_OFFICIAL_CLIENT,
          imports=("httpx2", "mcp_types", "mcp.client.client", "mcp.client.streamable_http"))
async def official_client(ctx: Context) -> None:
    """The official `mcp` Python client, every request recorded: in its default mode `auto` (server/discover, then
    2026-07-28; an elicitation callback, and a progress callback on the plain call) and on the 2025-11-25
    handshake, it lists the tool and calls it with the plain-reply and the question prompts; on the handshake the
    question comes back as text and is answered with `resume`."""
    plain, question = ctx.agent_scenario("plain_reply"), ctx.agent_scenario("question_and_resume")
    ctx.note(expected=plain.get("reply"), question=question.get("question"), resume_value=PAUSE_ANSWER,
             prompts={"plain": plain["prompt"], "question": question["prompt"]}, **p.resume_facts(question))
    runs = {}
    for run, (family, mode) in official.RUNS.items():
        runs[run] = await drive_official_client(ctx, mode, family.of(""), plain["prompt"], question["prompt"],
                                                session=ctx.unique(f"sdk-{run}"))
    ctx.note(runs=runs)


async def drive_official_client(ctx: Context, mode: str, prefix: str, plain_prompt: str, question_prompt: str, *,
                                session: str) -> dict[str, Any]:
    """Run the official client in one mode, every exchange recorded under `prefix`; returns what it did (the
    elicitation and progress callbacks, the version it negotiated) and, when it gave up, why in one line (never
    raises for what the server does).

    `auto` (the SDK's default): server/discover, then 2026-07-28 with an elicitation callback (the SDK answers an
    input_required result and retries); a progress callback on the plain call, so it is answered as a stream.
    `legacy` (the 2025-11-25 handshake): no elicitation, so the question comes back as text and is answered with
    the `resume` argument on the same session_id."""
    import httpx2
    import mcp_types as types
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    url = ctx.target.base_url.rstrip("/") + ctx.agent_path("mcp")
    out: dict[str, Any] = {"step": "connect", "elicited": [], "progress": 0}

    async def elicit(_context, params):
        schema = getattr(params, "requested_schema", None)
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        content = form_answer(schema)
        out["elicited"].append({"message": getattr(params, "message", None), "content": content})
        return types.ElicitResult(action="accept", content=content)

    async def progressed(_progress, _total, _message) -> None:
        out["progress"] += 1

    headers = {"Authorization": f"Bearer {ctx.need('api_key')}"}
    # through the suite's pacer, byte cap and run deadline, every exchange recorded like the suite's own
    transport = RecordingTransport(ctx.client, httpx2.AsyncHTTPTransport(verify=ctx.target.tls(), trust_env=False),
                                   ctx.recording.exchanges.append, prefix=prefix)
    try:
        async with httpx2.AsyncClient(transport=transport, headers=headers, trust_env=False,
                                      timeout=httpx2.Timeout(CLIENT_STEP_SECONDS)) as hc:
            kwargs: dict[str, Any] = {"mode": mode, "cache": None}
            if mode != "legacy":
                kwargs["elicitation_callback"] = elicit
            # its requests go together once the bucket holds them: the SDK gives up a `server/discover` after 10 s
            # (then speaks 2025-11-25), so a wait in the line would change what it does
            async with ctx.client.granted(CLIENT_REQUESTS), paced_timeout(CLIENT_STEP_SECONDS):
                async with Client(streamable_http_client(url, http_client=hc, terminate_on_close=False),
                                  **kwargs) as client:
                    out["protocol_version"] = client.protocol_version
                    out["step"] = "list"
                    listed = [t.name for t in (await client.list_tools()).tools]
                    tool = listed[0] if len(listed) == 1 else await tool_name(ctx)
                    out["step"] = "plain"
                    await client.call_tool(tool, {"prompt": plain_prompt},
                                           progress_callback=progressed if mode != "legacy" else None)
                    out["step"] = "question"
                    await client.call_tool(tool, {"prompt": question_prompt, "session_id": session})
                    if mode == "legacy":
                        out["step"] = "resume"
                        await client.call_tool(tool, {"session_id": session, "resume": PAUSE_ANSWER})
        out["step"] = "done"
    except BaseException as exc:  # noqa: BLE001 - the client failing is the finding, never a crash of the suite
        if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)) and not isinstance(
                exc, TimeoutError):
            raise
        out["error"] = truncate(ctx.client.redact(f"{type(exc).__name__}: {_exc_text(exc)}"), 400, one_line=True)
    finally:
        transport.finish_open()
    return out


def _exc_text(exc: BaseException) -> str:
    """An exception in a few words: the checks name what the client rejected from the traffic, so a validation
    error is only counted here, never dumped."""
    from pydantic import ValidationError

    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(f"{type(e).__name__}: {_exc_text(e)}" for e in exc.exceptions[:3])
    if isinstance(exc, ValidationError):
        return f"{exc.error_count()} validation error(s) for {exc.title}"
    return str(exc) or "(no message)"


# -- sequences: chains, overlaps and long runs (conformance.vocab.sequences) -----------------------------------
@scenario("mcp.chain", protocol="mcp", deadline=60, steps=(seq_steps.CHAIN,))
async def chain(ctx: Context) -> None:
    """Three chains at once. 2026-07-28: tools/list twice, `count` without session_id or Mcp-Name (1), with a
    progress token on the session returned (2), a run that pauses twice (the question as text) resumed twice in a
    row, `count` (4). 2025-11-25: initialize, tools/list, `count` twice, a pause resumed. An eliciting client:
    a run that asks for two forms, retried twice."""
    await sequences.play_all(ctx, seq_steps.CHAIN, mcp_form=answered_form)


@scenario("mcp.together", protocol="mcp", deadline=60, timing=True, steps=(seq_steps.OVERLAP,))
async def together(ctx: Context) -> None:
    """Two 1 s `count` calls on one fresh session_id and one on another at once, then `count` on the first (3); a
    paused run, then its resume and a new run on its session at once."""
    await sequences.play_all(ctx, seq_steps.OVERLAP)


@scenario("mcp.slow_run", protocol="mcp", slow=True, deadline=40, steps=(seq_steps.LONG,))
async def slow_run(ctx: Context) -> None:
    """A paused call (the question as text); `say early`, `sleep 15`, `say late` with a progress token; then the
    resume of the paused call, 6 s after it paused."""
    await sequences.play_all(ctx, seq_steps.LONG)


# -- silences at every position of a run (conformance.vocab.silences) ---------------------------------------------
@scenario("mcp.silences", protocol="mcp", slow=True, deadline=50, steps=silence_steps.SILENCES)
async def silent_runs(ctx: Context) -> None:
    """Four calls with a progress token at once, each run silent for 15.5 s: before the first output, after text,
    after a tool call, and after a resume (a call paused at once, its question answered as text by a call with
    `resume` and a progress token, which goes on silent); each then says its last piece."""
    ctx.conformance_agent("the silences are scripted with `sleep`")
    tool = await tool_name(ctx)

    async def send(n: int, silence: silences.Silence) -> None:
        key, limits = ctx.unique("silent"), silences.limits(ctx, silence.seconds)
        token = ctx.unique(f"progress-{n}", turn=n, echoed=True)
        if not silence.resumed:
            await call_tool(ctx, tool, silence.prompt, label=silence.label, id=n, session=key, progress_token=token,
                            limits=limits)
            silences.carry(ctx, silence.label, silence)
            return
        ask = await call_tool(ctx, tool, silence.prompt, label=silence_steps.PAUSED.of(silence.position), id=n,
                              session=key)
        if not answered_with_result(ask):
            ctx.recording.facts.setdefault("unsent", {})[silence.name] = \
                "the call that should pause was not answered with a result (the question as text: MCP-PAUSE-001)"
            return
        resumed = await call_tool(ctx, tool, None, label=silence.label, id=n + 100, session=key,
                                  resume=silences.ANSWER, progress_token=token, limits=limits)
        if refused_at_once(resumed):
            # The spec does not say whether `prompt` goes along with `resume`: a server that requires it gets it
            # (it refused before running anything, so this costs no second silence).
            resumed.label = f"{silence.label}-without-prompt"
            await call_tool(ctx, tool, silence.prompt, label=silence.label, id=n + 200, session=key,
                            resume=silences.ANSWER, progress_token=token, limits=limits)
        silences.carry(ctx, silence.label, silence)
    await asyncio.gather(*(send(n, s) for n, s in enumerate(silences.of(ctx.scenario.name), 1)))


def refused_at_once(ex: Exchange) -> bool:
    """Answered with a refusal status or a JSON-RPC error rather than a run (no answer at all is no refusal)."""
    if ex.status is None:
        return False
    try:
        return ex.status != 200 or "error" in p.mcp_response(ex)
    except AssertionError:
        return False
