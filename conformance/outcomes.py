"""What a check or scenario can say besides pass (return): which exchange broke a rule (`Deviation`), that an
exchange already broke a more basic rule (`Blocked`), that nothing could be judged (`NotAssessed`), or only
what was seen (`Observation`).

A failure proves itself: it names the exchange(s) that broke the rule, and the reports show those first, with
their curl. The one way a check names them is a `Deviation` (or `on(exchange)`, which turns every
AssertionError inside into one):

    with on(ex):
        assert ex.status == 200, f"expected 200, got {ex.status}"      # -> Deviation naming ex

    raise Deviation("the two calls reached different sessions", (first, second))

The message of a Deviation starts with its first exchange's step label (added when missing).
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
MAX_LISTED = 8        # problems listed in one message; the rest are counted


class NotAssessed(Exception):
    """The check cannot run here: a missing credential, no prompt, an excluded protocol.

    Never counted as passed; the reason names the option that would let it run.
    """


class Observation(Exception):
    """The spec leaves this open: the check reports what it saw, it does not judge."""


class SuiteFault(Exception):
    """The suite itself broke (a generator, the fuzz machinery, a missing resource, a crash in a scenario
    or check). Never the server's fault: the requirements it touches are `error`, and the run's verdict is
    `error` when a MUST is touched. The server saw nothing of it, or only the first observation counts."""


def _unique(exchanges: Iterable[Any]) -> tuple[Any, ...]:
    seen: dict[int, Any] = {}
    for ex in exchanges:
        if ex is not None:
            seen.setdefault(id(ex), ex)
    return tuple(seen.values())


def labelled(message: str, exchange: Any) -> str:
    """`message`, starting with the exchange's step label (added unless it already does)."""
    label = getattr(exchange, "label", "") or ""
    if not label or message.startswith((f"{label}:", f"{label} ")):
        return message
    return f"{label}: {message}"


class Deviation(AssertionError):
    """A rule broken on `exchanges` (in the order they matter): the evidence and curl shown first."""

    def __init__(self, message: str, exchanges: Iterable[Any] = ()):
        self.exchanges = _unique(exchanges if isinstance(exchanges, (list, tuple)) else
                                 [exchanges] if hasattr(exchanges, "label") else exchanges)
        super().__init__(labelled(str(message), self.exchanges[0]) if self.exchanges else str(message))

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class Blocked(Deviation):
    """The exchange already broke a more basic rule, the requirement `root` (a non-200 where a result was
    expected, no event stream, an error body that is not an object under `error`, a document behind a 401):
    what this check judges cannot be read on it. It is not a second failure: the requirement is not assessed,
    blocked by `root`, as long as `root` failed in the same run (otherwise it is failed, with this message).

    Readers raise it through `precondition(...)`, which makes it a plain Deviation for `root`'s own checks.
    It is an AssertionError, so code that only knows pass/fail still never passes on it."""

    def __init__(self, root: str, message: str, exchanges: Iterable[Any] = ()):
        self.root = root
        super().__init__(message, exchanges)


#: the requirement ids of the check being judged (set by the engine around each check call)
JUDGING: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("conformance_judging",
                                                                         default=frozenset())


class judging:
    """`JUDGING` set to `requirements` within a `with` block (a class, not a generator: the rules over every exchange
    enter it 7,000 times a run)."""

    def __init__(self, requirements: Iterable[str]) -> None:
        self.requirements = frozenset(requirements)

    def __enter__(self) -> None:
        self.token = JUDGING.set(self.requirements)

    def __exit__(self, *exc: Any) -> None:
        JUDGING.reset(self.token)


#: the exchanges the check being judged read, when the judging keeps them (`reading`): the request dimensions a
#: requirement was judged on are read off them
READ: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("conformance_read", default=None)


@contextlib.contextmanager
def reading(into: list[Any]) -> Iterator[None]:
    token = READ.set(into)
    try:
        yield
    finally:
        READ.reset(token)


@contextlib.contextmanager
def unread() -> Iterator[None]:
    """What is looked up inside is context, not read: the earlier calls a move's expectation was built on."""
    token = READ.set(None)
    try:
        yield
    finally:
        READ.reset(token)


def read_on(*exchanges: Any) -> None:
    """Notes that the check being judged read these exchanges (nothing outside a judging that keeps them)."""
    kept = READ.get()
    if kept is not None:
        kept.extend(ex for ex in exchanges if ex is not None)


def precondition(root: str, exchanges: Any, message: str) -> Deviation:
    """What a reader raises when an exchange broke `root`, the rule every reading of it relies on: a Deviation
    for the checks of `root` itself (they judge exactly this), a `Blocked` by `root` for every other check."""
    if root in JUDGING.get():
        return Deviation(message, exchanges)
    return Blocked(root, message, exchanges)


@contextlib.contextmanager
def on(*exchanges: Any) -> Iterator[None]:
    """Every AssertionError raised inside names `exchanges`, unless it already names its own. The check read them
    unless it could not judge them (not assessed, or blocked by a more basic rule)."""
    try:
        yield
    except Deviation as exc:
        if not isinstance(exc, Blocked):
            read_on(*exchanges)
        if not exc.exchanges:
            raise _renamed(exc, exchanges) from None
        raise
    except AssertionError as exc:
        read_on(*exchanges)
        raise Deviation(str(exc), exchanges) from None
    read_on(*exchanges)


def _renamed(exc: Deviation, exchanges: tuple[Any, ...]) -> Deviation:
    if isinstance(exc, Blocked):
        return Blocked(exc.root, exc.message, exchanges)
    return Deviation(exc.message, exchanges)


def joined(problems: list[str]) -> str:
    more = f"; … and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return "; ".join(problems[:MAX_LISTED]) + more


def judge_all(items: Iterable[T], rule: Callable[[T], Any], *, exchange: Callable[[T], Any] = lambda item: item,
              nothing: str = "nothing to judge") -> None:
    """Applies `rule` to every item, each on its exchange (`exchange(item)`), and reports them together:

    - any item broke the rule: one Deviation naming every exchange that did, in order;
    - else any item could not be read because its exchange broke a more basic rule: Blocked on those exchanges
      (the report keeps it blocked only where that rule failed on them, and fails it otherwise), never passed
      on the items that remain;
    - an item the rule cannot judge (NotAssessed) is left out; none judged at all: NotAssessed, never passed."""
    problems: list[Deviation] = []
    blocked: list[Blocked] = []
    unjudged: list[str] = []
    judged = 0
    for item in items:
        try:
            with on(exchange(item)):
                rule(item)
            judged += 1
        except NotAssessed as exc:
            unjudged.append(str(exc))
        except Blocked as exc:
            blocked.append(exc)
        except Deviation as exc:
            problems.append(exc)
            judged += 1
    if problems:
        raise Deviation(joined([p.message for p in problems]), [ex for p in problems for ex in p.exchanges])
    if blocked:
        roots = dict.fromkeys(b.root for b in blocked)
        raise Blocked(next(iter(roots)), joined([b.message for b in blocked]),
                      [ex for b in blocked for ex in b.exchanges])
    if not judged:
        raise NotAssessed("; ".join(dict.fromkeys(unjudged)) or nothing)
