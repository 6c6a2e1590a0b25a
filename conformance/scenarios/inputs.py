"""Input-form scenarios: the classes of the input model (`conformance.vocab.inputs`) no request of the other
scenarios can carry without changing what those judge: header values in other legitimate forms, and every
JSON-RPC id form. One request per value; a withheld class sends its baseline in the same request.

| scenario | what it sends | requests / agent runs |
|---|---|---|
| `invoke.input_forms` | the plain reply with Content-Type `application/json; charset=utf-8` and `Application/JSON`; without `stream`, with Accept `Text/Event-Stream` and `text/event-stream;q=1` | 4 / 4 |
| `agui.input_forms` | the plain reply with Content-Type `application/json; charset=utf-8` and `Application/JSON` | 2 / 2 |
| `mcp.input_forms` | tools/list with the Content-Type forms, each with a falsy id (0, ""), then an id holding escapes: the other id classes ride on the ids the run chooses for its MCP requests (`forms.ID_WRITINGS`), MCP's Accept pair in its forms and the scheme's case on every request's free forms | 3 / 0 |
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from conformance.engine import Context
from conformance.registry import Step, scenario
from conformance.vocab import inputs
from conformance.vocab.protocols import SSE, agui_input, invoke_body
from conformance.vocab.sending import rpc
from conformance.vocab.steps import inputs as steps

CONTENT_TYPES = ("content-type:parameter", "content-type:case")
INVOKE_ACCEPTS = ("accept:case", "accept:weight")
# the id classes no id the run chooses carries (the others ride on every MCP request: `forms.ID_WRITINGS`)
ID_CLASSES = ("jsonrpc-id:falsy", "jsonrpc-id:json-escapes")


def forms(ctx: Context, family: Step, names: tuple[str, ...], baseline: Callable[[int], Any]) -> list[tuple[str, Any]]:
    """(label, value) for every value this run sends of each class named, each label carrying its class."""
    out = []
    for name in names:
        kind = name.split(":", 1)[1]
        for n, value in enumerate(inputs.values(ctx.target, name, baseline), 1):
            label = family.of(f"{kind}-{n}")
            inputs.carry(ctx, label, name)
            out.append((label, value))
    return out


def ordered(ctx: Context) -> None:
    ctx.recording.exchanges.sort(key=lambda ex: ex.label)


@scenario("invoke.input_forms", protocol="invoke", prompts=("plain_reply",), steps=steps.INVOKE_INPUT_FORMS)
async def invoke_forms(ctx: Context) -> None:
    """The plain reply with Content-Type in other legitimate forms (`content-type-*`, as JSON), and without `stream`
    with Accept naming only the event stream in other forms (`accept-*`)."""
    prompt, path = ctx.prompt("plain_reply"), ctx.agent_path("invoke")
    sends = [ctx.post(path, invoke_body(prompt, ctx.unique("ct")), label=label,
                      headers={"Accept": "application/json", "Content-Type": form})
             for label, form in forms(ctx, steps.CONTENT_TYPE_FORMS, CONTENT_TYPES, lambda n: "application/json")]
    sends += [ctx.post(path, invoke_body(prompt, ctx.unique("accept")), label=label, headers={"Accept": form})
              for label, form in forms(ctx, steps.ACCEPT_FORMS, INVOKE_ACCEPTS, lambda n: SSE)]
    ctx.note(reply=ctx.agent_scenario("plain_reply").get("reply"))
    await asyncio.gather(*sends)
    ordered(ctx)


@scenario("agui.input_forms", protocol="agui", prompts=("plain_reply",), steps=steps.AGUI_INPUT_FORMS)
async def agui_forms(ctx: Context) -> None:
    """The plain reply with Content-Type in other legitimate forms (`content-type-*`)."""
    prompt, path = ctx.prompt("plain_reply"), ctx.agent_path("agui")
    await asyncio.gather(*(ctx.post(path, agui_input(prompt, thread=ctx.unique("ct")), label=label,
                                    headers={"Accept": SSE, "Content-Type": form})
                           for label, form in forms(ctx, steps.CONTENT_TYPE_FORMS, CONTENT_TYPES,
                                                    lambda n: "application/json")))
    ordered(ctx)


@scenario("mcp.input_forms", protocol="mcp", steps=steps.MCP_INPUT_FORMS)
async def mcp_forms(ctx: Context) -> None:
    """tools/list (no run) with Content-Type in other legitimate forms, each carrying a falsy JSON-RPC id (0, ""),
    and one with an id holding escapes: an answer is judged on its result (MCP-SESS-005) and its id (MCP-METH-005)
    alike, so the header forms carry the ids (`content-type-*`), and an id left over goes alone (`id-*`)."""
    ids = forms(ctx, steps.ID_FORMS, ID_CLASSES, lambda n: f"plain-id-{n}") if ctx.sends(steps.ID_FORMS) else []
    headers = [(label, {"Content-Type": form}) for label, form in
               forms(ctx, steps.CONTENT_TYPE_FORMS, CONTENT_TYPES, lambda n: "application/json")]
    sends = []
    for n, (label, header) in enumerate(headers):
        if n < len(ids):       # the id rides on this request: its classes are this step's
            id_label, value = ids[n]
            carried = ctx.recording.facts.get("input_classes", {})
            inputs.carry(ctx, label, *carried.pop(id_label, ()))
        else:
            value = label
        sends.append(rpc(ctx, "tools/list", label=label, id=value, headers=header))
    sends += [rpc(ctx, "tools/list", label=label, id=value) for label, value in ids[len(headers):]]
    await asyncio.gather(*sends)
    ordered(ctx)
