"""Configuration of the reference server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..wire.pace import parse_rate_limit
from .asgi import ASGIApp


# `conformance serve`'s bucket unless told otherwise: a default run (450 requests) never empties it, nor the rest of
# a --thorough run (about 860: at 600 its rows were held back to the refill, 10 s), and the 429 probe of a
# --thorough run reaches its 429 well inside --rate-probe-max's default, even on a slow machine.
SANDBOX_RATE_LIMIT = "1200/300s"


def rate_limit_fields(rate_limit: str) -> dict[str, float]:
    """ServerConfig fields for ``--rate-limit N/SECONDS``: a bucket of N requests refilled over SECONDS."""
    n, seconds = parse_rate_limit(rate_limit)
    return {"rate_limit_burst": n, "rate_limit_per_second": n / seconds}


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 0  # 0: the OS picks a free port
    ping_interval: float = 15.0  # AG-UI `: ping` while the agent is silent
    max_body_bytes: int = 1_000_000  # invoke, AG-UI and MCP request bodies
    max_extra_bytes: int = 4096  # invoke's extra data field, as canonical JSON (UTF-8 bytes)
    extra_data_field: str = "data"  # the spec does not name invoke's extra data field
    rate_limit_burst: int = 10_000
    rate_limit_per_second: float = 1_000.0
    validation_status: int = 400  # HTTP status of `validation_failed`
    seed: int | None = None  # deterministic ids and secrets when set
    auth_url: str | None = None  # default: {base_url}/oauth
    wrap_app: Callable[[ASGIApp, dict[str, Any]], ASGIApp] | None = None
    cert_dir: str | None = None  # where the CA and server certificate go; default: a temp dir removed on stop
    ca_path: str | None = None  # the CA PEM's path; default: {cert_dir}/ca.pem
    version_number: int = 1  # the agent version that runs
    shutdown_grace: float = 1.0  # seconds open streams get on stop before they are cancelled
    access_log: bool = False
    # HTTP/2 as well as HTTP/1.1, chosen by ALPN (on Hypercorn instead of uvicorn, which speaks HTTP/1.1 only)
    http2: bool = False
