"""Faults gated by a request condition: a single-fault server of the zoo whose fault shows only on requests that
carry one value of the inventory (`conformance.model.dimensions`), read on the server's side of the wire.

`gated(broken, dimension, value)` is that server's ServerConfig: each request is read as the server receives it
(`server_view`: the ASGI scope and the body, not the suite's own reading); one carrying the value goes through the
broken app, any other through the plain one. A *witness* is kept: the requests on which the fault changed what the
reference app saw or answered (the request it received, or the bytes it sent). A pair with no witness in a run is
not real (the fault never showed), and is left out of the measure, never counted as missed.

`bench/bench_gated.py` draws pairs by seed and measures how many a default run catches; tests/selftest/test_gated.py
draws a few with a fresh seed each time.
"""
from __future__ import annotations

import contextvars
import dataclasses
import fnmatch
import hashlib
import json
import random
import time
from typing import Any

from conformance.model.dimensions import DIMENSIONS
from conformance.server import ServerConfig
from conformance.vocab.fuzzing import walk
from conformance.vocab.constants import AGUI_FORWARDED, INVOKE_INTERPRETED
from conformance.vocab.forms import ACCEPT_ENCODINGS, SDK_AGENTS
from tests.selftest.asgi_tools import _read_all, _replay, header, path_kind
from tests.selftest.zoo import Broken, load_zoo

SUITE_AGENT = b"aisvc-conformance/0.1"
# dimensions the server cannot tell apart from its side of the wire (ASGI lower-cases names; the suite's order of
# headers is its own), left out of the draws
UNSEEN = ("header-name-case", "header-order")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None


def server_view(scope: dict, body: bytes, facts: dict[str, Any]) -> dict[str, str]:
    """The inventory's values a request carries, read the way a server reads it."""
    headers = scope.get("headers") or []
    op = path_kind(scope.get("path", ""))
    out: dict[str, str] = {"operation": op or "other", "http-version": "HTTP/2" if scope.get("http_version") == "2"
                           else "HTTP/1.1"}
    auth = (header(headers, b"authorization") or b"").decode("latin-1")
    scheme, _, cred = auth.partition(" ")
    out["credential"] = ("none" if not auth else "other-scheme" if scheme.lower() != "bearer" else "empty"
                         if not cred.strip() else "api-key" if cred.strip() == facts.get("api_key") else
                         "access-token" if cred.strip() == facts.get("access_token") else "other")
    if scheme:
        out["auth-scheme-case"] = scheme
    agent = scope.get("path", "").split("/agents/", 1)[-1].split("/", 1)[0]
    out["agent"] = "agent" if agent == facts.get("agent_id") else "other"
    ct = header(headers, b"content-type")
    if ct is not None:
        out["content-type-form"] = ct.decode("latin-1")
    accept = header(headers, b"accept")
    out["accept-form"] = accept.decode("latin-1") if accept is not None else "absent"
    coding = header(headers, b"accept-encoding")
    out["accept-encoding"] = ("absent" if coding is None else "identity" if coding.strip().lower() == b"identity"
                              else next((name for name, value in ACCEPT_ENCODINGS.items()
                                         if value is not None and value.encode() == coding), "other"))
    ua = header(headers, b"user-agent")
    out["user-agent"] = ("absent" if ua is None else "suite" if ua == SUITE_AGENT else "browser"
                         if ua.startswith(b"Mozilla/") else "sdk" if ua.decode("latin-1") in SDK_AGENTS else "other")
    out["extra-header"] = ("unknown" if header(headers, b"x-conformance-trace") else "proxy" if header(headers, b"via")
                           else "browser" if header(headers, b"referer") else "stale-session"
                           if header(headers, b"mcp-session-id") else "none")
    if body:
        out["body-framing"] = "content-length" if header(headers, b"content-length") is not None else "chunked"
        text = body.decode("utf-8", "replace")
        out["json-writing"] = ("spaced" if "\r\n" in text else "slash-escaped" if "\\/" in text else "ascii-escaped"
                               if "\\u" in text and text.isascii() else "compact")
        out["body-size"] = "outside" if len(body) > 1_000_000 else "inside"
    doc = _json(body)
    fields = doc if isinstance(doc, dict) else {}
    if op == "invoke":
        accept_sse = b"text/event-stream" in (accept or b"").lower()
        out["invoke-mode"] = ("stream-field" if fields.get("stream") is True else "accept"
                              if "stream" not in fields and accept_sse else "json")
        if fields.get("stream") is True:
            out["stream-accept"] = "json" if (accept or b"").strip().lower() == b"application/json" else "as-built"
        out["session-key"] = "sent" if "sessionId" in fields else "absent"
        out["messages"] = "sent" if "messages" in fields else "absent"
        out["other-field"] = "sent" if set(fields) - {*INVOKE_INTERPRETED, facts.get("extra_data_field")} else "absent"
    elif op == "agui":
        out["session-key"] = "sent" if "threadId" in fields else "absent"
        out["run-id"] = "sent" if "runId" in fields else "absent"
        out["agui-input"] = "resume" if "resume" in fields else "user-message" if fields.get("messages") else "neither"
        out["messages"] = "sent" if "messages" in fields else "absent"
        passed = [fields[k] for k in AGUI_FORWARDED if k in fields]
        out["agui-fields"] = "absent" if not passed else "client-defaults" if not any(passed) else "set"
    elif op == "mcp":
        method = fields.get("method")
        out["mcp-method"] = method if isinstance(method, str) else "other"
        params = fields.get("params") if isinstance(fields.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        version = header(headers, b"mcp-protocol-version")
        out["mcp-version"] = version.decode("latin-1") if version else "none"
        out["mcp-progress"] = "token" if "progressToken" in meta else "none"
        caps = meta.get("io.modelcontextprotocol/clientCapabilities")
        out["mcp-elicitation"] = "can-elicit" if isinstance(caps, dict) and "elicitation" in caps else "cannot"
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        out["session-key"] = "sent" if "session_id" in args else "absent"
        if out["credential"] in ("api-key", "access-token"):
            out["mcp-credential"] = out["credential"]
        out["jsonrpc-id"] = ("absent" if "id" not in fields else "string" if isinstance(fields["id"], str)
                             else "integer")
    return out


def _meaning(raw: bytes) -> Any:
    """What a body says, its writing aside (a fault's middleware may write the same JSON again another way): the
    JSON value, or the JSON of each `data:` line of a stream, or the bytes."""
    doc = _json(raw)
    if doc is not None:
        return doc
    lines = [line[5:].strip() for line in raw.decode("utf-8", "replace").splitlines() if line.startswith("data:")]
    if lines:
        return [_json(line.encode()) if _json(line.encode()) is not None else line for line in lines]
    return raw


def conditions() -> list[tuple[str, str]]:
    """Every (dimension, value) of the inventory a gate can read on the server's side."""
    return [(d.name, v) for d in DIMENSIONS.values() if d.name not in UNSEEN for v in d.values]


def _key(doc: Any) -> str | None:
    """The session key a request's JSON names (invoke `sessionId`, AG-UI `threadId`, MCP `arguments.session_id`)."""
    if not isinstance(doc, dict):
        return None
    args = (doc.get("params") or {}).get("arguments") if isinstance(doc.get("params"), dict) else None
    named = (doc.get("sessionId"), doc.get("threadId"), args.get("session_id") if isinstance(args, dict) else None)
    return next((value for value in named if isinstance(value, str)), None)


def _header_text(scope: dict, name: bytes) -> str:
    return (header(scope.get("headers") or [], name) or b"").decode("latin-1").lower()


# Conditions no model of the suite names: what a request carries that a server might happen to branch on (its size,
# its place in the server's sequence or on its connection, what its key or text looks like, a hash). A fault gated by
# one of them is a fault the inventory does not predict: the self-measure of what "every rule on every exchange"
# catches beyond the dimensions the suite varies on purpose.
# `state` is what the server read of the request and of those before it: its JSON (`doc`), its key, its number in
# the server's sequence and on its connection, whether it opened its connection, whether the server saw its key before
# (on another operation), the time since the first request, how many requests are in flight with it, the status of
# the answer before it.
ORDINARY: dict[str, Any] = {
    "body-over-200-bytes": lambda scope, body, state: len(body) > 200,
    "body-at-most-200-bytes": lambda scope, body, state: 0 < len(body) <= 200,
    "body-hash-even": lambda scope, body, state: bool(body) and hashlib.sha256(body).digest()[0] % 2 == 0,
    "odd-request-of-the-server": lambda scope, body, state: state["n"] % 2 == 1,
    "after-the-40th-request": lambda scope, body, state: state["n"] > 40,
    "first-on-its-connection": lambda scope, body, state: state["new_connection"],
    "on-a-reused-connection": lambda scope, body, state: not state["new_connection"],
    "key-has-a-digit": lambda scope, body, state: any(c.isdigit() for c in state["key"] or ""),
    "key-has-an-upper-case-letter": lambda scope, body, state: any(c.isupper() for c in state["key"] or ""),
    "key-longer-than-24": lambda scope, body, state: len(state["key"] or "") > 24,
    "body-not-ascii": lambda scope, body, state: any(b > 0x7F for b in body),
    "at-least-7-headers": lambda scope, body, state: len(scope.get("headers") or []) >= 7,
    "accept-names-json": lambda scope, body, state: "json" in _header_text(scope, b"accept"),
    "accept-names-event-stream": lambda scope, body, state: "event-stream" in _header_text(scope, b"accept"),
    "content-type-has-parameters": lambda scope, body, state: ";" in _header_text(scope, b"content-type"),
    "two-or-more-messages": lambda scope, body, state: isinstance(state["doc"], dict) and isinstance(
        state["doc"].get("messages"), list) and len(state["doc"]["messages"]) >= 2,
    "json-id-above-1": lambda scope, body, state: isinstance(state["doc"], dict) and isinstance(
        state["doc"].get("id"), int) and state["doc"]["id"] > 1,
    "user-agent-has-a-slash": lambda scope, body, state: "/" in _header_text(scope, b"user-agent"),
    "key-new-to-the-server": lambda scope, body, state: state["key"] is not None and not state["known_key"],
    "key-the-server-saw-before": lambda scope, body, state: state["known_key"],
    "later-than-5-seconds": lambda scope, body, state: state["elapsed"] > 5.0,
    "third-or-later-on-its-connection": lambda scope, body, state: state["on_connection"] >= 3,
    "while-another-is-in-flight": lambda scope, body, state: state["in_flight"] > 1,
    "every-third-request": lambda scope, body, state: state["n"] % 3 == 0,
    "within-the-first-3-seconds": lambda scope, body, state: state["elapsed"] < 3.0,
    "body-length-odd": lambda scope, body, state: len(body) % 2 == 1,
    "body-has-a-space-after-a-colon": lambda scope, body, state: b'": ' in body,
    "body-starts-with-its-jsonrpc-member": lambda scope, body, state: body.lstrip().startswith(b'{"jsonrpc"'),
    "a-string-longer-than-40": lambda scope, body, state: any(len(s) > 40 for s in _strings(state["doc"])),
    "text-has-a-digit": lambda scope, body, state: any(c.isdigit() for c in _texts(state["doc"])),
    "key-has-a-hyphen": lambda scope, body, state: "-" in (state["key"] or ""),
    "key-ends-with-a-letter": lambda scope, body, state: (state["key"] or "0")[-1:].isalpha(),
    "key-seen-on-another-operation": lambda scope, body, state: state["key_elsewhere"],
    "no-content-length-header": lambda scope, body, state: header(scope.get("headers") or [],
                                                                    b"content-length") is None,
    "header-count-even": lambda scope, body, state: len(scope.get("headers") or []) % 2 == 0,
    "client-port-even": lambda scope, body, state: (tuple(scope.get("client") or (0, 0)) + (0, 0))[1] % 2 == 0,
    "get-request": lambda scope, body, state: scope.get("method") == "GET",
    "after-a-refusal": lambda scope, body, state: state["last_status"] >= 400,
    "query-string-present": lambda scope, body, state: bool(scope.get("query_string")),
    "body-has-a-unicode-escape": lambda scope, body, state: b"\\u" in body,
    "body-over-1000-bytes": lambda scope, body, state: len(body) > 1000,
    "body-has-a-boolean": lambda scope, body, state: any(isinstance(v, bool) for v in walk(state["doc"])),
    "body-has-a-null": lambda scope, body, state: bool(body) and any(v is None for v in walk(state["doc"])),
    "four-or-more-top-level-members": lambda scope, body, state: isinstance(state["doc"], dict)
    and len(state["doc"]) >= 4,
    "text-has-an-upper-case-letter": lambda scope, body, state: any(c.isupper() for c in _texts(state["doc"])),
    "text-longer-than-20": lambda scope, body, state: len(_texts(state["doc"])) > 20,
    "has-an-origin-or-referer": lambda scope, body, state: bool(_header_text(scope, b"origin")
                                                                or _header_text(scope, b"referer")),
    "accepts-gzip": lambda scope, body, state: "gzip" in _header_text(scope, b"accept-encoding"),
    "key-length-even": lambda scope, body, state: state["key"] is not None and len(state["key"]) % 2 == 0,
    "request-number-2-mod-5": lambda scope, body, state: state["n"] % 5 == 2,
    "late-in-a-ten-second-window": lambda scope, body, state: state["elapsed"] % 10 >= 7,
    "over-http2": lambda scope, body, state: scope.get("http_version") == "2",
    "string-json-rpc-id": lambda scope, body, state: isinstance(state["doc"], dict)
    and isinstance(state["doc"].get("id"), str),
    "same-key-as-the-request-before": lambda scope, body, state: state["key"] is not None
    and state["key"] == state.get("previous_key"),
}


def _strings(doc: Any):
    """Every string a JSON value holds, keys included."""
    return (value for value in walk(doc) if isinstance(value, str))


def _texts(doc: Any) -> str:
    """The text a request asks the agent about (its messages' contents, a tool call's arguments)."""
    if not isinstance(doc, dict):
        return ""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    return "".join(s for s in _strings([doc.get("messages"), params.get("arguments")]))


def ordinary_conditions() -> list[tuple[str, str]]:
    return [("ordinary", name) for name in ORDINARY]


def _matches(view: dict[str, str], dimension: str, value: str, scope=None, body=b"", state=None) -> bool:
    if dimension == "ordinary":
        return bool(ORDINARY[value](scope, body, state))
    if dimension == "always":         # the gate open: how many requests of a run provoke the fault at all
        return True
    got = view.get(dimension)
    if got is None:
        return False
    if dimension == "accept-form":    # the forms as the suite writes them, read back
        return {"reordered": got.lower().startswith("text/event-stream,"), "case": got != got.lower(),
                "weights": ";q=" in got, "as-built": got in ("application/json, text/event-stream",
                                                             "text/event-stream")}.get(value, False)
    if dimension == "mcp-version" and value == "unsupported":
        return got not in ("2026-07-28", "2025-11-25", "none")
    return got == value


@dataclasses.dataclass
class Witness:
    seen: int = 0          # requests of the fault's operations that carried the value
    changed: int = 0       # of them, those whose request or answer the fault changed
    where: list = dataclasses.field(default_factory=list)    # the first of those: method, path, body's start


def gated(broken: Broken, dimension: str, value: str, witness: Witness, **base: Any) -> ServerConfig:
    """The ServerConfig of `broken` with its fault shown only on requests carrying `value` on `dimension`."""
    if broken.wrap is None:
        raise ValueError(f"{broken.name} is made by ServerConfig alone: its fault cannot be gated by a request")
    ops = operations_of(broken)

    def wrap(app, facts):
        probes: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("gated_probe")

        class Reference:
            """The plain app, below the fault (its attributes read through, as a fault may read them)."""
            def __getattr__(self, name):
                return getattr(app, name)

            async def __call__(self, scope, receive, send):
                await reference(scope, receive, send)

        async def reference(scope, receive, send):
            """The plain app, below the fault: what it received and sent, to compare with what the client saw."""
            probe = probes.get(None)
            if scope.get("type") != "http" or probe is None:
                return await app(scope, receive, send)
            got = []

            async def rec_receive():
                msg = await receive()
                if msg.get("type") == "http.request":
                    got.append(msg.get("body", b""))
                return msg

            async def rec_send(msg):
                if msg.get("type") == "http.response.body":
                    probe.setdefault("inner", []).append(msg.get("body", b""))
                elif msg.get("type") == "http.response.start":
                    probe["inner_status"] = msg.get("status")
                    probe["inner_type"] = _content_type(msg)
                await send(msg)
            await app(scope, rec_receive, rec_send)
            probe["inner_request"] = b"".join(got)

        faulty = broken.wrap(Reference(), facts)
        state: dict[str, Any] = {"n": 0, "clients": set(), "start": None, "keys": set(), "per_connection": {},
                                 "key_ops": {}, "in_flight": 0, "last_status": 0}

        async def middleware(scope, receive, send):
            if scope.get("type") != "http":
                return await app(scope, receive, send)
            body, pending = await _read_all(receive)
            view = server_view(scope, body, facts)
            now = time.monotonic()
            state["start"] = state["start"] or now
            state["n"] += 1
            client = tuple(scope.get("client") or ())
            state["new_connection"] = client not in state["clients"]
            state["clients"].add(client)
            state["per_connection"][client] = state["on_connection"] = state["per_connection"].get(client, 0) + 1
            state["elapsed"] = now - state["start"]
            state["doc"] = _json(body)
            key = _key(state["doc"])
            state["previous_key"], state["key"] = state.get("key"), key
            state["known_key"] = key is not None and key in state["keys"]
            state["keys"].add(key)
            operations = state["key_ops"].setdefault(key, set())
            state["key_elsewhere"] = key is not None and bool(operations - {view["operation"]})
            operations.add(view["operation"])
            state["in_flight"] += 1
            try:
                return await gate(scope, receive, send, body, pending, view)
            finally:
                state["in_flight"] -= 1

        async def gate(scope, receive, send, body, pending, view):
            if not _matches(view, dimension, value, scope, body, state):
                async def plain_send(msg):
                    if msg.get("type") == "http.response.start":
                        state["last_status"] = msg.get("status") or 0
                    await send(msg)
                return await app(scope, _replay(body, pending, receive), plain_send)
            mine = view["operation"] in ops     # a change to another operation's answer is no sign of this fault
            witness.seen += mine
            probe: dict[str, Any] = {}
            probes.set(probe)
            outer: list[bytes] = []
            status: list[int] = []

            async def rec_send(msg):
                if msg.get("type") == "http.response.body":
                    outer.append(msg.get("body", b""))
                elif msg.get("type") == "http.response.start":
                    status.append(msg.get("status"))
                    status.append(_content_type(msg))
                    state["last_status"] = msg.get("status") or 0
                await send(msg)
            await faulty(scope, _replay(body, pending, receive), rec_send)
            # A request the fault changed on its way in is a witness only when the service ran it (2xx): a refused
            # request runs and keeps nothing, so what it carried in can show nowhere.
            answered_itself = "inner_request" not in probe
            request_changed = answered_itself or _meaning(probe["inner_request"]) != _meaning(body)
            answer_changed = _meaning(b"".join(probe.get("inner", []))) != _meaning(b"".join(outer)) or \
                (probe.get("inner_status"), probe.get("inner_type")) != (tuple(status[:2]) or (None, None))
            ran = answered_itself or 200 <= (probe.get("inner_status") or 0) < 300
            if mine and (answer_changed or (request_changed and ran)):
                witness.changed += 1
                if len(witness.where) < 5:
                    witness.where.append(f"{scope.get('method')} {scope.get('path')} {body[:160]!r}")
        return middleware

    return ServerConfig(**{**base, **broken.config, "wrap_app": wrap})


def _content_type(start: dict[str, Any]) -> str | None:
    """The Content-Type of an ASGI response start, as the client reads it (one of the headers a fault may change)."""
    return next((v.decode("latin-1").lower() for k, v in start.get("headers") or () if k.lower() == b"content-type"),
                None)


def operations_of(broken: Broken) -> set[str]:
    """The operations whose answers the fault's requirement speaks of (every one for a general or auth rule)."""
    from conformance import catalog
    protocol = catalog.load()[broken.breaks].protocol
    return {protocol} if protocol in ("invoke", "agui", "mcp", "metadata") else {"invoke", "agui", "mcp", "metadata"}


def draws(seed: int, n: int, family: str = "inventory", servers: list[str] | None = None,
          values: list[str] | None = None) -> list[tuple[str, str, str]]:
    """n random (broken server, dimension, value), by seed: single-fault servers made by a middleware (those named
    by `servers`, names or shell patterns, when given), each with a value of a dimension its requirement's
    operations carry (a gate on MCP's method never shows an invoke fault), among the values named by `values`
    (shell patterns) when given."""
    zoo = sorted(name for name, b in load_zoo().items() if b.wrap is not None
                 and (not servers or any(fnmatch.fnmatchcase(name, p) for p in servers)))
    rng = random.Random(seed)
    if family == "always":
        return [(name, "always", "open") for name in rng.sample(zoo, min(n, len(zoo)))]
    conds = [c for c in (conditions() if family == "inventory" else ordinary_conditions())
             if not values or any(fnmatch.fnmatchcase(c[1], p) for p in values)]
    out = []
    while len(out) < n:
        name = rng.choice(zoo)
        ops = operations_of(load_zoo()[name])
        fitting = [c for c in conds if c[0] == "ordinary" or ops & set(DIMENSIONS[c[0]].operations)]
        out.append((name, *rng.choice(fitting)))
    return out
