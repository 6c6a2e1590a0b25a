"""Two correct servers that choose differently inside the classes of the input model (conformance/vocab/inputs.py),
where the spec and its standards allow it. Both must pass every run under every seed
(``test_variant_input_classes.py``, ``bench/bench_false_failures.py``).

=====  ===============================================  ==================================================  =========================
 #     escaped (``escaped_config``)                     negotiating (``negotiating_config``)                the reference server
=====  ===============================================  ==================================================  =========================
 1     every JSON body and SSE ``data:`` written in     answers ``application/json; charset=utf-8``         raw UTF-8, no parameter
       ASCII (``\\u00e9``, surrogate pairs, ``\\u2028``:
       RFC 8259 §7 lets any character be escaped)
 2     session keys counted in UTF-16 code units        a Content-Type charset other than utf-8 refused     any parameter ignored
       (JavaScript's ``length``: a character outside     (415; RFC 8259 §8.1: JSON is exchanged as UTF-8)
       the BMP counts twice; class 256-astral, open)
 3     the extra data measured as ASCII-escaped JSON    invoke without ``stream``: the event stream only    streams whenever Accept
       (the largest writing of it)                      when Accept prefers it to JSON (q-values, RFC 9110  names it with q > 0
                                                        §12.5.1; class accept:both-on-invoke, open)
 4                                                      MCP: 406 unless Accept admits both JSON and the     Accept not read
                                                        event stream (parsed: case, order, q), as the
                                                        upstream SDKs do; no Accept at all is served
=====  ===============================================  ==================================================  =========================
"""
from __future__ import annotations

import json
from typing import Any

from conformance.server import ServerConfig
from tests.selftest import asgi_tools as t
from tests.selftest.zoo_mcp import hdr, rpc_error

MAX_KEY = 256
MAX_EXTRA = 4096
SSE, JSON = "text/event-stream", "application/json"


# -- escaped ---------------------------------------------------------------------------------------------------------
def ascii_json(raw: bytes) -> bytes:
    ok, value = t._loads(raw)
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode() if ok else raw


def ascii_block(block: bytes | None, state: dict, scope: dict) -> bytes | None:
    if block is None:
        return None
    lines = block.split(b"\n")
    return b"\n".join(b"data: " + ascii_json(line[6:]) if line.startswith(b"data: ") else line for line in lines)


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def too_long(value: Any) -> Any:
    """A key the reference refuses (over 256 characters) when `value` is over 256 UTF-16 units."""
    return value + "x" * (MAX_KEY + 1) if isinstance(value, str) and utf16_units(value) > MAX_KEY else value


def count_utf16(body: dict, scope: dict, field: str) -> dict:
    """Keys over 256 UTF-16 units, and extra data (`field`) over 4096 bytes of ASCII-escaped JSON, made refusals."""
    kind = t.path_kind(scope.get("path", ""))
    if kind == "invoke":
        body = {**body, "sessionId": too_long(body["sessionId"])} if "sessionId" in body else body
        if field in body and len(json.dumps(body[field], ensure_ascii=True, separators=(",", ":"))) > MAX_EXTRA:
            body = {**body, field: "x" * (2 * MAX_EXTRA)}
    elif kind == "agui" and "threadId" in body:
        body = {**body, "threadId": too_long(body["threadId"])}
    elif kind == "mcp":
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and "session_id" in args:
            args["session_id"] = too_long(args["session_id"])
    return body


def escaped(app, facts):
    field = facts["extra_data_field"]
    inner = t.rewrite_request_json(app, lambda body, scope: count_utf16(body, scope, field)
                                   if isinstance(body, dict) else None)
    inner = t.rewrite_body(inner, lambda raw, scope, status, headers: ascii_json(raw)
                           if t.media_type(headers).endswith("json") else raw)
    return t.rewrite_sse(inner, ascii_block)


def escaped_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": escaped, **overrides})


# -- negotiating -----------------------------------------------------------------------------------------------------
def weights(accept: str) -> dict[str, float]:
    """media range -> q of an Accept value (RFC 9110 §12.5.1), names lowercased."""
    out = {}
    for part in accept.split(","):
        name, *params = [p.strip() for p in part.split(";")]
        if not name:
            continue
        q = 1.0
        for p in params:
            key, _, value = p.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        out[name.lower()] = q
    return out


def quality(accept: str, media: str) -> float:
    """The q the Accept value gives `media`: its own range, else `type/*`, else `*/*`, else 0."""
    w = weights(accept)
    for name in (media, media.split("/")[0] + "/*", "*/*"):
        if name in w:
            return w[name]
    return 0.0


def prefers_stream(body: dict, scope: dict) -> dict | None:
    accept = hdr(scope, "accept")
    if "stream" in body or accept is None:
        return None
    return {**body, "stream": quality(accept, SSE) > max(0.0, quality(accept, JSON))}


def charset_not_utf8(value: str) -> bool:
    params = [p.strip().lower() for p in value.split(";")[1:]]
    return any(p.startswith("charset=") and p[8:].strip('"') not in ("utf-8", "utf8") for p in params)


def labelled_utf8(headers, scope, status):
    value = t.header(headers, b"content-type")
    return t.with_header(headers, b"content-type", b"application/json; charset=utf-8") \
        if value is not None and value.split(b";")[0].strip().lower() == b"application/json" else headers


def negotiating(app, facts):
    def refuse_mcp(scope):
        accept = hdr(scope, "accept")
        return t.path_kind(scope.get("path", "")) == "mcp" and accept is not None \
            and not (quality(accept, JSON) > 0 and quality(accept, SSE) > 0)

    def refuse_charset(headers, scope):
        value = t.header(headers, b"content-type")
        return t.with_header(headers, b"content-type", b"text/plain") \
            if value is not None and charset_not_utf8(value.decode("latin-1")) else headers

    inner = t.rewrite_request_json(app, lambda body, scope: prefers_stream(body, scope) if isinstance(body, dict)
                                   else None, where="invoke")
    inner = t.rewrite_request_headers(inner, refuse_charset)
    inner = t.respond(inner, 406, rpc_error(-32600, "Accept must admit application/json and text/event-stream"),
                      where=refuse_mcp)
    return t.rewrite_headers(inner, labelled_utf8)


def negotiating_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": negotiating, **overrides})
