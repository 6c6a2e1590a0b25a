"""What differs between a value the suite sent and the value that came back, and what the service did to it.

A check that compares a value it sent with the one that came back (a session key echoed, a JSON-RPC id, a runId,
pass-through `params`, a reply, messages) says, after its first words, `difference: …; cause: …`:

- `describe(sent, got)`: the smallest difference. Two strings: the code point it starts at, the characters on each
  side escaped and named by code point (`U+0009 U+0009 → U+0020`), with about 12 characters of context each side
  (non-printing characters and combining marks escaped, the differing part between `«` and `»`), a long value
  shortened around the difference, never at its end; a prefix, or characters added or removed at the start or the
  end, said so. JSON values: the path of the first differing member (`params.confKey: 1 → missing`,
  `messages[2].content: …`), then the string difference of that member when both are strings; a type change named
  (`7 (integer) → "7" (string)`).
- `diagnose(sent, got)`: what the service did, in words, when one transformation of `DIAGNOSES` (the model's
  `TRANSFORMS`, conformance/model/values.py, and the further ones a server is seen to apply: lower and upper case,
  NFKD, whitespace collapsed, control and format characters dropped, non-ASCII dropped, JSON re-escaping,
  percent-encoding and decoding, …), a truncation, or a composition of two of them maps the sent value onto the one
  received; numbers written as strings or read as doubles; member names trimmed, folded or merged; None otherwise
  (never a guess: each cause is checked by applying it).
- `diagnose_length(value, limit, accepted=…)`: for a length boundary probe, the unit (code points, UTF-16 units, UTF-8
  bytes, graphemes) in which the value's length falls on the side of the limit the service answered.

Pure: no I/O; imports only the standard library and the model.
"""
from __future__ import annotations

import json
import re
import unicodedata
import urllib.parse
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Callable, Iterator

from conformance.model.values import STRING_KINDS, TRANSFORMS

CONTEXT = 12        # characters of context shown each side of a difference
SHOWN = 12          # characters of a differing part shown (its head and its tail beyond that)
SHORT = 4           # a differing part this short is also quoted beside its code points
NAMED = 4           # code points named on each side
GAP = 4             # changes closer than this (in equal code points between them) are shown as one
JSON_SHOWN = 60     # characters of a JSON value shown
COMPOSED_UP_TO = 20000   # code points of the two values beyond which compositions of two are not tried (time)
OPEN, CLOSE = "\u00ab", "\u00bb"     # « and »: around the differing part of a window
MISSING = object()  # a member or item one side lacks


# -- lengths ------------------------------------------------------------------------------------------------------
def utf16_units(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def graphemes(text: str) -> int:
    """User-perceived characters, approximately: a base character with the combining marks (and joiners) after it."""
    n = sum(1 for c in text if not (unicodedata.category(c) in ("Mn", "Mc", "Me") or c in "\u200d\ufe0e\ufe0f"))
    return max(n, 1) if text else 0


UNITS: dict[str, Callable[[str], int]] = {"code points": len, "UTF-16 units": utf16_units,
                                          "UTF-8 bytes": utf8_bytes, "graphemes": graphemes}


def lengths(text: str) -> dict[str, int]:
    """The length of `text` in every unit a service may count it in."""
    return {unit: count(text) for unit, count in UNITS.items()}


# -- showing characters -------------------------------------------------------------------------------------------
_NAMED_ESCAPES = {"\\": "\\\\", "'": "\\'", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(c: str) -> str:
    """`c`, or its `\\u` escape when it does not show itself: a control, format, unassigned or private character, a
    separator other than the space, a combining mark (so a decomposed é shows as e\\u0301), « and »."""
    cat = unicodedata.category(c)
    if c in (OPEN, CLOSE) or (cat[0] in "CZ" and c != " ") or cat in ("Mn", "Me"):
        return f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
    return c


def _char(c: str) -> str:
    return _NAMED_ESCAPES.get(c) or _visible(c)


def escaped(text: str) -> str:
    """`text` with non-printing characters, separators, combining marks, quotes and backslashes escaped."""
    return "".join(_char(c) for c in text)


def shown(text: str, limit: int = SHOWN) -> str:
    """`text` quoted and escaped, its middle cut when longer than `limit` (both ends kept)."""
    if len(text) > limit:
        half = max(1, limit // 2)
        return f"'{escaped(text[:half])}…{escaped(text[-half:])}'"
    return f"'{escaped(text)}'"


def named(text: str, limit: int = NAMED) -> str:
    """The code points of `text` (`U+0020 U+0009`), the first `limit` of them; `nothing` when empty."""
    if not text:
        return "nothing"
    names = " ".join(f"U+{ord(c):04X}" for c in text[:limit])
    return names + (f" … ({len(text)} code points)" if len(text) > limit else "")


def _window(text: str, regions: list[tuple[int, int]]) -> str:
    """`text` around `regions` (sorted (start, end) pairs): each region between « and », CONTEXT characters each
    side, the rest elided with …; a long region keeps its head and tail."""
    out: list[str] = []
    pos = 0
    for i, (start, end) in enumerate(regions):
        lo = max(pos, start - CONTEXT)
        if i == 0 and lo > 0 or i > 0 and lo > pos:
            out.append("…")
        out.append(escaped(text[lo:start]))
        part = text[start:end]
        inner = escaped(part) if len(part) <= SHOWN else \
            f"{escaped(part[:SHOWN // 2])}…{escaped(part[-(SHOWN // 2):])}"
        out.append(OPEN + inner + CLOSE)
        nxt = regions[i + 1][0] if i + 1 < len(regions) else len(text)
        hi = min(nxt, end + CONTEXT)
        if i + 1 < len(regions) and nxt - end <= 2 * CONTEXT:
            hi = nxt
        out.append(escaped(text[end:hi]))
        pos = hi
    if pos < len(text):
        out.append("…")
    return "'" + "".join(out) + "'"


# -- the difference of two strings ------------------------------------------------------------------------------
def _ends(sent: str, got: str) -> tuple[int, int]:
    """(common prefix, common suffix) of the two, the suffix not overlapping the prefix."""
    p = 0
    for a, b in zip(sent, got):
        if a != b:
            break
        p += 1
    s = 0
    most = min(len(sent), len(got)) - p
    while s < most and sent[-1 - s] == got[-1 - s]:
        s += 1
    return p, s


def _points(n: int) -> str:
    return f"{n} code point{'' if n == 1 else 's'}"


def _changes(sent: str, got: str, p: int, s: int) -> list[tuple[int, int, int, int]]:
    """The changes between the differing middles (after `p` common code points, before `s`), as (start, end) in
    `sent` and (start, end) in `got`: the edits of a sequence matcher while the middles are short, else one change."""
    a, b = sent[p:len(sent) - s], got[p:len(got) - s]
    if len(a) + len(b) > 4000:
        return [(p, len(sent) - s, p, len(got) - s)]
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    changes: list[tuple[int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if changes and i1 - changes[-1][1] < GAP:       # a few equal characters between: one change
            changes[-1] = (changes[-1][0], i2, changes[-1][2], j2)
        else:
            changes.append((i1, i2, j1, j2))
    return [(p + i1, p + i2, p + j1, p + j2) for i1, i2, j1, j2 in changes]


def _part(text: str) -> str:
    """A differing part: a short one quoted and named (`' \\t' (U+0020 U+0009)`), a longer one named (its text is in the
    window beside it)."""
    return f"{shown(text)} ({named(text)})" if len(text) <= SHORT else named(text)


def _text_difference(sent: str, got: str) -> str:
    if sent == got:
        return "none"
    n, m = len(sent), len(got)
    size = _points(n) if n == m else f"{n} → {_points(m)}"
    p, s = _ends(sent, got)
    a, b = sent[p:n - s], got[p:m - s]
    if not a or not b:                                    # one side holds the other, with one run more
        side, text, run = ("removed", sent, a) if a else ("added", got, b)
        where = ("at the end" if p + len(run) == len(text) else "at the start" if p == 0 else f"at code point {p}")
        prefix = (" (sent is a prefix of what came back)" if side == "added" and where == "at the end" else
                  " (what came back is a prefix of what was sent)" if where == "at the end" else "")
        return f"{side} {_part(run)} {where}{prefix}, {size}: {_window(text, [(p, p + len(run))])}"
    if p == 0 and s == 0:                                 # removed or added at both ends
        inner, outer, side = (got, sent, "removed") if got and got in sent else \
            (sent, got, "added") if sent and sent in got else (None, None, "")
        if inner is not None and outer is not None:
            i = outer.find(inner)
            head, tail = outer[:i], outer[i + len(inner):]
            return (f"{side} {_part(head)} at the start and {_part(tail)} at the end, {size}: "
                    f"{_window(outer, [(0, i), (i + len(inner), len(outer))])}")
    changes = _changes(sent, got, p, s)
    i1, i2, j1, j2 = changes[0]
    was, now = sent[i1:i2], got[j1:j2]
    if not now:
        what = f"removed {_part(was)}: {_window(sent, [(i1, i2)])}"
    elif not was:
        what = f"added {_part(now)}: {_window(got, [(j1, j2)])}"
    else:
        what = (f"{_part(was)} → {_part(now)}, in {_window(sent, [(i1, i2)])}"
                + (f" → {shown(now)}" if len(now) > SHORT else ""))
    more = ""
    if len(changes) == 2:
        more = f"; 1 more change (at code point {changes[1][0]})"
    elif len(changes) > 2:
        at = ", ".join(str(c[0]) for c in changes[1:4]) + (", …" if len(changes) > 4 else "")
        more = f"; {len(changes) - 1} more changes (at code points {at})"
    return f"at code point {i1}, {size}: {what}{more}"


# -- JSON values -------------------------------------------------------------------------------------------------
def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or isinstance(value, float) and value.is_integer():
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def same(a: Any, b: Any) -> bool:
    """JSON equality (numbers by value, 1 and 1.0 alike; true is not 1, 1 is not "1"): `vocab.values.same_json`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _written(a: Any, b: Any) -> bool:
    """Equal and written alike (7 and 7.0 are one number written two ways)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_written(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_written(a[k], b[k]) for k in a)
    return same(a, b)


_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def member(path: str, key: Any) -> str:
    """The path of a member: `params.confKey`, `params[" confPad\\t"]`, `messages[2]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{_json_text(key, 40)}]"


def _differences(sent: Any, got: Any, path: str, equal: Callable[[Any, Any], bool], only_sent: bool
                 ) -> Iterator[tuple[str, Any, Any]]:
    """(path, sent member, got member) of every differing leaf, in the order of what was sent."""
    if equal(sent, got):
        return
    if isinstance(sent, dict) and isinstance(got, dict):
        for k, v in sent.items():
            if k not in got:
                yield member(path, k), v, MISSING
            else:
                yield from _differences(v, got[k], member(path, k), equal, False)
        if not only_sent:
            for k, v in got.items():
                if k not in sent:
                    yield member(path, k), MISSING, v
        return
    if isinstance(sent, list) and isinstance(got, list):
        for i, (x, y) in enumerate(zip(sent, got)):
            yield from _differences(x, y, member(path, i), equal, False)
        for i in range(min(len(sent), len(got)), max(len(sent), len(got))):
            yield member(path, i), sent[i] if i < len(sent) else MISSING, got[i] if i < len(got) else MISSING
        return
    yield path, sent, got


def _json_text(value: Any, limit: int = JSON_SHOWN) -> str:
    """`value` as JSON, characters that do not show themselves escaped, its middle cut beyond `limit`."""
    if value is MISSING:
        return "missing"
    text = "".join(_visible(c) for c in json.dumps(value, ensure_ascii=False, default=repr))
    if len(text) > limit:
        half = (limit - 1) // 2
        text = f"{text[:half]}…{text[-half:]}"
    return text


def _typed(value: Any) -> str:
    return _json_text(value) if value is None else f"{_json_text(value)} ({json_type(value)})"


def _member_difference(path: str, a: Any, b: Any) -> str:
    where = f"{path}: " if path else ""
    if isinstance(a, str) and isinstance(b, str):
        return where + _text_difference(a, b)
    if a is not MISSING and b is not MISSING and json_type(a) != json_type(b):
        return f"{where}{_typed(a)} → {_typed(b)}"
    if same(a, b):
        return f"{where}{_json_text(a)} → {_json_text(b)} (the same {json_type(a)}, written otherwise)"
    return f"{where}{_json_text(a)} → {_json_text(b)}"


def describe(sent: Any, got: Any, path: str = "", *, only_sent: bool = False) -> str:
    """The smallest difference between `sent` and `got` (strings, or any JSON values), in words. `path` names the
    value (`params`); `only_sent`: members `got` holds beyond those sent are no difference (pass-through `params`)."""
    if isinstance(sent, str) and isinstance(got, str):
        return (f"{path}: " if path else "") + _text_difference(sent, got)
    found = list(_differences(sent, got, path, same, only_sent)) or \
        list(_differences(sent, got, path, _written, only_sent))
    if not found:
        return "none"
    first = _member_difference(*found[0])
    more = [p or "(the value)" for p, _, _ in found[1:]]
    if more:
        first += f"; also {', '.join(more[:3])}" + (f" and {len(more) - 3} more" if len(more) > 3 else "")
    return first


# -- what a service does to a string ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Diagnosis:
    """Something a service may do to a string: `apply` it (a function of the value), or `match` (sent, got) when it
    is a family no one function is (which characters were escaped). `words` say it after "the service"."""
    name: str
    words: str | Callable[[str, str], str]
    apply: Callable[[str], str] | None = None
    match: Callable[[str, str], bool] | None = None

    def said(self, sent: str, got: str) -> str:
        return self.words(sent, got) if callable(self.words) else self.words

    def maps(self, sent: str, got: str) -> bool:
        if self.apply is not None:
            try:
                return self.apply(sent) == got
            except (ValueError, UnicodeError):
                return False
        try:
            return self.match is not None and self.match(sent, got)
        except (ValueError, UnicodeError):
            return False


_TRANSFORM_WORDS = {"trim": "trimmed the value", "case-fold": "case-folded it", "nfc": "normalised it to NFC",
                    "nfd": "normalised it to NFD", "nfkc": "normalised it to NFKC",
                    "accents": "dropped its accents (compared or stored it accent-insensitively)"}
_WS_ASCII = re.compile(r"[ \t\n\r\f\v]+")
_WS = re.compile(r"\s+")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _collapsed(pattern: re.Pattern[str]) -> Callable[[str, str], str]:
    def words(sent: str, got: str) -> str:
        run = next((m.group() for m in pattern.finditer(sent) if m.group() != " "), "")
        return f"collapsed a run of whitespace ({shown(run)} into one space)" if run else \
            "collapsed runs of whitespace into one space"
    return words


def _dropped(keep: Callable[[str], bool], what: str) -> Callable[[str, str], str]:
    def words(sent: str, got: str) -> str:
        gone = "".join(dict.fromkeys(c for c in sent if not keep(c)))
        return f"dropped {what} ({named(gone, 3)})"
    return words


def _escapes_of(c: str) -> tuple[str, ...]:
    """The ways JSON may escape `c` inside a string."""
    short = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
             "\t": "\\t"}.get(c)
    if ord(c) > 0xFFFF:
        hi, lo = divmod(ord(c) - 0x10000, 0x400)
        units = (0xD800 + hi, 0xDC00 + lo)
        forms = ("".join(f"\\u{u:04x}" for u in units), "".join(f"\\u{u:04X}" for u in units))
    else:
        forms = (f"\\u{ord(c):04x}", f"\\u{ord(c):04X}")
    return ((short,) if short else ()) + forms


def _escaped_chars(sent: str, got: str) -> tuple[str, ...] | None:
    """The characters of `sent` that `got` writes as JSON escapes when `got` is `sent` with some of its characters
    left escaped (at least one); else None."""
    if len(got) <= len(sent) or "\\" not in got or len(got) > 12 * len(sent) or len(sent) > COMPOSED_UP_TO:
        return None
    reach: dict[int, tuple[str, ...]] = {0: ()}     # positions of `got` that `sent[:i]` can end at: the escapes used
    for c in sent:
        nxt: dict[int, tuple[str, ...]] = {}
        for j, used in reach.items():
            if got.startswith(c, j):
                nxt.setdefault(j + 1, used)
            for form in _escapes_of(c):
                if got.startswith(form, j):
                    nxt.setdefault(j + len(form), used if c in used else used + (c,))
        if not nxt:
            return None
        reach = dict(sorted(nxt.items())[:64])
    return reach.get(len(got)) or None


def _escapes(sent: str, got: str) -> str:
    chars = _escaped_chars(sent, got) or ()
    forms = ", ".join(_escapes_of(c)[0] for c in chars[:3]) + (", …" if len(chars) > 3 else "")
    return f"left JSON escapes in it as text ({forms}): escaped twice, or never decoded"


def _percent_encoded(sent: str, got: str) -> bool:
    return bool(_PERCENT.search(got)) and urllib.parse.unquote(got, errors="strict") == sent


def _percent_words(sent: str, got: str) -> str:
    codes = [c for c in dict.fromkeys(_PERCENT.findall(got)) if c not in sent]
    return f"percent-encoded it and left it encoded ({', '.join(codes[:3])})"


def _unquoted(sent: str) -> str:
    if not _PERCENT.search(sent):
        return sent
    return urllib.parse.unquote(sent, errors="strict")


def _unquoted_plus(sent: str) -> str:
    if "+" not in sent:
        return sent
    return urllib.parse.unquote_plus(sent, errors="strict")


def _decoded_words(sent: str, got: str) -> str:
    codes = list(dict.fromkeys(_PERCENT.findall(sent)))[:2]
    return f"percent-decoded it ({', '.join(f'{c} → {shown(urllib.parse.unquote(c))}' for c in codes)})"


def _mojibake(sent: str) -> str:
    return sent.encode("utf-8").decode("latin-1") if not sent.isascii() else sent


def _astral_replaced(sent: str) -> str:
    return _ASTRAL.sub("\ufffd", sent)


def _astral_pairs_replaced(sent: str) -> str:
    return _ASTRAL.sub("\ufffd\ufffd", sent)


DIAGNOSES: dict[str, Diagnosis] = {d.name: d for d in [
    *[Diagnosis(t.name, _TRANSFORM_WORDS.get(t.name, t.what), t.twin) for t in TRANSFORMS.values()
      if t.name == "trim"],
    Diagnosis("trim-start", "trimmed the value at its start", str.lstrip),
    Diagnosis("trim-end", "trimmed the value at its end", str.rstrip),
    Diagnosis("lower", "lower-cased it", str.lower),
    Diagnosis("upper", "upper-cased it", str.upper),
    *[Diagnosis(t.name, _TRANSFORM_WORDS.get(t.name, t.what), t.twin) for t in TRANSFORMS.values()
      if t.name != "trim"],
    Diagnosis("nfkd", "normalised it to NFKD", lambda s: unicodedata.normalize("NFKD", s)),
    Diagnosis("collapse-whitespace", _collapsed(_WS_ASCII), lambda s: _WS_ASCII.sub(" ", s)),
    Diagnosis("collapse-unicode-whitespace", _collapsed(_WS), lambda s: _WS.sub(" ", s)),
    Diagnosis("whitespace-to-space", "turned each whitespace character into a space (a tab into ' ')",
              lambda s: re.sub(r"[\t\n\r\f\v]", " ", s)),
    Diagnosis("unicode-whitespace-to-space", "turned each whitespace character into a space (U+2028 into ' ')",
              lambda s: re.sub(r"\s", " ", s)),
    Diagnosis("drop-control", _dropped(lambda c: unicodedata.category(c) not in ("Cc", "Cf"),
                                       "control and format characters (Cc, Cf)"),
              lambda s: "".join(c for c in s if unicodedata.category(c) not in ("Cc", "Cf"))),
    Diagnosis("drop-non-ascii", _dropped(str.isascii, "the non-ASCII characters"),
              lambda s: "".join(c for c in s if c.isascii())),
    Diagnosis("ascii-replace", "wrote it in ASCII, every other character as '?'",
              lambda s: s.encode("ascii", "replace").decode("ascii")),
    Diagnosis("astral-replaced", "replaced every character outside the BMP with U+FFFD",
              _astral_replaced),
    Diagnosis("astral-pairs-replaced", "replaced every character outside the BMP with two U+FFFD (one per UTF-16 "
              "unit)", _astral_pairs_replaced),
    Diagnosis("mojibake", "read its UTF-8 bytes as Latin-1 (mojibake)",
              _mojibake),
    Diagnosis("json-quoted", "wrote it as a JSON string literal (quotes and escapes kept in the value)",
              lambda s: json.dumps(s, ensure_ascii=False)),
    Diagnosis("json-escaped", _escapes, match=lambda sent, got: _escaped_chars(sent, got) is not None),
    Diagnosis("json-unescaped", "decoded JSON escapes written as text in the value (read it as JSON twice)",
              match=lambda sent, got: _escaped_chars(got, sent) is not None),
    Diagnosis("percent-encoded", _percent_words, match=_percent_encoded),
    Diagnosis("percent-decoded", _decoded_words, _unquoted),
    Diagnosis("form-decoded", "decoded it as a form value ('+' into a space, %XX decoded)", _unquoted_plus),
]}


def _it(words: str) -> str:
    """Words of a value said of a name: "trimmed it", not "trimmed the value"."""
    return words.replace("the value", "it")


# -- truncation ----------------------------------------------------------------------------------------------------
def _roundness(n: int) -> int:
    """How likely a limit is set to `n`: 3 for a power of two (8 and more), 2 for one less than one (255) or a
    multiple of 100, 1 for a multiple of 10 or 127, 0 otherwise."""
    if n < 8:
        return 0
    if n & (n - 1) == 0:
        return 3
    if (n + 1) & n == 0:
        return 2 if n >= 255 else 1
    return 2 if n % 100 == 0 else 1 if n % 10 == 0 else 0


def _cut(sent: str, got: str) -> str | None:
    """Words for `got` being `sent` cut short (perhaps with an ellipsis added, or a character broken at a byte
    limit), naming the unit the cut fits best; None otherwise."""
    if len(got) < 4 or got == sent:     # a limit keeps more than a few characters
        return None
    for mark in ("…", "...", "\ufffd"):
        kept = got[:-len(mark)]
        if got.endswith(mark) and kept and sent.startswith(kept) and len(kept) < len(sent) \
                and not sent.startswith(got):
            if mark == "\ufffd":
                return (f"cut it inside a character after {utf8_bytes(kept)} UTF-8 bytes (the broken character "
                        f"became U+FFFD): it counts bytes")
            return f"{_cut_words(sent, kept)} and added {shown(mark)}"
    if not sent.startswith(got):
        return None
    return _cut_words(sent, got)


def _cut_words(sent: str, kept: str) -> str:
    """`sent` was cut to `kept`: in the unit whose limit is the likeliest (the roundest number the cut fits: kept
    exactly, or short of it because the next character did not fit)."""
    nxt = sent[len(kept)]
    spans = {unit: (count(kept), count(kept + nxt) - 1) for unit, count in UNITS.items() if unit != "graphemes"}
    candidates = [(_roundness(n), n == lo, unit, n) for unit, (lo, hi) in spans.items() for n in range(lo, hi + 1)]
    score, exact, unit, n = max(candidates, key=lambda c: c[:2])    # the first of the best: code points first
    if score and exact:
        return f"cut it to {n} {unit}" + _also(spans, unit)
    if score:
        return (f"cut it to at most {n} {unit} ({spans[unit][0]} kept: the next character, {shown(nxt)}, is "
                f"{UNITS[unit](nxt)} {unit} and did not fit)")
    return f"cut it to {spans['code points'][0]} code points" + _also(spans, "code points")


def _also(spans: dict[str, tuple[int, int]], unit: str) -> str:
    other = [f"{lo} {u}" for u, (lo, _) in spans.items() if u != unit and lo != spans[unit][0]]
    return f" ({', '.join(other)})" if other else ""


# -- diagnosis -----------------------------------------------------------------------------------------------------
# transformations that often give the same value: when both do, both are named
ALIKE = {"lower": ("case-fold",), "nfc": ("nfkc",), "nfd": ("nfkd",)}


def _one(sent: str, got: str) -> str | None:
    for d in DIAGNOSES.values():
        if d.maps(sent, got):
            also = [DIAGNOSES[a] for a in ALIKE.get(d.name, ()) if a in DIAGNOSES and DIAGNOSES[a].maps(sent, got)]
            return d.said(sent, got) + "".join(f" (or {a.said(sent, got)}: the same here)" for a in also)
    return _cut(sent, got)


def _text_cause(sent: str, got: str) -> str | None:
    if sent == got:
        return None
    found = _one(sent, got)
    if found:
        return f"the service {found}"
    if len(sent) + len(got) > COMPOSED_UP_TO:
        return None
    for first in DIAGNOSES.values():            # a composition of two
        if first.apply is None:
            continue
        try:
            step = first.apply(sent)
        except (ValueError, UnicodeError):
            continue
        if step == sent or step == got:
            continue
        then = _one(step, got)
        if then:
            return f"the service {first.said(sent, step)}, then {then}"
    return None


def _number_cause(sent: Any, got: Any) -> str | None:
    if isinstance(sent, bool) or isinstance(got, bool):
        if isinstance(sent, bool) and not isinstance(got, bool) and got in (0, 1, "true", "false", "0", "1"):
            return f"the service wrote the boolean {json.dumps(sent)} as {_json_text(got)}"
        return None
    if isinstance(sent, (int, float)) and isinstance(got, str):
        try:
            if same(json.loads(got), sent):
                return f"the service wrote the {json_type(sent)} as a string"
        except ValueError:
            return None
        return None
    if isinstance(sent, str) and isinstance(got, (int, float)):
        try:
            if same(json.loads(sent), got):
                return "the service read the string of digits as a number"
        except ValueError:
            return None
        return None
    if isinstance(sent, int) and isinstance(got, (int, float)):
        try:
            if abs(sent) > 2 ** 53 and float(got) == float(sent) and got != sent:
                return (f"the service lost precision beyond 2^53: it read the number as a double ({sent} → "
                        f"{_json_text(got)})")
        except OverflowError:
            return None
        if isinstance(got, float) and got == sent:
            return f"the service wrote the integer as a double ({sent} → {got!r})"
    return None


def _falsy(value: Any) -> bool:
    return value in (None, "", [], {}) or (value == 0 and not isinstance(value, bool)) or value is False


def _members_cause(sent: dict[str, Any], got: dict[str, Any]) -> str | None:
    missing = [k for k in sent if k not in got]
    if not missing:
        return None
    if all(_falsy(sent[k]) for k in missing) and all(same(sent[k], got[k]) for k in sent if k in got):
        return ("the service dropped the members whose value is empty (" + ", ".join(
            _json_text(sent[k], 20) for k in missing[:4]) + "), as Go's `omitempty` does")
    for k in missing:
        for d in DIAGNOSES.values():
            if d.apply is None:
                continue
            try:
                name = d.apply(k)
            except (ValueError, UnicodeError):
                continue
            if name != k and name in got and same(got[name], sent[k]):     # its value under the new name
                merged = ", in place of the member sent under that name" if name in sent else ""
                return (f"the service changed a member name: {shown(k)} came back as {shown(name)}{merged} "
                        f"({_it(d.said(k, name))})")
    return None


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {fn(k): _map_strings(v, fn) for k, v in value.items()}
    return value


def _map_names(value: Any, fn: Callable[[str], str], first_wins: bool) -> Any:
    """`value` with every member name mapped by `fn`; names it makes equal merged (the first or the last value kept)."""
    if isinstance(value, list):
        return [_map_names(v, fn, first_wins) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not (first_wins and fn(k) in out):
                out[fn(k)] = _map_names(v, fn, first_wins)
        return out
    return value


def _names(value: Any) -> Iterator[str]:
    """Every member name of a JSON value."""
    return _strings(value, names_only=True)


def _strings(value: Any, *, names_only: bool = False) -> Iterator[str]:
    """Every string of a JSON value, member names included (`names_only`: the member names alone)."""
    if isinstance(value, str) and not names_only:
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, names_only=names_only)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v, names_only=names_only)


def _maps_onto(mapped: Any, got: Any, only_sent: bool) -> bool:
    """What was sent, transformed, is what came back (`only_sent`: the members sent, among others that came back)."""
    if only_sent and isinstance(mapped, dict) and isinstance(got, dict):
        return all(k in got and same(v, got[k]) for k, v in mapped.items())
    return same(mapped, got)


def _whole_cause(sent: Any, got: Any, only_sent: bool) -> str | None:
    """A transformation applied to every string of the value (member names included)."""
    for d in DIAGNOSES.values():
        if d.apply is None:
            continue
        try:
            mapped = _map_strings(sent, d.apply)
        except (ValueError, UnicodeError):
            continue
        if same(mapped, sent):
            continue
        if _maps_onto(mapped, got, only_sent):
            first = next(t for t in _strings(sent) if d.apply(t) != t)
            return f"the service {d.said(first, d.apply(first))} (every string of the value, member names included)"
    if not isinstance(sent, (dict, list)):
        return None
    for d in DIAGNOSES.values():               # member names alone (a case-insensitive binder, a trimming store)
        if d.apply is None:
            continue
        for first_wins in (False, True):
            try:
                mapped = _map_names(sent, d.apply, first_wins)
            except (ValueError, UnicodeError):
                break
            if same(mapped, sent):
                break
            if _maps_onto(mapped, got, only_sent):
                first = next(k for k in _names(sent) if d.apply(k) != k)
                merged = ", merging the names it makes equal" if len(list(_names(mapped))) < len(list(_names(sent))) \
                    else ""
                return (f"the service changed every member name ({_it(d.said(first, d.apply(first)))}: "
                        f"{shown(first)} came back as {shown(d.apply(first))}{merged})")
    return None


def diagnose(sent: Any, got: Any, *, only_sent: bool = False) -> str | None:
    """What the service did to `sent` to give `got`, in words ("the service trimmed the value"), when one of
    `DIAGNOSES`, a truncation, a composition of two, or a change of number or type explains it exactly; else None."""
    if isinstance(sent, str) and isinstance(got, str):
        return _text_cause(sent, got)
    if same(sent, got) and _written(sent, got):
        return None
    if not isinstance(sent, (dict, list)):
        return _number_cause(sent, got)
    whole = _whole_cause(sent, got, only_sent)
    if whole:
        return whole
    found = list(_differences(sent, got, "", same, only_sent)) or list(_differences(sent, got, "", _written,
                                                                                    only_sent))
    if isinstance(sent, dict) and isinstance(got, dict):
        members = _members_cause(sent, got)
        if members:
            return members
    for path, a, b in found[:1]:
        if a is MISSING or b is MISSING:
            return None
        if isinstance(a, str) and isinstance(b, str):
            return _text_cause(a, b)
        return _number_cause(a, b)
    return None


def explain(sent: Any, got: Any, path: str = "", *, only_sent: bool = False, whole: Any = MISSING) -> str:
    """`difference: …; cause: …` (the cause only when diagnosed): what a failure message says after its first
    words. `whole`: the whole value `sent` is a part of (the members that changed, of all those sent), the cause
    being read on it (a transformation of every member name shows only on all of them)."""
    cause = diagnose(sent if whole is MISSING else whole, got, only_sent=only_sent)
    kinds = [] if cause else kinds_changed(sent, got)       # no transformation explains it: name the class
    return (f"difference: {describe(sent, got, path, only_sent=only_sent)}" + (f"; cause: {cause}" if cause else "")
            + (f"; the characters it changed are of the kind {', '.join(kinds)} (model.values)" if kinds else ""))


# characters a kind's fragments share with the suite's own keys (`conf-<tag>-<label>-<n>`, the digit that holds
# inner whitespace inside): their change says nothing of the kind
KEY_SCAFFOLD = frozenset("conf-0")


def kinds_changed(sent: Any, got: Any) -> list[str]:
    """The string kinds of the model (`model.values.STRING_KINDS`) whose characters the change touched, when a
    value carrying several kinds at once came back changed in some of them only: the class a failure names."""
    if not (isinstance(sent, str) and isinstance(got, str)) or sent == got:
        return []
    changed = set(sent) - set(got) or set(got) ^ set(sent)
    if not changed:
        return []
    kinds = [kind for kind, fragments in STRING_KINDS.items() if changed & set("".join(fragments)) - KEY_SCAFFOLD]
    carried = [kind for kind, fragments in STRING_KINDS.items() if set("".join(fragments)) & set(sent)]
    return kinds if 0 < len(kinds) < len(carried) else []


# -- lengths at a boundary -----------------------------------------------------------------------------------------
_COUNTS = {"UTF-8 bytes": "bytes", "UTF-16 units": "UTF-16 units", "graphemes": "graphemes (user-perceived "
                                                                              "characters)"}


def diagnose_length(value: str, limit: int, *, accepted: bool, minimum: int = 1, noun: str = "a key") -> str | None:
    """For a length boundary probe (`value`, which the spec bounds to `minimum`..`limit` code points), answered
    `accepted` or refused against the spec: the unit in which the value's length falls on the side of the limit the
    service answered ("refused a key of 256 code points that is 768 UTF-8 bytes: the service counts bytes"); None when
    code points explain the answer or no unit does."""
    counts = lengths(value)
    inside = {unit: minimum <= n <= limit for unit, n in counts.items()}
    if inside["code points"] == accepted:
        return None
    units = [unit for unit in _COUNTS if inside[unit] == accepted and counts[unit] != counts["code points"]]
    what = f"{'accepted' if accepted else 'refused'} {noun} of {counts['code points']} code points"
    if units:
        return (f"{what} that is {' and '.join(f'{counts[u]} {u}' for u in units)}: the service counts "
                f"{' or '.join(_COUNTS[u] for u in units)}")
    if accepted and counts["code points"] < counts["UTF-8 bytes"] <= 4 * limit:
        return (f"{what}, over {limit} in every unit ({counts['UTF-8 bytes']} UTF-8 bytes): the service's limit is "
                f"higher, as {4 * limit} bytes (4 bytes a character) would be")
    return None
