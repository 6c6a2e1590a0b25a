"""Wire layer: strict SSE recorder (`sse`), deadline-enforcing HTTP client (`http`) and what it records
(`exchange`), pacing (`pace`), redaction (`redact`), the SDK client bridge (`sdk`).

The names below are imported when first asked for: the reference server reads only `pace`, and importing the
package must not make it load the HTTP client (httpx, httpcore, h11) it never uses."""
from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "Exchange": "exchange", "Limits": "exchange",
    "Client": "http", "ClientStats": "http", "UNSET": "http",
    "MASK": "redact", "Redactor": "redact",
    "SSEComment": "sse", "SSEEvent": "sse", "SSERecorder": "sse", "StreamRecord": "sse", "parse_sse": "sse",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
