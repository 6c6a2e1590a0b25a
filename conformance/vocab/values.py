"""Small readings of HTTP and JSON that every protocol's checks share.

JSON has one number type (RFC 8259 §6): an integer is judged by value, so `1.0`
is the integer 1 (JSON Schema agrees: "a number with a zero fractional part" is
an integer), while `true` and `"1"` are not numbers. A JSON body is any media
type `application/json` or `*/*+json` (RFC 6839 §3.1), parameters and case aside.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any, Iterator

from conformance import difference


def media_type(content_type: str | None) -> str:
    """`application/problem+json; charset=utf-8` -> `application/problem+json` (lowercase, no parameters)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def json_or_none(raw: bytes | str | None) -> Any:
    """A body parsed as JSON, or None when there is none or it is not JSON (never raises: bodies are hostile)."""
    try:
        return json.loads(raw) if raw else None
    except ValueError:      # UnicodeDecodeError included
        return None


def is_json_media_type(content_type: str | None) -> bool:
    """True for `application/json` and any structured `+json` type (RFC 6839), parameters and case aside."""
    mt = media_type(content_type)
    kind, _, subtype = mt.partition("/")
    return bool(kind) and (mt == "application/json" or (subtype.endswith("+json") and len(subtype) > 5))


def is_json_integer(value: Any) -> bool:
    """A JSON number with no fractional part (1 and 1.0 alike); booleans and strings are not numbers."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def same_integer(value: Any, n: int) -> bool:
    """`value` is the JSON integer `n` (1.0 is 1; "1" and true are not)."""
    return is_json_integer(value) and value == n


def digits_only(text: str) -> bool:
    """A whole number in ASCII digits and nothing else: the conformance agent's `count` reply, the value of
    `X-RateLimit-Remaining` and of a 429's `Retry-After` (read by every check of theirs this one way)."""
    return text.isascii() and text.isdigit()


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 and 1.0 alike: JSON has one number type), but true is not 1 and 1 is not "1"."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def error_object(body: Any) -> dict[str, Any] | None:
    """`error` of a parsed JSON body when it is an object, else None."""
    err = body.get("error") if isinstance(body, dict) else None
    return err if isinstance(err, dict) else None


def error_of(ex: Any) -> dict[str, Any] | None:
    """`error` of a JSON answer (an Exchange), or None when the body is not a JSON object with an `error` object
    (never raises)."""
    try:
        return error_object(ex.json())
    except AssertionError:
        return None


def refusal(ex: Any) -> tuple | None:
    """What identifies a refusal: status, error code and message of an error body (a JSON-RPC error under 200
    included), or status and body of any other answer that is not a 2xx; None for an answer that refuses nothing."""
    if ex.status is None:
        return None
    err = error_of(ex)
    if err is not None:
        return ex.status, repr(err.get("code")), repr(err.get("message"))
    return None if 200 <= ex.status < 300 else (ex.status, ex.body[:2000])


# -- what differs between a value sent and the value that came back --------------------------------------------------
ABSENT = difference.MISSING     # a member the answer lacks, for `differs`


def differs(sent: Any, got: Any, path: str = "", *, only_sent: bool = False, cause: bool = True,
            whole: Any = ABSENT) -> str:
    """`difference: …; cause: …` of a value sent and the one that came back (`conformance.difference`): the smallest
    difference (the code point, the characters named, a window of context; the path of the first differing member of
    a JSON value) and, when one of the transformations a server may apply explains it exactly, what the service did.
    What a failure message says after its first words. `path` names the value (`params`); `only_sent`: members `got`
    holds beyond those sent are no difference; `cause=False`: the difference alone (a reading of the agent, whose
    causes are not the service's); `whole`: the whole value `sent` is a part of, the cause read on it."""
    if not cause:
        return f"difference: {difference.describe(sent, got, path, only_sent=only_sent)}"
    return difference.explain(sent, got, path, only_sent=only_sent, whole=whole)


def length_cause(value: Any, limit: int, *, accepted: bool, noun: str = "a key") -> str | None:
    """For a length boundary probe answered against the spec (`accepted`, or refused), the unit in which the value's
    length falls on the side of `limit` the service answered (`difference.diagnose_length`); None when none does."""
    return difference.diagnose_length(value, limit, accepted=accepted, noun=noun) if isinstance(value, str) else None


@contextlib.contextmanager
def caused(cause: str | None) -> Iterator[None]:
    """Every failure raised inside ends with `; cause: <cause>` (a failure that already names a cause keeps its own)."""
    try:
        yield
    except AssertionError as exc:
        message = exc.args[0] if exc.args else None
        if cause and isinstance(message, str) and "; cause: " not in message:
            exc.args = (f"{message}; cause: {cause}", *exc.args[1:])
        raise
