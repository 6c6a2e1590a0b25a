"""Wire layer: strict SSE recorder, deadline-enforcing HTTP client, redaction."""

from .http import Client, ClientStats, Exchange, Limits, UNSET
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
