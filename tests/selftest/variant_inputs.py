"""Two more correct servers: the reference server reading what the spec leaves open in a *request* the other ways.

``lenient_config()`` takes every open input the kindest way it can; ``strict_config()`` refuses it with
``validation_failed`` (or 406, where HTTP says so). Both must pass every MUST and SHOULD under every seed
(``test_variant_inputs.py``, ``bench/bench_false_failures.py``): where one trips a check, the check asserts a
right answer the spec does not give (a suite bug). The reference server sits in between (column "ref").

=====  =================================  ===================================  =======================  ==========================================
 #     input                              lenient                              strict                   the sentence that leaves it open
=====  =================================  ===================================  =======================  ==========================================
 1     ``null`` for an optional field:    read as absent                       ``validation_failed``     "`stream` | boolean | no | … When absent,
       invoke ``stream``, ``sessionId``,                                       (ref: refused, but        the Accept header decides" — null is
       ``messages``; AG-UI ``threadId``,                                       ``resume: null`` read     neither shown nor excluded
       ``runId``, ``messages``, ``resume``                                     as absent)
 2     invoke without ``prompt`` (or      ``invalid_request``                  ``validation_failed``     "Complete list of codes with their HTTP
       ``prompt: null``)                                                       (as ref)                  statuses: not shown." (INV-ERR-004 states
                                                                                                        no code)
 3     AG-UI message items the spec       unreadable items ignored, ids of     ``validation_failed``,    "AG-UI messages carry `id` (string),
       does not show: an ``id`` that is   any type read as text; no readable   checked before the        `role` (string, for example `user`) and
       a number, no ``role``, a role      user message is ``invalid_request``  user-message rule (ref:   `content` (string)": the refusal of other
       other than AG-UI's, fields                                              role-less items refused,  items, and its precedence over rule 1, are
       besides id/role/content, repeated                                       numeric ids ignored)      not stated
       ids, empty ``id``/``content``
 4     invoke ``messages`` items          any item, any ``messages`` value     items must be objects     "Shape of the items of the `messages` field
                                          (a non-array is ignored)             with string ``role`` and  of invoke: not shown."
                                                                               ``content``
 5     an empty string where no length    ``prompt: ""`` read as absent;       ``validation_failed``     "`prompt` | string", "`runId` | string":
       is given: invoke ``prompt``,       ``runId: ""`` echoed (as ref: it     (``prompt``, ``runId``,   no length given, so a refusal is open;
       AG-UI ``runId``                    is sent, not left out)               message ``id`` and        a run is not: "Echoed … Generated when
                                                                               ``content``)              left out", and "" is not left out
 6     AG-UI ``tools`` / ``context``      any value (as ref)                   must be lists of          "`tools`, … `context` | any" — but AG-UI's
                                                                               objects                   RunAgentInput types them as lists
 7     integers beyond ±(2^53−1)          JSON-RPC ``id`` echoed as the        refused (JSON-RPC ``id``: RFC 8259 §6, §9: "An implementation may set
                                          nearest double (JavaScript)          400/-32600; bodies:       limits on the range and precision of numbers"
                                                                               ``validation_failed``)
 8     strings holding U+0000             accepted (as ref)                    ``validation_failed``     RFC 8259 §9: "… limits on the length and
                                                                                                        character contents of strings"
 9     bytes that are not quite JSON:     read: the BOM ignored, invalid       a repeated name refused   RFC 8259 §8.1 (a BOM "MAY" be ignored), §9
       a leading BOM, invalid UTF-8,      UTF-8 replaced by U+FFFD, NaN read   (400 ``invalid_request``, ("A JSON parser MAY accept non-JSON forms
       NaN/Infinity, a repeated member    as null, the first of a repeated     as malformed JSON); the   or extensions"), §4 ("names … SHOULD be
       name                               name wins (ref: refused; last wins)  rest refused (as ref)     unique"; behaviour then unpredictable)
10     session keys with characters       code points (as ref)                 UTF-16 code units         "Session key length | 1 to 256 characters"
       outside the BMP                                                         (JavaScript's length)
11     ``Accept`` naming neither JSON nor ignored (as ref)                     406 ``not_acceptable``    RFC 9110 §12.5.1: the server "can either
       an event stream; ``stream: true``                                       (the error body)          honor the header field by sending a 406
       with an Accept without one                                                                        (Not Acceptable) response or disregard" it
12     ``stream: false`` with             an event stream (rule 1: Accept      one JSON body (as ref)    INV-SEL-005: rule 1 and the body table
       ``Accept: text/event-stream``      selects it)                                                    conflict for an explicit ``false``
=====  =================================  ===================================  =======================  ==========================================
"""
from __future__ import annotations

import json
import math
from typing import Any

from conformance.server import ServerConfig
from conformance.vocab.fuzzing import walk
from tests.selftest import asgi_tools as t

SAFE_INTEGER = 2**53 - 1
MAX_SESSION_KEY = 256
AGUI_ROLES = ("user", "assistant", "system", "developer")
INVOKE_OPTIONAL = ("stream", "sessionId", "messages")
AGUI_OPTIONAL = ("threadId", "runId", "messages", "resume")
REFUSED = "inputs.refused"            # scope key: why this variant refuses the request (field, reason, status, code)
ECHO_ID = "inputs.echo_id"            # scope key: the JSON-RPC id as this variant read it


# --- raw request bytes ------------------------------------------------------------------------------------------------
def rewrite_request_bytes(app: t.ASGIApp, fn, where: t.Where = None) -> t.ASGIApp:
    """``fn(raw, scope) -> bytes | None`` on the raw request body (None keeps it); Content-Length is fixed."""
    async def middleware(scope, receive, send):
        if not t.matches(scope, where):
            return await app(scope, receive, send)
        raw, pending = await t._read_all(receive)
        new = fn(raw, scope)
        if new is not None:
            raw = new
            scope = dict(scope, headers=t.with_header(list(scope.get("headers") or []), b"content-length",
                                                      str(len(raw)).encode()))
        await app(scope, t._replay(raw, pending, receive), send)
    return middleware


class _Repeated(ValueError):
    pass


def _unique_names(pairs):
    if len({k for k, _ in pairs}) != len(pairs):
        raise _Repeated("a member name is repeated")
    return dict(pairs)


def _first_wins(pairs):
    out: dict[str, Any] = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def _is_strict_json(raw: bytes) -> bool:
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            return False
        json.loads(text, object_pairs_hook=_unique_names, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        return True
    except (ValueError, RecursionError):
        return False


def lenient_bytes(raw: bytes, scope: dict) -> bytes | None:
    """Row 9, lenient: what a forgiving reader makes of bytes that are not quite JSON, as JSON the reference reads."""
    if not raw or _is_strict_json(raw):
        return None
    try:
        value = json.loads(raw.decode("utf-8", "replace").removeprefix("\ufeff"), object_pairs_hook=_first_wins,
                           parse_constant=lambda c: None)
    except (ValueError, RecursionError):
        return None
    return json.dumps(_finite(value)).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def strict_bytes(raw: bytes, scope: dict) -> bytes | None:
    """Row 9, strict: a repeated member name is malformed JSON (the reference then refuses it as such)."""
    try:
        json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_names)
    except _Repeated:
        return b"{ repeated member name"
    except (ValueError, RecursionError):
        pass
    return None


# --- reading the parsed request -----------------------------------------------------------------------------------
def _header(scope: dict, name: bytes) -> str | None:
    value = t.header(list(scope.get("headers") or []), name)
    return value.decode("latin-1") if value is not None else None


def _accepts(scope: dict, media: str) -> bool | None:
    """Whether the request's Accept names `media` or a wildcard of it; None without an Accept (or an empty one)."""
    accept = _header(scope, b"accept")
    if not accept or not accept.strip():
        return None
    ranges = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(ranges & {media, media.split("/")[0] + "/*", "*/*"})


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


# --- lenient --------------------------------------------------------------------------------------------------------
def lenient_invoke(body: Any, scope: dict) -> Any:
    if not isinstance(body, dict):
        return None
    for name in INVOKE_OPTIONAL:                                       # 1
        if name in body and body[name] is None:
            del body[name]
    if "messages" in body and not isinstance(body["messages"], list):  # 4
        del body["messages"]
    if body.get("prompt") is None:                                     # 2
        body.pop("prompt", None)
        scope[REFUSED] = ("prompt", "`prompt` is required", None, "invalid_request")
    if body.get("stream") is False and _accepts(scope, "text/event-stream"):   # 12
        del body["stream"]
    return body


def lenient_agui(body: Any, scope: dict) -> Any:
    if not isinstance(body, dict):
        return None
    for name in AGUI_OPTIONAL:                                         # 1
        if name in body and body[name] is None:
            del body[name]
    if isinstance(body.get("messages"), list):                         # 3
        readable = [m for m in body["messages"] if isinstance(m, dict) and isinstance(m.get("role"), str)]
        body["messages"] = [{**m, "id": m["id"] if isinstance(m.get("id"), str) else json.dumps(m.get("id"))}
                            if "id" in m else m for m in readable]
    return body


def lenient_mcp(body: Any, scope: dict) -> Any:
    """Row 7, lenient: an integer id beyond ±(2^53−1) is read as a double, as JavaScript's JSON.parse does."""
    rid = body.get("id") if isinstance(body, dict) else None
    if type(rid) is int and abs(rid) > SAFE_INTEGER:
        scope[ECHO_ID] = int(float(rid))
    return None


def echo_id_as_read(obj: Any, scope: dict, status: int, headers: t.Headers) -> Any:
    if ECHO_ID in scope and isinstance(obj, dict) and "id" in obj and obj["id"] is not None:
        obj["id"] = scope[ECHO_ID]
    return obj


def echo_id_in_stream(event: str | None, obj: Any, state: dict, scope: dict) -> Any:
    if ECHO_ID in scope and isinstance(obj, dict) and "id" in obj and obj["id"] is not None:
        obj["id"] = scope[ECHO_ID]
    return obj


# --- strict ---------------------------------------------------------------------------------------------------------
def _values_problem(body: Any) -> tuple[str, str] | None:
    for v in walk(body):                                              # 7, 8
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > SAFE_INTEGER:
            return "body", "integers beyond ±(2^53−1) are not accepted"
        if isinstance(v, str) and "\x00" in v:
            return "body", "strings holding U+0000 are not accepted"
    return None


def _key_problem(body: dict, name: str) -> tuple[str, str] | None:
    key = body.get(name)
    if isinstance(key, str) and _utf16_length(key) > MAX_SESSION_KEY:   # 10
        return name, f"must be 1 to {MAX_SESSION_KEY} UTF-16 code units"
    return None


def _invoke_problem(body: dict) -> tuple[str, str] | None:
    if body.get("prompt") == "":                                       # 5
        return "prompt", "must not be empty"
    msgs = body.get("messages")
    if isinstance(msgs, list):                                         # 4
        for i, m in enumerate(msgs):
            if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
                return f"messages[{i}]", "must be an object with string `role` and `content`"
    return _key_problem(body, "sessionId") or _values_problem(body)


def _agui_problem(body: dict) -> tuple[str, str] | None:
    if "resume" in body and body["resume"] is None:                    # 1
        return "resume", "must be an array or an object"
    if body.get("runId") == "":                                        # 5
        return "runId", "must not be empty"
    msgs = body.get("messages")
    if isinstance(msgs, list):                                         # 3
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or set(m) - {"id", "role", "content"}:
                return f"messages[{i}]", "must be a message object with `id`, `role` and `content` only"
            for name in ("id", "content"):
                if not (isinstance(m.get(name), str) and m[name]):
                    return f"messages[{i}].{name}", "must be a non-empty string"
            if m.get("role") not in AGUI_ROLES:
                return f"messages[{i}].role", f"must be one of {', '.join(AGUI_ROLES)}"
        ids = [m["id"] for m in msgs]
        if len(set(ids)) != len(ids):
            return "messages", "message ids must be unique"
    for name in ("tools", "context"):                                  # 6
        if name in body and not (isinstance(body[name], list) and all(isinstance(x, dict) for x in body[name])):
            return name, "must be a list of objects"
    return _key_problem(body, "threadId") or _values_problem(body)


def _not_acceptable(kind: str, body: Any, scope: dict) -> bool:
    """Row 11: an Accept this server cannot honour."""
    sse, json_ = _accepts(scope, "text/event-stream"), _accepts(scope, "application/json")
    if sse is None:
        return False
    if kind == "agui":
        return not sse
    wants_stream = isinstance(body, dict) and body.get("stream") is True
    return not sse if wants_stream else not (sse or json_)


# a body the reference refuses with validation_failed after authenticating, per protocol (its message is replaced)
_REFUSED_BODY = {"invoke": {"prompt": 0}, "agui": {"threadId": ""}}


def strict_request(body: Any, scope: dict) -> Any:
    kind = t.path_kind(scope.get("path", ""))
    if _not_acceptable(kind, body, scope):
        scope[REFUSED] = ("Accept", "names no media type this operation answers with", 406, "not_acceptable")
        return _REFUSED_BODY[kind]
    if not isinstance(body, dict):
        return None
    problem = _invoke_problem(body) if kind == "invoke" else _agui_problem(body)
    if problem is None:
        return None
    scope[REFUSED] = (*problem, None, "validation_failed")
    return _REFUSED_BODY[kind]


def strict_mcp(body: Any, scope: dict) -> Any:
    """Row 7, strict: an integer id beyond ±(2^53−1) is an invalid request (the reference refuses a non-integer id
    the same way: 400, -32600)."""
    rid = body.get("id") if isinstance(body, dict) else None
    if type(rid) is int and abs(rid) > SAFE_INTEGER:
        return {**body, "id": 0.5}
    return None


def refusal_as_read(obj: Any, scope: dict, status: int, headers: t.Headers) -> Any:
    """The reference's refusal, saying what this variant refused (and with its status and code)."""
    if REFUSED not in scope or not (isinstance(obj, dict) and isinstance(obj.get("error"), dict)):
        return obj
    field, reason, new_status, code = scope[REFUSED]
    err = obj["error"]
    if err.get("code") not in ("validation_failed", code):
        return obj                                  # refused for another reason first (credential, agent)
    err.update(code=code, message=f"{field}: {reason}")
    if code == "validation_failed":
        err["details"] = {"errors": [{"field": field, "message": reason}]}
    else:
        err.pop("details", None)
    return (new_status or status), headers, obj


# --- the servers --------------------------------------------------------------------------------------------------
def lenient(app: t.ASGIApp, facts: dict) -> t.ASGIApp:
    app = t.rewrite_json_response(app, refusal_as_read, where="invoke")
    app = t.rewrite_request_json(app, lenient_invoke, where="invoke")
    app = t.rewrite_request_json(app, lenient_agui, where="agui")
    app = t.rewrite_json_response(app, echo_id_as_read, where="mcp")
    app = t.rewrite_sse_json(app, echo_id_in_stream, where="mcp")
    app = t.rewrite_request_json(app, lenient_mcp, where="mcp")
    return rewrite_request_bytes(app, lenient_bytes, where=("invoke", "agui", "mcp"))


def strict(app: t.ASGIApp, facts: dict) -> t.ASGIApp:
    app = t.rewrite_json_response(app, refusal_as_read, where=("invoke", "agui"))
    app = t.rewrite_request_json(app, strict_request, where=("invoke", "agui"))
    app = t.rewrite_request_json(app, strict_mcp, where="mcp")
    return rewrite_request_bytes(app, strict_bytes, where=("invoke", "agui"))


def own_message_shape(app: t.ASGIApp, facts: dict) -> t.ASGIApp:
    """Row 4, another way: invoke `messages` items of this server's own shape, `{author, text}`, so every item the
    suite sends is refused `validation_failed` (an empty list is taken)."""
    def request(body: Any, scope: dict) -> Any:
        msgs = body.get("messages") if isinstance(body, dict) else None
        for i, m in enumerate(msgs if isinstance(msgs, list) else ()):
            if not (isinstance(m, dict) and isinstance(m.get("author"), str) and isinstance(m.get("text"), str)):
                scope[REFUSED] = (f"messages[{i}]", "must be an object with string `author` and `text`", None,
                                  "validation_failed")
                return _REFUSED_BODY["invoke"]
        return None
    return t.rewrite_request_json(t.rewrite_json_response(app, refusal_as_read, where="invoke"), request,
                                  where="invoke")


def lenient_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": lenient, **overrides})


def strict_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": strict, **overrides})


def own_message_shape_config(**overrides: Any) -> ServerConfig:
    return ServerConfig(**{"wrap_app": own_message_shape, **overrides})
