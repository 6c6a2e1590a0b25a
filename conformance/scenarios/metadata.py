"""Sign-in metadata (RFC 9728): the document with and without credentials, 404s for agents that do not run, and
the `resource_metadata` URL of an MCP 401 followed to the document. No agent run."""
from __future__ import annotations

from urllib.parse import urlsplit

from conformance.engine import PREFLIGHT_METADATA, Context
from conformance.registry import scenario
from conformance.vocab.steps import metadata as steps
from conformance.vocab.challenges import challenge_params, metadata_url, url_under
from conformance.vocab.sending import call_tool, optional, random_agent, tool_name, unknown_credential


@scenario("metadata.document", protocol="metadata", steps=steps.METADATA_DOCUMENT)
async def document(ctx: Context) -> None:
    """GET the metadata without a credential (the preflight's GET of it, when there was one), with the API key and
    with an unknown bearer; GET it for an unknown, a malformed and the undeployed agent id; POST to it (the endpoint
    is GET only: a refusal that must use the error body); then the document (the other agent's, when given), the
    undeployed agent's and the POST again, in other forms."""
    path = ctx.metadata_path()
    await document_without_credential(ctx, steps.DOC)
    await ctx.send("GET", path, label=steps.DOC_KEY)
    await ctx.send("GET", path, label=steps.DOC_UNKNOWN_BEARER, credential=None,
                   headers={"Authorization": f"Bearer {unknown_credential(ctx, 'live')}"})
    await ctx.send("GET", ctx.metadata_path(random_agent(ctx)), label=steps.UNKNOWN_AGENT, credential=None)
    await ctx.send("GET", ctx.metadata_path(random_agent(ctx, "xyz_")), label=steps.MALFORMED_AGENT, credential=None)
    await optional(ctx, steps.UNDEPLOYED_AGENT, ("undeployed_agent_id",),
                   lambda: ctx.send("GET", ctx.metadata_path(ctx.need("undeployed_agent_id")),
                                    label=steps.UNDEPLOYED_AGENT, credential=None))
    await ctx.send("POST", path, label=steps.POST, credential=None, json={})
    # The probes of a request each, again in other forms: their faults show only on the requests that carry them, and
    # the rules over every exchange judge these as those (the checks here read the first). The document again is the
    # other agent's when there is one: its own, not the one just served (a cache keyed without the agent shows), with
    # a query string a client adds to pass a cache by (the document's `resource` is the MCP URL, no query of its own)
    undeployed, other = ctx.target.undeployed_agent_id, ctx.target.other_agent_id
    again = [("GET", (ctx.metadata_path(other) if other else path) + "?fresh=1", {}),
             *([("GET", ctx.metadata_path(undeployed), {})] if undeployed else []),
             ("POST", path, {"json": {}})]
    for n, (method, url, body) in enumerate(again, 1):
        await ctx.send(method, url, label=steps.AGAIN.of(n), credential=None, **body)


@scenario("metadata.challenge", protocol=("metadata", "mcp"), steps=steps.METADATA_CHALLENGE)
async def challenge(ctx: Context) -> None:
    """An MCP tools/call without a credential (401), then a GET of its challenge's `resource_metadata` URL when that
    URL lies under the base URL, compared after RFC 3986 normalization (the suite never follows a server to another
    host)."""
    tool = await tool_name(ctx)
    ex = await call_tool(ctx, tool, "say conformance", label=steps.CHALLENGE, id="challenge", credential=None)
    try:
        url = challenge_params(ex).get("resource_metadata")
    except AssertionError:
        return
    ctx.note(resource_metadata=url)
    if isinstance(url, str) and url_under(url, ctx.target.base_url):
        if url == metadata_url(ctx.target):   # the very document, spelled as the suite spells it: read once
            await document_without_credential(ctx, steps.FOLLOWED)
        else:
            await ctx.send("GET", url, label=steps.FOLLOWED, credential=None)


async def document_without_credential(ctx: Context, label: str) -> None:
    """The metadata document fetched without a credential, recorded as `label`: the preflight already did."""
    ex = ctx.preflight(PREFLIGHT_METADATA)
    if ex is not None and urlsplit(ex.url).path == ctx.metadata_path() and ex.method == "GET":
        ctx.keep(ex, label)
    else:
        await ctx.send("GET", ctx.metadata_path(), label=label, credential=None)
