"""AG-UI scenarios (`POST /v1/agents/{agentId}/agui`): runs recorded once, judged by conformance/checks/agui.py.

Every run a scenario expects to stream is listed in `facts["runs"]` (label ->
expectation), so the checks over "every stream" can never pass on a run that
did not stream. An expectation holds `kind` ("success", "interrupt" or
"error"), and where known the expected `reply`, the sent `thread` and `run`.

The `resume` shape is not shown by the spec (AGUI-OPEN-003). A resume is built
only from what the paused run showed: by default AG-UI 1.0 ResumeEntry objects
answering the interrupt ids `RUN_FINISHED.outcome.interrupts` listed (an
interrupt without a string id is left out; no field is ever sent as null), or the
shape the profile gives (`[resume] agui`, see `Profile.resume`). When the run
listed nothing to answer and the profile gives no shape, no resume is sent and
the reason is kept in `facts["no_resume"]`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import string
from typing import Any

from conformance.model.values import JSON_ESCAPES, TRANSFORMABLE
from conformance.vocab import forms, inputs, protocols as p, requests as rq, sequences, silences
from conformance.engine import Context, refused
from conformance.outcomes import NotAssessed
from conformance.registry import Step, scenario
from conformance.vocab.steps import agui as steps
from conformance.vocab.steps import sequences as seq_steps
from conformance.vocab.steps import silences as silence_steps
from conformance.vocab.readers import outcome_interrupts, paused, stream_events
from conformance.vocab.constants import AGUI_INTERPRETED, MAX_KEY
from conformance.vocab.elicitation import answered_form
from conformance.vocab.sending import listed_tool, one_letter
from conformance.wire.exchange import Exchange, Limits

SSE_ACCEPT = {"Accept": p.SSE}
RESUME_ANSWER = {"name": "Ada"}
SILENCE_LONG_SECONDS = 32          # two ping intervals and then some (only with --thorough)
INSIDE_LIMIT_BYTES = 500_000       # well inside the spec's "at most 1 MB"
OUTSIDE_LIMIT_BYTES = rq.BODY_OVER_LIMIT    # well outside it (over 1 MB however a megabyte is counted)


# -- helpers ----------------------------------------------------------------------------------
def expect(kind: str = "success", reply: str | None = None, thread: str | None = None, run: str | None = None,
           **more: Any) -> dict[str, Any]:
    return {"kind": kind, "reply": reply, "thread": thread, "run": run, **more}


async def run_agui(ctx: Context, label: Step, prompt: str | None = None, *, expectation: dict[str, Any] | None,
                   thread: str | None = None, run: str | None = None, messages: list[dict[str, Any]] | None = None,
                   accept: bool = True, limits: Limits | None = None, form: dict[str, str] | None = None,
                   record: bool = True, **extra: Any) -> Exchange:
    """POST one RunAgentInput (`extra`: more of its fields); `expectation` (None: not a run every-stream check should
    judge) goes to facts; `record=False` leaves the keeping to the caller."""
    body = p.agui_input(prompt, thread=thread, run=run, messages=messages, **extra)
    headers = SSE_ACCEPT if accept else {"accept": None}
    if expectation is not None:
        ctx.recording.facts.setdefault("runs", {})[label] = expectation
    return await ctx.post(ctx.agent_path("agui"), body, label=label, headers=headers, limits=limits, form=form,
                          record=record)


def started_thread(ex: Exchange) -> str | None:
    """RUN_STARTED.threadId of a run, if it is a string."""
    for ev in stream_events(ex):
        if ev.get("type") == "RUN_STARTED":
            tid = ev.get("threadId")
            return tid if isinstance(tid, str) else None
    return None


PAYLOAD, INTERRUPT_ID = "$payload", "$interruptId"
PROFILE_ENTRY = "the profile entry `[resume] agui`"


def _mentions(shape: Any, marker: str) -> bool:
    if isinstance(shape, dict):
        return any(_mentions(v, marker) for v in shape.values())
    if isinstance(shape, list):
        return any(_mentions(v, marker) for v in shape)
    return shape == marker


def fill_resume(shape: Any, payload: Any, ids: list[str]) -> Any:
    """The profile's resume shape with the answer and the interrupt ids put in; a list item naming
    `$interruptId` is repeated once per id. ValueError when a lone `$interruptId` faces several ids."""
    if shape == PAYLOAD:
        return payload
    if shape == INTERRUPT_ID:
        if len(ids) != 1:
            raise ValueError(f"{PROFILE_ENTRY} names {INTERRUPT_ID!r} outside a list, and the run listed "
                             f"{len(ids)} interrupt ids")
        return ids[0]
    if isinstance(shape, dict):
        return {k: fill_resume(v, payload, ids) for k, v in shape.items()}
    if isinstance(shape, list):
        items: list[Any] = []
        for item in shape:
            items += [fill_resume(item, payload, [i]) for i in ids] if _mentions(item, INTERRUPT_ID) \
                else [fill_resume(item, payload, ids)]
        return items
    return shape


def build_resume(ctx: Context, interrupts: list[dict[str, Any]], payload: Any) -> tuple[Any, str]:
    """(resume, how it was built), or (None, why none could be built). Built only from what the server showed."""
    ids = p.interrupt_ids(interrupts)
    shape = ctx.target.profile.resume.get("agui")
    if shape is not None:
        if _mentions(shape, INTERRUPT_ID) and not ids:
            return None, (f"the paused run listed no interrupt id, and {PROFILE_ENTRY} needs one "
                          f"({INTERRUPT_ID!r})")
        try:
            return fill_resume(shape, payload, ids), f"the shape of {PROFILE_ENTRY}"
        except ValueError as exc:
            return None, str(exc)
    if not ids:
        return None, ("the paused run listed no interrupt id in RUN_FINISHED.outcome.interrupts, so there was "
                      "nothing to answer in the AG-UI 1.0 shape; the spec does not show the resume shape "
                      f"(AGUI-OPEN-003): give it with {PROFILE_ENTRY}, e.g. agui = '{{\"answer\": \"$payload\"}}'")
    return (p.agui_resume(interrupts, payload),
            "AG-UI 1.0 ResumeEntry objects answering the interrupt ids RUN_FINISHED.outcome.interrupts listed")


def reply_of(ctx: Context, name: str) -> str | None:
    return ctx.agent_scenario(name).get("reply")


# -- ordinary runs --------------------------------------------------------------------------------
@scenario("agui.plain", protocol="agui", prompts=("plain_reply",), deadline=60, steps=steps.AGUI_PLAIN)
async def plain(ctx: Context):
    """The plain reply twice: with Accept, threadId and runId (`ids`), then with none of the three (`bare`)."""
    s = ctx.agent_scenario("plain_reply")
    thread, run = inputs.keyed(ctx, "thr", steps.IDS), inputs.tagged(ctx, "run", "run-id", steps.IDS)
    await run_agui(ctx, steps.IDS, s["prompt"], thread=thread, run=run,
                   expectation=expect(reply=s.get("reply"), thread=thread, run=run))
    await run_agui(ctx, steps.BARE, s["prompt"], accept=False, expectation=expect(reply=s.get("reply")),
                   form={"run-id": "absent"})


def _single(name: str, agent_scenario: str, kind: str, declared: tuple[Step], doc: str, **more: Any):
    """A scenario of one run (its one declared step) of one agent scenario (streamed reply, tool call, step,
    failures)."""
    (label,) = declared

    async def one_run(ctx: Context):
        s = ctx.agent_scenario(agent_scenario)
        thread = ctx.unique(label)
        await run_agui(ctx, label, s["prompt"], thread=thread,
                       expectation=expect(kind, s.get("reply"), thread=thread,
                                          **{k: s.get(v) for k, v in more.items()}))

    one_run.__doc__ = doc
    one_run.__name__ = name.replace(".", "_")
    return scenario(name, protocol="agui", prompts=(agent_scenario,), deadline=60, steps=declared)(one_run)


_single("agui.streamed", "streamed_reply", "success", steps.AGUI_STREAMED, "The streamed reply (`chunks 5 …`).")
_single("agui.tool", "tool_call", "success", steps.AGUI_TOOL, "A tool call, then `say done`.", tool="tool")
_single("agui.step", "step", "success", steps.AGUI_STEP, "A step, then `say done`.", step="step")
_single("agui.fail_after", "failure_after_output", "error", steps.AGUI_FAIL_AFTER, "`say partial` then `fail boom`.")
_single("agui.fail_before", "failure_before_output", "error", steps.AGUI_FAIL_BEFORE, "`fail boom` before any output.")


# Mapped prompts whose reply, were it taken for the prompt, shows that an earlier user message ran instead of the last.
DECOYS = ("streamed_reply", "tool_call", "step")


def decoy_prompt(ctx: Context, plain: dict[str, Any]) -> str:
    """The prompt of the first mapped decoy scenario whose expected reply differs from the plain reply."""
    for name in DECOYS:
        s = ctx.target.profile.scenario(name) or {}
        if s.get("prompt") and s.get("reply") is not None and s["reply"] != plain.get("reply"):
            return s["prompt"]
    raise NotAssessed(f"needs a second mapped prompt with a known reply other than plain_reply's, for the earlier "
                      f"user message ({', '.join(DECOYS)}); the profile maps none")


@scenario("agui.last_user", protocol="agui", prompts=("plain_reply",) + DECOYS, deadline=60,
          steps=steps.AGUI_LAST_USER)
async def last_user(ctx: Context):
    """The prompt is the last user message: [user <another mapped prompt>, assistant, user <plain prompt>] and
    [user <plain prompt>, assistant] lists."""
    s = ctx.agent_scenario("plain_reply")
    three = [p.agui_message(decoy_prompt(ctx, s), "user", "m1"), p.agui_message("say x", "assistant", "m2"),
             p.agui_message(s["prompt"], "user", "m3")]
    two = [p.agui_message(s["prompt"], "user", "m1"), p.agui_message("say x", "assistant", "m2")]
    await run_agui(ctx, steps.USER_ASSISTANT_USER, messages=three, thread=ctx.unique("last"),
                   expectation=expect(reply=s.get("reply")))
    await run_agui(ctx, steps.USER_ASSISTANT, messages=two, thread=ctx.unique("last"),
                   expectation=expect(reply=s.get("reply")))


@scenario("agui.messages", protocol="agui", prompts=("messages_passthrough",), deadline=60,
          steps=steps.AGUI_MESSAGES)
async def messages(ctx: Context):
    """`echo messages` after a history with non-ASCII text and newlines: the whole list reaches the agent.

    The items are AG-UI messages, with the members AG-UI's message model gives them beside `id`, `role` and
    `content`, as a client's history after a tool call holds them (a user's `name`, an assistant's `toolCalls`, a
    tool message's `toolCallId`): a server that binds messages to fewer members drops them. The spec names only those
    three, so a server may validate messages strictly: refused (a 4xx but 429), the list goes again with those three
    alone (`facts["message_members_refused"]`), and that run is the one judged."""
    prompt = ctx.prompt("messages_passthrough")
    named = [
        {"id": "h1", "role": "user", "content": "Grüße, 世界 \U0001f600"},
        {"id": "h2", "role": "assistant", "content": "line one\nline two"},
        {"id": "h3", "role": "user", "content": "say ignored"},
        {"id": "h3b", "role": "assistant", "content": inputs.history_text(ctx, steps.ECHO_MESSAGES)},
        {"id": "h4", "role": "user", "content": prompt},
    ]
    members = [{**named[0], "name": "ada"}, named[1],
               {"id": "h2t", "role": "assistant", "content": "looking it up",
                "toolCalls": [{"id": "call-1", "type": "function",
                               "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]},
               {"id": "h2r", "role": "tool", "content": "{\"q\":\"x\"}", "toolCallId": "call-1"}, *named[2:]]
    tried = await run_agui(ctx, steps.ECHO_MESSAGES, messages=members, thread=ctx.unique("msgs"), expectation=None,
                           record=False)
    if refused(tried):
        ctx.note(message_members_refused=tried.status, messages=named)
        await run_agui(ctx, steps.ECHO_MESSAGES, messages=named, thread=ctx.unique("msgs"),
                       expectation=expect(reply=p.canonical(named)))
        return
    ctx.note(messages=members)
    ctx.recording.facts.setdefault("runs", {})[steps.ECHO_MESSAGES] = expect(reply=p.canonical(members))
    ctx.recording.exchanges.append(tried)


PASS_FIELDS = {
    "tools": [{"name": "lookup", "description": "find things",
               "parameters": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                              "properties": {"q": {"type": "string", "format": "uri", "default": "x"}},
                              "required": ["q"], "additionalProperties": False}}],
    "state": {"counter": 3, "nested": {"list": [1, "two", None]}, "ünï": "cödé", "userName": {"firstName": "Ada"}},
    "context": [{"description": "user locale", "value": "de-CH"}],
    "forwardedProps": {"flag": True, "n": -12.5, "empty": {}},
}
UNKNOWN_FIELDS = {
    "x_text": "plain", "x_number": 42, "x_float": 0.125, "x_null": None, "x_bool": False,
    "x_object": {"a": {"b": [1, {"c": "d"}]}}, "x_array": [1, "two", [3]], "x_unicode": "naïve 東京 \U0001f680",
    "xCamelCase": "camel", "XUpperStart": 1,
}
# ...and, unless a test withholds their classes, a name and a value with what JSON escapes and a value a transformation
# changes (whitespace at its ends): what agui.params_falsy's one request carries rides on every echo run here too
UNKNOWN_CLASSES = {"params:json-escapes": {f"x_escapes{JSON_ESCAPES[0]}name": f"v{JSON_ESCAPES[1]}"},
                   "params:twins": {"x_transformable": TRANSFORMABLE}}


@scenario("agui.params", protocol="agui", prompts=("params_passthrough",), deadline=60, steps=steps.AGUI_PARAMS)
async def params(ctx: Context):
    """`echo params` with tools/state/context/forwardedProps and unknown fields of every JSON type; then the same
    again in other forms (`forms.AGAIN`)."""
    prompt = ctx.prompt("params_passthrough")
    unknown = {**UNKNOWN_FIELDS, **{k: v for cls, fields in UNKNOWN_CLASSES.items() if inputs.is_sent(cls)
                                    for k, v in fields.items()}}
    extra = {**PASS_FIELDS, **unknown}
    ctx.note(forwarded=PASS_FIELDS, unknown=unknown)
    await run_agui(ctx, steps.ECHO_PARAMS, prompt, thread=ctx.unique("params"), run=ctx.unique("run", echoed=True),
                   expectation=expect(), **extra)
    for n in range(1, forms.AGAIN + 1):     # the first again with a `state` that is no object (AG-UI's State: any)
        again = {**extra, "state": ["not", "an", {"object": True}]} if n == 1 else extra
        await run_agui(ctx, steps.ECHO_PARAMS_AGAIN.of(n), prompt, thread=ctx.unique("params"),
                       run=ctx.unique("run", echoed=True), expectation=expect(), **again)


@scenario("agui.params_falsy", protocol="agui", prompts=("params_passthrough",), deadline=60,
          steps=steps.AGUI_PARAMS)
async def params_falsy(ctx: Context):
    """`echo params` with `tools`, `context` and `forwardedProps` empty, `state` null, and the model's unknown fields of
    zero value (input classes params:falsy, params:null, params:json-escapes)."""
    prompt = ctx.prompt("params_passthrough")
    zero = inputs.is_sent("params:falsy")
    inputs.carry(ctx, steps.ECHO_PARAMS, "params:null")
    forwarded = {"tools": [] if zero else PASS_FIELDS["tools"], "context": [] if zero else PASS_FIELDS["context"],
                 "forwardedProps": {} if zero else PASS_FIELDS["forwardedProps"],
                 "state": inputs.value(ctx.target, "params:null", PASS_FIELDS["state"])}
    unknown = inputs.extra_fields(ctx, steps.ECHO_PARAMS, (*AGUI_INTERPRETED, *PASS_FIELDS))
    ctx.note(forwarded=forwarded, unknown=unknown)
    await run_agui(ctx, steps.ECHO_PARAMS, prompt, thread=ctx.unique("params"), expectation=expect(),
                   **forwarded, **unknown)


@scenario("agui.session", protocol="agui", prompts=("session_affinity",), deadline=60, steps=steps.AGUI_SESSION)
async def session(ctx: Context):
    """`count` runs: A (no threadId) then B on A's generated threadId; C (no threadId); D, E on one fresh key."""
    prompt = ctx.prompt("session_affinity")
    a = await run_agui(ctx, steps.GENERATED_1, prompt, expectation=expect(reply="1"))
    generated = started_thread(a)
    ctx.note(generated_thread=generated)
    if generated is not None:
        await run_agui(ctx, steps.GENERATED_2, prompt, thread=generated,
                       expectation=expect(reply="2", thread=generated))
    await run_agui(ctx, steps.GENERATED_OTHER, prompt, expectation=expect(reply="1"))
    key = inputs.keyed(ctx, "sess", steps.FRESH_1, steps.FRESH_2)
    ctx.note(fresh_thread=key)
    await run_agui(ctx, steps.FRESH_1, prompt, thread=key, expectation=expect(reply="1", thread=key))
    await run_agui(ctx, steps.FRESH_2, prompt, thread=key, expectation=expect(reply="2", thread=key))


@scenario("agui.key_lengths", protocol="agui", prompts=("plain_reply",), deadline=60, steps=steps.AGUI_KEY_LENGTHS)
async def key_lengths(ctx: Context):
    """The plain reply on threadIds at the exact bounds: 1 and 256 characters."""
    s = ctx.agent_scenario("plain_reply")
    one = one_letter(ctx, string.ascii_letters)
    longest = inputs.padded(ctx, "len", MAX_KEY, "session-key:256-multibyte", steps.THREAD_256, "k")
    await run_agui(ctx, steps.THREAD_1, s["prompt"], thread=one, expectation=expect(reply=s.get("reply"), thread=one))
    await run_agui(ctx, steps.THREAD_256, s["prompt"], thread=longest,
                   expectation=expect(reply=s.get("reply"), thread=longest))


@scenario("agui.big", protocol="agui", deadline=60, steps=steps.AGUI_BIG)
async def big(ctx: Context):
    """An echo-mode prompt making the body about 0.5 MB (well inside 1 MB): it streams back unchanged."""
    ctx.conformance_agent("echo mode returns the prompt unchanged")
    prompt = "conformance echo of a big body\n" + ("0123456789abcdef" * (INSIDE_LIMIT_BYTES // 16))
    ctx.note(prompt_chars=len(prompt))
    await run_agui(ctx, steps.HALF_MB, prompt, thread=ctx.unique("big"), expectation=expect(reply=prompt))


@scenario("agui.upstream_input", protocol="agui", prompts=("plain_reply",), deadline=60,
          steps=steps.AGUI_UPSTREAM_INPUT, imports=("ag_ui.core",))
async def upstream_input(ctx: Context):
    """A full AG-UI 1.0 RunAgentInput (every field the official client sends) with the plain prompt."""
    from ag_ui.core import RunAgentInput, UserMessage

    s = ctx.agent_scenario("plain_reply")
    thread, run = ctx.unique("upstream"), ctx.unique("run", echoed=True)
    model = RunAgentInput(thread_id=thread, run_id=run, state={}, tools=[], context=[], forwarded_props={},
                          messages=[UserMessage(id="u1", role="user", content=s["prompt"])])
    body = model.model_dump(mode="json", by_alias=True)
    ctx.note(body=body)
    ctx.recording.facts.setdefault("runs", {})[steps.UPSTREAM] = expect(reply=s.get("reply"), thread=thread, run=run)
    await ctx.post(ctx.agent_path("agui"), body, label=steps.UPSTREAM, headers=SSE_ACCEPT)


# -- interrupt and resume -----------------------------------------------------------------------
@scenario("agui.interrupt", protocol="agui", prompts=("question_and_resume",), deadline=60,
          steps=steps.AGUI_INTERRUPT)
async def interrupt(ctx: Context):
    """`ask …` pauses the run; a request with only `resume` (built from what the pause listed) on its threadId
    continues it."""
    s = ctx.agent_scenario("question_and_resume")
    thread = ctx.unique("ask")
    ask = await run_agui(ctx, steps.ASK, s["prompt"], thread=thread, expectation=expect("interrupt", thread=thread))
    interrupts = outcome_interrupts(ask)
    ctx.note(thread=thread, interrupts=interrupts, answer=RESUME_ANSWER, **p.resume_facts(s))
    if not paused(ask):
        ctx.note(no_resume="the question run did not pause (RUN_FINISHED with outcome.type `interrupt`; judged by "
                           "AGUI-INT-001), so there was no paused run to resume")
        return
    resume, how = build_resume(ctx, interrupts, RESUME_ANSWER)
    if resume is None:
        ctx.note(no_resume=how)
        return
    ctx.note(resume_sent=resume, resume_basis=how)
    ctx.recording.facts["runs"][steps.RESUME] = expect(reply=p.resumed_reply(p.resume_facts(s), RESUME_ANSWER),
                                                       thread=thread)
    await ctx.post(ctx.agent_path("agui"), {"threadId": thread, "resume": resume}, label=steps.RESUME,
                   headers=SSE_ACCEPT)


@scenario("agui.resume_open", protocol="agui", prompts=("question_and_resume",), deadline=60,
          steps=steps.AGUI_RESUME_OPEN)
async def resume_open(ctx: Context):
    """What the spec leaves open: answers to an unknown interrupt, an empty `resume`, and a repeated (stale) one."""
    s = ctx.agent_scenario("question_and_resume")
    thread = ctx.unique("open")
    ask = await run_agui(ctx, steps.ASK, s["prompt"], thread=thread, expectation=None)
    good, how = build_resume(ctx, outcome_interrupts(ask), RESUME_ANSWER)
    if good is None:
        ctx.note(no_resume=f"no resume variants were sent: {how}")
        return
    path = ctx.agent_path("agui")
    unknown = [{"interruptId": "conformance-no-such-interrupt", "status": "resolved", "payload": RESUME_ANSWER}]
    await ctx.post(path, {"threadId": thread, "resume": unknown}, label=steps.UNKNOWN_INTERRUPT, headers=SSE_ACCEPT)
    await ctx.post(path, {"threadId": thread, "resume": []}, label=steps.EMPTY_RESUME, headers=SSE_ACCEPT)
    await ctx.post(path, {"threadId": thread, "resume": good}, label=steps.ANSWER, headers=SSE_ACCEPT)
    await ctx.post(path, {"threadId": thread, "resume": good}, label=steps.STALE_ANSWER, headers=SSE_ACCEPT)


# -- refusals ---------------------------------------------------------------------------------
@scenario("agui.refusals", protocol=("agui", "invoke"), deadline=60, steps=steps.AGUI_REFUSALS)
async def refusals(ctx: Context):
    """Requests refused before any stream (Accept: text/event-stream on all), and invoke's answer to the same
    session key out of bounds. (The credential and addressing refusals with Accept: text/event-stream are
    access.agui's, and invoke's answers to the same faults access.invoke's: each is sent once.)"""
    agui, invoke = ctx.agent_path("agui"), ctx.agent_path("invoke")
    prompt = "say conformance"
    key = ctx.unique("ref")
    long_key = inputs.padded(ctx, "long", MAX_KEY + 1, "session-key:257-multibyte", steps.THREAD_257, "k")
    inputs.carry(ctx, steps.INVOKE_SESSION_257, "session-key:257-multibyte")
    big = p.agui_input(prompt, thread=key, padding="x" * OUTSIDE_LIMIT_BYTES)
    cases = [
        (steps.NO_MESSAGES, agui, {"threadId": key}),
        (steps.EMPTY_MESSAGES, agui, {"threadId": key, "messages": []}),
        (steps.ASSISTANT_ONLY, agui, {"threadId": key, "messages": [p.agui_message("say x", "assistant", "a1")]}),
        (steps.THREAD_257, agui, p.agui_input(prompt, thread=long_key)),
        (steps.THREAD_EMPTY, agui, p.agui_input(prompt, thread="")),
        (steps.HUGE_BODY, agui, big),
        (steps.INVOKE_SESSION_257, invoke, p.invoke_body(prompt, long_key)),
    ]
    cases = [case for case in cases if ctx.sends(case[0])]     # over HTTP/2, not the body over 1 MB (`versions`)
    await asyncio.gather(*(ctx.post(path, body, label=label, headers=SSE_ACCEPT) for label, path, body in cases))
    order = {case[0]: i for i, case in enumerate(cases)}
    ctx.recording.exchanges.sort(key=lambda e: order.get(e.label, len(order)))


# -- silence and pings (slow) ---------------------------------------------------------------------
@scenario("agui.silence", protocol="agui", prompts=("silence",), slow=True, deadline=50, steps=steps.AGUI_SILENCE)
async def silence(ctx: Context):
    """`sleep 16` then `say awake`: a silence longer than one ping interval, on a thread the service generates (the
    silences of agui.silences send theirs: the keep-alive is judged on both forms of the key)."""
    s = ctx.agent_scenario("silence")
    seconds = float(s.get("silent_seconds", 16))
    ctx.note(silent_seconds=seconds)
    await run_agui(ctx, steps.SILENCE, s["prompt"], limits=silences.limits(ctx, seconds),
                   expectation=expect(reply=s.get("reply")))
    for silence in silences.of(ctx.scenario.name):
        if s["prompt"] == silence.prompt:        # the silence model's, unless a profile gave another prompt
            silences.carry(ctx, steps.SILENCE, silence)


@scenario("agui.silence_long", protocol="agui", slow=True, deadline=80, steps=steps.AGUI_SILENCE_LONG)
async def silence_long(ctx: Context):
    """`sleep 32` then `say awake` (only with --thorough): two ping intervals, so the ping must repeat."""
    if not ctx.target.thorough:
        raise NotAssessed(f"needs --thorough: the ping repeating is seen only over a silence of "
                          f"{SILENCE_LONG_SECONDS} s, which a default run does not spend")
    ctx.conformance_agent("the long silence uses `sleep`")
    ctx.note(silent_seconds=SILENCE_LONG_SECONDS)
    await run_agui(ctx, steps.SILENCE_LONG, f"sleep {SILENCE_LONG_SECONDS}\nsay awake", thread=ctx.unique("quiet"),
                   limits=silences.limits(ctx, SILENCE_LONG_SECONDS), expectation=expect(reply="awake"))


# -- one session key across the protocols (GEN-SESS) -------------------------------------------------
@scenario("agui.cross_session", protocol=("agui", "invoke", "mcp"), prompts=("session_affinity",), deadline=60,
          steps=steps.AGUI_CROSS_SESSION)
async def cross_session(ctx: Context):
    """`count` with one fresh key over invoke (`sessionId`), AG-UI (`threadId`) and MCP (`session_id`): 1, 2, 3."""

    prompt = ctx.prompt("session_affinity")
    key = inputs.keyed(ctx, "cross", steps.VIA_INVOKE, steps.VIA_AGUI, steps.VIA_MCP)
    ctx.note(key=key)
    await ctx.post(ctx.agent_path("invoke"), p.invoke_body(prompt, key), label=steps.VIA_INVOKE)
    await run_agui(ctx, steps.VIA_AGUI, prompt, thread=key, expectation=None)
    tool = await listed_tool(ctx)
    ctx.note(tool=tool)
    if tool is None:
        ctx.note(no_mcp="tools/list named no tool and --agent-slug was not given")
        return
    await ctx.post(ctx.agent_path("mcp"), p.mcp_call(tool, prompt, session=key),
                   headers=p.mcp_headers("tools/call", name=tool), label=steps.VIA_MCP)



# -- sequences: a chain, overlaps, long runs, one key over every protocol (conformance.vocab.sequences) ----------
@scenario("agui.chain", protocol="agui", deadline=60, steps=(seq_steps.CHAIN,))
async def chain(ctx: Context):
    """`count` without threadId, runId or Accept, then with runId on the threadId RUN_STARTED gave (1, 2); a run after
    earlier user messages that pauses twice, resumed twice in a row; `count` again (4)."""
    await sequences.play_all(ctx, seq_steps.CHAIN, agui_resume=build_resume)


@scenario("agui.together", protocol="agui", deadline=60, timing=True, steps=(seq_steps.OVERLAP,))
async def together(ctx: Context):
    """Two 1 s `count` runs on one fresh threadId and one on another at once, then `count` on the first (3); a paused
    run, then its resume and a new run on its threadId at once."""
    await sequences.play_all(ctx, seq_steps.OVERLAP, agui_resume=build_resume)


@scenario("agui.slow_run", protocol="agui", slow=True, deadline=40, steps=(seq_steps.LONG,))
async def slow_run(ctx: Context):
    """A paused run; then `say early`, `sleep 15`, `say late` on another threadId; then the resume of the paused run,
    answered after those 6 s."""
    await sequences.play_all(ctx, seq_steps.LONG, agui_resume=build_resume)


@scenario(sequences.HISTORIES, protocol=("agui", "invoke", "mcp"), deadline=90, steps=(seq_steps.HISTORY,), late=True)
async def histories(ctx: Context):
    """One key generated by invoke, then every transition (a run that completes, fails after output, fails after
    several pieces, fails before output, calls a tool and takes a step in either order, pauses and is resumed) on
    every path (invoke as JSON and streamed, AG-UI, MCP with and without a progress token, the 2025-11-25 path with
    each optional field left out, a client that can elicit), its key had in every form (the key so far, none: the
    service generates it in that very call, a new one sent), each followed by a reading on every path: pairwise,
    drawn once per seed (`sequences.history`)."""
    chain = sequences.history(ctx.target.seed)
    ctx.note(history=[dataclasses.asdict(move) for move in chain])
    await sequences.play_all(ctx, seq_steps.HISTORY, [chain], agui_resume=build_resume, mcp_form=answered_form,
                             writings=True)


@scenario("agui.cross_chain", protocol=("agui", "invoke", "mcp"), deadline=90, steps=(seq_steps.CHAIN,))
async def cross_chain(ctx: Context):
    """A key and its twins (equal only after a transformation a server may apply), each on another protocol, and the
    same key with another agent: each a session of its own. With --depth N, one key generated by invoke (1), then
    MCP (2), AG-UI (a pause, resumed), invoke streamed (4), MCP (a pause as text, resumed), AG-UI (6), and
    2 × (N - 1) more chains over every protocol drawn by walking the sessions model (drawn once per seed, each sent
    once, never replayed)."""
    n = sequences.DRAWN_PER_DEPTH * (ctx.target.depth - 1)
    drawn = await asyncio.to_thread(sequences.drawn_chains, n, ctx.target.seed) if n > 0 else []
    ctx.note(drawn=[[dataclasses.asdict(move) for move in chain] for chain in drawn])
    deeper = [sequences.CROSS_CHAIN, *drawn] if n > 0 else []
    await sequences.play_all(ctx, seq_steps.CHAIN, [*sequences.CHAINS[sequences.CROSS], *deeper],
                             agui_resume=build_resume)


# -- silences at every position of a run (conformance.vocab.silences) ---------------------------------------------
@scenario("agui.silences", protocol="agui", slow=True, deadline=50, steps=silence_steps.SILENCES)
async def silent_runs(ctx: Context) -> None:
    """Four runs at once, each silent for 16 s (a `: ping` is due 15 s in): after text, after a tool call, after a
    step, and after a resume (a run that pauses at once, answered, goes on silent); each then says its last piece.
    Before the first output AG-UI falls silent in agui.silence."""
    ctx.conformance_agent("the silences are scripted with `sleep`")

    async def send(silence: silences.Silence) -> None:
        thread, limits = ctx.unique("silent"), silences.limits(ctx, silence.seconds)
        if not silence.resumed:
            await run_agui(ctx, silence.label, silence.prompt, thread=thread, limits=limits,
                           expectation=expect(reply=silence.reply, thread=thread))
            silences.carry(ctx, silence.label, silence)
            return
        ask = await run_agui(ctx, silence_steps.PAUSED.of(silence.position), silence.prompt, thread=thread,
                             expectation=None)
        resume, how = build_resume(ctx, outcome_interrupts(ask), silences.ANSWER) if paused(ask) else \
            (None, "the run did not pause (RUN_FINISHED with outcome.type `interrupt`: AGUI-INT-001)")
        if resume is None:
            ctx.recording.facts.setdefault("unsent", {})[silence.name] = how
            return
        ctx.recording.facts.setdefault("runs", {})[silence.label] = expect(reply=silence.reply, thread=thread,
                                                                             resumed=True)
        await ctx.post(ctx.agent_path("agui"), {"threadId": thread, "resume": resume}, label=silence.label,
                       headers=SSE_ACCEPT, limits=limits)
        silences.carry(ctx, silence.label, silence)
    await asyncio.gather(*(send(s) for s in silences.of(ctx.scenario.name)))
