"""Authentication and agent addressing: credentials accepted and refused on invoke, AG-UI and MCP, the MCP 401
challenge (parsed by RFC 9110 rules, not compared as a string), agent-bound tokens, and agentId handling.

Also home of the small `WWW-Authenticate` parser (`parse_challenges`) the metadata checks share.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

from conformance import protocols as p
from conformance import schemas
from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.scenarios.auth import INVOKE_AGUI_CREDENTIALS
from conformance.wire.http import Exchange

SCOPE = "agent:invoke"
JSONRPC_INVALID_REQUEST = -32600


# -- RFC 9110 §11.6.1 WWW-Authenticate --------------------------------------------------------
_TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68 = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/")
_OWS = " \t"


@dataclass
class Challenge:
    scheme: str                                   # as sent; compare with .lower()
    params: dict[str, str] = field(default_factory=dict)   # names lower-cased, values unquoted
    quoted: dict[str, bool] = field(default_factory=dict)  # whether each value was a quoted-string
    token68: str | None = None


class _Reader:
    def __init__(self, text: str):
        self.s, self.i = text, 0

    def end(self) -> bool:
        return self.i >= len(self.s)

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip(self, chars: str) -> int:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1
        return self.i - start

    def token(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in _TCHAR:
            self.i += 1
        return self.s[start:self.i]

    def quoted_string(self) -> str:
        assert self.peek() == '"'
        self.i += 1
        out = []
        while True:
            if self.end():
                raise ValueError(f"unterminated quoted-string starting before column {self.i}")
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\":
                if self.i + 1 >= len(self.s):
                    raise ValueError("quoted-string ends in a lone backslash")
                out.append(self.s[self.i + 1])
                self.i += 2
                continue
            if c not in "\t" and (ord(c) < 0x20 or ord(c) == 0x7F):
                raise ValueError(f"control character {c!r} inside a quoted-string")
            out.append(c)
            self.i += 1

    def error(self, what: str) -> ValueError:
        return ValueError(f"{what} at column {self.i + 1}: {self.s[max(0, self.i - 10):self.i + 20]!r}")


def _try_param(r: _Reader) -> tuple[str, str, bool] | None:
    """auth-param = token BWS "=" BWS ( token / quoted-string ); None (position restored) if not one."""
    start = r.i
    name = r.token()
    if name:
        r.skip(_OWS)
        if r.peek() == "=":
            r.i += 1
            r.skip(_OWS)
            if r.peek() == '"':
                return name, r.quoted_string(), True
            value = r.token()
            if value:
                return name, value, False
    r.i = start
    return None


def parse_challenges(value: str) -> list[Challenge]:
    """Parse a WWW-Authenticate field value (several field lines joined with ", ") into challenges.

    RFC 9110: challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]; auth-param = token BWS "=" BWS
    ( token / quoted-string ); lists tolerate empty elements and optional whitespace; parameter names are
    case-insensitive and occur at most once per challenge. Raises ValueError for a malformed value."""
    r = _Reader(value)
    out: list[Challenge] = []
    while True:
        r.skip(_OWS + ",")
        if r.end():
            break
        scheme = r.token()
        if not scheme:
            raise r.error("expected an auth-scheme")
        ch = Challenge(scheme)
        out.append(ch)
        spaces = r.skip(_OWS)
        if r.end() or r.peek() == ",":
            continue
        if not spaces:
            raise r.error(f"expected a space after the scheme {scheme!r}")
        first = _try_param(r)
        if first is None:
            start = r.i
            while r.peek() in _TOKEN68 and not r.end():
                r.i += 1
            if r.i == start:
                raise r.error("expected an auth-param or token68")
            r.skip("=")
            ch.token68 = r.s[start:r.i]
            r.skip(_OWS)
            if not (r.end() or r.peek() == ","):
                raise r.error("unexpected text after token68")
            continue
        pending: tuple[str, str, bool] | None = first
        while pending is not None:
            name, val, quoted = pending
            key = name.lower()
            if key in ch.params:
                raise ValueError(f"parameter {name!r} occurs twice in the {scheme!r} challenge")
            ch.params[key], ch.quoted[key] = val, quoted
            r.skip(_OWS)
            if r.end():
                break
            if r.peek() != ",":
                raise r.error("expected ',' between auth-params")
            while r.peek() == "," or (r.peek() and r.peek() in _OWS):
                r.i += 1
            if r.end():
                break
            pending = _try_param(r)    # None: the next element is a new challenge
    return out


def challenge_params(ex: Exchange) -> dict[str, str]:
    """The parameters of the Bearer challenge of a response; AssertionError saying what is wrong."""
    lines = ex.headers.get_list("www-authenticate") if ex.headers is not None else []
    if not lines:
        raise AssertionError(f"the {ex.status} answer has no WWW-Authenticate header")
    joined = ", ".join(lines)
    try:
        challenges = parse_challenges(joined)
    except ValueError as exc:
        raise AssertionError(f"WWW-Authenticate {joined[:200]!r} is not valid RFC 9110 syntax: {exc}") from None
    bearer = [c for c in challenges if c.scheme.lower() == "bearer"]
    if not bearer:
        raise AssertionError(f"WWW-Authenticate {joined[:200]!r} has no Bearer challenge "
                             f"(schemes: {[c.scheme for c in challenges]})")
    return bearer[0].params


# -- RFC 3986 §6.2.2-6.2.3 URL equivalence ----------------------------------------------------
_DEFAULT_PORTS = {"http": "80", "https": "443"}
_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")


def _percent_normalized(text: str) -> str:
    """Upper-case hex digits; decode the triplets of unreserved characters (RFC 3986 §6.2.2.1-2)."""
    def one(m: re.Match) -> str:
        char = chr(int(m.group(1), 16))
        return char if char in _UNRESERVED else "%" + m.group(1).upper()
    return _PCT.sub(one, text)


def _without_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 remove_dot_segments."""
    out: list[str] = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith("./"):
            path = path[2:]
        elif path.startswith("/./"):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../"):
            path = path[3:]
            out = out[:-1]
        elif path == "/..":
            path = "/"
            out = out[:-1]
        elif path in (".", ".."):
            path = ""
        else:
            cut = path.find("/", 1)
            cut = len(path) if cut == -1 else cut
            out.append(path[:cut])
            path = path[cut:]
    return "".join(out)


def normalized_url(url: str) -> str:
    """The RFC 3986 normal form of an http(s) URL: scheme and host in lower case, default port dropped, empty path
    as "/", percent-encoding normalized, dot segments removed. Two spellings of one URL compare equal."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    netloc = (userinfo + "@" if userinfo else "") + host
    if port is not None and str(port) != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    path = _without_dot_segments(_percent_normalized(parts.path))
    if not path and parts.netloc:
        path = "/"
    return urlunsplit((scheme, netloc, path, _percent_normalized(parts.query), _percent_normalized(parts.fragment)))


def same_url(a: Any, b: str) -> bool:
    """Whether `a` is a string naming the same URL as `b` (RFC 3986 syntax- and scheme-based normalization)."""
    return isinstance(a, str) and normalized_url(a) == normalized_url(b)


def url_under(url: str, base: str) -> bool:
    """Whether `url` lies under the base URL `base` (both normalized): same origin, path below base's path."""
    return normalized_url(url).startswith(normalized_url(base).rstrip("/") + "/")


def spelled(value: str, expected: str) -> str:
    """A pass note when an equivalent URL is spelled differently than the suite would."""
    return "" if value == expected else f"{value!r} equals {expected!r} after RFC 3986 normalization"


def metadata_url(target, agent_id: str | None = None) -> str:
    return (f"{target.base_url.rstrip('/')}/.well-known/oauth-protected-resource/v1/agents/"
            f"{agent_id or target.agent_id}/mcp")


# -- shared helpers ---------------------------------------------------------------------------
def step(rec: Recording, label: str) -> Exchange:
    """The exchange of a step, or NotAssessed naming the option its skip needed."""
    skipped = rec.facts.get("skipped", {})
    if label in skipped:
        raise NotAssessed(skipped[label])
    return rec.get(label)


def sent(label: str) -> str:
    return {
        "no-credential": "no Authorization header", "empty-bearer": "the bare scheme `Bearer` and no credential",
        "basic-scheme": "the API key under the Basic scheme", "unknown-key": "an unknown `<svc>_live_…` key",
        "unknown-token": "an unknown `<svc>_oat_…` token", "revoked-key": "the revoked key (--revoked-key)",
        "expired-token": "the expired token (--expired-token)",
        "other-agent-token": "the access token, addressed to --other-agent-id",
        "query-key": "no header, the API key as `access_token` query parameter",
        "query-token": "no header, the access token as `access_token` query parameter",
        "body-key": "no header, the API key as an `access_token` member of the JSON body",
        "malformed-agent": "a valid API key to an agentId without the `agt_` prefix",
        "unknown-agent": "a valid API key to a well-formed agentId that does not exist",
        "undeployed-agent": "a valid API key to the undeployed agent (--undeployed-agent-id)",
    }.get(label, label)


def got(ex: Exchange) -> str:
    if ex.status is None:
        return f"no response ({ex.error})"
    body = ex.body[:240].decode("utf-8", "replace")
    return ex.redact(f"HTTP {ex.status} {ex.header('content-type') or '(no content-type)'} {body!r}")


def is_4xx(ex: Exchange) -> bool:
    return ex.status is not None and 400 <= ex.status < 500


def error_code(ex: Exchange, what: str) -> Any:
    """`error.code` of an error body; AssertionError if the body is not `{error: {...}}`."""
    body = ex.json()
    err = body.get("error") if isinstance(body, dict) else None
    assert isinstance(err, dict), f"{what}: expected the error body {{error: {{code, message, requestId}}}}, got {got(ex)}"
    return err.get("code")


def rpc_error(ex: Exchange, what: str) -> dict[str, Any]:
    """The JSON-RPC error body of an MCP refusal (jsonrpc, id possibly null, integer code, string message)."""
    body = ex.json()
    problems = schemas.errors("mcp-error", body)
    assert not problems, f"{what}: the body is not a JSON-RPC error body ({'; '.join(problems[:3])}): {got(ex)}"
    assert "result" not in body, f"{what}: a refusal carries both `error` and `result`: {got(ex)}"
    return body


def refused_4xx(rec: Recording, label: str, *, status: int | None = None, code: str | None = None,
                error_body: bool = False) -> Exchange:
    """Invoke/AG-UI: the step was refused before any run with a 4xx (or `status`), optionally `error.code` = code."""
    ex = step(rec, label)
    want = str(status) if status else "a 4xx"
    what = f"{rec.scenario} sent {sent(label)}"
    assert (ex.status == status) if status else is_4xx(ex), f"{what}; expected {want} refusal, got {got(ex)}"
    if code is not None:
        actual = error_code(ex, what)
        assert actual == code, f"{what}; expected error.code {code!r}, got {actual!r}: {got(ex)}"
    if error_body:
        schemas.check("error-body", ex.json(), what)
    return ex


def mcp_refused(rec: Recording, label: str, status: int | None, code: int | None = None) -> dict[str, Any]:
    """MCP: the step answered `status` (None: any 4xx) with a JSON-RPC error body, optionally `error.code` = code."""
    ex = step(rec, label)
    what = f"{rec.scenario} sent {sent(label)}"
    ok = ex.status == status if status else is_4xx(ex)
    assert ok, f"{what}; expected HTTP {status or '4xx'} with a JSON-RPC error, got {got(ex)}"
    body = rpc_error(ex, what)
    if code is not None:
        actual = body["error"]["code"]
        assert actual == code, f"{what}; expected error.code {code}, got {actual}: {got(ex)}"
    return body


def each(labels: Iterable[str], rec: Recording, fn) -> str:
    """Apply fn to every step that ran; NotAssessed (with the reasons) if none did."""
    ran, reasons = [], []
    for label in labels:
        try:
            step(rec, label)
        except NotAssessed as exc:
            reasons.append(str(exc))
            continue
        fn(label)
        ran.append(label)
    if not ran:
        raise NotAssessed("; ".join(reasons) or "no step ran")
    return ""


def register(fn, reqs: tuple[str, ...], scenarios_by_name: dict[str, str]) -> None:
    """One check per protocol scenario (so --protocols keeps the ones it can), same rule."""
    for suffix, scn in scenarios_by_name.items():
        check(*reqs, scenarios=[scn], name=f"{fn.__name__}_{suffix}")(fn)


BOTH = {"invoke": "access.invoke", "agui": "access.agui"}


# -- API keys on invoke and AG-UI -------------------------------------------------------------
def api_key_accepted(rec: Recording):
    """Sends the plain prompt with `Authorization: Bearer <--api-key>`; the call is accepted and replies."""
    ex = rec.get("accepted")
    reply = rec.facts.get("reply")
    what = f"{rec.scenario}: the plain prompt with the API key"
    assert ex.status == 200, f"{what}; expected 200, got {got(ex)}"
    if rec.facts.get("protocol") == "invoke":
        body = ex.json()
        text = body.get("result") if isinstance(body, dict) else None
    else:
        text = p.agui_text(p.agui_events(ex))
    if reply is not None:
        assert text == reply, f"{what}; expected the reply {reply!r}, got {str(text)[:200]!r}"


register(api_key_accepted, ("AUTH-KEY-001",), BOTH)


@check("AUTH-KEY-001", scenarios=["mcp.modern"])
def api_key_accepted_mcp(rec: Recording):
    """Sends a 2026-07-28 tools/call with `Authorization: Bearer <--api-key>`; it answers 200 with a result."""
    ex = rec.get("call")
    assert ex.status == 200, f"tools/call with the API key: expected 200, got {got(ex)}"
    assert "result" in p.mcp_response(ex), f"tools/call with the API key: expected a result, got {got(ex)}"


@check("AUTH-KEY-002", scenarios=["access.invoke"])
def invoke_without_credential(rec: Recording):
    """Sends invoke without Authorization; refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, "no-credential", code="unauthenticated")


@check("AUTH-KEY-003", scenarios=["access.agui"])
def agui_without_credential(rec: Recording):
    """Sends AG-UI without Authorization; refused before the stream with a 4xx and `unauthenticated`."""
    refused_4xx(rec, "no-credential", code="unauthenticated")


def unknown_key_refused(rec: Recording):
    """Sends an unknown `<svc>_live_…` key; refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, "unknown-key", code="unauthenticated")


def revoked_key_refused(rec: Recording):
    """Sends the revoked key (--revoked-key); refused with a 4xx and `error.code` `unauthenticated`."""
    refused_4xx(rec, "revoked-key", code="unauthenticated")


def other_scheme_refused(rec: Recording):
    """Sends the API key under Basic, and a bare `Bearer`; both refused with a 4xx and `unauthenticated`."""
    for label in ("basic-scheme", "empty-bearer"):
        refused_4xx(rec, label, code="unauthenticated")


def challenge_on_401(rec: Recording):
    """Every 401 of the invoke/AG-UI credential refusals carries a WWW-Authenticate header (RFC 9110 §11.6.1)."""
    seen = []
    for label, _facts in INVOKE_AGUI_CREDENTIALS:
        try:
            ex = step(rec, label)
        except NotAssessed:
            continue
        if ex.status == 401:
            seen.append(label)
            assert ex.headers is not None and ex.headers.get("www-authenticate"), \
                f"{rec.scenario} sent {sent(label)}; the 401 has no WWW-Authenticate header (RFC 9110 §11.6.1)"
    if not seen:
        raise NotAssessed("no 401 was observed (the spec leaves the invoke/AG-UI status open)")


def token_bound_to_its_agent(rec: Recording):
    """Sends the access token to --other-agent-id; refused with a 4xx, so that agent never runs."""
    refused_4xx(rec, "other-agent-token")


register(unknown_key_refused, ("AUTH-KEY-004",), BOTH)
register(revoked_key_refused, ("AUTH-KEY-005",), BOTH)
register(other_scheme_refused, ("AUTH-KEY-006",), BOTH)
register(challenge_on_401, ("AUTH-KEY-007",), BOTH)
register(token_bound_to_its_agent, ("AUTH-BIND-001",), BOTH)


# -- credential forms -------------------------------------------------------------------------
_LIVE = re.compile(r"^(.+?)_live_(.+)$", re.S)
_OAT = re.compile(r"^(.+?)_oat_(.+)$", re.S)


@check("AUTH-KEY-008", scenarios=["access.invoke"])
def api_key_form(rec: Recording):
    """The API key the suite was given has the form `<svc>_live_<opaque>` (checked locally, never printed)."""
    key = rec.target.api_key or ""
    assert _LIVE.match(key), "the --api-key value does not have the form `<svc>_live_<opaque>` (value not shown)"


@check("AUTH-KEY-009", scenarios=["access.mcp"])
def access_token_form(rec: Recording):
    """The access token has the form `<svc>_oat_<opaque>` with the API key's `<svc>` (never printed)."""
    token = rec.target.access_token
    if not token:
        raise NotAssessed(f"needs {rec.target.option_for('access_token')}, which was not given")
    m = _OAT.match(token)
    assert m, "the --access-token value does not have the form `<svc>_oat_<opaque>` (value not shown)"
    live = _LIVE.match(rec.target.api_key or "")
    if live:
        assert live.group(1) == m.group(1), "the access token's `<svc>` prefix differs from the API key's"


# -- MCP credentials --------------------------------------------------------------------------
MCP_401_LABELS = ("no-credential", "empty-bearer", "unknown-key", "unknown-token", "revoked-key", "expired-token",
                  "query-key", "query-token", "body-key")


@check("AUTH-MCP-001", scenarios=["access.mcp"])
def access_token_accepted(rec: Recording):
    """Sends tools/call with the access token on its own agent; 200 with the plain reply."""
    ex = step(rec, "accepted-token")
    assert ex.status == 200, f"tools/call with the access token: expected 200, got {got(ex)}"
    msg = p.mcp_response(ex)
    result = msg.get("result")
    assert isinstance(result, dict), f"tools/call with the access token: expected a result, got {got(ex)}"
    reply = rec.facts.get("reply")
    if reply is not None:
        text = p.mcp_text(result)
        assert text == reply, f"tools/call with the access token: expected the reply {reply!r}, got {text[:200]!r}"


@check("AUTH-MCP-002", scenarios=["access.mcp"])
def access_token_other_agent(rec: Recording):
    """Sends tools/call with the access token to --other-agent-id; 404 with JSON-RPC error -32600."""
    mcp_refused(rec, "other-agent-token", 404, JSONRPC_INVALID_REQUEST)


def _mcp_401(*labels: str):
    def fn(rec: Recording):
        each(labels, rec, lambda label: mcp_refused(rec, label, 401))
    return fn


for _req, _labels, _name, _doc in (
        ("AUTH-MCP-003", ("no-credential",), "mcp_no_credential", "no Authorization header"),
        ("AUTH-MCP-004", ("empty-bearer",), "mcp_empty_bearer", "the bare scheme `Bearer` and no credential"),
        ("AUTH-MCP-005", ("unknown-key", "unknown-token"), "mcp_unknown_credential",
         "unknown `<svc>_live_…` and `<svc>_oat_…` credentials"),
        ("AUTH-MCP-006", ("revoked-key",), "mcp_revoked_key", "the revoked key (--revoked-key)"),
        ("AUTH-MCP-007", ("expired-token",), "mcp_expired_token", "the expired token (--expired-token)"),
        ("AUTH-MCP-010", ("query-key", "query-token", "body-key"), "mcp_credential_outside_header",
         "a valid credential only in the query string or the JSON body")):
    _fn = _mcp_401(*_labels)
    _fn.__name__ = _name
    _fn.__doc__ = f"Sends tools/call with {_doc}; HTTP 401 with a JSON-RPC error body."
    check(_req, scenarios=["access.mcp"], name=_name)(_fn)


def _401s(rec: Recording) -> list[tuple[str, Exchange]]:
    out = []
    for label in MCP_401_LABELS:
        try:
            ex = step(rec, label)
        except NotAssessed:
            continue
        if ex.status == 401:
            out.append((label, ex))
    if not out:
        raise NotAssessed("no MCP 401 was observed (AUTH-MCP-003…007 say why)")
    return out


@check("AUTH-MCP-008", scenarios=["access.mcp"])
def mcp_401_challenge(rec: Recording):
    """Every MCP 401 carries `WWW-Authenticate: Bearer resource_metadata="<this agent's metadata URL>",
    scope="agent:invoke"` (parsed by RFC 9110 rules; parameter order, quoting and case of names free)."""
    expected = metadata_url(rec.target)
    extras: set[str] = set()
    notes: set[str] = set()
    for label, ex in _401s(rec):
        what = f"the 401 for {sent(label)}"
        try:
            params = challenge_params(ex)
        except AssertionError as exc:
            raise AssertionError(f"{what}: {exc}") from None
        rm, scope = params.get("resource_metadata"), params.get("scope")
        assert same_url(rm, expected), \
            f"{what}: resource_metadata is {rm!r}, expected {expected!r} (compared after RFC 3986 normalization)"
        notes.add(spelled(rm, expected))
        assert scope == SCOPE, f"{what}: scope is {scope!r}, expected {SCOPE!r}"
        extras |= set(params) - {"resource_metadata", "scope"}
    notes.discard("")
    if extras:
        notes.add(f"extra challenge parameters (allowed): {sorted(extras)}")
    return "; ".join(sorted(notes))


@check("AUTH-MCP-009", scenarios=["access.mcp"])
def mcp_401_code(rec: Recording):
    """Every MCP 401 has a JSON-RPC error body with `error.code` -32600."""
    for label, ex in _401s(rec):
        mcp_refused(rec, label, 401, JSONRPC_INVALID_REQUEST)


# -- agent addressing (GEN-AGENT) -------------------------------------------------------------
def malformed_agent_id(rec: Recording):
    """Sends a valid call to an agentId without `agt_`; refused with a 4xx and the protocol's error body (no run)."""
    if rec.scenario == "access.mcp":
        mcp_refused(rec, "malformed-agent", None)
    else:
        refused_4xx(rec, "malformed-agent", error_body=True)


register(malformed_agent_id, ("GEN-AGENT-001",), {**BOTH, "mcp": "access.mcp"})


@check("GEN-AGENT-002", scenarios=["access.invoke"])
def invoke_undeployed_agent(rec: Recording):
    """Sends a valid invoke to --undeployed-agent-id; 404 with the error body."""
    refused_4xx(rec, "undeployed-agent", status=404, error_body=True)


@check("GEN-AGENT-003", scenarios=["access.agui"])
def agui_undeployed_agent(rec: Recording):
    """Sends a valid AG-UI run to --undeployed-agent-id; 404 with the error body, not a stream."""
    ex = refused_4xx(rec, "undeployed-agent", status=404, error_body=True)
    assert ex.stream is None, "the 404 for the undeployed agent came as an event stream"


@check("GEN-AGENT-004", scenarios=["access.mcp"])
def mcp_undeployed_agent(rec: Recording):
    """Sends a valid tools/call to --undeployed-agent-id; 404 with a JSON-RPC error body."""
    mcp_refused(rec, "undeployed-agent", 404)


def unknown_agent_not_found(rec: Recording):
    """Sends a valid call to a nonexistent `agt_…` id; refused with a 4xx and `error.code` `not_found`."""
    refused_4xx(rec, "unknown-agent", code="not_found")


def unknown_agent_404(rec: Recording):
    """The `not_found` refusal of a nonexistent `agt_…` id has HTTP status 404."""
    ex = step(rec, "unknown-agent")
    assert ex.status == 404, f"{rec.scenario} sent {sent('unknown-agent')}; expected 404, got {got(ex)}"


register(unknown_agent_not_found, ("GEN-AGENT-005",), BOTH)
register(unknown_agent_404, ("GEN-AGENT-006",), BOTH)
