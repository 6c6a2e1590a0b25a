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


def _variant() -> ServerConfig:
    from tests.selftest.variant import variant_config
    return variant_config()


def _variant_http2() -> ServerConfig:
    from tests.selftest.variant import variant_config
    return dataclasses.replace(variant_config(), http2=True)


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


SERVERS: dict[str, CorrectServer] = {s.name: s for s in (
    CorrectServer("reference", ServerConfig, doc="the reference server (conformance/server)"),
    CorrectServer("variant", _variant, doc="tests/selftest/variant.py: every silent choice made differently"),
    CorrectServer("reference-http2", lambda: ServerConfig(http2=True),
                  doc="the reference server serving HTTP/2 as well, on Hypercorn: the core scenarios run over both"),
    CorrectServer("variant-http2", _variant_http2,
                  doc="variant.py's choices served over HTTP/2 as well (Hypercorn)"),
    CorrectServer("agui-sse-starlette", _sse_starlette, {"AGUI-PING-003": "warning"},
                  "variant_agui.py: sse-starlette's `: ping - <timestamp>` keep-alive"),
    CorrectServer("agui-no-interrupt-ids", _no_interrupt_ids, {"AGUI-COMPAT-001": "warning"},
                  "variant_agui.py: a pause that lists no interrupt ids"),
    CorrectServer("inputs-lenient", _lenient,
                  doc="variant_inputs.py: reads what the spec leaves open in requests as leniently as it can"),
    CorrectServer("inputs-strict", _strict,
                  doc="variant_inputs.py: refuses what the spec leaves open in requests, with validation_failed"),
)}

WRONG = ("failed", "warning", "error")


def false_verdicts(server: CorrectServer, report: dict) -> list[str]:
    """`ID=status` for every requirement failed, warned or in error beyond what the server's design gives."""
    return [f"{r['id']}={r['status']}" for r in report["requirements"]
            if r["status"] in WRONG and server.by_design.get(r["id"]) != r["status"]]
