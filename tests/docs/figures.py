"""Every number a page states is accounted for: a figure tied to the code's value by what the page says around it,
or a number that is no figure of the suite, with the reason.

A number is any run of digits (`1000`, `0.5`, `2,000`, `2026-11-22`, `0.1.0`) that is not part of a name
(`INV-SEL-001`, `sha256`, `agt_123`, `U+2028`), or a count in words (`two` … `twelve`). A reading accounts for
the numbers inside the spans it matches:

- a `Figure` is a phrase the docs use, `{}` marking the figure, and the code's value it must equal. The phrase is
  what ties the figure to one value: "never more than `--rate-probe-max` (default {})" is the probe's cap, and a
  600 in that place is wrong even though 600 is also the embedded server's bucket;
- a `Checked` is an example the code itself decides: a directive the agent must refuse, a number written in
  canonical JSON, a reference to a section of the same page;
- a `NotFigure` is a pattern of numbers that state nothing about the suite (a standard's number, a list item's
  number, a JSON example checked elsewhere), and says why;
- a `Region` is a part of a page another test compares with the code as a whole (an exit status table, a
  measured table), named by that test.

A number no reading accounts for is a finding: the page, the line and the number. So a figure written in a new
way, or a bound that drifted from its phrase, fails until it is tied to the code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Iterable, Iterator

from tests.docs.pages import Page

WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
COUNT_WORD = r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
DATE = r"\d{4}-\d\d(?:-\d\d(?:T\d\d:\d\d:\d\dZ)?)?"     # 2026-11-22, 2020-12, 2026-01-01T00:00:00Z
NUMBER = re.compile(rf"(?<![\w.+\-#])(?:{DATE}|\d+(?:[.,]\d+)*)"
                    rf"|\b(?:{COUNT_WORD})\b", re.I)
FIGURE = rf"({DATE}|\d[\d,]*(?:\.\d+)*|[0-9a-f]{{8,64}}|(?i:{COUNT_WORD}))"   # what a {} of a phrase reads


@dataclass(frozen=True)
class Stated:
    """A number written on a page."""
    page: Page
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.page.text[self.start:self.end]

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.page.line_of(self.start)}"

    def context(self, width: int = 40) -> str:
        before = self.page.text[max(0, self.start - width):self.start].split("\n")[-1]
        after = self.page.text[self.end:self.end + width].split("\n")[0]
        return f"{before}[{self.text}]{after}".strip()


def numbers(page: Page) -> list[Stated]:
    return [Stated(page, m.start(), m.end()) for m in NUMBER.finditer(page.text)]


def value(stated: str) -> float | str:
    """A written figure as a value: a number (`2,000` is 2000, `three` is 3), else the text (a date, a version)."""
    if stated.lower() in WORDS:
        return WORDS[stated.lower()]
    try:
        return float(stated.replace(",", ""))
    except ValueError:
        return stated


def same(stated: str, truth: Any) -> bool:
    """Whether a written figure is the code's value (one of them, for a set: two MCP versions, say)."""
    if isinstance(truth, frozenset):
        return any(same(stated, one) for one in truth)
    if isinstance(truth, str):
        return truth == stated or (truth.startswith("sha256:") and truth.startswith(f"sha256:{stated}"))
    got = value(stated)
    if isinstance(got, str):
        return False
    return got == float(truth)


def shown(truth: Any) -> str:
    """The code's value as the docs would write it (`1000`, not `1000.0`)."""
    if isinstance(truth, tuple):
        return "(" + ", ".join(map(shown, truth)) + ")"
    if isinstance(truth, frozenset):
        return " or ".join(sorted(map(shown, truth)))
    if isinstance(truth, float) and truth.is_integer():
        return str(int(truth))
    return str(truth)


@cache
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A phrase as the docs write it: `{}` is a figure, a space is any run of white space (a line may break)."""
    parts = [r"\s+".join(map(re.escape, part.split(" "))) for part in re.sub(r"\s+", " ", phrase).split("{}")]
    return re.compile(FIGURE.join(parts))


# -- readings ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """A figure of the suite: how the docs say it, and the code's value (a tuple: one per `{}`)."""
    what: str
    phrases: tuple[str, ...]
    truth: Callable[[], Any]
    where: tuple[str, ...] = ()     # pages that must state it, so the reading cannot pass on nothing

    def matches(self, page: Page) -> list[re.Match[str]]:
        return _phrase_matches(self.phrases, page)

    def spans(self, page: Page) -> Iterator[tuple[int, int]]:
        for m in self.matches(page):
            yield from (m.span(g) for g in range(1, (m.lastindex or 0) + 1))

    def problems(self, page: Page) -> Iterator[str]:
        matches = self.matches(page)
        truth = self.truth() if matches else None
        truths = truth if isinstance(truth, tuple) else (truth,)
        for m in matches:
            if not all(same(s, t) for s, t in zip(m.groups(), truths)):
                yield f"{page.name}:{page.line_of(m.start())}: {' '.join(m.group().split())!r}: {self.what} is {shown(truth)}"


@cache
def _phrase_matches(phrases: tuple[str, ...], page: Page) -> list[re.Match[str]]:
    found = []
    for phrase in phrases:
        needle = max(re.sub(r"\{\}", " ", phrase).split(), key=len, default="")
        if needle in page.text:    # most phrases are on no page: skip the costly search
            found += phrase_pattern(phrase).finditer(page.text)
    return found


@dataclass(frozen=True)
class Checked:
    """Examples the code itself decides (a directive the agent must refuse, a canonical JSON form): the numbers
    inside each match are accounted for, and `holds` must say yes to each match."""
    what: str
    pattern: str
    holds: Callable[[re.Match[str]], bool]
    where: tuple[str, ...] = ()
    flags: int = re.S

    def matches(self, page: Page) -> list[re.Match[str]]:
        return list(re.finditer(self.pattern, page.text, self.flags))

    def spans(self, page: Page) -> Iterator[tuple[int, int]]:
        return (m.span() for m in self.matches(page))

    def problems(self, page: Page) -> Iterator[str]:
        for m in self.matches(page):
            try:
                held = self.holds(m)
            except Exception as exc:   # an example the code cannot even read is wrong too
                held = exc
            if held is not True:
                why = f" ({type(held).__name__}: {held})" if isinstance(held, Exception) else ""
                yield f"{page.name}:{page.line_of(m.start())}: {' '.join(m.group().split())!r}: not {self.what}{why}"


@dataclass(frozen=True)
class NotFigure:
    """Numbers that state nothing about the suite: the pattern's groups (or the whole match) on the pages named
    (default all), and why."""
    why: str
    pattern: str
    pages: tuple[str, ...] = ()
    flags: int = re.M

    def spans(self, page: Page) -> Iterator[tuple[int, int]]:
        if self.pages and page.name not in self.pages:
            return
        for m in re.finditer(self.pattern, page.text, self.flags):
            yield from ((m.span(g) for g in range(1, m.lastindex + 1) if m.start(g) >= 0) if m.lastindex
                        else [m.span()])


@dataclass(frozen=True)
class Region:
    """A part of a page another test compares with the code as a whole; `find` gives its spans."""
    why: str
    find: Callable[[Page], Iterable[tuple[int, int]]] = field(compare=False)

    def spans(self, page: Page) -> Iterable[tuple[int, int]]:
        return self.find(page)


Reading = Figure | Checked | NotFigure | Region


@dataclass
class Audit:
    unaccounted: list[str]            # numbers no reading accounts for
    wrong: list[str]                  # figures that are not the code's
    stated_in: dict[str, set[str]]    # figure -> the pages that state it


def audit(pages: Iterable[Page], readings: Iterable[Reading]) -> Audit:
    readings = list(readings)
    tied = [r for r in readings if isinstance(r, (Figure, Checked))]
    result = Audit([], [], {r.what: set() for r in tied})
    for page in pages:
        covered = [span for r in readings for span in r.spans(page)]
        for n in numbers(page):
            if not any(start <= n.start and n.end <= end for start, end in covered):
                result.unaccounted.append(f"{n.where}: {n.text} ({n.context()})")
        for r in tied:
            result.wrong += r.problems(page)
            if r.matches(page):
                result.stated_in[r.what].add(page.name)
    return result
