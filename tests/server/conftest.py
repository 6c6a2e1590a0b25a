from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conformance.server import ReferenceServer, ServerConfig


@pytest.fixture(scope="session")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer(ServerConfig(ping_interval=0.3)) as srv:
        yield srv


@pytest.fixture(scope="session")
def facts(server: ReferenceServer) -> dict[str, Any]:
    return server.facts


@pytest.fixture(scope="session")
def http(facts: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(verify=ssl.create_default_context(cafile=facts["ca_bundle"]), timeout=30.0) as client:
        yield client


@pytest.fixture(scope="session")
def auth(facts: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {facts['api_key']}"}


@pytest.fixture(scope="session")
def urls(facts: dict[str, Any]) -> dict[str, str]:
    base = f"{facts['base_url']}/v1/agents/{facts['agent_id']}"
    return {
        "invoke": base + "/invoke",
        "agui": base + "/agui",
        "mcp": base + "/mcp",
        "metadata": f"{facts['base_url']}/.well-known/oauth-protected-resource/v1/agents/{facts['agent_id']}/mcp",
    }
