"""The refusals every protocol, mode and method must give, in the forms the access scenarios do not send them in:
a refused credential, a token bound to another agent, an agent that is not there, on a streamed invoke (by `stream`
and by `Accept`), an AG-UI run without Accept, and every MCP method (the 2025-11-25 handshake, `server/discover`,
`tools/list`, a `tools/call` with a progress token). No run starts; the rules over every exchange judge each answer
(`conformance.exchange_rules`), so no check names this scenario: it is recorded whenever those rules run.
"""
from __future__ import annotations

import asyncio
import json
import base64
from typing import Any

from conformance.engine import Context
from conformance.registry import scenario, swept
from conformance.outcomes import NotAssessed
from conformance.vocab import forms, inputs, protocols as p, requests as rq
from conformance.vocab.constants import BASIC_USER, MCP_DESCRIBING
from conformance.vocab.sending import random_agent, rpc, tool_name, unknown_credential
from conformance.vocab.steps import forms as steps

AT_ONCE = 8
WIDE = "\u6771"     # 東: three bytes of UTF-8, one character, one UTF-16 unit
NEEDS = {"revoked-key": ("revoked_key",), "expired-token": ("expired_token",),
         "other-agent-token": ("access_token", "other_agent_id"), "undeployed-agent": ("undeployed_agent_id",)}


def case_flipped(agent_id: str | None) -> str | None:
    """The target's agent id with the case of every letter after its `agt_` prefix flipped: another id (a URI's path
    is compared case-sensitively, RFC 3986 §6.2.2.1), so an agent no organization has; None when no letter flips."""
    if not agent_id:
        return None
    head = "agt_" if agent_id.startswith("agt_") else ""
    flipped = head + agent_id[len(head):].swapcase()
    return flipped if flipped != agent_id else None


def _refused(ctx: Context, kind: str, probe: str, first: bool = True
             ) -> tuple[str | None, dict[str, str], str | None] | None:
    """(credential fact, headers, agent id) of a refusal kind for the probe so labelled, or None when a fact it needs
    was not given. An unknown agent: a made one on a protocol's `first` probe, the target's in another letter case
    on the others. An unknown credential: the real one cut short on a protocol's `first` probe of its kind; on the
    others the real key with the case of its letters flipped, or a JWT of another issuer (a token) (the access
    scenarios send one with its middle changed, and the suite's own)."""
    for fact in NEEDS.get(kind, ()):
        if not getattr(ctx.target, fact, None):
            ctx.recording.facts.setdefault("skipped", {})[kind] = f"needs {ctx.target.option_for(fact)}"
            return None
    unknown = random_agent(ctx) if first else case_flipped(ctx.target.agent_id) or random_agent(ctx)
    agent = {"malformed-agent": random_agent(ctx, "xyz_"), "unknown-agent": unknown,
             "undeployed-agent": ctx.target.undeployed_agent_id,
             "other-agent-token": ctx.target.other_agent_id}.get(kind)
    if kind == "no-credential":     # on the others, the key in a header a gateway's key-auth reads, not Authorization
        return None, {} if first else {"X-API-Key": ctx.need("api_key")}, agent
    if kind == "empty-bearer":
        return None, {"Authorization": "Bearer"}, agent
    if kind == "basic-scheme":      # on the others, the key under another scheme (Rails' `Token`)
        token = base64.b64encode(f"{BASIC_USER}:{ctx.need('api_key')}".encode()).decode()
        return "api_key", {"Authorization": f"Basic {token}" if first else f"Token {ctx.need('api_key')}"}, agent
    if kind in ("unknown-key", "unknown-token"):
        made = unknown_credential(ctx, "live" if kind == "unknown-key" else "oat", probe,
                                  "cut-short" if first else "foreign" if kind == "unknown-token" else
                                  "prefix-swapped" if "@invoke" in probe else "case-flipped")
        return None, {"Authorization": f"Bearer {made}"}, agent
    fact = {"revoked-key": "revoked_key", "expired-token": "expired_token",
            "other-agent-token": "access_token"}.get(kind, "api_key")
    return fact, {}, agent


# what a browser's navigation asks for: HTML first, JSON only as any other type (RFC 9110 §12.5.1): a refusal still
# answers with the spec's error body, which the wildcard accepts
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


async def _invoke(ctx: Context, kind: str, form: str, prompt: str) -> None:
    label = steps.REFUSAL.of(f"{kind}@invoke-{form}")
    got = _refused(ctx, kind, label, form == steps.INVOKE_FORMS[0])
    if got is None:
        return
    credential, headers, agent = got
    body: dict[str, Any] = p.invoke_body(prompt, ctx.unique("form"))
    if form == "stream-field":
        body["stream"] = True
        if steps.KINDS.index(kind) % 2:     # a browser's Accept (JSON only by its */*): the error body all the same
            headers = {**headers, "Accept": BROWSER_ACCEPT}
    else:
        headers = {**headers, "Accept": p.SSE}
    await ctx.post(ctx.agent_path("invoke", agent), body, label=label, credential=credential, headers=headers)


async def _agui(ctx: Context, kind: str, prompt: str) -> None:
    label = steps.REFUSAL.of(f"{kind}@agui-no-accept")
    got = _refused(ctx, kind, label)
    if got is None:
        return
    credential, headers, agent = got
    await ctx.post(ctx.agent_path("agui", agent), p.agui_input(prompt, thread=ctx.unique("form")), label=label,
                   credential=credential, headers={**headers, "Accept": None})


async def _mcp(ctx: Context, kind: str, form: str, prompt: str, tool: str) -> None:
    if kind == "unknown-key" and steps.MCP_FORMS.index(form) % 2:   # MCP takes both credentials: unknown ones of each
        kind = "unknown-token"
    label = steps.REFUSAL.of(f"{kind}@{form}")
    got = _refused(ctx, kind, label, steps.MCP_FORMS.index(form) < 2)
    if got is None:
        return
    credential, headers, agent = got
    common = dict(label=label, credential=credential, headers=headers, agent_id=agent)
    if form == "initialize":
        init = {"protocolVersion": p.MCP_LEGACY_VERSION, "capabilities": {},
                "clientInfo": {"name": "conformance", "version": "1"}}
        await rpc(ctx, "initialize", init, id=label, version=None, **common)
    elif form in MCP_DESCRIBING:     # without a credential, tools/list goes as a notification (no id): refused too
        await rpc(ctx, form, id=None if kind == "no-credential" and form == "tools/list" else label, **common)
    else:
        params = {"name": tool, "arguments": p.tool_arguments(prompt, ctx.unique("form"))}
        await rpc(ctx, "tools/call", params, id=label, mcp_name=tool,
                  progress_token=ctx.unique(f"progress-{label}", echoed=True), **common)


# the requirements whose exchange rules each sweep scenario is sent for (`registry.needed_scenarios`)
REFUSAL_RULES = ("INV-ERR-002", "INV-ERR-003", "INV-ERR-004", "INV-ERR-005", "AGUI-ERR-001", "AGUI-ERR-002",
                 "AGUI-ERR-003", "MCP-VER-002", "MCP-VER-007", "GEN-ERR-001", "GEN-ERR-002", "GEN-ERR-003", "GEN-ERR-004", "GEN-ERR-005", "INV-ERR-001",
                 "AGUI-ERR-005", "MCP-ERR-001", "MCP-ERR-002", "MCP-METH-005", "AUTH-KEY-002", "AUTH-KEY-003",
                 "AUTH-KEY-004", "AUTH-KEY-005", "AUTH-KEY-006", "AUTH-BIND-001", "AUTH-MCP-002", "AUTH-MCP-003",
                 "AUTH-MCP-004", "AUTH-MCP-005", "AUTH-MCP-006", "AUTH-MCP-007", "AUTH-MCP-008", "AUTH-MCP-009",
                 "GEN-AGENT-001", "GEN-AGENT-002", "GEN-AGENT-003", "GEN-AGENT-004", "GEN-AGENT-005",
                 "GEN-AGENT-006")
LIMIT_RULES = ("INV-SESS-003", "INV-SESS-006", "AGUI-ID-001", "AGUI-SESS-004", "MCP-SESS-003", "INV-RES-001",
               "AGUI-FRAME-001", "MCP-VER-001", "INV-LIM-002", "AGUI-LIM-002", "MCP-HDR-001", "MCP-HDR-002",
               "MCP-HDR-003", "GEN-ERR-001", "MCP-ERR-001")


def _invalid(ctx: Context, protocol: str, what: str, prompt: str, tool: str | None):
    """One invalid request every form of which is refused (`steps.INVALID`, `AGUI_INVALID`, `MCP_INVALID`)."""
    label = steps.REFUSAL.of(f"{what}@{protocol}")
    path = ctx.agent_path(protocol)
    if protocol == "invoke":
        field = ctx.target.extra_data_field
        body = {"two-invalid-fields": {"prompt": 42, "stream": "yes"},
                "prompt-missing": {"sessionId": ctx.unique("form")}, "json-string": prompt}
        if what == "extra-data-streamed":   # the 4 KB limit holds on every mode and for any JSON value
            if not field:
                return None
            body[what] = p.invoke_body(prompt, ctx.unique("form"), stream=True, **{field: ["y" * 8_000]})
        if what == "not-json":      # and not said to be JSON: refused either way, with the error body
            return ctx.post(path, content=b'{"prompt": "say conformance", ', label=label,
                            headers={"Content-Type": "text/plain"})
        return ctx.post(path, body[what], label=label)
    if protocol == "agui":
        messages = {"no-messages": None, "empty-messages": [],
                    "assistant-only": [p.agui_message("x", role="assistant", msg_id="a1")]}[what]
        body = {"threadId": ctx.unique("form")} if messages is None else p.agui_input(messages=messages)
        return ctx.post(path, body, label=label)
    if what == "initialize-unsupported":
        init = {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "conformance", "version": "1"}}
        return rpc(ctx, "initialize", init, id=label, version=None, label=label)
    params = {"name": tool, "arguments": p.tool_arguments(prompt, ctx.unique("form"))}
    # a version newer than any the service speaks (mcp.refusals sends an older one): refused, not served as the latest
    return rpc(ctx, "tools/call", params, id=label, mcp_name=tool, version="2099-01-01", label=label)


async def _refusals(ctx: Context, protocol: str) -> None:
    prompt = ctx.prompt("plain_reply")
    if protocol == "invoke":
        sends = [_invoke(ctx, kind, form, prompt) for kind in steps.KINDS for form in steps.INVOKE_FORMS]
        sends += [send for what in steps.INVALID if (send := _invalid(ctx, protocol, what, prompt, None))]
    elif protocol == "agui":
        sends = [_agui(ctx, kind, prompt) for kind in steps.KINDS]
        sends += [_invalid(ctx, protocol, what, prompt, None) for what in steps.AGUI_INVALID]
    else:
        tool = await tool_name(ctx)
        sends = [_mcp(ctx, kind, form, prompt, tool) for kind in steps.MCP_KINDS for form in steps.MCP_FORMS]
        sends += [_invalid(ctx, protocol, what, prompt, tool) for what in steps.MCP_INVALID]
    for start in range(0, len(sends), AT_ONCE):       # a round trip each is long over a real network
        await asyncio.gather(*sends[start:start + AT_ONCE])


def _register_refusals(protocol: str, forms: str) -> None:
    async def refusals(ctx: Context) -> None:
        await _refusals(ctx, protocol)
    refusals.__doc__ = (f"Every refusal kind {protocol} must give, in the forms the access scenarios leave out "
                        f"({forms}): no run starts; the rules over every exchange judge each answer.")
    scenario(f"forms.{protocol}_refusals", protocol=protocol, prompts=("plain_reply",), steps=steps.FORMS_REFUSALS,
             sweep=REFUSAL_RULES, late=True)(refusals)


_register_refusals("invoke", "streamed by `stream: true` and by `Accept`")
_register_refusals("agui", "without Accept")
_register_refusals("mcp", "initialize, server/discover, tools/list, tools/call with a progress token")


def length_key(ctx: Context, kind: str) -> str:
    """A session key of one length class (`steps.KEY_CLASSES`): inside or outside 1 to 256 by code points and by
    UTF-16 units alike, on the other side by the unit a server may count instead. Its stem is plain: a character of
    a key's kinds outside the BMP would put the key on the open side (code points and UTF-16 units disagreeing)."""
    stem = ctx.unique(f"len-{kind}", plain=True) + "-"
    if kind == "astral-inside":        # 2 UTF-16 units, 4 bytes each: inside by both counts, 600+ bytes
        return stem + "😀" * ((256 - len(stem)) // 2)
    if kind == "nfc-expands-inside":   # U+0958 decomposes under NFC (a composition exclusion): 2 code points each
        return stem + "\u0958" * (256 - len(stem))
    if kind == "astral-outside":       # 257 code points, over 500 UTF-16 units
        return stem + "😀" * (257 - len(stem))
    # 257 code points that are 129 graphemes or so: e + U+0301 pairs
    pairs = (257 - len(stem)) // 2
    return stem + "e\u0301" * pairs + "e" * (257 - len(stem) - 2 * pairs)


async def _limits(ctx: Context, protocol: str) -> None:
    prompt = ctx.prompt("plain_reply")
    sends = []
    if protocol == "mcp":
        tool = await tool_name(ctx)
        for kind, inside in steps.KEY_CLASSES:
            if inside and all(inputs.is_sent(c) for c in steps.KEY_CLASS_INPUTS[kind]):
                params = {"name": tool, "arguments": p.tool_arguments(prompt, length_key(ctx, kind))}
                sends.append(rpc(ctx, "tools/call", params, id=f"key-{kind}", mcp_name=tool,
                                 label=steps.KEY.of(f"{kind}@mcp")))
        # each comparison on another method: a server that compares on tools/call alone meets one elsewhere
        call = {"name": tool, "arguments": p.tool_arguments(prompt, ctx.unique("hdr"))}
        sends.append(rpc(ctx, "tools/list", id="hdr-method-case", label=steps.HEADERS.of("method-case"),
                         headers={"Mcp-Method": "Tools/List"}))
        sends.append(rpc(ctx, "tools/call", call, id="hdr-name-case", mcp_name=tool,
                         label=steps.HEADERS.of("name-case"), headers={"Mcp-Name": tool.upper()}))
        sends.append(rpc(ctx, "tools/call", call, id="hdr-version-space", mcp_name=tool,
                         label=steps.HEADERS.of("meta-version-space"), meta_version=p.MCP_VERSION + " "))
    else:
        path = ctx.agent_path(protocol)
        for kind, _ in steps.KEY_CLASSES:
            if not all(inputs.is_sent(c) for c in steps.KEY_CLASS_INPUTS[kind]):
                continue     # a test withholds the classes this probe carries
            key = length_key(ctx, kind)
            body = p.invoke_body(prompt, key) if protocol == "invoke" else p.agui_input(prompt, thread=key)
            sends.append(ctx.post(path, body, label=steps.KEY.of(f"{kind}@{protocol}")))
        # over the limit in UTF-8 bytes, well under it in characters: a limit counted in characters lets it through
        big = WIDE * (rq.BODY_OVER_LIMIT // len(WIDE.encode()))
        body = p.invoke_body(big) if protocol == "invoke" else p.agui_input(big)
        if ctx.sends(steps.BIG.of(protocol)):
            sends.append(ctx.post(path, body, label=steps.BIG.of(protocol),
                                  form={"body-framing": "chunked", "json-writing": "compact"}))
    for start in range(0, len(sends), AT_ONCE):
        await asyncio.gather(*sends[start:start + AT_ONCE])


def _register_limits(protocol: str, what: str) -> None:
    async def limits(ctx: Context) -> None:
        await _limits(ctx, protocol)
    limits.__doc__ = f"Lengths and comparisons in the units and forms a server may get wrong, over {protocol}: {what}."
    scenario(f"forms.{protocol}_limits", protocol=protocol, prompts=("plain_reply",), steps=steps.FORMS_LIMITS,
             sweep=LIMIT_RULES, late=True)(limits)


_register_limits("invoke", "session keys inside or outside 1 to 256 by every count but on the other side by UTF-8 "
                           "bytes, graphemes or after NFC; a body of 1.25 MB sent chunked, in characters of three "
                           "bytes (416,666 characters: under a limit counted in characters)")
_register_limits("agui", "the same keys as threadId; the same body of 1.25 MB sent chunked")
_register_limits("mcp", "the keys inside as session_id; headers that differ from the body only in letter case "
                        "(on tools/list and tools/call), a `_meta` version with a trailing space")


# -- --thorough: every three free values of distinct dimensions met on one request -------------------------------
TRIPLE_OPERATIONS = ("invoke", "agui", "mcp", "metadata")
TRIPLE_AT_ONCE = 24     # the rows of every operation go together, after the rest of the run and before the 429 probe


def _row_request(ctx: Context, operation: str, n: int, row: dict[str, str], tool: str | None):
    """One plain request of `operation` in the free form `row`, its answer judged by the rules over every
    exchange."""
    label = steps.TRIPLE.of(f"{operation}-{n}")
    if operation == "metadata":
        return ctx.send("GET", ctx.metadata_path(), label=label, credential=None, form=row)
    if operation == "mcp" and row.get("mcp-credential") == "access-token":    # drawn only where no session reads it
        return rpc(ctx, "tools/list", id=n, label=label, form=row)
    key = f"{ctx.unique('tri', plain=True)}/\u2713"    # a `/` and a character beyond ASCII: for every writing to escape
    prompt = ctx.prompt("plain_reply")
    if operation == "mcp":
        return rpc(ctx, "tools/call", {"name": tool, "arguments": p.tool_arguments(prompt, key)}, id=n,
                   mcp_name=tool, label=label, form=row)
    if operation == "agui":     # the event stream accepted, as the AG-UI scenarios send
        return ctx.post(ctx.agent_path("agui"), p.agui_input(prompt, thread=key), label=label, form=row,
                        headers={"Accept": p.SSE})
    # an invoke as built sends no Accept
    return ctx.post(ctx.agent_path("invoke"), p.invoke_body(prompt, key), label=label, form=row,
                    headers={"accept": None} if row.get("accept-form") == "as-built" else {})


@scenario("forms.triples", protocol=TRIPLE_OPERATIONS, last=True, prompts=("plain_reply",),
          steps=steps.FORMS_TRIPLES, sweep=("INV-RES-001", "AGUI-FRAME-001", "MCP-VER-001", "META-DOC-001"))
async def triples(ctx: Context) -> None:
    """With --thorough only, once the other scenarios sent theirs: plain requests of every operation whose free
    forms are the rows of a covering array (`forms.covering_rows`) of the triples of free values no answered request
    of that operation carried yet (a refusal too: the rules of refusals judge it), so every three values of distinct
    free dimensions meet on one request; the rules over every exchange judge them."""
    if not ctx.target.thorough:
        raise NotAssessed("the covering arrays of triples run only with --thorough")
    met: dict[str | None, set[forms.Tuple]] = {}     # operation -> what the run's answered requests of it carried
    for rec in ctx.session.recorded():
        for ex in rec.exchanges:
            if ex.status is not None:
                values = forms.read(ex, rec.target)
                met.setdefault(values.get("operation"), set()).update(forms.tuples_of(values, forms.COVERING_STRENGTH))
    operations = swept(ctx.scenario, ctx.session.checks)
    sends = []
    tool = await tool_name(ctx) if "mcp" in operations else None
    for operation in operations:
        rows = await asyncio.to_thread(forms.covering_rows, ctx.target.seed, operation,    # CPU: off the loop
                                       met.get(operation, set()))
        ctx.note(**{f"rows_{operation}": len(rows)})
        sends += [_row_request(ctx, operation, n + 1, row, tool) for n, row in enumerate(rows)]
    for start in range(0, len(sends), TRIPLE_AT_ONCE):
        await asyncio.gather(*sends[start:start + TRIPLE_AT_ONCE])
