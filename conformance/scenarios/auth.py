"""Credentials and agent addressing, one scenario per protocol: the API key accepted, then refusals that start no
run (no, empty, unknown, revoked or expired credentials, another scheme, a credential outside the header, a token
bound to another agent, malformed / unknown / undeployed agent ids).

A step that needs a credential or id the user did not supply is skipped; the skip reason (naming the option) is
left in `facts["skipped"]`, so the checks of that step are not assessed, never passed.
"""
from __future__ import annotations

import base64
import itertools
from typing import Any

from conformance.vocab import forms, inputs, protocols as p
from conformance.engine import Context
from conformance.registry import scenario
from conformance.vocab.constants import BASIC_USER, BODY_CREDENTIAL_FIELD, MCP_MODERN_METHODS
from conformance.vocab.sending import call_tool, optional, random_agent, rpc, tool_name, unknown_credential
from conformance.vocab.steps import access as steps

API_KEY, ACCESS_TOKEN = "api-key", "access-token"     # the credentials accepted (kinds, not steps)
SCHEME_CASE = "api-key-scheme-case"                   # the API key under the scheme `bearer` or `BEARER`
UNKNOWN_FORM = "middle-character-changed"
NEEDS = {steps.REVOKED_KEY: ("revoked_key",), steps.EXPIRED_TOKEN: ("expired_token",)}   # a variant's target facts


def _headers(ctx: Context, kind: str) -> tuple[str | None, dict[str, str]]:
    """(credential fact, extra headers) for a credential: API_KEY, ACCESS_TOKEN or the step of a refused variant."""
    if kind == SCHEME_CASE:   # the API key under `Bearer` spelled in another case (input class auth-scheme:case)
        scheme = inputs.value(ctx.target, "auth-scheme:case", "Bearer")
        return "api_key", {"Authorization": f"{scheme} {ctx.need('api_key')}"}
    if kind == steps.EMPTY_BEARER:
        return None, {"Authorization": "Bearer"}
    if kind == steps.BASIC_SCHEME:   # the credential is the API key, under another scheme
        token = base64.b64encode(f"{BASIC_USER}:{ctx.need('api_key')}".encode()).decode()
        return "api_key", {"Authorization": f"Basic {token}"}
    # the unknown credentials here are the real ones with a character in their middle changed; the sweeps of
    # scenarios.forms send them cut short, then the suite's own (`sending.unknown_credential`)
    if kind == steps.UNKNOWN_KEY:
        return None, {"Authorization": f"Bearer {unknown_credential(ctx, 'live', kind, UNKNOWN_FORM)}"}
    if kind == steps.UNKNOWN_TOKEN:
        return None, {"Authorization": f"Bearer {unknown_credential(ctx, 'oat', kind, UNKNOWN_FORM)}"}
    return {steps.NO_CREDENTIAL: None, steps.REVOKED_KEY: "revoked_key", steps.EXPIRED_TOKEN: "expired_token",
            ACCESS_TOKEN: "access_token"}.get(kind, "api_key"), {}


BODY_SHAPES = ("key", "no-key", "run-id")   # a refusal holds whatever valid body it turns away: the shapes rotate


def _body(ctx: Context, protocol: str, prompt: str, shape: str = "key") -> dict[str, Any]:
    key = ctx.unique(f"auth-{protocol}") if shape != "no-key" else None
    if protocol == "invoke":
        return p.invoke_body(prompt, key)
    return p.agui_input(prompt, thread=key, run=ctx.unique("auth-run") if shape == "run-id" else None)


async def _invoke_or_agui(ctx: Context, protocol: str) -> None:
    prompt = ctx.prompt("plain_reply")
    ctx.note(reply=ctx.agent_scenario("plain_reply").get("reply"), protocol=protocol)
    sent = itertools.count(forms.offset(ctx.target.seed, ctx.scenario.name, len(BODY_SHAPES)))

    async def post(label: str, kind: str = API_KEY, agent: str | None = None) -> None:
        credential, headers = _headers(ctx, kind)
        if protocol == "agui":   # as an AG-UI client asks: the refusals must still be the JSON error body (AGUI-ERR-005)
            headers = {"Accept": p.SSE, **headers}
        shape = "key" if label == steps.ACCEPTED else BODY_SHAPES[next(sent) % len(BODY_SHAPES)]
        await ctx.post(ctx.agent_path(protocol, agent), _body(ctx, protocol, prompt, shape), label=label,
                       credential=credential, headers=headers)

    inputs.carry(ctx, steps.ACCEPTED, "auth-scheme:case")
    await post(steps.ACCEPTED, SCHEME_CASE)
    for kind in steps.INVOKE_AGUI_CREDENTIALS:
        await optional(ctx, kind, NEEDS.get(kind, ()), lambda kind=kind: post(kind, kind))
    await optional(ctx, steps.OTHER_AGENT_TOKEN, ("access_token", "other_agent_id"),
                   lambda: post(steps.OTHER_AGENT_TOKEN, ACCESS_TOKEN, ctx.need("other_agent_id")))
    await post(steps.MALFORMED_AGENT, agent=random_agent(ctx, "xyz_"))
    await post(steps.UNKNOWN_AGENT, agent=random_agent(ctx))
    await optional(ctx, steps.UNDEPLOYED_AGENT, ("undeployed_agent_id",),
                   lambda: post(steps.UNDEPLOYED_AGENT, agent=ctx.need("undeployed_agent_id")))


@scenario("access.invoke", protocol="invoke", prompts=("plain_reply",), steps=steps.ACCESS_INVOKE)
async def access_invoke(ctx: Context) -> None:
    """Invoke: the API key accepted, then credential refusals and agent addressing (no run starts)."""
    await _invoke_or_agui(ctx, "invoke")


@scenario("access.agui", protocol="agui", prompts=("plain_reply",), steps=steps.ACCESS_AGUI)
async def access_agui(ctx: Context) -> None:
    """AG-UI, with Accept: text/event-stream: the API key accepted, then credential refusals and agent addressing (no
    run starts)."""
    await _invoke_or_agui(ctx, "agui")


@scenario("access.mcp", protocol="mcp", prompts=("plain_reply",), steps=steps.ACCESS_MCP)
async def access_mcp(ctx: Context) -> None:
    """MCP: the access token accepted on its agent; 401s for no/empty/unknown/revoked/expired credentials and for a
    credential outside the header; a token on another agent; malformed and undeployed agent ids."""
    tool, prompt = await tool_name(ctx), ctx.prompt("plain_reply")
    ctx.note(tool=tool, reply=ctx.agent_scenario("plain_reply").get("reply"))

    ids = itertools.count(1)     # integer ids the run writes as strings on some requests (`forms.shape`)

    async def call(label: str, kind: str = API_KEY, agent: str | None = None, **kw: Any) -> None:
        credential, headers = _headers(ctx, kind)
        await call_tool(ctx, tool, prompt, label=label, id=next(ids), session=ctx.unique("auth-mcp"), agent_id=agent,
                        credential=credential, headers=headers, **kw)

    # the token is accepted whatever the request asks: its method rotates by seed (the run's other MCP requests
    # carry it on the tool's description as well, `forms.credential`)
    method = MCP_MODERN_METHODS[forms.offset(ctx.target.seed, ctx.scenario.name, len(MCP_MODERN_METHODS))]
    await optional(ctx, steps.ACCEPTED_TOKEN, ("access_token",), lambda: call(steps.ACCEPTED_TOKEN, ACCESS_TOKEN) if
                   method == "tools/call" else rpc(ctx, method, label=steps.ACCEPTED_TOKEN, id=next(ids),
                                                   credential="access_token"))
    for kind in steps.MCP_CREDENTIALS:
        await optional(ctx, kind, NEEDS.get(kind, ()), lambda kind=kind: call(kind, kind))

    async def outside_header(label: str, fact: str, where: str) -> None:
        secret = ctx.need(fact)
        path = ctx.agent_path("mcp")
        if where == "query":
            await call(label, steps.NO_CREDENTIAL, agent=None, query=secret)
        else:
            body = p.mcp_call(tool, prompt, session=ctx.unique("auth-mcp"), id=next(ids))
            body[BODY_CREDENTIAL_FIELD] = secret    # and in a cookie, as a dashboard's browser calls carry one
            await ctx.post(path, body, label=label, credential=None,
                           headers={**p.mcp_headers("tools/call", name=tool), "Cookie": f"access_token={secret}"})

    await outside_header(steps.QUERY_KEY, "api_key", "query")
    await optional(ctx, steps.QUERY_TOKEN, ("access_token",),
                   lambda: outside_header(steps.QUERY_TOKEN, "access_token", "query"))
    await outside_header(steps.BODY_KEY, "api_key", "body")
    await optional(ctx, steps.OTHER_AGENT_TOKEN, ("access_token", "other_agent_id"),
                   lambda: call(steps.OTHER_AGENT_TOKEN, ACCESS_TOKEN, ctx.need("other_agent_id")))
    await call(steps.MALFORMED_AGENT, agent=random_agent(ctx, "xyz_"))
    await optional(ctx, steps.UNDEPLOYED_AGENT, ("undeployed_agent_id",),
                   lambda: call(steps.UNDEPLOYED_AGENT, agent=ctx.need("undeployed_agent_id")))
