"""Broken servers that transform a string before they store, compare or echo it (`inputs.TRANSFORMS`): each is right
for every value that the transformation leaves as it is, and wrong only for values it changes, the way real servers
go wrong (a trimming form library, a case- or accent-insensitive collation, Unicode normalization in a search
index or on the way to a file system).

Two ways a transformation shows:

- the value comes back changed (an echoed key, runId, JSON-RPC id or progress token; pass-through params and
  messages): a MUST of the field's echo;
- the store compares keys after the transformation and echoes the key sent: two keys equal only after it reach one
  instance, which the `kept apart` chain of the sessions model reads (GEN-SESS-002, a SHOULD).

``INPUT_CLASSES`` (zoo_inputs.py) names the classes each one is wrong for, so test_zoo_inputs.py proves it passes
when they are withheld.
"""
from __future__ import annotations

import unicodedata
from typing import Any, Callable

from tests.selftest import asgi_tools as t
from tests.selftest.session_tools import Store, rerouted, with_store
from tests.selftest.zoo_agui import on_request
from tests.selftest.zoo_inputs import mangled, on_progress, response_ids, run_ids, strip_accents, wrong_for

nfc = lambda text: unicodedata.normalize("NFC", text)      # noqa: E731
nfkc = lambda text: unicodedata.normalize("NFKC", text)    # noqa: E731


def stored_as(route: Callable[[str], str], doc: str):
    """A session store that compares keys after `route` (answers still name the key sent)."""
    async def to(key: str, body: Any, scope: dict) -> str:
        return route(key)

    def wrap(app, facts):
        return rerouted(app, to)
    wrap.__doc__ = doc
    return wrap


# -- a store that compares keys after a transformation ------------------------------------------------------------
wrong_for("GEN-SESS-002", "GEN-SESS-002-store-trims-keys", "session-key:twin-trim")(stored_as(
    str.strip, "Every protocol's session store ignores whitespace at the ends of a key (a PAD SPACE collation)."))
wrong_for("GEN-SESS-002", "GEN-SESS-002-store-case-insensitive-on-every-protocol", "session-key:twin-case-fold",
          "session-key:case-variant")(stored_as(str.casefold, "Every protocol's session store compares keys without case (a `_ci` collation)."))
wrong_for("GEN-SESS-002", "GEN-SESS-002-store-normalizes-keys-nfc", "session-key:twin-nfc", "session-key:twin-nfd")(
    stored_as(nfc, "The session store normalizes keys to NFC: a precomposed and a decomposed é are one key."))
wrong_for("GEN-SESS-002", "GEN-SESS-002-store-normalizes-keys-nfkc", "session-key:twin-nfkc", "session-key:twin-nfc",
          "session-key:twin-nfd")(stored_as(nfkc, "The session store normalizes keys to NFKC: ² and 2 are one key."))
wrong_for("GEN-SESS-002", "GEN-SESS-002-store-accent-insensitive", "session-key:twin-accents", "session-key:twin-nfc",
          "session-key:twin-nfd")(stored_as(strip_accents, "The session store compares keys without accents (an "
                                                           "accent-insensitive `_ai` collation): é and e are one key."))


# -- a key transformed on one protocol, and echoed so ---------------------------------------------------------------
@wrong_for("INV-SESS-003", "INV-SESS-003-session-key-trimmed", "session-key:edge-whitespace")
def invoke_key_trimmed(app, facts):
    """Invoke trims `sessionId` (a form library's habit): the result reports the trimmed key, and its instance is the
    trimmed key's."""
    return on_request(app, lambda body, scope: {**body, "sessionId": body["sessionId"].strip()}
                      if isinstance(body.get("sessionId"), str) else None, where="invoke")


@wrong_for("AGUI-ID-001", "AGUI-ID-001-thread-id-nfkc", "session-key:compatibility", "session-key:composition")
def thread_nfkc(app, facts):
    """AG-UI normalizes `threadId` to NFKC before it runs (² becomes 2): RUN_STARTED
    reports the normalized key."""
    return on_request(app, lambda body, scope: {**body, "threadId": nfkc(body["threadId"])}
                      if isinstance(body.get("threadId"), str) else None)


@wrong_for("MCP-SESS-003", "MCP-SESS-003-session-id-lowercased", "session-key:folding", "session-key:punctuation")
def mcp_key_lowercased(app, facts):
    """MCP lowercases `arguments.session_id` before it runs: `structuredContent.sessionId` is the lowercased key."""
    def lower(body):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and isinstance(args.get("session_id"), str):
            args["session_id"] = args["session_id"].lower()
            return body
        return None
    return t.rewrite_request_json(app, lambda body, scope: lower(body) if isinstance(body, dict) else None,
                                  where="mcp")


# -- ids and tokens echoed transformed --------------------------------------------------------------------------------
@wrong_for("AGUI-ID-002", "AGUI-ID-002-run-id-nfkc", "run-id:compatibility", "run-id:composition")
def run_id_nfkc(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId normalized to NFKC."""
    return run_ids(app, mangled(nfkc))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-run-id-lowercased", "run-id:folding", "run-id:punctuation")
def run_id_lowercased(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId lowercased (ids kept in a case-insensitive column)."""
    return run_ids(app, mangled(str.lower))


@wrong_for("AGUI-ID-003", "AGUI-ID-003-run-id-trimmed-on-finish", "run-id:edge-whitespace")
def run_id_trimmed_on_finish(app, facts):
    """RUN_FINISHED reports the runId trimmed (RUN_STARTED still has it as sent)."""
    return run_ids(app, mangled(str.strip), ("RUN_FINISHED",))


@wrong_for("MCP-METH-005", "MCP-METH-005-string-id-trimmed", "jsonrpc-id:transformable", "jsonrpc-id:json-escapes")
def string_id_trimmed(app, facts):
    """String ids come back trimmed (`id.trim()`, which also drops U+2028 and U+2029 at the ends)."""
    return response_ids(app, mangled(str.strip))


@wrong_for("MCP-PROG-005", "MCP-PROG-005-token-nfc", "progress-token:composition")
def token_nfc(app, facts):
    """Progress notifications carry the token normalized to NFC."""
    return on_progress(app, lambda params: params.update(progressToken=mangled(nfc)(params.get("progressToken"))))


@wrong_for("MCP-PROG-005", "MCP-PROG-005-token-nfkc", "progress-token:compatibility", "progress-token:composition")
def token_nfkc(app, facts):
    """Progress notifications carry the token normalized to NFKC (² becomes 2)."""
    return on_progress(app, lambda params: params.update(progressToken=mangled(nfkc)(params.get("progressToken"))))


@wrong_for("MCP-PROG-005", "MCP-PROG-005-token-trimmed", "progress-token:edge-whitespace")
def token_trimmed(app, facts):
    """Progress notifications carry the token trimmed."""
    return on_progress(app, lambda params: params.update(progressToken=mangled(str.strip)(params.get("progressToken"))))


@wrong_for("MCP-PROG-005", "MCP-PROG-005-token-case-folded", "progress-token:folding")
def token_case_folded(app, facts):
    """Progress notifications carry the token case-folded (ß becomes ss)."""
    return on_progress(app, lambda params: params.update(
        progressToken=mangled(str.casefold)(params.get("progressToken"))))


# -- pass-through values ----------------------------------------------------------------------------------------------
def renamed_members(fn: Callable[[str], str]) -> Callable[[dict], dict]:
    """The top-level members of a request rebuilt under `fn(name)`: members whose names it makes equal merge."""
    return lambda body: {fn(k): v for k, v in body.items()}


@wrong_for("INV-PASS-001", "INV-PASS-001-member-names-nfkc", "params:twins")
def invoke_names_nfkc(app, facts):
    """Invoke reads the request's member names through NFKC (an identifier rule): `conf²` and `conf2`, a
    precomposed and a decomposed é, become one member."""
    return on_request(app, lambda body, scope: renamed_members(nfkc)(body), where="invoke")


@wrong_for("AGUI-PASS-002", "AGUI-PASS-002-member-names-trimmed", "params:twins")
def agui_names_trimmed(app, facts):
    """AG-UI trims the names of the fields it passes on: ` confPad\\t` lands on `confPad`."""
    return on_request(app, lambda body, scope: renamed_members(str.strip)(body))


def messages_rewritten(fn: Callable[[str], str], where: str, doc: str):
    def rewrite(body, scope):
        msgs = body.get("messages")
        if not isinstance(msgs, list):
            return None
        return {**body, "messages": [{**m, "content": fn(m["content"])} if isinstance(m, dict)
                                     and isinstance(m.get("content"), str) else m for m in msgs]}

    def wrap(app, facts):
        return on_request(app, rewrite, where=where)
    wrap.__doc__ = doc
    return wrap


wrong_for("INV-PASS-004", "INV-PASS-004-message-content-trimmed", "messages:transformable")(messages_rewritten(
    str.strip, "invoke", "Invoke trims the content of every message it is given before the agent sees it."))
wrong_for("AGUI-PROMPT-002", "AGUI-PROMPT-002-message-content-nfc", "messages:transformable")(messages_rewritten(
    nfc, "agui", "AG-UI normalizes every message's content to NFC before the agent sees it."))


@wrong_for("GEN-SESS-002", "GEN-SESS-002-sessions-keyed-without-the-agent", "session-key:other-agent")
def keyed_without_agent(app, facts):
    """The session store is keyed by the session key alone: the same key sent to another agent of the organization
    reaches the first agent's instance."""
    class AnyAgent(Store):
        def get(self, agent_id, key):
            return super().get("any", key)
    return with_store(app, AnyAgent())


def bound_without_case(fields: tuple[str, ...], where: str, doc: str):
    """A request's members are bound to the fields the service interprets without regard to case, as Go's
    encoding/json binds them by default: `Prompt` or `SESSIONID` sets the field (the last one written wins) and never
    reaches `params`."""
    def bind(body, scope):
        named = {f.casefold(): f for f in fields}
        out = {}
        for k, v in body.items():
            out[named.get(k.casefold(), k)] = v
        return out if out != body else None

    def wrap(app, facts):
        return on_request(app, bind, where=where)
    wrap.__doc__ = doc
    return wrap


wrong_for("INV-PASS-001", "INV-PASS-001-members-bound-without-case", "params:interpreted-in-another-case")(
    bound_without_case(("prompt", "sessionId", "stream", "messages"), "invoke",
                       "Invoke binds request members to its fields without case: `Prompt` and `SESSIONID` take the "
                       "place of `prompt` and `sessionId` instead of reaching params."))
wrong_for("AGUI-PASS-002", "AGUI-PASS-002-members-bound-without-case", "params:interpreted-in-another-case")(
    bound_without_case(("threadId", "runId", "messages", "resume", "tools", "state", "context", "forwardedProps"),
                       "agui", "AG-UI binds request members to RunAgentInput's fields without case: `ThreadId` and "
                               "`STATE` take the place of `threadId` and `state` instead of reaching params."))
