"""The prompt as a script: echo mode, or a list of directives checked before anything runs."""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

DIRECTIVES = frozenset(
    {"say", "say-json", "chunks", "chunks-json", "tool", "step", "sleep", "ask", "fail", "echo", "count"}
)
_LONGEST_WORD = max(map(len, DIRECTIVES))
MAX_CHUNKS = 1000
MAX_SLEEP = 120.0

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_INTEGER = re.compile(r"[0-9]+\Z")


def canonical_json(value: Any) -> str:
    """Keys sorted, no spaces, non-ASCII written as itself: the agent's one JSON form."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Directive:
    word: str
    arg: Any = None
    count: int = 0  # for chunks


@dataclass(frozen=True, slots=True)
class Script:
    echo: str | None = None  # echo mode: the reply
    directives: tuple[Directive, ...] = ()
    error: str | None = None  # a bad line: the run fails with this message
    source: str | None = field(default=None, compare=False, repr=False)  # the prompt it was parsed from

    @property
    def sleeps(self) -> bool:
        return any(d.word == "sleep" for d in self.directives)


class BadLine(ValueError):
    pass


def split_lines(prompt: str) -> list[str]:
    return [line for line in _LINE_BREAK.split(prompt) if line != ""]


def _first_line(prompt: str) -> str:
    """The first line that is not empty ("" when there is none)."""
    text = prompt.lstrip("\r\n")
    found = _LINE_BREAK.search(text)
    return text[:found.start()] if found else text


def _starts_with_a_directive(prompt: str) -> bool:
    """Its first line's first word is a directive: read on a prefix longer than any directive's word, since a
    word that runs past it is none."""
    text = prompt.lstrip("\r\n")
    return _word(_first_line(text[:_LONGEST_WORD + 1])) in DIRECTIVES


def _word(line: str) -> str:
    return line.split(" ", 1)[0]


def _rest(line: str, word: str) -> str | None:
    """The text after the word and one space; None when there is nothing after the word."""
    if len(line) == len(word):
        return None
    return line[len(word) + 1 :]


def _json_of(text: str, kind: type, what: str, bad_json: str) -> Any:
    """`text` parsed as JSON of `kind`, or BadLine saying so (`bad_json` names the value on a parse error)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise BadLine(f"{bad_json} ({exc.msg})") from None
    if not isinstance(value, kind):
        raise BadLine(what)
    return value


def _json_string(text: str | None) -> str:
    if text is None:
        raise BadLine("a JSON string literal is missing")
    return _json_of(text, str, "not a JSON string literal", "not a JSON string literal")


def _chunks_args(rest: str | None, as_json: bool) -> Directive:
    if rest is None:
        raise BadLine("N is missing")
    n_text, sep, text = rest.partition(" ")
    if not _INTEGER.match(n_text):
        raise BadLine(f"N must be an integer from 1 to {MAX_CHUNKS}")
    n = int(n_text)
    if not 1 <= n <= MAX_CHUNKS:
        raise BadLine(f"N must be an integer from 1 to {MAX_CHUNKS}")
    if as_json:
        value = _json_string(text if sep else None)
    else:
        value = text
    return Directive("chunks", value, n)


def _tool_args(rest: str | None) -> Directive:
    if not rest:
        raise BadLine("tool NAME ARGS: NAME is missing")
    name, sep, args_text = rest.partition(" ")
    if not name:
        raise BadLine("tool NAME ARGS: NAME is missing")
    if not sep:
        raise BadLine("tool NAME ARGS: ARGS (a JSON object) is missing")
    return Directive("tool", (name, _json_of(args_text, dict, "tool ARGS must be a JSON object", "tool ARGS is not JSON")))


def _sleep_args(rest: str | None) -> Directive:
    message = f"sleep SECONDS: SECONDS must be a decimal, 0 < s <= {MAX_SLEEP:g}"
    if rest is None or not _DECIMAL.match(rest):
        raise BadLine(message)
    seconds = float(rest)
    if not 0 < seconds <= MAX_SLEEP:
        raise BadLine(message)
    return Directive("sleep", seconds)


def parse_line(line: str) -> Directive:
    word = _word(line)
    rest = _rest(line, word)
    if word == "say":
        return Directive("say", rest or "")
    if word == "say-json":
        return Directive("say", _json_string(rest))
    if word == "chunks":
        return _chunks_args(rest, as_json=False)
    if word == "chunks-json":
        return _chunks_args(rest, as_json=True)
    if word == "tool":
        return _tool_args(rest)
    if word == "step":
        if not rest:
            raise BadLine("step NAME: NAME is missing")
        return Directive("step", rest)
    if word == "sleep":
        return _sleep_args(rest)
    if word == "ask":
        return Directive("ask", rest or "")
    if word == "fail":
        return Directive("fail", rest or "")
    if word == "echo":
        if rest not in ("params", "messages"):
            raise BadLine("expected 'echo params' or 'echo messages'")
        return Directive("echo", rest)
    if word == "count":
        if rest is not None:
            raise BadLine("'count' takes no argument")
        return Directive("count")
    raise BadLine("not a directive")


def parse(prompt: str) -> Script:
    """The prompt's script. Never raises: a bad line becomes ``Script.error`` (the run fails with it)."""
    if not _starts_with_a_directive(prompt):     # a prompt of many MB is not split (nor searched) to learn that
        return Script(echo=prompt, source=prompt)
    lines = split_lines(prompt)
    directives = []
    for number, line in enumerate(lines, 1):
        try:
            directives.append(parse_line(line))
        except BadLine as exc:
            shown = line if len(line) <= 200 else line[:200] + "…"
            return Script(error=f"bad script line {number}: {shown!r}: {exc}", source=prompt)
    return Script(directives=tuple(directives), source=prompt)


def split_chunks(text: str, n: int) -> list[str]:
    """N pieces of near-equal length in code points; the longer pieces come first."""
    size, extra = divmod(len(text), n)
    pieces = []
    start = 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces
