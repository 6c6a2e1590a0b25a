"""The reference service as one ASGI app: routing, credentials, rate limit and error bodies.

Every protocol decision lives in this app (reachable through ASGI), so a
``wrap_app`` hook can put middleware in front of it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from . import agui, invoke, mcp, metadata
from .agent import Interpreter
from .asgi import BadJSON, ClientGone, Receive, Request, Scope, Send, loads, send_json
from .config import ServerConfig
from .org import Agent, Credential, Organization
from .refusal import Refusal

log = logging.getLogger("conformance.server")

_AGENT_PREFIX = "/v1/agents/"
_METADATA_PREFIX = "/.well-known/oauth-protected-resource/v1/agents/"


@dataclass
class Gate:
    """What a request that passed the credential, rate-limit and agent checks carries on."""

    agent: Agent
    credential: Credential
    headers: list[tuple[bytes, bytes]]  # X-Request-Id and X-RateLimit-Remaining


class Service:
    def __init__(self, config: ServerConfig, org: Organization, facts: dict[str, Any]) -> None:
        self.config = config
        self.org = org
        self.facts = facts
        self.base_url: str = facts["base_url"]
        self.auth_url: str = facts["auth_url"]
        self.interpreter = Interpreter()   # the deployed agent: the conformance agent (a test server may plug another)

    # --- ASGI -------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _lifespan(receive, send)
            return
        if kind != "http":
            return
        started = False

        async def tracked_send(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        req = Request(scope, receive)
        try:
            await self.route(req, tracked_send)
        except ClientGone:
            return
        except Exception:  # noqa: BLE001 - last resort: a refusal, never a crash
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await self.error(tracked_send, req, 500, "internal", "Internal error.")

    async def route(self, req: Request, send: Send) -> None:
        path: str = req.scope["path"]
        method = req.method
        if path.startswith(_AGENT_PREFIX):
            agent_id, _, op = path[len(_AGENT_PREFIX) :].partition("/")
            if agent_id and op in ("invoke", "agui", "mcp"):
                if op == "mcp":
                    await mcp.handle(self, req, send, agent_id)
                    return
                if method != "POST":
                    await self.error(send, req, 405, "method_not_allowed", "Use POST.", headers=[(b"allow", b"POST")])
                    return
                if op == "invoke":
                    await invoke.handle(self, req, send, agent_id)
                else:
                    await agui.handle(self, req, send, agent_id)
                return
        elif path.startswith(_METADATA_PREFIX):
            agent_id, _, rest = path[len(_METADATA_PREFIX) :].partition("/")
            if agent_id and rest == "mcp":
                if method not in ("GET", "HEAD"):
                    await self.error(
                        send, req, 405, "method_not_allowed", "Use GET.", headers=[(b"allow", b"GET, HEAD")]
                    )
                    return
                await metadata.handle(self, req, send, agent_id)
                return
        await self.error(send, req, 404, "not_found", "No such resource.")

    # --- shared decisions ----------------------------------------------------

    def agent(self, agent_id: str) -> Agent | None:
        agent = self.org.agents.get(agent_id)
        if agent is None or not agent.deployed:
            return None
        return agent

    def bearer(self, req: Request) -> str | None:
        """The bearer credential of the Authorization header; None when absent or malformed."""
        raw = req.headers.get("authorization")
        if raw is None or req.header_count(b"authorization") != 1:
            return None
        scheme, _, token = raw.partition(" ")
        if scheme.lower() != "bearer" or not token or " " in token.strip():
            return None
        return token.strip()

    def gate(self, req: Request, agent_id: str) -> Gate:
        """Credential, then rate limit, then the agent; raises Refusal."""
        base = [(b"x-request-id", req.request_id.encode())]
        secret = self.bearer(req)
        cred = self.org.credential(secret) if secret else None
        if cred is None or not cred.usable():
            remaining = self.org.bucket.remaining()
            if secret is None:
                message = "A bearer credential is required in the Authorization header."
            elif cred is None:
                message = "The credential is not known."
            elif cred.revoked:
                message = "The credential has been revoked."
            else:
                message = "The credential has expired."
            raise Refusal(401, "unauthenticated", message,
                          headers=base + [(b"x-ratelimit-remaining", str(remaining).encode())])
        allowed, remaining, retry_after = self.org.bucket.take()
        headers = base + [(b"x-ratelimit-remaining", str(remaining).encode())]
        if not allowed:
            raise Refusal(429, "rate_limited", f"Too many requests; retry in {retry_after} s.",
                          headers=headers + [(b"retry-after", str(retry_after).encode())])
        agent = self.agent(agent_id)
        if agent is None or (cred.agent_id is not None and cred.agent_id != agent.id):
            raise Refusal(404, "not_found", "No such agent in this organization.", headers=headers)
        return Gate(agent, cred, headers)

    async def error(
        self,
        send: Send,
        req: Request,
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        body: dict[str, Any] = {"code": code, "message": message, "requestId": req.request_id}
        if details is not None:
            body["details"] = details
        hdrs = list(headers or [])
        if not any(k == b"x-request-id" for k, _ in hdrs):
            hdrs.append((b"x-request-id", req.request_id.encode()))
        if status == 401 and not any(k == b"www-authenticate" for k, _ in hdrs):
            hdrs.append((b"www-authenticate", b"Bearer"))
        await send_json(send, status, {"error": body}, hdrs)

    async def refuse(self, send: Send, req: Request, refusal: Refusal) -> None:
        await self.error(send, req, refusal.status, refusal.code, refusal.message, refusal.details, refusal.headers)

    async def json_object(self, req: Request, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
        """The request body as a JSON object (invoke, AG-UI); raises Refusal before anything runs."""
        if req.media_type() != "application/json":
            raise Refusal(415, "unsupported_media_type", "Content-Type must be application/json.", headers=headers)
        limit = self.config.max_body_bytes
        body = await req.read_body(limit)
        if body is None:
            raise Refusal(413, "payload_too_large", f"The body is over {limit} bytes.", headers=headers)
        try:
            value = loads(body)
        except BadJSON as exc:
            raise Refusal(400, "invalid_request", str(exc), headers=headers) from None
        if not isinstance(value, dict):
            raise Refusal(400, "invalid_request", "The body must be a JSON object.", headers=headers)
        return value

    def validation_failed(self, errors: list[tuple[str, str]], headers: list[tuple[bytes, bytes]]) -> Refusal:
        return Refusal(
            self.config.validation_status,
            "validation_failed",
            "; ".join(f"{f}: {m}" for f, m in errors),
            details={"errors": [{"field": f, "message": m} for f, m in errors]},
            headers=headers,
        )


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_app(config: ServerConfig, org: Organization, facts: dict[str, Any]) -> Service:
    return Service(config, org, facts)
