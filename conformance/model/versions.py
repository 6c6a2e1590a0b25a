"""The HTTP versions of the model: which scenarios run again over HTTP/2 when the target offers it (the core, and every
scenario whose rules read request or response headers), which steps and scenarios stay on HTTP/1.1, and why. How a
run records the twins and judges a check over both versions: `conformance.versions`.
"""
from __future__ import annotations


TWIN = "@h2"
#: every scenario recorded over HTTP/2 too when the target picks h2, and what it brings there
HTTP2_SCENARIOS: dict[str, str] = {
    # the core scenarios: each protocol's answers and streams
    "invoke.runs": "invoke as JSON and as a stream, for every kind of run (text, tool call, step, failures)",
    "invoke.timing": "an invoke stream delivered as it is produced, not buffered until the end",
    "agui.plain": "the plain AG-UI stream",
    "agui.silence": "the 16 s AG-UI silence with its `: ping` comments",
    "mcp.modern": "MCP server/discover, tools/list and tools/call answered as JSON",
    "mcp.progress": "the MCP progress stream",
    "metadata.document": "the sign-in metadata document",
    "metadata.challenge": "the MCP 401 challenge and the metadata it names",
    # the rules that read request headers (and the headers of the answers to them)
    "invoke.selection": "invoke's choice between JSON and a stream by `stream` and `Accept`",
    "invoke.input_forms": "invoke with Content-Type and Accept in other legitimate forms",
    "agui.input_forms": "AG-UI with Content-Type in other legitimate forms",
    "mcp.input_forms": "MCP with Content-Type in other legitimate forms",
    "invoke.refusals": "invoke's refusals and their error bodies (a missing credential among them)",
    "agui.refusals": "AG-UI's refusals before any stream, with Accept: text/event-stream, and invoke's to the same",
    "access.invoke": "invoke's credential refusals (Authorization) and agent addressing",
    "access.agui": "AG-UI's credential refusals (Authorization) and agent addressing",
    "access.mcp": "MCP's credential refusals, each a 401 with its WWW-Authenticate challenge (or a 404)",
    "mcp.refusals": "MCP's refusals: versions and headers that do not match the body",
    "mcp.legacy": "the 2025-11-25 path, chosen by a request without MCP-Protocol-Version",
}
#: why a body over 1 MB is refused over HTTP/1.1 alone
BODY_OVER_1MB = ("a body over 1 MB: the suite's HTTP/2 client (httpcore) sends a whole body before it reads an answer, "
                 "so the early refusal a server may give (RFC 9113 §8.1) could not be recorded")
#: steps a twin does not send over HTTP/2 (a `*` pattern names a family), and why: their rules are judged over
#: HTTP/1.1 alone
HTTP1_ONLY_STEPS: dict[str, dict[str, str]] = {
    "invoke.refusals": {"body-over-1mb": BODY_OVER_1MB, "after-body-over-1mb": BODY_OVER_1MB},
    "agui.refusals": {"body-over-1mb": BODY_OVER_1MB},
    "mcp.input_forms": {"id-*": "the JSON-RPC id is in the body, not a header: its classes are judged over HTTP/1.1"},
}
#: scenarios whose rules touch headers that are recorded over HTTP/1.1 alone, and why
HTTP1_ONLY: dict[str, str] = {
    "invoke.cleartext": "it sends plain http:// on purpose, and HTTP/2 is offered only by ALPN, over TLS",
    "mcp.official_client": "the official MCP SDK's client speaks HTTP/1.1 only",
    "mcp.rate_limit": "the 429 probe spends the server's rate limit once; X-RateLimit-Remaining is read over "
                      "HTTP/2 on the answers of the twins",
    "agui.silence_long": "the 32 s silence is --thorough's; the 16 s one runs over HTTP/2 too",
    "fuzz.invoke": "generated requests are drawn per seed and sent once; the header rules they touch are judged over "
                   "HTTP/2 on the twins' scripted requests",
}
for _surface in ("agui", "mcp", "metadata"):
    HTTP1_ONLY[f"fuzz.{_surface}"] = HTTP1_ONLY["fuzz.invoke"]
#: why the other scenarios run over HTTP/1.1 alone
UNTWINNED = ("its rules read what a body, a history or a timing carries, which HTTP/2 carries as HTTP/1.1 does; each "
             "protocol's answers and streams are judged over HTTP/2 by the core scenarios")
#: each protocol's plain call over HTTP/2, (twin, step): what stands for the preflight's (sent over HTTP/1.1) when a
#: check is judged over HTTP/2 (`judging.gate_over_http2`, `judging.same_refusal`)
PLAIN_CALLS_OVER_HTTP2 = {"invoke": ("invoke.runs" + TWIN, "json-plain_reply"),
                          "agui": ("agui.plain" + TWIN, "ids"),
                          "mcp": ("mcp.modern" + TWIN, "list")}
