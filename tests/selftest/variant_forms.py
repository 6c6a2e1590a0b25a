"""Correct servers that choose otherwise where HTTP leaves a request's form open.

- `length_required_config`: a body without a Content-Length (chunked) is refused 411 Length Required, as RFC 9110
  §15.5.12 lets a server (many proxies and some frameworks do): the suite sends such a request again with a
  Content-Length, and judges that answer.
- `not_acceptable_config`: a `stream: true` invoke whose Accept admits no event stream is refused 406 Not
  Acceptable, as RFC 9110 §12.5.1 lets a server that honours Accept: the suite sends it again with the Accept it
  built (none), and judges that answer.
- `gzip_config`: every answer compressed when the request's Accept-Encoding takes a coding (RFC 9110 §12.5.3),
  zstd first, then br, then gzip (Caddy's `encode zstd gzip` order; on AG-UI and MCP br first, as Node's
  `compression` prefers it), event
  streams too, flushed frame by frame (as Caddy's `encode`, or nginx's `gzip` with its buffer flushed): the suite
  reads the answers decoded, the frames when they come.
- `tokens_refused_on_runs_config`: invoke and AG-UI take the API key alone, refusing an access token 401
  `unauthenticated` (whether they take one is not shown, AUTH-OPEN-001): the suite sends a run it gave the token
  again with the API key, and judges that answer.
"""
from __future__ import annotations

import json
import zlib

from conformance.server import ServerConfig
from tests.selftest import asgi_tools as t


async def _refuse(send, status: int, code: str, message: str, headers: tuple = ()) -> None:
    """The spec's error body with `status`."""
    body = json.dumps({"error": {"code": code, "message": message, "requestId": f"req_{code}"}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


def length_required_config() -> ServerConfig:
    def wrap(app, facts):
        async def middleware(scope, receive, send):
            if scope.get("type") == "http" and scope.get("method") == "POST" \
                    and t.header(scope.get("headers") or [], b"content-length") is None:
                await _refuse(send, 411, "length_required", "send a Content-Length")
                return
            await app(scope, receive, send)
        return middleware
    return ServerConfig(wrap_app=wrap)


def not_acceptable_config() -> ServerConfig:
    def wrap(app, facts):
        async def middleware(scope, receive, send):
            accept = t.header(scope.get("headers") or [], b"accept") if scope.get("type") == "http" else None
            if accept is None or not scope.get("path", "").endswith("/invoke") or b"event-stream" in accept.lower() \
                    or b"*/*" in accept or b"text/*" in accept.lower():
                await app(scope, receive, send)
                return
            chunks, more = [], True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            ok, doc = t._loads(b"".join(chunks))
            if ok and isinstance(doc, dict) and doc.get("stream") is True:
                await _refuse(send, 406, "not_acceptable", "the stream is text/event-stream")
                return
            replayed = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

            async def again():
                return replayed.pop() if replayed else await receive()
            await app(scope, again, send)
        return middleware
    return ServerConfig(wrap_app=wrap)


class _Gzip:
    def __init__(self) -> None:
        self.packer = zlib.compressobj(wbits=31)     # the gzip format

    def pack(self, data: bytes, more: bool) -> bytes:
        return self.packer.compress(data) + self.packer.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)


class _Brotli:
    def __init__(self) -> None:
        import brotli
        self.packer = brotli.Compressor()

    def pack(self, data: bytes, more: bool) -> bytes:
        return self.packer.process(data) + (self.packer.flush() if more else self.packer.finish())


class _Zstd:
    def __init__(self) -> None:
        import zstandard
        self.zstd = zstandard
        self.packer = zstandard.ZstdCompressor().compressobj()

    def pack(self, data: bytes, more: bool) -> bytes:
        return self.packer.compress(data) + self.packer.flush(self.zstd.COMPRESSOBJ_FLUSH_BLOCK if more
                                                              else self.zstd.COMPRESSOBJ_FLUSH_FINISH)


CODINGS = {b"zstd": _Zstd, b"br": _Brotli, b"gzip": _Gzip}     # the order this server prefers them in...
BROTLI_FIRST = ("agui", "mcp")                                  # ...but on these operations br comes first


def gzip_config() -> ServerConfig:
    def wrap(app, facts):
        async def middleware(scope, receive, send):
            taken = t.header(scope.get("headers") or [], b"accept-encoding") if scope.get("type") == "http" else None
            offered = {c.strip().split(b";")[0] for c in (taken or b"").lower().split(b",")}
            order = sorted(CODINGS, key=lambda c: c != b"br") if t.path_kind(scope.get("path", "")) in BROTLI_FIRST \
                else list(CODINGS)
            coding = next((c for c in order if c in offered), None)
            if coding is None:
                await app(scope, receive, send)
                return
            packer = CODINGS[coding]()

            async def compressed(message):
                if message["type"] == "http.response.start":
                    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
                    message = {**message, "headers": [*headers, (b"content-encoding", coding),
                                                      (b"vary", b"accept-encoding")]}
                elif message["type"] == "http.response.body":
                    message = {**message, "body": packer.pack(message.get("body", b""),
                                                              message.get("more_body", False))}
                await send(message)
            await app(scope, receive, compressed)
        return middleware
    return ServerConfig(wrap_app=wrap)


def tokens_refused_on_runs_config() -> ServerConfig:
    def wrap(app, facts):
        token = (facts.get("access_token") or "").encode()

        async def middleware(scope, receive, send):
            if scope.get("type") == "http" and t.path_kind(scope.get("path", "")) in ("invoke", "agui") and token \
                    and token in (t.header(scope.get("headers") or [], b"authorization") or b""):
                await _refuse(send, 401, "unauthenticated", "invoke and AG-UI take the API key",
                              ((b"www-authenticate", b'Bearer error="invalid_token"'),))
                return
            await app(scope, receive, send)
        return middleware
    return ServerConfig(wrap_app=wrap)
