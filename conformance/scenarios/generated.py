"""Generated inputs sent once over every protocol, shared by the round-trip and cross-protocol checks.

`generated.round_trip`: each run's prompt is several `say-json` lines of
text (one piece each: the fixed tricky texts in every run, then its share of the drawn ones; the first run says one of
them twice in a row, and one of whitespace alone);
`facts["texts"][i]` is run i's expected reply (the pieces joined). The same prompts go over invoke JSON
(`invoke-json-{i}`), invoke stream (`invoke-sse-{i}`), AG-UI (`agui-{i}`) and
MCP (`mcp-{i}`).

`generated.params`: `facts["params"][i]` is a generated object of extra fields
sent with `echo params`: as top-level invoke fields (`invoke-{i}`) and as
unknown top-level AG-UI fields (`agui-{i}`).
"""
from __future__ import annotations

import asyncio

from conformance import generate
from conformance.vocab.constants import INTERPRETED
from conformance.vocab.fuzzing import AGUI_ONLY, AGUI_TYPED
from conformance.vocab.protocols import SSE, agui_input, extra_data_sample, invoke_body, mcp_call, mcp_headers, say_json
from conformance.registry import scenario
from conformance.vocab.sending import listed_tool
from conformance.vocab.steps import generated as steps

TEXTS_PER_RUN = 4
WHITESPACE_PIECE = " \t "
RUNS_PER_PROTOCOL = 2
PARAM_RUNS = 3


def _groups(texts: list[str], size: int) -> list[list[str]]:
    return [texts[i:i + size] for i in range(0, len(texts), size)]


def round_trip_texts(depth: int, seed: int) -> list[str]:
    """The texts of every round trip, TEXTS_PER_RUN per run."""
    return generate.texts(TEXTS_PER_RUN * RUNS_PER_PROTOCOL * depth, seed)


@scenario("generated.round_trip", protocol=("invoke", "agui", "mcp"), prompts=("text_round_trip",), deadline=60,
          steps=steps.GENERATED_ROUND_TRIP)
async def round_trip(ctx):
    """Generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as say-json over all three protocols."""
    ctx.conformance_agent("the exact text round trip uses `say-json`")
    texts = await asyncio.to_thread(round_trip_texts, ctx.target.depth, ctx.target.seed)
    # the fixed tricky texts go in every run, the drawn ones shared out: a server that mangles markup, a line of
    # multibyte characters or a reply starting `error:` does so on every round trip of a protocol, not on one
    fixed = [t for t in texts if t in generate.FIXED_TEXTS]
    drawn = texts[len(fixed):]
    groups = [fixed + share for share in _groups(drawn, -(-len(drawn) // (RUNS_PER_PROTOCOL * ctx.target.depth)))] \
        if drawn else [fixed]
    if len(groups[0]) > 1:      # one piece twice in a row: a reply of equal pieces is their sum, not one of them;
        groups[0].insert(2, groups[0][1])       # and a piece of whitespace alone, a piece like any other
        groups[0].insert(1, WHITESPACE_PIECE)
    prompts = ["\n".join(say_json(t) for t in g) for g in groups]
    ctx.note(texts=["".join(g) for g in groups], prompts=prompts)
    tool = await listed_tool(ctx)
    ctx.note(tool=tool)
    invoke, agui, mcp = ctx.agent_path("invoke"), ctx.agent_path("agui"), ctx.agent_path("mcp")
    sends = []
    for i, prompt in enumerate(prompts):
        sends.append(ctx.post(invoke, invoke_body(prompt, ctx.unique("rt")), label=steps.INVOKE_JSON.of(i)))
        sends.append(ctx.post(invoke, invoke_body(prompt, ctx.unique("rt"), stream=True),
                              label=steps.INVOKE_SSE.of(i)))
        sends.append(ctx.post(agui, agui_input(prompt, thread=ctx.unique("rt")), headers={"Accept": SSE},
                              label=steps.AGUI.of(i)))
        if tool:
            sends.append(ctx.post(mcp, mcp_call(tool, prompt, session=ctx.unique("rt"), id=i + 1),
                                  headers=mcp_headers("tools/call", name=tool), label=steps.MCP.of(i)))
    await asyncio.gather(*sends)
    ctx.recording.exchanges.sort(key=lambda e: e.label)


# Names neither protocol interprets, nor AG-UI types ("any" in the spec, typed lists in RunAgentInput): each such
# field reaches params unchanged by the spec's words alone.
NOT_EXTRA = INTERPRETED | frozenset(AGUI_TYPED + AGUI_ONLY)


def extra_params(depth: int, seed: int) -> list[dict]:
    """Generated extra fields (any JSON values, unicode names), one object per run of each protocol."""
    return generate.extra_fields(PARAM_RUNS * depth, seed, NOT_EXTRA)


@scenario("generated.params", protocol=("invoke", "agui"), prompts=("params_passthrough",), deadline=60,
          steps=steps.GENERATED_PARAMS)
async def params(ctx):
    """Generated extra fields (any JSON values, unicode keys) with `echo params` over invoke and AG-UI (on invoke
    with a small value in the extra data field too, when its name is known)."""
    prompt = ctx.prompt("params_passthrough")
    sent = [{k: v for k, v in extra.items() if k != ctx.target.extra_data_field}   # that field carries its own
            for extra in await asyncio.to_thread(extra_params, ctx.target.depth, ctx.target.seed)]
    ctx.note(params=sent)
    invoke, agui = ctx.agent_path("invoke"), ctx.agent_path("agui")
    await asyncio.gather(*(
        coro for i, extra in enumerate(sent) for coro in (
            ctx.post(invoke, {**extra, **extra_data_sample(ctx.target), **invoke_body(prompt, ctx.unique("pp"))},
                     label=steps.INVOKE.of(i)),
            ctx.post(agui, {**extra, **agui_input(prompt, thread=ctx.unique("pp"))}, headers={"Accept": SSE},
                     label=steps.AGUI.of(i)))))
    ctx.recording.exchanges.sort(key=lambda e: e.label)
