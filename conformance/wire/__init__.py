"""Wire layer: strict SSE recorder (`sse`), deadline-enforcing HTTP client (`http`) and what it records
(`exchange`), pacing (`pace`), redaction (`redact`), the SDK client bridge (`sdk`)."""

from .exchange import Exchange, Limits
from .http import Client, ClientStats, UNSET
from .redact import MASK, Redactor
from .sse import SSEComment, SSEEvent, SSERecorder, StreamRecord, parse_sse

__all__ = [
    "Client",
    "ClientStats",
    "Exchange",
    "Limits",
    "UNSET",
    "MASK",
    "Redactor",
    "SSEComment",
    "SSEEvent",
    "SSERecorder",
    "StreamRecord",
    "parse_sse",
]
