"""Conditional broken servers of the input model (conformance/vocab/inputs.py): each is correct for every value the
suite sent before the model, and wrong only for one class of legitimate input, the way real servers go wrong
(accents folded, astral characters lost in a three-byte column, JSON written by hand, keys used as paths, a
case-insensitive store, lengths counted in the wrong unit, a falsy value read as absent, header values compared as
whole strings).

``INPUT_CLASSES`` names the classes each one is wrong for: ``test_zoo.py`` proves it caught by a default run,
``test_zoo_inputs.py`` proves it passes when those classes are withheld (the catch is the model's).
"""
from __future__ import annotations

import re
import secrets
import unicodedata
from datetime import datetime, timezone
from typing import Any, Callable
from urllib.parse import unquote_plus

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken
from tests.selftest.zoo_agui import on_events, on_request
from tests.selftest.zoo_mcp import hdr, meta_of, rpc_error

INPUT_CLASSES: dict[str, tuple[str, ...]] = {}   # broken server -> the input classes it is wrong for
ORIGINAL = "conformance.zoo.inputs.original"      # scope key: the value a request rewriter replaced
FORWARDED = ("tools", "state", "context", "forwardedProps")


def wrong_for(requirement: str, name: str, *classes: str):
    """`@broken(requirement, name=name)`, noting the input classes the server is wrong for."""
    def register(fn):
        broken(requirement, name=name)(fn)
        INPUT_CLASSES[name] = classes
        return fn
    return register


# -- how real servers mangle a string --------------------------------------------------------------------------
def strip_accents(text: str) -> str:
    """é -> e, ñ -> n (decomposed, combining marks dropped): a slug or ASCII-folding step."""
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                if not unicodedata.combining(c)))


def drop_astral(text: str) -> str:
    """Characters outside the BMP lost, as in a MySQL `utf8` (three-byte) column."""
    return "".join(c for c in text if ord(c) <= 0xFFFF)


def mangled(fn: Callable[[str], str]) -> Callable[[Any], Any]:
    return lambda value: fn(value) if isinstance(value, str) else value


def templated(obj: Any, value: str) -> bytes:
    """`obj` as JSON written by hand: the string `value` put between quotes without escaping."""
    return t._dumps(obj).replace(t._dumps(value), b'"' + value.encode() + b'"')


def needs_escape(value: Any) -> bool:
    return isinstance(value, str) and ('"' in value or "\\" in value)


def by_hand(app, where: str, pick: Callable[[Any], Any]):
    """JSON answers of `where` written by hand: the string `pick(obj)` put in unescaped."""
    def each(raw, scope, status, headers):
        ok, obj = t._loads(raw)
        value = pick(obj) if ok and isinstance(obj, dict) else None
        return templated(obj, value) if needs_escape(value) else raw
    return t.rewrite_body(app, each, where=where)


def frames_by_hand(app, where: str, pick: Callable[[Any], Any], head: bytes = b""):
    """Stream frames of `where` written by hand: the string `pick(obj)` of a frame's data put in unescaped (`head`:
    the lines before `data:`)."""
    def each(block, state, scope):
        if block is None:
            return None
        name, obj = t.sse_json(block)
        value = pick(obj) if isinstance(obj, dict) else None
        return head + b"data: " + templated(obj, value) + b"\n\n" if needs_escape(value) else block
    return t.rewrite_sse(app, each, where=where)


def on_json(app, where: str, fn: Callable[[dict], Any]):
    """fn(obj) mutates every JSON object answer of `where`."""
    def each(obj, scope, status, headers):
        if isinstance(obj, dict):
            fn(obj)
        return obj
    return t.rewrite_json_response(app, each, where=where)


def on_mcp_request(app, fn: Callable[[dict], Any]):
    """fn(body) mutates (or replaces, returning it) the JSON-RPC request object."""
    return t.rewrite_request_json(app, lambda body, scope: (fn(body) or body) if isinstance(body, dict) else None,
                                  where="mcp")


def on_progress(app, fn: Callable[[dict], Any]):
    """fn(params) mutates the params of every progress notification of an MCP stream."""
    def each(name, obj, state, scope):
        if isinstance(obj, dict) and obj.get("method") == "notifications/progress" and isinstance(obj.get("params"),
                                                                                                     dict):
            fn(obj["params"])
        return obj
    return t.rewrite_sse_json(app, each, where="mcp")


def keyed_elsewhere(app, where: str, field: str, pick: Callable[[str], str | None], echoed: Callable[[Any], Any]):
    """Requests whose string `field` `pick` maps to another key reach that key's instance; `echoed(app, restore)`
    puts the key sent back wherever the answer reports it."""
    def rewrite(body, scope):
        key = body.get(field)
        other = pick(key) if isinstance(key, str) else None
        if other is None or other == key:
            return None
        scope[ORIGINAL] = (other, key)
        return {**body, field: other}

    def restore(value, scope):
        other, key = scope.get(ORIGINAL, (None, None))
        return key if other is not None and value == other else value

    return echoed(t.rewrite_request_json(app, lambda body, scope: rewrite(body, scope) if isinstance(body, dict)
                                         else None, where=where), restore)


def invoke_echo(app, restore):
    def each(obj, scope, status, headers):
        if isinstance(obj, dict) and "sessionId" in obj:
            obj["sessionId"] = restore(obj["sessionId"], scope)
        return obj
    return t.rewrite_json_response(app, each, where="invoke")


def agui_echo(app, restore):
    def each(ev, state, scope):
        if ev.get("type") in ("RUN_STARTED", "RUN_FINISHED") and "threadId" in ev:
            ev["threadId"] = restore(ev["threadId"], scope)
        return ev
    return on_events(app, each)


# -- session keys ------------------------------------------------------------------------------------------------
def invoke_key(app, change: Callable[[Any], Any]):
    """The invoke result's `sessionId` comes back passed through `change`."""
    return on_json(app, "invoke", lambda obj: obj.update(sessionId=change(obj["sessionId"]))
                   if "sessionId" in obj else None)


def mcp_key(app, change: Callable[[Any], Any]):
    """A tool result's `structuredContent.sessionId` comes back passed through `change`."""
    def each(obj):
        sc = (obj.get("result") or {}).get("structuredContent") if isinstance(obj.get("result"), dict) else None
        if isinstance(sc, dict) and "sessionId" in sc:
            sc["sessionId"] = change(sc["sessionId"])
    return on_json(app, "mcp", each)


@wrong_for("INV-SESS-003", "INV-SESS-003-accents-stripped-from-echoed-key", "session-key:non-ascii",
           "session-key:composition")
def key_accents_stripped(app, facts):
    """The invoke result's sessionId comes back ASCII-folded (é -> e): the key is slugged on the way out."""
    return invoke_key(app, mangled(strip_accents))


@wrong_for("MCP-SESS-003", "MCP-SESS-003-astral-dropped-from-session", "session-key:astral")
def key_astral_dropped(app, facts):
    """`structuredContent.sessionId` loses characters outside the BMP (a three-byte `utf8` column)."""
    return mcp_key(app, mangled(drop_astral))


@wrong_for("INV-RES-001", "INV-RES-001-result-templated-key-unescaped", "session-key:json-escapes")
def key_unescaped(app, facts):
    """The invoke result is JSON written by hand: a sessionId holding `"` or `\\` goes in unescaped."""
    return by_hand(app, "invoke", lambda obj: obj.get("sessionId"))


@wrong_for("AGUI-SESS-002", "AGUI-SESS-002-punctuated-thread-new-instance", "session-key:punctuation")
def key_used_as_path(app, facts):
    """A threadId holding `/ ? # % & + = : ; ,` is used as a storage path and never found again: each run on it
    reaches a new instance (the ids are still echoed)."""
    return keyed_elsewhere(app, "agui", "threadId",
                           lambda key: f"{key}~{secrets.token_hex(4)}" if set(key) & set("/?#%&+=:;,") else None,
                           agui_echo)


@wrong_for("GEN-SESS-002", "GEN-SESS-002-keys-case-folded", "session-key:case-variant",
           "session-key:twin-case-fold")
def keys_case_folded(app, facts):
    """Invoke session keys live in a case-insensitive store (a `_ci` collation): `Key` and `KEY` share an instance."""
    return keyed_elsewhere(app, "invoke", "sessionId", str.casefold, invoke_echo)


@wrong_for("INV-SESS-005", "INV-SESS-005-key-limit-in-utf8-bytes", "session-key:256-multibyte")
def key_bytes_counted(app, facts):
    """The invoke session key's limit is 256 UTF-8 bytes, not 256 characters: refused with validation_failed."""
    return on_request(app, lambda body, scope: {**body, "sessionId": body["sessionId"] + "x" * 300}
                      if isinstance(body.get("sessionId"), str) and len(body["sessionId"].encode()) > 256 else None,
                      where="invoke")


@wrong_for("AGUI-SESS-004", "AGUI-SESS-004-thread-length-after-ascii-folding", "session-key:257-multibyte")
def key_folded_before_counting(app, facts):
    """The threadId's length is checked on its ASCII transliteration (what does not transliterate dropped): a
    threadId of 257 characters beyond ASCII is cut to 256 and runs instead of being refused."""
    def rewrite(body, scope):
        tid = body.get("threadId")
        if isinstance(tid, str) and len(tid) > 256 and len(tid.encode("ascii", "ignore")) <= 256:
            return {**body, "threadId": tid[:256]}
        return None
    return on_request(app, rewrite)


# -- AG-UI run ids -----------------------------------------------------------------------------------------------
def run_ids(app, change: Callable[[Any], Any], types=("RUN_STARTED", "RUN_FINISHED")):
    return on_events(app, lambda ev, state, scope: ev.update(runId=change(ev["runId"])) or ev
                     if ev.get("type") in types and "runId" in ev else ev)


@wrong_for("AGUI-ID-003", "AGUI-ID-003-accents-stripped-from-finished-run-id", "run-id:non-ascii",
           "run-id:composition")
def run_id_accents_stripped(app, facts):
    """RUN_FINISHED.runId comes back ASCII-folded (é -> e)."""
    return run_ids(app, mangled(strip_accents), ("RUN_FINISHED",))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-astral-dropped-from-run-id", "run-id:astral")
def run_id_astral_dropped(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId without its characters outside the BMP."""
    return run_ids(app, mangled(drop_astral))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-run-id-url-decoded", "run-id:punctuation")
def run_id_url_decoded(app, facts):
    """The runId makes a round trip through a query string: `%2f` comes back as `/`, `+` as a space."""
    return run_ids(app, mangled(unquote_plus))


@wrong_for("AGUI-FRAME-003", "AGUI-FRAME-003-run-started-templated", "run-id:json-escapes")
def run_started_unescaped(app, facts):
    """RUN_STARTED is JSON written by hand: a runId holding `"` or `\\` goes in unescaped."""
    return frames_by_hand(app, "agui", lambda obj: obj.get("runId") if obj.get("type") == "RUN_STARTED" else None)


# -- JSON-RPC ids ------------------------------------------------------------------------------------------------
def response_ids(app, change: Callable[[Any], Any]):
    return on_json(app, "mcp", lambda obj: obj.update(id=change(obj["id"])) if "id" in obj else None)


def integer(fn: Callable[[int], Any]) -> Callable[[Any], Any]:
    return lambda v: fn(v) if isinstance(v, int) and not isinstance(v, bool) else v


@wrong_for("MCP-METH-005", "MCP-METH-005-falsy-id-answered-null", "jsonrpc-id:falsy")
def falsy_id(app, facts):
    """An id of 0 or "" is read as absent: the response carries id null (`id || null`)."""
    return response_ids(app, lambda v: None if v in (0, "") and not isinstance(v, bool) else v)


@wrong_for("MCP-METH-005", "MCP-METH-005-id-sign-dropped", "jsonrpc-id:negative")
def unsigned_id(app, facts):
    """Integer ids are held unsigned: -1 comes back as 1."""
    return response_ids(app, integer(abs))


@wrong_for("MCP-METH-005", "MCP-METH-005-id-held-in-32-bits", "jsonrpc-id:large")
def int32_id(app, facts):
    """Integer ids are held in a signed 32-bit integer: ids beyond it wrap around."""
    return response_ids(app, integer(lambda v: (v + 2**31) % 2**32 - 2**31))


@wrong_for("MCP-METH-005", "MCP-METH-005-numeric-string-id-as-number", "jsonrpc-id:numeric-string")
def numeric_string_id(app, facts):
    """A string id of digits is parsed and answered as a number ("7" -> 7)."""
    def change(v):
        return int(v) if isinstance(v, str) and v.lstrip("-").isdigit() and v.lstrip("-") else v
    return response_ids(app, change)


@wrong_for("MCP-METH-005", "MCP-METH-005-accents-stripped-from-string-id", "jsonrpc-id:non-ascii",
           "jsonrpc-id:transformable")
def id_accents_stripped(app, facts):
    """String ids come back ASCII-folded (é -> e)."""
    return response_ids(app, mangled(strip_accents))


@wrong_for("MCP-METH-005", "MCP-METH-005-astral-dropped-from-string-id", "jsonrpc-id:astral")
def id_astral_dropped(app, facts):
    """String ids lose their characters outside the BMP."""
    return response_ids(app, mangled(drop_astral))


@wrong_for("MCP-SESS-005", "MCP-SESS-005-response-templated-id", "jsonrpc-id:json-escapes")
def id_unescaped(app, facts):
    """JSON-RPC responses are JSON written by hand: a string id holding `"` or `\\` goes in unescaped."""
    return by_hand(app, "mcp", lambda obj: obj.get("id"))


# -- progress tokens ---------------------------------------------------------------------------------------------
@wrong_for("MCP-PROG-001", "MCP-PROG-001-falsy-token-ignored", "progress-token:falsy")
def falsy_token(app, facts):
    """A progress token of 0 or "" is read as absent: one JSON body instead of a stream."""
    def drop(body):
        meta = meta_of(body)
        if meta.get("progressToken") in (0, "") and not isinstance(meta.get("progressToken"), bool):
            del meta["progressToken"]
    return on_mcp_request(app, drop)


@wrong_for("MCP-PROG-005", "MCP-PROG-005-accents-stripped-from-token", "progress-token:non-ascii",
           "progress-token:composition")
def token_accents_stripped(app, facts):
    """Progress notifications carry the token ASCII-folded (é -> e)."""
    return on_progress(app, lambda params: params.update(progressToken=mangled(strip_accents)(params.get(
        "progressToken"))))


@wrong_for("MCP-PROG-005", "MCP-PROG-005-astral-dropped-from-token", "progress-token:astral")
def token_astral_dropped(app, facts):
    """Progress notifications carry the token without its characters outside the BMP."""
    return on_progress(app, lambda params: params.update(progressToken=mangled(drop_astral)(params.get(
        "progressToken"))))


@wrong_for("MCP-PROG-002", "MCP-PROG-002-notification-templated", "progress-token:json-escapes")
def token_unescaped(app, facts):
    """Progress notifications are JSON written by hand: a token holding `"` or `\\` goes in unescaped."""
    return frames_by_hand(app, "mcp", lambda obj: obj["params"].get("progressToken")
                          if isinstance(obj.get("params"), dict) else None, head=b"event: message\n")


# -- resume and pass-through ---------------------------------------------------------------------------------------
@wrong_for("MCP-PAUSE-002", "MCP-PAUSE-002-falsy-resume-ignored", "resume:falsy")
def falsy_resume(app, facts):
    """`arguments.resume` is tested for truth: false, 0 and "" are read as no resume (a new run starts)."""
    def drop(body):
        args = (body.get("params") or {}).get("arguments") if isinstance(body.get("params"), dict) else None
        if isinstance(args, dict) and "resume" in args and args["resume"] in (False, 0, "") \
                and args["resume"] is not None:
            del args["resume"]
    return on_mcp_request(app, drop)


@wrong_for("AGUI-PASS-001", "AGUI-PASS-001-zero-forwarded-fields-omitted", "params:falsy")
def forwarded_omitempty(app, facts):
    """`tools`, `state`, `context` and `forwardedProps` of a zero value ([], {}, 0, "", false) are left out, as
    Go's `omitempty` does."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items()
                                                if k not in FORWARDED or v is None or bool(v)})


def bound(body: dict) -> dict:
    """A qs-style binder's reading of a body's members: `a.b` and `a[b]` nest under `a`, `a[]` is a list under `a`."""
    out: dict = {}
    for name, value in body.items():
        path = [p for p in re.split(r"[.\[\]]+", name) if p] if re.search(r"[.\[]", name) else [name]
        at = out
        for part in path[:-1]:
            at = at.setdefault(part, {}) if isinstance(at.get(part, {}), dict) else at
        at[path[-1] if path else name] = value
    return out


@wrong_for("INV-PASS-001", "INV-PASS-001-member-names-bound-as-paths", "params:binder-syntax")
def invoke_names_bound(app, facts):
    """Invoke binds the request's members with a qs-style binder: `conf.dotted` reaches params as
    `{"conf": {"dotted": …}}`."""
    return on_request(app, lambda body, scope: bound(body), where="invoke")


@wrong_for("AGUI-PASS-002", "AGUI-PASS-002-operator-names-sanitized", "params:binder-syntax")
def agui_names_sanitized(app, facts):
    """AG-UI passes the request through a Mongo sanitizer: members whose names start with `$` or hold a `.` are
    dropped."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items()
                                                if not (k.startswith("$") or "." in k)})


@wrong_for("INV-PASS-001", "INV-PASS-001-date-strings-parsed", "params:formatted-strings")
def invoke_dates_parsed(app, facts):
    """Invoke reads the request with a date reviver: a string member that reads as an ISO 8601 date-time reaches
    params as the date written back in UTC (`2024-05-01T08:00:00.500Z`)."""
    def revived(value):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) and \
                len(value) > 18 and value[4:5] == "-" and value[10:11] == "T" else None
        except ValueError:
            when = None
        if when is None or when.tzinfo is None:
            return value
        return when.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return on_request(app, lambda body, scope: {k: revived(v) for k, v in body.items()}, where="invoke")


@wrong_for("AGUI-ID-002", "AGUI-ID-002-empty-run-id-replaced", "run-id:empty")
def empty_run_id_replaced(app, facts):
    """`runId` is read as `input.runId || newRunId()`: an empty runId, sent, is taken for one left out, and the run
    reports an id of its own."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items() if k != "runId"}
                      if body.get("runId") == "" else None)


@wrong_for("AGUI-PASS-001", "AGUI-PASS-001-null-forwarded-fields-omitted", "params:null")
def forwarded_null_omitted(app, facts):
    """`tools`, `state`, `context` and `forwardedProps` that are null are left out (read as absent)."""
    return on_request(app, lambda body, scope: {k: v for k, v in body.items()
                                                if not (k in FORWARDED and v is None)})


@wrong_for("AGUI-PASS-002", "AGUI-PASS-002-line-separators-cut-from-names", "params:json-escapes")
def names_lose_separators(app, facts):
    """Unknown field names pass a line-oriented store: U+2028, U+2029, `"` and `\\` are cut out of them."""
    cut = str.maketrans("", "", '\u2028\u2029"\\')
    return on_request(app, lambda body, scope: {k if k in FORWARDED else k.translate(cut): v for k, v in body.items()})


@wrong_for("INV-PASS-003", "INV-PASS-003-astral-dropped-from-extra-data", "extra-data:multibyte-inside")
def extra_data_astral_dropped(app, facts):
    """The extra data field is stored apart, in a three-byte `utf8` column: its characters outside the BMP are lost."""
    field = facts["extra_data_field"]

    def strip(value):
        if isinstance(value, str):
            return drop_astral(value)
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        return value
    return on_request(app, lambda body, scope: {**body, field: strip(body[field])} if field in body else None,
                      where="invoke")


@wrong_for("INV-LIM-004", "INV-LIM-004-extra-data-counted-in-characters", "extra-data:multibyte-outside")
def extra_data_characters(app, facts):
    """The extra data limit counts characters of the JSON (JavaScript's `JSON.stringify(x).length`), not bytes: a
    value of 8 KB in fewer than 4096 characters is taken (and the run starts)."""
    import json
    field = facts["extra_data_field"]

    def rewrite(body, scope):
        if field not in body:
            return None
        text = json.dumps(body[field], ensure_ascii=False, separators=(",", ":"))
        return {k: v for k, v in body.items() if k != field} if len(text) <= 4096 < len(text.encode()) else None
    return on_request(app, rewrite, where="invoke")


# -- header forms ----------------------------------------------------------------------------------------------------
def header_swap(app, name: str, test: Callable[[str], bool], new: str | None, where=None):
    """A request whose header `name` passes `test` reaches the app with `new` instead (None: without it)."""
    def change(headers, scope):
        value = t.header(headers, name)
        if value is None or not test(value.decode("latin-1")):
            return headers
        return t.with_header(headers, name, new) if new is not None else t.without(headers, name)
    return t.rewrite_request_headers(app, change, where=where)


@wrong_for("INV-RES-001", "INV-RES-001-content-type-compared-whole", "content-type:parameter")
def content_type_whole(app, facts):
    """Content-Type is compared as a whole string: `application/json; charset=utf-8` is refused (415)."""
    return header_swap(app, "content-type", lambda v: ";" in v and v.split(";")[0].strip().lower()
                       == "application/json", "text/plain")


@wrong_for("AGUI-FRAME-001", "AGUI-FRAME-001-media-type-case-sensitive", "content-type:case")
def content_type_case(app, facts):
    """The media type is compared case-sensitively: `Application/JSON` is refused (415)."""
    return header_swap(app, "content-type", lambda v: v.split(";")[0].strip() != v.split(";")[0].strip().lower(),
                       "text/plain")


@wrong_for("INV-SEL-002", "INV-SEL-002-accept-case-sensitive", "accept:case")
def accept_case(app, facts):
    """Accept is matched case-sensitively: `Text/Event-Stream` does not select streaming."""
    return header_swap(app, "accept", lambda v: "text/event-stream" in v.lower() and "text/event-stream" not in v,
                       "application/json", where="invoke")


@wrong_for("INV-SEL-002", "INV-SEL-002-accept-compared-whole", "accept:weight")
def accept_whole(app, facts):
    """Accept is compared as a whole string: `text/event-stream;q=1` does not select streaming."""
    return header_swap(app, "accept", lambda v: v.lower().startswith("text/event-stream") and ";" in v,
                       "application/json", where="invoke")


@wrong_for("MCP-SESS-005", "MCP-SESS-005-accept-must-be-exact", "accept:list-forms")
def accept_exact(app, facts):
    """MCP answers 406 unless Accept is exactly `application/json, text/event-stream`."""
    def where(scope):
        value = hdr(scope, "accept")
        return t.path_kind(scope.get("path", "")) == "mcp" and value is not None \
            and value != "application/json, text/event-stream"
    return t.respond(app, 406, rpc_error(-32600, "Accept must be application/json, text/event-stream"), where=where)


@wrong_for("AUTH-KEY-001", "AUTH-KEY-001-scheme-case-sensitive", "auth-scheme:case")
def scheme_case(app, facts):
    """The Bearer scheme is matched case-sensitively: `bearer <key>` is refused (401)."""
    return header_swap(app, "authorization", lambda v: v[:7].lower() == "bearer " and not v.startswith("Bearer "),
                       None)


# -- Unicode's other general categories: what a server drops or collapses -------------------------------------------
def drop_categories(*categories: str) -> Callable[[str], str]:
    """Characters beyond ASCII of these general categories removed."""
    return lambda text: "".join(c for c in text if c.isascii() or unicodedata.category(c) not in categories)


SYMBOLS = ("Sm", "Sk", "Pi", "Pf", "Ps", "Pe", "Pc", "Nl", "Lm")   # what a `[\\w-]` filter drops beyond ASCII


def drop_controls(text: str) -> str:
    """Control characters removed, the whitespace ones (tab, line feed, carriage return) kept."""
    return "".join(c for c in text if unicodedata.category(c) != "Cc" or c in "\t\n\r")


def collapse_inner_whitespace(text: str) -> str:
    """Runs of spaces and tabs inside (the ogham space mark too) made one ASCII space, as a clean-up does."""
    return re.sub(r"(?<=\S)[ \t\u1680]+(?=\S)", lambda m: " " if m.group() != " " else m.group(), text)


@wrong_for("INV-SESS-003", "INV-SESS-003-format-characters-stripped-from-key", "session-key:format")
def key_format_stripped(app, facts):
    """The invoke result's sessionId loses its format characters (zero-width space and joiner, soft hyphen, BOM):
    an "invisible characters" clean-up."""
    return invoke_key(app, mangled(drop_categories("Cf")))


@wrong_for("MCP-SESS-003", "MCP-SESS-003-inner-whitespace-collapsed", "session-key:inner-whitespace")
def key_whitespace_collapsed(app, facts):
    """`structuredContent.sessionId` comes back with each run of inner whitespace made one space."""
    return mcp_key(app, mangled(collapse_inner_whitespace))


@wrong_for("INV-SESS-003", "INV-SESS-003-private-use-dropped-from-key", "session-key:private-use")
def key_private_use_dropped(app, facts):
    """The invoke result's sessionId loses private-use characters (a store that keeps assigned characters only)."""
    return invoke_key(app, mangled(drop_categories("Co")))


@wrong_for("INV-SESS-003", "INV-SESS-003-controls-stripped-from-key", "session-key:control")
def key_controls_stripped(app, facts):
    """The invoke result's sessionId loses its control characters (a log-safe clean-up)."""
    return invoke_key(app, mangled(drop_controls))


@wrong_for("INV-SESS-003", "INV-SESS-003-symbols-dropped-from-key", "session-key:categories")
def key_symbols_dropped(app, facts):
    """The invoke result's sessionId loses symbols and other punctuation (a `[\\w-]` filter that keeps letters)."""
    return invoke_key(app, mangled(drop_categories(*SYMBOLS)))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-format-characters-stripped-from-run-id", "run-id:format")
def run_id_format_stripped(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId without its format characters."""
    return run_ids(app, mangled(drop_categories("Cf")))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-inner-whitespace-collapsed-in-run-id", "run-id:inner-whitespace")
def run_id_whitespace_collapsed(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId with each run of inner whitespace made one space."""
    return run_ids(app, mangled(collapse_inner_whitespace))


@wrong_for("AGUI-ID-003", "AGUI-ID-003-private-use-dropped-from-finished-run-id", "run-id:private-use")
def run_id_private_use_dropped(app, facts):
    """RUN_FINISHED.runId loses private-use characters."""
    return run_ids(app, mangled(drop_categories("Co")), ("RUN_FINISHED",))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-controls-stripped-from-run-id", "run-id:control")
def run_id_controls_stripped(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId without its control characters."""
    return run_ids(app, mangled(drop_controls))


@wrong_for("AGUI-ID-002", "AGUI-ID-002-symbols-dropped-from-run-id", "run-id:categories")
def run_id_symbols_dropped(app, facts):
    """RUN_STARTED and RUN_FINISHED report the runId without its symbols and other punctuation."""
    return run_ids(app, mangled(drop_categories(*SYMBOLS)))
