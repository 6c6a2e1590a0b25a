"""The values of the model: for every field and header a rule touches, the classes of legitimate values the spec and
the standards it builds on (JSON, JSON-RPC 2.0, HTTP semantics, media types) allow, and the transformations a server
may apply to a string before it stores, compares or echoes it.

A class is `<field>:<kind>` (`session-key:astral`). It is *judged* only where the spec and those standards leave one
right answer (principle 11): then a default run sends it, under every seed, to every requirement in `applies`; a class
they leave open is listed with its reason and never sent. Each class says why, in `reason`. How a run sends them and
what a report says of them: `conformance.vocab.inputs`.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

# -- the fields ---------------------------------------------------------------------------------------------------
FIELDS: dict[str, str] = {   # field -> where it is sent, and what says what it may hold
    "session-key": "invoke `sessionId`, AG-UI `threadId`, MCP `arguments.session_id`: string, length 1 to 256 "
                   "(schemas/invoke-request.json#/properties/sessionId and its twins)",
    "run-id": "AG-UI `runId`: string, echoed on RUN_STARTED and RUN_FINISHED (schemas/agui-request.json)",
    "jsonrpc-id": "MCP `id`: string or integer (schemas/mcp-request.json#/properties/id); JSON-RPC 2.0 §5: the "
                  "response's id is the same as the request's",
    "progress-token": "MCP `_meta.progressToken`: string or integer (MCP ProgressToken)",
    "resume": "MCP `arguments.resume`: any (schemas/mcp-tools-call-params.json)",
    "params": "invoke and AG-UI fields the service does not interpret, and AG-UI `tools`, `state`, `context`, "
              "`forwardedProps`: any JSON value, reaching the agent unchanged as `params`",
    "extra-data": "invoke's extra data field: any JSON value, at most 4 KB as JSON",
    "content-type": "request header `Content-Type: application/json` (invoke, AG-UI, MCP)",
    "accept": "request header `Accept`: invoke (`text/event-stream` selects streaming), MCP (recommended "
              "`application/json, text/event-stream`)",
    "auth-scheme": "the scheme of request header `Authorization: Bearer <credential>`",
    "messages": "invoke `messages` and AG-UI `messages`: the list reaches the agent as the caller sent it",
    "request-body": "every request body: one JSON value (RFC 8259), however it is written",
}

# -- string fragments (what a string of a kind holds) --------------------------------------------------------------
NON_ASCII = ("東あ€", "中ש©", "بอ¥")                # BMP characters of two and three UTF-8 bytes, caseless and
                                                    # unchanged by every normalization (those are the kinds below)
ASTRAL = ("😀", "𝄞", "𠀋")                          # outside the BMP: 4 UTF-8 bytes, 2 UTF-16 units, 1 code point
JSON_ESCAPES = ('"\\\u2028\u2029', '\u2029"\u2028\\')   # quote, backslash, and the two separators JavaScript once
                                                        # ended lines at (JSON allows them raw in strings)
PUNCTUATION = ("/ ?#%2f", "+&=:;,.", "%20/..", "<>&'`")   # what URLs, paths, headers and markup read specially
# What a server may transform before it stores, compares or echoes a value (`TRANSFORMS` below): each fragment is
# changed by at least one transformation, so a value holding it comes back changed, or meets its twin.
FOLDING = ("Key", "ß", "Σ")                          # changed by lower(), upper() or casefold()
COMPOSITION = ("\u00e9", "e\u0301", "\u0958")        # precomposed é (NFD changes it), decomposed é (NFC does), क़
COMPATIBILITY = ("\u00b2", "\uff76", "\u2460")        # ², halfwidth ｶ, ①: NFKC and NFKD change them
EDGE_WHITESPACE = (" ", "\t")                         # at both ends of the value: what every trimming removes
# Unicode's other general categories, each a character a server may drop, collapse or refuse
FORMAT = ("\u200b", "\u200d", "\u00ad", "\u2060", "\ufeff")   # Cf: zero-width space and joiner, soft hyphen,
                                                                    # word joiner, the BOM as a zero-width no-break
INNER_WHITESPACE = ("0  0", "0\u16800", "0\t0")                   # inside: two spaces, the ogham space mark, a tab
PRIVATE_USE = ("\ue000", "\uf8ff")                                 # Co: the first and the last of the BMP's area
CONTROL = ("\u0001", "\u001f", "\u007f", "\u0085")              # Cc (never NUL): JSON escapes the first two
CATEGORIES = ("\u02b9\u16ee\u0f2a", "\u203f\u2014\u300c\u300d", "\u00ab\u00bb\u2211\u02c2\u2603")
#                Lm Nl No                     Pc Pd Ps Pe                       Pi Pf Sm Sk So
# (each new kind holds only characters every transformation above leaves as they are: a fault of one kind is not
# shown by another's)
EDGE_CHARACTERS = "".join(EDGE_WHITESPACE)
# pass-through members whose names a transformation would merge, each pair kept apart by a server that keeps them
PARAM_TWINS = {"confKey": 1, "confkey": 2, "conf\u00e9": 3, "confe\u0301": 4, "conf\u00b2": 5, "conf2": 6,
               "confPad": 7, " confPad\t": 8}
TRANSFORMABLE = " " + "".join(FOLDING + COMPOSITION + COMPATIBILITY) + "\t"   # all of them in one short value
STRING_KINDS = {"non-ascii": NON_ASCII, "astral": ASTRAL, "json-escapes": JSON_ESCAPES, "punctuation": PUNCTUATION,
                "folding": FOLDING, "composition": COMPOSITION, "compatibility": COMPATIBILITY,
                "edge-whitespace": EDGE_WHITESPACE, "format": FORMAT, "inner-whitespace": INNER_WHITESPACE,
                "private-use": PRIVATE_USE, "control": CONTROL, "categories": CATEGORIES}
MULTIBYTE = ("é", "Ж", "東")                        # one character, two or three UTF-8 bytes, one UTF-16 unit
THREE_BYTE = ("東", "€", "あ")                      # one character, three UTF-8 bytes, one UTF-16 unit


ID_RIDES = ("MCP-METH-005",)    # what an id class carried by the run's own ids is reported as judged on

# the requirements every history (sequences.history, whatever the seed) judges its calls under: what its request
# writings apply to (tests/checks/test_sequences.py holds it to the histories)
HISTORY_REQUIREMENTS = (
    "AGUI-FAIL-001", "AGUI-FAIL-002", "AGUI-INT-001", "AGUI-INT-002", "AGUI-INT-004", "GEN-SESS-001", "INV-RES-013",
    "INV-RES-014", "INV-RES-016", "INV-SESS-004", "INV-TERM-004", "INV-TERM-005", "MCP-PAUSE-001", "MCP-PAUSE-002",
    "MCP-PROG-003", "MCP-SESS-003", "MCP-TOOL-004", "MCP-VER-006")


# -- what a server may transform --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Transform:
    """Something a server may do to a string before it stores, compares or echoes it. The spec leaves it no room
    (a string is its code points, RFC 8259 §8.3): the suite sends values it changes (`kinds`) and reads whether they
    come back unchanged (every echo of the field), and for session keys sends `twin(key)`, a key equal to another
    only after the transformation, which must reach an instance of its own (the `kept apart` chain, sequences.py)."""
    name: str
    what: str                          # what a server doing it does, and where servers do it
    twin: Callable[[str], str]         # the value it makes of a key (a different key, equal after the transformation)
    kinds: tuple[str, ...]             # the string kinds it changes


def _unaccented(text: str) -> str:
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", text)
                                                if not unicodedata.combining(c)))


TRANSFORMS: dict[str, Transform] = {t.name: t for t in [
    Transform("trim", "strips whitespace at both ends (form libraries, `strings.TrimSpace`, a PAD SPACE collation)",
              str.strip, ("edge-whitespace",)),
    Transform("case-fold", "compares or stores keys without case (`lower()`, a `_ci` collation)", str.casefold,
              ("folding",)),
    Transform("nfc", "normalizes to NFC (composes e + U+0301 into é)", lambda k: unicodedata.normalize("NFC", k),
              ("composition",)),
    Transform("nfd", "normalizes to NFD (decomposes é, as macOS file names are)",
              lambda k: unicodedata.normalize("NFD", k), ("composition",)),
    Transform("nfkc", "normalizes to NFKC (² into 2, halfwidth into fullwidth: search indexes, identifier rules)",
              lambda k: unicodedata.normalize("NFKC", k), ("compatibility", "composition")),
    Transform("accents", "compares without accents (an accent-insensitive `_ai` collation)", _unaccented,
              ("composition",)),
]}
# How the other ways a server may read a string differently are covered: by the classes named.
COVERED_ELSEWHERE = {
    "length in bytes or UTF-16 units": ("session-key:256-multibyte", "session-key:257-multibyte",
                                        "extra-data:multibyte-inside", "extra-data:multibyte-outside"),
    "escaping (JSON, percent, markup)": ("session-key:json-escapes", "session-key:punctuation",
                                         "params:json-escapes"),
}


@dataclass(frozen=True)
class InputClass:
    field: str
    kind: str
    judged: bool                       # one right answer: sent by every default run; otherwise listed, never sent
    reason: str
    applies: tuple[str, ...] = ()      # the requirements whose checks judge the carriers of this class
    values: tuple[Any, ...] = ()       # representatives, in a fixed order the seed rotates
    sent: int = 1                      # how many of them a default run sends (times --depth)

    @property
    def name(self) -> str:
        return f"{self.field}:{self.kind}"


def _strings(field: str, applies: tuple[str, ...], what: str) -> list[InputClass]:
    """The four string kinds of a string field whose value is compared or echoed exactly."""
    why = {"non-ascii": "JSON strings are Unicode (RFC 8259 §7) and the spec names no narrower alphabet",
           "astral": "a few characters outside the BMP stay inside every count of length (code points, UTF-16 "
                     "units, bytes), and JSON carries them (RFC 8259 §7, as raw UTF-8 or a surrogate-pair escape)",
           "json-escapes": "`\"` and `\\` must be escaped in JSON, U+2028/U+2029 may stay raw (RFC 8259 §7): a "
                           "value built or framed by hand breaks on them",
           "punctuation": "ASCII punctuation (`/ ? # % + & = : ;`, markup's `< > & '`) is part of any string; a value "
                          "used as a path, URL, header or markup breaks on it",
           "folding": "letters whose case differs (`Key`, `ß`, `Σ`) are other characters (RFC 8259 §8.3 compares "
                      "strings code unit by code unit): a server that lowercases or case-folds the value changes it",
           "composition": "a precomposed é, a decomposed é (e + U+0301) and क़ as U+0958 are different code point "
                          "sequences: a server that normalizes to NFC or NFD changes the value",
           "compatibility": "², a halfwidth ｶ and ① are characters of their own: a server that normalizes to NFKC "
                            "or NFKD changes the value",
           "edge-whitespace": "a space and a tab at both ends belong to the string: a server that trims "
                              "(a form library, `TrimSpace`, a PAD SPACE collation) changes the value",
           "format": "format characters (zero-width space and joiner, soft hyphen, word joiner, U+FEFF) are characters "
                     "of the string: a server that strips invisible characters changes the value",
           "inner-whitespace": "two spaces, the ogham space mark and a tab inside belong to the string: a server that "
                               "collapses or normalizes whitespace changes the value",
           "private-use": "private-use characters (U+E000, U+F0000) are code points like any: a server that drops "
                          "unassigned or private characters changes the value",
           "control": "control characters other than NUL (U+0001, U+001F, U+007F, U+0085) are characters of a JSON "
                      "string (escaped where RFC 8259 §7 says): a server that strips controls changes the value",
           "categories": "a character of every other general category (modifier letter, letter and other numbers, "
                         "connector, dash, open, close, initial and final punctuation, math, modifier and other "
                         "symbols) is any string's: one right answer, the value unchanged"}
    # one value carries every representative of a kind (they cost no request): all of them, every run
    return [InputClass(field, kind, True, f"{what} is any string; {why[kind]}: one right answer, {what} unchanged",
                       applies, reps, sent=len(reps)) for kind, reps in STRING_KINDS.items()]


SESSION_ECHO = ("INV-SESS-002", "INV-SESS-003", "AGUI-SESS-002", "AGUI-ID-001", "AGUI-ID-004", "MCP-SESS-002",
                "MCP-SESS-003", "GEN-SESS-001")
CLASSES: dict[str, InputClass] = {c.name: c for c in [
    *_strings("session-key", SESSION_ECHO, "a session key (1 to 256 characters)"),
    InputClass("session-key", "case-variant", True,
               "a key that differs from another only in letter case is another string, compared code unit by code "
               "unit (RFC 8259 §8.3): it reaches a fresh instance (a case-insensitive store, such as a `_ci` database "
               "collation, joins them; judged at SHOULD, as GEN-SESS-002 is)", ("GEN-SESS-002",), ("upper",)),
    *[InputClass("session-key", f"twin-{t.name}", True,
                 f"a key equal to another only after a transformation a server may apply ({t.name}: a server that "
                 f"{t.what}) is another key, compared code unit by code unit (RFC 8259 §8.3): it reaches a new "
                 f"instance (judged at SHOULD, as GEN-SESS-002 is)", ("GEN-SESS-002",), (t.name,))
      for t in TRANSFORMS.values()],
    InputClass("session-key", "other-agent", True,
               "a key already used with one agent, sent to another agent of the organization (--other-agent-id), "
               "reaches that agent's own instance, a new one: 'one agent is addressed by agentId in the path' "
               "(judged at SHOULD, as GEN-SESS-002 is)", ("GEN-SESS-002",), ("other",)),
    InputClass("session-key", "256-multibyte", True,
               "256 characters of two or three UTF-8 bytes are 256 characters by every count (code points, UTF-16 "
               "units) and over 256 bytes: inside 'length 1 to 256', so accepted (a server counting bytes refuses "
               "them)", ("INV-SESS-005", "AGUI-SESS-003", "AGUI-ID-001"), MULTIBYTE),
    InputClass("session-key", "257-multibyte", True,
               "257 such characters are outside 'length 1 to 256' by every count, so refused (a server that allows "
               "four bytes per character accepts them)", ("INV-SESS-006", "AGUI-SESS-004", "AGUI-ERR-004"),
               MULTIBYTE),
    InputClass("session-key", "256-astral", False,
               "256 characters outside the BMP are 256 code points but 512 UTF-16 units: languages count 'characters' "
               "differently, so the spec leaves the answer open; not sent"),
    *_strings("run-id", ("AGUI-ID-002", "AGUI-ID-003"), "`runId` (echoed)"),
    InputClass("run-id", "empty", True,
               "`runId: \"\"` is a string sent, not left out: a run that starts echoes it ('Echoed on RUN_STARTED and "
               "RUN_FINISHED. Generated when left out'); with no length given, a refusal of it is open, and the request "
               "then goes again with a run id of the run's own (a server reading `runId || newId()` fails)",
               ("AGUI-ID-002", "AGUI-ID-003"), ("",)),
    # the id classes below ride on the ids the run chooses for its MCP requests (`forms.ID_WRITINGS`): most of those
    # requests are refusals and runs, so the class is judged by MCP-METH-005 (the id echoed) on every one, and by
    # the rule of whatever each request is (a tools/list refused for its id fails MCP-SESS-005 there)
    InputClass("jsonrpc-id", "falsy", True,
               "0 and \"\" are an integer and a string, so valid ids; JSON-RPC 2.0 §5: the response carries the same "
               "id (a server reading a falsy id as absent answers a notification, or id null)",
               ("MCP-METH-005", "MCP-SESS-005"), (0, ""), sent=2),
    InputClass("jsonrpc-id", "negative", True,
               "a negative integer is an integer id, echoed unchanged (a server parsing ids as unsigned fails)",
               ID_RIDES, (-1, -7301)),
    InputClass("jsonrpc-id", "large", True,
               "an integer beyond 32 bits and inside ±(2^53-1) is exact in every JSON number reading (RFC 8259 §6), "
               "echoed unchanged", ID_RIDES, (2**53 - 1, 2**32 + 7)),
    InputClass("jsonrpc-id", "numeric-string", True,
               "a string of digits is a string id; echoed as that string, never as the number (JSON-RPC 2.0 §5)",
               ID_RIDES, ("7", "0", "-1")),
    *[InputClass("jsonrpc-id", kind, True, f"a string id holding {what} is any string; echoed unchanged",
                 ("MCP-METH-005", "MCP-SESS-005") if kind == "json-escapes" else ID_RIDES, STRING_KINDS[kind])
      for kind, what in (("non-ascii", "characters beyond ASCII"), ("astral", "characters outside the BMP"),
                         ("json-escapes", "`\"`, `\\`, U+2028 and U+2029"))],
    InputClass("jsonrpc-id", "transformable", True,
               "a string id with letters of both cases, precomposed and decomposed characters, compatibility "
               "characters and whitespace at both ends is any string: echoed unchanged, never trimmed, case-folded "
               "or normalized (JSON-RPC 2.0 §5)", ID_RIDES, (TRANSFORMABLE,)),
    InputClass("jsonrpc-id", "beyond-double", False,
               "integers beyond ±(2^53-1) lose precision in many JSON readings (RFC 8259 §6, §9); not sent "
               "(variant_inputs.py row 7)"),
    InputClass("jsonrpc-id", "null-or-fraction", False,
               "JSON-RPC allows null and fractions (discouraged) but the spec's id is 'string or integer'; not sent"),
    InputClass("progress-token", "falsy", True,
               "0 and \"\" are progress tokens (MCP: string or integer): the call gets a stream whose notifications "
               "carry the token (a server testing the token for truth sends none)",
               ("MCP-PROG-001", "MCP-PROG-005"), (0, ""), sent=2),
    *[InputClass("progress-token", kind, True, f"a string token holding {what} is a token; echoed unchanged",
                 ("MCP-PROG-001", "MCP-PROG-005"), STRING_KINDS[kind], sent=len(STRING_KINDS[kind]))
      for kind, what in (("non-ascii", "characters beyond ASCII"), ("astral", "characters outside the BMP"),
                         ("json-escapes", "`\"`, `\\`, U+2028 and U+2029"),
                         ("folding", "letters of both cases"), ("composition", "precomposed and decomposed characters"),
                         ("compatibility", "compatibility characters"),
                         ("edge-whitespace", "whitespace at both ends"))],
    InputClass("resume", "falsy", True,
               "`arguments.resume` takes any value: false, 0 and \"\" answer the paused run like any other (a server "
               "testing the value for truth starts a new run instead)", ("MCP-PAUSE-002",), (False, 0, "")),
    InputClass("resume", "null", False,
               "`resume: null` may be read as an answer or as no resume (absent): the spec does not say; not sent"),
    InputClass("params", "falsy", True,
               "a field of value 0, \"\", false, [] or {} (and a field named \"\") reaches the agent unchanged: "
               "'every request field … is passed to the agent unchanged' (a server that drops zero values, as "
               "Go's `omitempty` does, loses them)", ("INV-PASS-001", "AGUI-PASS-001", "AGUI-PASS-002"),
               ({"confZero": 0, "confEmptyArray": [], "confEmptyObject": {}, "": "empty name"},)),
    InputClass("params", "null", True,
               "`null` where any value may pass (`state`, `tools`, …: 'any'; reach the agent unchanged): the agent "
               "sees null, not an absent field", ("AGUI-PASS-001", "AGUI-PASS-002"), (None,)),
    InputClass("params", "twins", True,
               "member names that are equal only after a transformation (`confKey`/`confkey`, a precomposed and a "
               "decomposed é, `²`/`2`, a name with and without spaces at its ends) are different names (RFC 8259 "
               "§8.3), and a value holding every transformable kind is any string: each reaches the agent as sent, "
               "none merged, renamed or normalized", ("INV-PASS-001", "AGUI-PASS-002"), (PARAM_TWINS,)),
    InputClass("params", "binder-syntax", True,
               "member names that a request binder or sanitizer reads as a path, an operator or an object's prototype "
               "(`conf.dotted`, `conf[bracket]`, `conf[]`, `$confOperator`, `__proto__`: qs-style binders nest them, a "
               "Mongo sanitizer drops them, Fastify's parser refuses the last) are plain names (RFC 8259 §4: any "
               "string): each reaches the agent as sent, neither nested, dropped nor refused",
               ("INV-PASS-001", "AGUI-PASS-002"), ({"conf.dotted": "dot", "conf[bracket]": "bracket",
                                                    "conf[]": ["list"], "$confOperator": {"$gt": ""},
                                                    "__proto__": {"confProto": True}},)),
    InputClass("params", "interpreted-in-another-case", True,
               "member names that are a field the service interprets in another case (`Prompt`, `SESSIONID`, "
               "`ThreadId`, `RESUME`, `thread_id`, …) are other names (RFC 8259 §8.3): unknown fields, which reach the "
               "agent unchanged in `params`, while the fields themselves keep their meaning (a case-insensitive "
               "binder, as Go's encoding/json is by default, or a snake_case one takes them for the fields)",
               ("INV-PASS-001", "AGUI-PASS-002"), ("capitalized, upper case and snake_case",)),
    InputClass("params", "formatted-strings", True,
               "strings that read as another type (an ISO 8601 date-time, digits with leading zeros, `true`) are "
               "strings (RFC 8259 §7): each reaches the agent as sent (a JSON reviver or a lax binder that makes a "
               "date or a number of them writes them back otherwise)", ("INV-PASS-001", "AGUI-PASS-002"),
               ({"confSentAt": "2024-05-01T10:00:00.500+02:00", "confCode": "007", "confFlag": "true"},)),
    InputClass("params", "json-escapes", True,
               "member names and values with `\"`, `\\`, U+2028 and U+2029 are JSON; unchanged",
               ("INV-PASS-001", "AGUI-PASS-002"), JSON_ESCAPES),
    InputClass("messages", "transformable", True,
               "message content is any string: with letters of both cases, precomposed and decomposed characters, "
               "compatibility characters and whitespace at both ends it reaches the agent as sent, neither trimmed "
               "nor normalized ('the whole list reaches the agent'; invoke: 'the conversation as the caller holds "
               "it')", ("INV-PASS-004", "AGUI-PROMPT-002"), (TRANSFORMABLE,)),
    InputClass("request-body", "writings", True,
               "a request body written with spaces and CRLF line breaks, with every non-ASCII character as a \\u "
               "escape, or with its members in reverse order is the same JSON value (RFC 8259 §2, §7; an object is an "
               "unordered collection of members): the history's calls take each writing in turn, and each is "
               "answered as its compact form would be", HISTORY_REQUIREMENTS, ("compact", "spaced", "ascii-escaped",
                                                                               "members-reversed")),
    InputClass("extra-data", "multibyte-inside", True,
               "characters beyond ASCII and the BMP in a value inside 4 KB by every count (UTF-8 bytes, "
               "ASCII-escaped JSON, UTF-16 units): accepted, and it reaches `params` unchanged",
               ("INV-LIM-003", "INV-PASS-003"), ("é東😀", "Жあ𝄞")),
    InputClass("extra-data", "multibyte-outside", True,
               "three-byte characters making about twice 4 KB of UTF-8 (RFC 8259 §8.1: JSON is exchanged as UTF-8) in "
               "fewer than 4096 characters: outside however the JSON is written, so refused (a server counting "
               "characters, as JavaScript's `JSON.stringify(x).length` does, accepts it)",
               ("INV-LIM-004", "INV-LIM-005", "INV-ERR-006"), THREE_BYTE),
    InputClass("content-type", "parameter", True,
               "`application/json; charset=utf-8` is application/json: parameters follow the type (RFC 9110 §8.3.1), "
               "and a charset 'has no effect on compliant recipients' (RFC 8259 §11)",
               ("INV-RES-001", "AGUI-FRAME-001", "MCP-SESS-005"),
               ("application/json; charset=utf-8", "application/json;charset=UTF-8")),
    InputClass("content-type", "case", True,
               "type and subtype are case-insensitive (RFC 9110 §8.3.1): `Application/JSON` is application/json",
               ("INV-RES-001", "AGUI-FRAME-001", "MCP-SESS-005"), ("Application/JSON", "APPLICATION/json")),
    InputClass("accept", "case", True,
               "media ranges match case-insensitively (RFC 9110 §8.3.1, §12.5.1): `Text/Event-Stream` selects "
               "streaming as `text/event-stream` does", ("INV-SEL-002",), ("Text/Event-Stream", "TEXT/EVENT-STREAM")),
    InputClass("accept", "weight", True,
               "one media range with a weight (RFC 9110 §12.4.2) accepts only that type: `text/event-stream;q=1` and "
               "`text/event-stream; q=0.5` select streaming", ("INV-SEL-002",),
               ("text/event-stream;q=1", "text/event-stream; q=0.5")),
    InputClass("accept", "list-forms", True,
               "MCP's recommended pair in another legitimate form (order, spacing, weights, case: RFC 9110 §12.5.1) "
               "still accepts both types: the request is served", ("MCP-SESS-005",),
               ("text/event-stream, application/json", "application/json,text/event-stream",
                "application/json;q=1.0, text/event-stream;q=0.9", "Application/JSON, Text/Event-Stream"), sent=4),
    InputClass("accept", "both-on-invoke", False,
               "an invoke Accept listing both JSON and the event stream leaves the choice to the server (RFC 9110 "
               "§12.5.1; rule 1 names only `text/event-stream`); not sent"),
    InputClass("accept", "wildcard-on-mcp", False,
               "MCP's Accept is only 'recommended' here while MCP itself requires both types listed: a server may "
               "answer `*/*` or refuse it; not sent"),
    InputClass("auth-scheme", "case", True,
               "the authentication scheme is a case-insensitive token (RFC 9110 §11.1, RFC 6750 §2.1): `bearer` and "
               "`BEARER` carry the credential as `Bearer` does", ("AUTH-KEY-001",), ("bearer", "BEARER")),
]}
