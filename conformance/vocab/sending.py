"""Sending through a scenario's Context: one MCP request (`rpc`, `call_tool`), the agent's MCP tool name, and the
credential and agent-id stand-ins and optional steps of the access scenarios. Shared by every scenario module, so no
scenario imports another."""
from __future__ import annotations

import asyncio
import concurrent.futures
import re
from typing import Any, Awaitable, Callable
from urllib.parse import quote

from conformance.engine import Context, plain_call
from conformance.outcomes import NotAssessed
from conformance.vocab import protocols as p
from conformance.vocab.constants import QUERY_CREDENTIAL_PARAM
from conformance.wire.exchange import Exchange
from conformance.wire import near_miss
from conformance.wire.redact import suite_made


# -- MCP requests and the tool name -----------------------------------------------------------
async def rpc(ctx: Context, method: str, params: dict[str, Any] | None = None, *, label: str, id: Any = 1,
              version: str | None = p.MCP_VERSION, header_version: str | None | object = ..., meta_version: Any = ...,
              mcp_name: str | None = None, capabilities: dict[str, Any] | None = None, progress_token: Any = None,
              agent_id: str | None = None, credential: str | None = "api_key", headers: dict[str, Any] | None = None,
              drop_headers: tuple[str, ...] = (), body: Any = None, query: str | None = None, **kw: Any) -> Exchange:
    """One MCP request. `header_version` / `meta_version` override the header and the `_meta` version separately
    (`...`: same as `version`; None: left out); `drop_headers` removes routing headers."""
    if body is None:
        body = p.mcp_request(method, params, id=id, version=version if meta_version is ... else meta_version,
                             capabilities=capabilities, progress_token=progress_token)
    hv = version if header_version is ... else header_version
    hdrs: dict[str, Any] = p.mcp_headers(method, version=hv, name=mcp_name)
    for name in drop_headers:
        hdrs.pop(name, None)
    hdrs.update(headers or {})
    path = ctx.agent_path("mcp", agent_id)
    if query is not None:
        encoded = quote(query, safe="")
        if encoded != query:
            ctx.client.redactor.add(encoded)  # the credential as it appears in the URL stays out of transcripts
        path += f"?{QUERY_CREDENTIAL_PARAM}={encoded}"
    return await ctx.post(path, body, label=label, credential=credential, headers=hdrs, **kw)


async def call_tool(ctx: Context, tool: str, prompt: str | None, *, label: str, session: str | None = None,
                    resume: Any = None, id: Any = 1, send_name: bool = True, extra_params: dict[str, Any] | None = None,
                    **kw: Any) -> Exchange:
    params = {"name": tool, "arguments": p.tool_arguments(prompt, session, resume), **(extra_params or {})}
    return await rpc(ctx, "tools/call", params, label=label, id=id, mcp_name=tool if send_name else None, **kw)


def _single_tool_name(ex: Exchange) -> str | None:
    try:
        tools = ex.json().get("result", {}).get("tools")
    except (AssertionError, AttributeError):
        return None
    if isinstance(tools, list) and len(tools) == 1 and isinstance(tools[0], dict) \
            and isinstance(tools[0].get("name"), str) and tools[0]["name"]:
        return tools[0]["name"]
    return None


async def tool_name(ctx: Context) -> str:
    """The agent's tool: learned once per run from `tools/list` (shared by every scenario), else from
    `--agent-slug`. A scenario that cannot name the tool cannot call it."""
    memo = ctx.session.__dict__.setdefault("_mcp_tool_memo", {})
    mine: concurrent.futures.Future = concurrent.futures.Future()
    found = memo.setdefault("found", mine)   # one lookup for every lane: a scenario on a lane of its own waits too
    if found is mine:
        asyncio.ensure_future(_settle(mine, ctx))
    name, why = await asyncio.shield(asyncio.wrap_future(found))
    if name is None:
        raise AssertionError(why)
    return name


async def _settle(found: concurrent.futures.Future, ctx: Context) -> None:
    try:
        found.set_result(await _lookup_tool(ctx))
    except BaseException as exc:  # noqa: BLE001 - the lanes waiting on it learn why, never hang
        found.set_result((None, f"the tool lookup did not finish ({type(exc).__name__})"))
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise


async def _lookup_tool(ctx: Context) -> tuple[str | None, str]:
    await ctx.after_preflight()
    ex = ctx.preflight(plain_call("mcp"))     # the preflight's plain call of MCP is this very tools/list
    if ex is None:
        ex = await ctx.client.send("POST", ctx.agent_path("mcp"), label="tool-lookup",
                                   headers={**ctx.bearer(), **p.mcp_headers("tools/list")},
                                   json=p.mcp_request("tools/list", id="tool-lookup"))
    name = _single_tool_name(ex)
    if name:
        return name, ""
    if ctx.target.agent_slug:
        return p.slug_tool_name(ctx.target.agent_slug), ""
    return None, (f"could not learn the tool name: tools/list answered {ex.status} without exactly one named tool, "
                  "and no --agent-slug was given")


async def listed_tool(ctx: Context) -> str | None:
    """The agent's tool for generated traffic, by the one resolver (`tool_name`); None where that one would raise:
    a generated scenario without the tool still sends its invoke and AG-UI traffic."""
    try:
        return await tool_name(ctx)
    except AssertionError:
        return None


# -- credentials and agent ids ----------------------------------------------------------------
def service_prefix(api_key: str | None) -> str:
    """The `<svc>` part of `<svc>_live_…`; a neutral stand-in when the key does not show it."""
    m = re.match(r"^(.+?)_live_.", api_key or "")
    return m.group(1) if m else "svc"


def unknown_credential(ctx: Context, kind: str, probe: str | None = None, form: str = "suite-made") -> str:
    """A credential of the right form that no server issued (`kind`: `live` or `oat`): the suite's own, shown in
    reports as it was sent; or one of no form of the service's (`foreign`: a JWT another authorization server
    issued, as an OAuth client may hold); or, for a `probe` and a `form` of `near_miss.FORMS`, the real one of its
    kind changed so that a server comparing credentials loosely takes it for the real one, masked in reports like the
    secret it is made from, how it was made noted in the recording's facts (`unknown_credentials`)."""
    if form == "foreign":
        return suite_made(f"{FOREIGN_JWT}.{ctx.made(kind, 43)}")
    fact = {"live": "api_key", "oat": "access_token"}[kind]
    secret = getattr(ctx.target, fact)
    if probe is None or form not in near_miss.FORMS or not secret:
        return suite_made(f"{service_prefix(ctx.target.api_key)}_{kind}_{ctx.made(kind)}")
    value = near_miss.make(fact, secret, form)
    ctx.client.redactor.add(value)
    ctx.session.redactor.add(value)
    ctx.recording.facts.setdefault("unknown_credentials", {})[probe] = near_miss.describe(near_miss.recipe_of(value))
    return value


# the header and claims of a JWT (base64url, RFC 7519) that another issuer signed: a bearer value of RFC 6750's
# b64token form that is neither `<svc>_live_…` nor `<svc>_oat_…` (its signature made per run)
FOREIGN_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
               ".eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIiwic3ViIjoiY29uZm9ybWFuY2UifQ")


def one_letter(ctx: Context, letters: str) -> str:
    """A key of one character, one of `letters` as the run's tag draws it."""
    return letters[int(ctx.made("letter", 8), 16) % len(letters)]


def random_agent(ctx: Context, prefix: str = "agt_") -> str:
    return prefix + "conf" + ctx.made("agent", 16)


async def optional(ctx: Context, label: str, facts: tuple[str, ...], send: Callable[[], Awaitable[Any]]) -> None:
    """Send a step that needs optional facts, or record why it was skipped."""
    try:
        for fact in facts:
            ctx.need(fact)
    except NotAssessed as exc:
        ctx.recording.facts.setdefault("skipped", {})[label] = str(exc)
        return
    await send()
