"""Correct servers that choose otherwise where HTTP leaves a request's form open.

- `length_required_config`: a body without a Content-Length (chunked) is refused 411 Length Required, as RFC 9110
  §15.5.12 lets a server (many proxies and some frameworks do): the suite sends such a request again with a
  Content-Length, and judges that answer.
"""
from __future__ import annotations

import json

from conformance.server import ServerConfig
from tests.selftest import asgi_tools as t


def length_required_config() -> ServerConfig:
    def wrap(app, facts):
        async def middleware(scope, receive, send):
            if scope.get("type") == "http" and scope.get("method") == "POST" \
                    and t.header(scope.get("headers") or [], b"content-length") is None:
                body = json.dumps({"error": {"code": "length_required", "message": "send a Content-Length",
                                             "requestId": "req_length_required"}}).encode()
                await send({"type": "http.response.start", "status": 411,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
            await app(scope, receive, send)
        return middleware
    return ServerConfig(wrap_app=wrap)
