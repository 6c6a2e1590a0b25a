"""GET /.well-known/oauth-protected-resource/v1/agents/{agentId}/mcp: RFC 9728 metadata, no credential."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .asgi import Request, Send, dumps, send_bytes

if TYPE_CHECKING:
    from .app import Service

SCOPE = "agent:invoke"


def resource_url(service: Service, agent_id: str) -> str:
    return f"{service.base_url}/v1/agents/{agent_id}/mcp"


def metadata_url(service: Service, agent_id: str) -> str:
    return f"{service.base_url}/.well-known/oauth-protected-resource/v1/agents/{agent_id}/mcp"


async def handle(service: Service, req: Request, send: Send, agent_id: str) -> None:
    agent = service.agent(agent_id)
    if agent is None:
        await service.error(send, req, 404, "not_found", "No such agent.")
        return
    body = dumps({
        "resource": resource_url(service, agent.id),
        "authorization_servers": [service.auth_url],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
    })
    headers = [
        (b"content-type", b"application/json"),
        (b"cache-control", b"public, max-age=30"),
        (b"x-request-id", req.request_id.encode()),
    ]
    if req.method == "HEAD":
        await send({"type": "http.response.start", "status": 200,
                    "headers": headers + [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await send_bytes(send, 200, body, headers)
