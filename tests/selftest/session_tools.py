"""Session-level tools for the servers of the sequence classes (zoo_sequences.py, variant_sequences.py): the
reference server's session store with instances that remember what happened to them, the session key a request
carries, and answering a call under another key than the one it sent."""
from __future__ import annotations

import json
import time
from typing import Any

from conformance.server.org import Instance, Sessions
from tests.selftest import asgi_tools as t

ALIAS = "conformance.zoo.alias"     # scope key: (the key the app saw, the key the client sent)


# -- sessions whose instances remember what happened to them ---------------------------------------------------
class TrackedInstance(Instance):
    """An instance that knows when its paused run was answered (or dropped), and since when it waits."""

    answered = False
    paused_since: float | None = None

    @property   # type: ignore[override]
    def paused(self):
        return getattr(self, "_paused", None)

    @paused.setter
    def paused(self, value) -> None:
        if value is None and getattr(self, "_paused", None) is not None:
            self.answered = True
        self._paused = value
        self.paused_since = time.monotonic() if value is not None else None


class Store(Sessions):
    """The reference server's session store, holding instances of `kind`; `forget(instance)` says when a key's next
    run gets a new instance instead."""

    def __init__(self, kind: type[TrackedInstance] = TrackedInstance, forget=lambda inst: False) -> None:
        super().__init__()
        self.kind, self.forget = kind, forget

    def get(self, agent_id: str, key: str) -> Instance:
        k = (agent_id, key)
        inst = self._items.get(k)
        if inst is None or self.forget(inst):
            inst = self._items[k] = self.kind()
        self._items.move_to_end(k)
        return inst


def with_store(app, store: Sessions):
    app.org.sessions = store
    return app


# -- the session key of a request, and answering under another one ---------------------------------------------
def key_holder(body: Any, scope: dict, resumes: bool = False) -> tuple[dict, str] | None:
    """(the object holding the request's session key, its field), for a call that starts a run with a key (and with
    `resumes`, for a resume too)."""
    if not isinstance(body, dict):
        return None
    kind = t.path_kind(scope.get("path", ""))
    if kind == "invoke":
        return body, "sessionId"
    if kind == "agui" and (resumes or body.get("resume") is None):
        return body, "threadId"
    params = body.get("params") if kind == "mcp" else None
    args = params.get("arguments") if isinstance(params, dict) else None
    if isinstance(args, dict) and (resumes or ("resume" not in args and params.get("requestState") is None)):
        return args, "session_id"
    return None


#: how a key can stand in an answer: a JSON string, its characters beyond ASCII kept or escaped, and in JSON text
#: carried as a string (an MCP tool's text content), escaped twice; quotes and all, so that a key routed to a prefix
#: of itself is renamed where it stands whole, not inside every other value that starts with it (a run id, a reply)
WRITTEN = [lambda k, ascii=ascii, times=times: _escaped(k, ascii, times, quoted=True).encode()
           for ascii in (False, True) for times in (1, 2)]


def _escaped(key: str, ascii: bool, times: int, quoted: bool = False) -> str:
    for n in range(times):
        key = json.dumps(key, ensure_ascii=ascii)
        key = key if quoted and n == 0 else key[1:-1]
    return key


def rerouted(app, route, resumes: bool = False):
    """Calls whose session key `route(key, body, scope)` (async) maps to another key reach that key's instance (with
    `resumes`, the resumes too); the answer names the key sent."""
    async def reroute(body, scope):
        held = key_holder(body, scope, resumes)
        if held is None or not isinstance(held[0].get(held[1]), str):
            return None
        holder, field = held
        key = holder[field]
        other = await route(key, body, scope)
        if other == key:
            return None
        holder[field] = other
        scope[ALIAS] = (other, key)
        return body

    async def restore(scope, receive, send):
        pair = scope.get(ALIAS)
        if pair is None:
            return await app(scope, receive, send)
        forms = sorted({(written(pair[0]), written(pair[1])) for written in WRITTEN}, key=lambda p: -len(p[0]))

        async def renamed(msg):
            if msg["type"] == "http.response.start":
                msg = dict(msg, headers=t.without(list(msg.get("headers") or []), b"content-length"))
            elif msg["type"] == "http.response.body":
                body = msg.get("body", b"")
                for seen, sent in forms:
                    body = body.replace(seen, sent)
                msg = dict(msg, body=body)
            await send(msg)

        await app(scope, receive, renamed)

    return t.rewrite_request_json(restore, reroute, where=("invoke", "agui", "mcp"))


def session_key(body: Any, scope: dict) -> str | None:
    """The session key a request carries, resumes and retries included (None: it carries none)."""
    if not isinstance(body, dict):
        return None
    kind = t.path_kind(scope.get("path", ""))
    if kind in ("invoke", "agui"):
        key = body.get("sessionId" if kind == "invoke" else "threadId")
    else:
        params = body.get("params")
        args = params.get("arguments") if isinstance(params, dict) else None
        key = args.get("session_id") if isinstance(args, dict) else None
    return key if isinstance(key, str) else None
