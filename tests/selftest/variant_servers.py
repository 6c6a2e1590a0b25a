"""Every correct server of the repository, by name: the reference server and each different-but-correct variant,
with the statuses its design allows (a variant that trips one SHOULD on purpose names it).

A full default run of any of them, under any seed, must give no failed, warning or error requirement other than
the ones listed here: anything else is a false verdict of the suite (`bench/bench_false_failures.py`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

from conformance.server import ServerConfig


@dataclass(frozen=True)
class CorrectServer:
    name: str
    config: Callable[[], ServerConfig]
    by_design: dict[str, str] = field(default_factory=dict)    # requirement -> the status its choice gives
    doc: str = ""
    agent: tuple[str, ...] = ()    # how its deployed agent is off its contract: what report.json `agent` names


def _variant() -> ServerConfig:
    from tests.selftest.variant import variant_config
    return variant_config()


def _variant_http2() -> ServerConfig:
    from tests.selftest.variant import variant_config
    return dataclasses.replace(variant_config(), http2=True)


def _go_fronted_http2() -> ServerConfig:
    from tests.selftest.fronts import answers_cleartext, port_of

    def fronted(app, facts):
        facts["base_url"] = app.base_url = f"https://127.0.0.1:{answers_cleartext(port_of(facts['base_url']))}"
        return app      # the service names its public address (the front's) in its metadata, as behind any proxy
    return ServerConfig(http2=True, wrap_app=fronted)


def _sse_starlette() -> ServerConfig:
    from tests.selftest.variant_agui import sse_starlette_config
    return sse_starlette_config()


def _no_interrupt_ids() -> ServerConfig:
    from tests.selftest.variant_agui import no_interrupt_ids_config
    return no_interrupt_ids_config()


def _lenient() -> ServerConfig:
    from tests.selftest.variant_inputs import lenient_config
    return lenient_config()


def _strict() -> ServerConfig:
    from tests.selftest.variant_inputs import strict_config
    return strict_config()


def _own_message_shape() -> ServerConfig:
    from tests.selftest.variant_inputs import own_message_shape_config
    return own_message_shape_config()


def _mcp_sdk(name: str) -> Callable[[], ServerConfig]:
    def config() -> ServerConfig:
        from tests.selftest import variant_mcp_sdk
        return getattr(variant_mcp_sdk, f"{name}_config")()
    return config


def _escaped() -> ServerConfig:
    from tests.selftest.variant_input_classes import escaped_config
    return escaped_config()


def _negotiating() -> ServerConfig:
    from tests.selftest.variant_input_classes import negotiating_config
    return negotiating_config()


def _serialised() -> ServerConfig:
    from tests.selftest.variant_sequences import serialised_config
    return serialised_config()


def _agent(name: str) -> Callable[[], ServerConfig]:
    def config() -> ServerConfig:
        from tests.selftest.variant_agents import AGENTS
        return AGENTS[name]()
    return config


def _coarse_clock() -> ServerConfig:
    from tests.selftest.variant_sequences import coarse_clock_config
    return coarse_clock_config()


def _ticker() -> ServerConfig:
    from tests.selftest.variant_silences import ticker_config
    return ticker_config()


def _late_headers() -> ServerConfig:
    from tests.selftest.variant_silences import late_headers_config
    return late_headers_config()


def _gzip() -> ServerConfig:
    from tests.selftest.variant_forms import gzip_config
    return gzip_config()


def _not_acceptable() -> ServerConfig:
    from tests.selftest.variant_forms import not_acceptable_config
    return not_acceptable_config()


def _tokens_refused_on_runs() -> ServerConfig:
    from tests.selftest.variant_forms import tokens_refused_on_runs_config
    return tokens_refused_on_runs_config()


def _length_required() -> ServerConfig:
    from tests.selftest.variant_forms import length_required_config
    return length_required_config()


SERVERS: dict[str, CorrectServer] = {s.name: s for s in (
    CorrectServer("reference", ServerConfig, doc="the reference server (conformance/server)"),
    CorrectServer("variant", _variant, doc="tests/selftest/variant.py: every silent choice made differently"),
    CorrectServer("reference-http2", lambda: ServerConfig(http2=True),
                  doc="the reference server serving HTTP/2 as well, on Hypercorn: the core scenarios run over both"),
    CorrectServer("variant-http2", _variant_http2,
                  doc="variant.py's choices served over HTTP/2 as well (Hypercorn)"),
    CorrectServer("http2-go-cleartext-answer", _go_fronted_http2,
                  doc="the reference server over HTTP/2 behind a TLS port that answers a cleartext request as Go's "
                      "net/http does (`HTTP/1.0 400`): that exchange is explained, not judged as a version"),
    CorrectServer("agui-sse-starlette", _sse_starlette, {"AGUI-PING-003": "warning"},
                  "variant_agui.py: sse-starlette's `: ping - <timestamp>` keep-alive"),
    CorrectServer("agui-no-interrupt-ids", _no_interrupt_ids, {"AGUI-COMPAT-001": "warning"},
                  "variant_agui.py: a pause that lists no interrupt ids"),
    CorrectServer("inputs-lenient", _lenient,
                  doc="variant_inputs.py: reads what the spec leaves open in requests as leniently as it can"),
    CorrectServer("inputs-strict", _strict,
                  doc="variant_inputs.py: refuses what the spec leaves open in requests, with validation_failed"),
    CorrectServer("inputs-invoke-messages-own-shape", _own_message_shape,
                  doc="variant_inputs.py: invoke `messages` items of its own shape (`{author, text}`): every "
                      "conversation the suite sends is refused validation_failed"),
    CorrectServer("mcp-input-errors-as-results", _mcp_sdk("input_errors_as_results"),
                  doc="variant_mcp_sdk.py: arguments the tool cannot take answered as an isError tool result "
                      "(SEP-1303, the official SDKs)"),
    CorrectServer("mcp-streams-every-answer", _mcp_sdk("streams_every_answer"),
                  doc="variant_mcp_sdk.py: every JSON-RPC answer as an event stream when Accept allows one (the "
                      "TypeScript SDK's default)"),
    CorrectServer("mcp-missing-header-code-32020", _mcp_sdk("missing_header_code"),
                  doc="variant_mcp_sdk.py: a missing Mcp-Method or MCP-Protocol-Version answered 400/-32020 "
                      "(MCP 2026-07-28's HeaderMismatch)"),
    CorrectServer("inputs-escaped", _escaped,
                  doc="variant_input_classes.py: ASCII-escaped JSON out, lengths in UTF-16 units, extra data as "
                      "escaped JSON"),
    CorrectServer("inputs-negotiating", _negotiating,
                  doc="variant_input_classes.py: Accept and Content-Type negotiated by RFC 9110 (MCP 406 without both "
                      "types, JSON for */*, charset utf-8 only)"),
    CorrectServer("sessions-serialised", _serialised,
                  doc="variant_sequences.py: one call at a time per session, a resumed MCP result holding only what "
                      "follows the question, a resume where no run waits answered as a failed run"),
    CorrectServer("durations-coarse", _coarse_clock,
                  doc="variant_sequences.py: durationMs in whole seconds, SSE comments every second of silence"),
    CorrectServer("silences-ping-ticker", _ticker,
                  doc="variant_silences.py: an AG-UI `: ping` every 15 s from the stream's start, frames or not"),
    CorrectServer("forms-length-required", _length_required,
                  doc="variant_forms.py: a chunked body refused 411 Length Required (RFC 9110 §15.5.12): sent again "
                      "with a Content-Length"),
    CorrectServer("forms-not-acceptable", _not_acceptable,
                  doc="variant_forms.py: a `stream: true` invoke whose Accept admits no event stream refused 406 Not "
                      "Acceptable (RFC 9110 §12.5.1): sent again with the Accept as built"),
    CorrectServer("forms-tokens-refused-on-runs", _tokens_refused_on_runs,
                  doc="variant_forms.py: invoke and AG-UI refuse the access token 401 (AUTH-OPEN-001 leaves it "
                      "open): a run the suite gave the token goes again with the API key"),
    CorrectServer("forms-gzip", _gzip,
                  doc="variant_forms.py: every answer compressed (zstd, br or gzip) when Accept-Encoding takes it, "
                      "event streams flushed frame by frame"),
    CorrectServer("silences-late-headers", _late_headers,
                  doc="variant_silences.py: invoke and MCP streams send their headers with their first frame"),
    # A correct service whose deployed agent is off its contract (variant_agents.py): what the agent hides is not
    # assessed, never failed, and the report names the agent.
    CorrectServer("agent-counts-resumes", _agent("counts-resumes"), agent=("counts a resumed run again",),
                  doc="variant_agents.py: `count` counts a resumed run as a run of its own"),
    CorrectServer("agent-counts-from-zero", _agent("counts-from-zero"), agent=("counts from 0",),
                  doc="variant_agents.py: `count` reports the runs before this one"),
    CorrectServer("agent-json-other-form", _agent("json-other-form"),
                  agent=("writes JSON in another form than the canonical one",
                         "writes the answer of a resume in another form"),
                  doc="variant_agents.py: echo, tool results and the answer of a resume as JSON with keys in the "
                      "order received, spaces and \\u escapes"),
    CorrectServer("agent-messages-indented", _agent("messages-indented"),
                  agent=("writes JSON in another form than the canonical one",),
                  doc="variant_agents.py: `echo messages` pretty-printed over several lines"),
    CorrectServer("agent-chunks-shorter-first", _agent("chunks-shorter-first"),
                  doc="variant_agents.py: `chunks` splits with the shorter pieces first (the pieces are never read "
                      "one by one, so nothing names it)"),
    CorrectServer("agent-answer-other-prefix", _agent("answer-other-prefix"),
                  agent=("writes the answer of a resume in another form",),
                  doc="variant_agents.py: a resumed run starts `Answer: ` and the answer as spaced JSON"),
)}

WRONG = ("failed", "warning", "error")


def false_verdicts(server: CorrectServer, report: dict) -> list[str]:
    """`ID=status` for every requirement failed, warned or in error beyond what the server's design gives, and
    `agent=…` when the report names the agent otherwise than the server's design (a way it is off its contract that
    it is not, or one it is that goes unnamed)."""
    wrong = [f"{r['id']}={r['status']}" for r in report["requirements"]
             if r["status"] in WRONG and server.by_design.get(r["id"]) != r["status"]]
    named = {way["way"] for way in (report.get("agent") or {}).get("deviations") or ()}
    if "agent" in report and named != set(server.agent):
        wrong.append(f"agent={'; '.join(sorted(named)) or 'no-deviation-seen'}")
    return wrong
