"""Header and URL readings the spec relies on: RFC 9110 §11.6.1 challenges (WWW-Authenticate) and RFC 3986
URL equivalence. Shared by the scenarios (following a `resource_metadata` URL) and the checks."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance.wire.exchange import Exchange


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
    """The parameters of the Bearer challenge of a response; AssertionError saying what is wrong (worded so that the
    redaction of `Bearer <token>` never eats it)."""
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
        raise AssertionError(f"WWW-Authenticate {joined[:200]!r} has no challenge of the scheme Bearer "
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
