"""A copy-paste `curl` line for one recorded exchange, secrets as environment variables.

The credential goes in as `--oauth2-bearer "$CONFORMANCE_API_KEY"` (the
variable of the option that supplied it), so the line runs as soon as the
user's environment holds the same variables the suite read, and no secret is
ever printed. Headers the client adds by itself (Host, Content-Length, …) are
left to curl.
"""
from __future__ import annotations

import shlex
from typing import Any

from conformance.target import FACTS
from conformance.vocab.forms import ACCEPT_ENCODINGS
from conformance.vocab.constants import BASIC_USER
from conformance.wire import near_miss
from conformance.wire.redact import MASK

UNKNOWN_CREDENTIAL_VAR = "CONFORMANCE_CREDENTIAL"
#: curl's flag for the HTTP version the exchange went over (`--http2`: h2 offered by ALPN, as the suite's client did)
_VERSION_FLAG = {"HTTP/1.1": ("--http1.1",), "HTTP/2": ("--http2",)}
_LEFT_TO_CURL = {"host", "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding"}


def credential_var(fact: str | None) -> str:
    """api_key -> CONFORMANCE_API_KEY (a near miss of it too); an unknown or missing fact -> CONFORMANCE_CREDENTIAL."""
    if fact and fact.startswith(near_miss.PREFIX):
        fact = near_miss.fact_of(fact.removeprefix(near_miss.PREFIX))
    return FACTS[fact][1] if fact in FACTS else UNKNOWN_CREDENTIAL_VAR


def curl(ex: Any) -> str:
    """The curl command that sends what `ex` (a wire.http.Exchange) sent; never raises (evidence must not fail)."""
    try:
        line = _curl(ex)
    except Exception as exc:  # a malformed exchange from a hostile server: the transcript still tells the story
        return f"# no curl line for this exchange ({type(exc).__name__})"
    if getattr(ex, "status", None) == 429:     # a single re-send finds the bucket refilled
        return f"# answered 429 (rate limited): send it again until the server answers 429\n{line}"
    return line


def _curl(ex: Any) -> str:
    credential = getattr(ex, "credential", None) or ""
    var = credential_var(credential)
    # a near miss of the secret is the secret's variable changed in the shell, so the line sends it again
    bearer = near_miss.shell(credential.removeprefix(near_miss.PREFIX), var) \
        if credential.startswith(near_miss.PREFIX) else f'"${var}"'
    args = ["curl", "-sS", "-N", "-i", *_VERSION_FLAG.get(getattr(ex, "http_version", None), ())]
    if ex.method != "GET" or ex.request_body:
        args += ["-X", ex.method]
    form = getattr(ex, "form", None) or {}
    for name, value in (ex.request_headers or {}).items():
        if name.lower() == "transfer-encoding" or (name.lower() == "user-agent" and form.get("user-agent") not in
                                                   (None, "suite")):
            args += _header(_cased(name, form.get("header-name-case")), value, var, bearer)
            continue
        if name.lower() in _LEFT_TO_CURL:
            continue
        args += _header(_cased(name, form.get("header-name-case")), value, var, bearer)
    if form.get("accept-encoding") == "browser":
        args += _header("Accept-Encoding", ACCEPT_ENCODINGS["browser"], var, bearer)
    if form.get("accept-encoding") in ("gzip", "browser"):
        args.append("--compressed")     # asks for compressed answers, as the suite did, and decodes them
    if form.get("user-agent") == "absent":
        args += ["-H", "'User-Agent:'"]
    if ex.request_headers and not any(name.lower() == "accept" for name in ex.request_headers):
        args += ["-H", "'Accept:'"]      # sent without one: curl would add `Accept: */*`
    if ex.request_body:
        args += ["--data-binary", _body(ex, var)]
    redact = getattr(ex, "redact", None)
    args.append(_quoted(redact(ex.url) if redact else ex.url, var))
    return " ".join(args)


def _cased(name: str, case: str | None) -> str:
    """A header name in the case the suite sent it (curl sends names as written)."""
    if case == "upper":
        return name.upper()
    if case == "canonical":
        return "-".join(part[:1].upper() + part[1:] for part in name.split("-"))
    return name


def _quoted(text: str, var: str) -> str:
    """`text` as one shell word, each masked credential in it read from `$var` (a credential in the query string
    or the body)."""
    return f'"${var}"'.join(shlex.quote(part) for part in text.split(MASK)) if MASK in text else shlex.quote(text)


def _header(name: str, value: str, var: str, bearer: str) -> list[str]:
    if MASK not in value:
        return ["-H", shlex.quote(f"{name}: {value}")]
    scheme = value.split(" ", 1)[0].lower()
    if name.lower() == "authorization" and value.startswith("Bearer "):   # curl writes the scheme `Bearer` only
        return ["--oauth2-bearer", bearer]
    if name.lower() == "authorization" and scheme == "basic":    # the suite's Basic: BASIC_USER and the credential
        return ["-u", f'"{BASIC_USER}:${var}"']
    return ["-H", '"' + f"{name}: {value.replace(MASK, '$' + var)}".replace('"', '\\"') + '"']


def _body(ex: Any, var: str) -> str:
    raw: bytes = ex.request_body
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "$'" + "".join(f"\\x{b:02x}" for b in raw) + "'"
    redact = getattr(ex, "redact", None)
    return _quoted(redact(text) if redact else text, var)
