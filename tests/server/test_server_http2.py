"""The reference server serving HTTP/2 as well (`ServerConfig.http2`: Hypercorn) answers HTTP/1.1 as uvicorn does."""
from __future__ import annotations

import ssl
from collections.abc import Iterator

import httpx
import pytest

from conformance.server import ReferenceServer, ServerConfig


@pytest.fixture(scope="module")
def hypercorn() -> Iterator[ReferenceServer]:
    with ReferenceServer(ServerConfig(http2=True)) as srv:
        yield srv


def test_an_http1_body_refused_before_it_was_read_is_read_on_so_the_answer_survives(hypercorn) -> None:
    """Hypercorn closes an HTTP/1.1 connection when an answer ends before the request's body was read, and the body
    still arriving turns that close into a reset that can destroy the answer before the client reads it (a 2 MB
    refusal was lost about once in 15). The server reads the body on instead, so the connection lives on."""
    facts = hypercorn.facts
    connects: list[str] = []

    def traced(event: str, info: dict) -> None:
        if event == "connection.connect_tcp.complete":
            connects.append(event)

    url = f"{facts['base_url']}/v1/agents/{facts['agent_id']}/agui"
    auth = {"Authorization": f"Bearer {facts['api_key']}", "Accept": "text/event-stream"}
    with httpx.Client(verify=ssl.create_default_context(cafile=facts["ca_bundle"]), timeout=30.0) as http:
        refused = http.post(url, json={"messages": [], "padding": "x" * 2 * 2**20}, headers=auth,
                            extensions={"trace": traced})
        after = http.get(f"{facts['base_url']}/.well-known/oauth-protected-resource/v1/agents/{facts['agent_id']}/mcp",
                         extensions={"trace": traced})
    assert refused.http_version == "HTTP/1.1" and refused.status_code == 413
    assert refused.json()["error"]["code"] == "payload_too_large"
    assert after.status_code == 200 and len(connects) == 1      # the refused request's connection was reused
