"""Generated inputs (hypothesis), drawn once per run so a scenario can send them.

A scenario cannot shrink against a remote server without paying for every
shrink step, so examples are drawn up front, deterministically from the run's
seed, and a failing check shows the exact example that failed.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import tempfile
import threading
from typing import Any, Callable, Iterator, TypeVar

from hypothesis import HealthCheck, Phase, configuration, given, seed as with_seed, settings, strategies as st
from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption

from conformance.outcomes import SuiteFault

T = TypeVar("T")

# Hypothesis parses source with `ast`, whose recursion bookkeeping is not thread-safe on CPython 3.11
# ("AST constructor recursion depth mismatch"): every draw in the process takes this lock.
GENERATION_LOCK = threading.RLock()   # re-entrant: callers may hold it around several draws


def _without_local_constants() -> None:
    """Hypothesis mixes in constants it finds by `ast.parse`-ing every newly imported local module, on the
    drawing thread. That parse races any import compiling source on another thread (the lock above cannot
    cover imports: "AST constructor recursion depth mismatch", the flaky SystemError of issue 13), and it makes
    the draws depend on which modules happen to be imported, so one seed would not reproduce one input set.
    Draws here use hypothesis' built-in constants only."""
    from hypothesis.internal.conjecture import providers
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "_local_constants"):
        providers._get_local_constants = lambda: providers._local_constants


_without_local_constants()

_AST_LOCK = threading.RLock()


def _serialize_ast_parse() -> None:
    """CPython 3.11 keeps one AST recursion counter per interpreter: two threads in `ast.parse` at once
    corrupt it and one of them dies with SystemError "AST constructor recursion depth mismatch".
    Hypothesis calls `ast.parse` on every filtered draw (to read lambda predicates) from the fuzz worker
    threads, while other scenarios (the official MCP client, …) may call it too: every `ast.parse` in
    the process takes one lock, so neither side can be hit."""
    if getattr(ast.parse, "_conformance_serialized", False):
        return
    original = ast.parse

    @functools.wraps(original)
    def parse(*args: Any, **kwargs: Any) -> Any:
        with _AST_LOCK:
            return original(*args, **kwargs)

    parse._conformance_serialized = True  # type: ignore[attr-defined]
    ast.parse = parse


_serialize_ast_parse()

# Characters that break naive framing: line terminators of every kind, quotes, escapes,
# astral-plane emoji, U+2028/U+2029 (JSON-legal, JavaScript-hostile), NUL-free.
TRICKY = ["\n", "\r", "\r\n", "\n\n", '"', "\\", "'", "\t", "\u2028", "\u2029", "\U0001f600", "é", "data: x",
          "event: done", ":", " ", "\u00a0", "\ufeff"]
FIXED_TEXTS = [
    "line one\nline two\r\nline three\rend",
    'quotes " and \\ backslash',
    "emoji \U0001f680 and U+2028 \u2028 U+2029 \u2029 here",
    "\n\nleading and trailing blank lines\n\n",
    "data: looks like a frame\n\nevent: done\n\n",
    "x" * 20000,
]

_text_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
reply_text = st.one_of(
    st.text(_text_chars, min_size=1, max_size=200),
    st.lists(st.one_of(st.sampled_from(TRICKY), st.text(_text_chars, min_size=1, max_size=20)),
             min_size=1, max_size=30).map("".join),
    st.integers(1000, 60000).map(lambda n: ("long line " * (n // 10 + 1))[:n]),
)

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1),
                       st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f == f),
                       st.text(_text_chars, max_size=40))
json_value = st.recursive(_json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(_text_chars, min_size=1, max_size=12), inner, max_size=5)),
    max_leaves=20)


def small_json(max_bytes: int = 1500):
    """JSON values whose canonical JSON stays well inside a size (e.g. the 4 KB extra data)."""
    return json_value.filter(lambda v: len(json.dumps(v, ensure_ascii=False).encode()) <= max_bytes)


@contextlib.contextmanager
def _storage_outside_cwd() -> Iterator[None]:
    """Even with no database, hypothesis caches unicode tables and source constants under .hypothesis/ in
    the current directory; a run must leave the directory it starts from untouched. A scratch directory
    takes them (HYPOTHESIS_STORAGE_DIRECTORY, when the user sets it, still wins)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="conformance-hypothesis-") as scratch:
        configuration.set_hypothesis_home_dir(scratch)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(None)


def examples(strategy: st.SearchStrategy[T], n: int, seed: int | None = None) -> list[T]:
    """n examples of a strategy, deterministic for a seed (no database, no shrinking, no replay).

    Nothing here ever reaches a server: values are only drawn. A draw that raises is a fault of the
    suite (SuiteFault), caught inside the test body so hypothesis never sees a failing example and
    never re-runs one ("Inconsistent results ... FlakyFailure" cannot arise).
    """
    drawn: list[T] = []
    faults: list[BaseException] = []

    @settings(max_examples=max(1, n), database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=seed is None, report_multiple_bugs=False)
    @given(st.data())
    def collect(data: st.DataObject) -> None:
        if len(drawn) >= n or faults:
            return
        try:
            value = data.draw(strategy)
        except UnsatisfiedAssumption:      # hypothesis' own control flow: the draw is retried
            raise
        except Exception as exc:           # noqa: BLE001 - any crash of a generator is the suite's
            faults.append(exc)
            return
        drawn.append(value)

    if seed is not None:
        collect = with_seed(seed)(collect)
    with GENERATION_LOCK, _storage_outside_cwd():
        try:
            collect()
        except Unsatisfiable:
            if not faults:
                raise
        except Exception as exc:           # noqa: BLE001
            faults.append(exc)
    if faults:
        exc = faults[0]                    # the first crash, not hypothesis' complaint about it
        raise SuiteFault(f"generating inputs crashed (seed {seed}): {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    return drawn


AST_RACE = "AST constructor recursion depth mismatch"
GENERATION_ATTEMPTS = 3


def guarded(fn: Callable[..., T], *args: Any) -> T:
    """Runs a local, server-free generation step under the lock, again (same seed, same result) when
    CPython 3.11's AST race hit it: hypothesis parses lambda sources with `ast` while another thread may be
    compiling (an import), which the lock cannot cover. Nothing here touches a server, so a retry
    re-executes no case against it."""
    for attempt in range(1, GENERATION_ATTEMPTS + 1):
        try:
            with GENERATION_LOCK:
                return fn(*args)
        except (SystemError, SuiteFault) as exc:
            if AST_RACE not in f"{exc} {exc.__cause__}" or attempt == GENERATION_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def texts(n: int, seed: int | None = None) -> list[str]:
    """Half fixed tricky texts, half generated ones (all fixed ones come in at depth >= 2)."""
    fixed = FIXED_TEXTS[:min(len(FIXED_TEXTS), max(1, n // 2))]
    return fixed + examples(reply_text, max(0, n - len(fixed)), seed)


def canonical_bytes(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
