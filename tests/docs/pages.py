"""The written pages the docs tests read: README.md, docs/, the packages' READMEs, action.yml and every `--help`.

A page is its text with, per line, whether it is inside a fenced code block and the nearest heading above it.
"""
from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance import cli

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Line:
    page: str
    number: int
    text: str
    code: bool          # inside a fenced code block
    heading: str        # the nearest heading above it
    start: int = 0      # where it starts in the page's text

    @property
    def where(self) -> str:
        return f"{self.page}:{self.number}"


@dataclass(frozen=True)
class Page:
    name: str
    text: str

    def lines(self) -> list[Line]:
        return _lines(self)

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


@cache
def _lines(page: Page) -> list[Line]:
    out, code, heading, start = [], False, "", 0
    for number, text in enumerate(page.text.split("\n"), 1):
        here, start = start, start + len(text) + 1
        if text.lstrip().startswith("```"):
            code = not code
            continue
        if not code and page.name.endswith(".md") and (m := re.match(r"#{1,6}\s+(.*)", text)):
            heading = m.group(1).strip()
        out.append(Line(page.name, number, text, code, heading, here))
    return out


def _help_of(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main(list(argv))
    return out.getvalue()


@cache
def helps() -> dict[str, str]:
    """command -> the text its `--help` prints."""
    return {command: _help_of(command, "--help") for command in cli.COMMANDS}


@cache
def pages() -> tuple[Page, ...]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("conformance/*/README.md")),
             ROOT / "action.yml"]
    written = [Page(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in files]
    return (*written, *(Page(f"`conformance {c} --help`", text) for c, text in helps().items()))


def page(name: str) -> Page:
    return next(p for p in pages() if p.name == name)


def prose_of_action(text: str) -> str:
    """action.yml with every line but its descriptions blanked (the rest is a program); every line keeps its
    length, so a place in it is the same place in action.yml."""
    kept, block = [], None
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if block is not None and line.strip() and indent > block:
            kept.append(line)
            continue
        block = None
        if m := re.match(r"^(\s*)description:\s*(.*)$", line):
            kept.append(line)
            block = len(m.group(1)) if m.group(2) in (">-", ">", "|", "|-") else None
        else:
            kept.append(" " * len(line))
    return "\n".join(kept)


@cache
def prose_pages() -> tuple[Page, ...]:
    """The pages as people read them: action.yml is its descriptions."""
    return tuple(Page(p.name, prose_of_action(p.text)) if p.name == "action.yml" else p for p in pages())
