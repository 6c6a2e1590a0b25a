"""Generated inputs (hypothesis, schemathesis), drawn once per seed so a scenario can send them.

A scenario cannot shrink against a remote server without paying for every shrink step, so examples are drawn up
front, deterministically from the run's seed, and a failing check shows the exact example that failed. What a seed
fixes is drawn once and read back afterwards (conformance/draw_cache.py): `texts`, `extra_fields` and `cases` hand
out kept draws, and hypothesis and schemathesis are imported only when something must really be drawn.

What must be drawn is drawn in a process of its own (`drawn`), never in the suite's: hypothesis reads state the whole
process shares while it draws (it iterates `sys.modules` in Python to match a lambda's source, and parses source
with `ast`), and a run imports on several threads at once from its first second (pytest on the main thread, the
SDKs on the preloader, httpcore's h2 on a recording lane). No lock of the suite's covers an import a library makes
lazily; in the drawing process one thread draws and nothing else runs ("dictionary changed size during iteration"
and "AST constructor recursion depth mismatch" cannot happen there).
"""
from __future__ import annotations

import ast
import atexit
import contextlib
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from conformance import draw_cache
from conformance.outcomes import SuiteFault
from conformance.wire.exchange import ACTIVITY

# Hypothesis parses source with `ast`, whose recursion bookkeeping is not thread-safe on CPython 3.11
# ("AST constructor recursion depth mismatch"): every draw in the process takes this lock.
GENERATION_LOCK = threading.RLock()   # re-entrant: callers may hold it around several draws


_AST_LOCK = threading.RLock()


def _serialize_ast_parse() -> None:
    """CPython 3.11 keeps one AST recursion counter per interpreter: two threads in `ast.parse` at once
    corrupt it and one of them dies with SystemError "AST constructor recursion depth mismatch".
    Hypothesis calls `ast.parse` on every filtered draw (to read lambda predicates); a run draws in the drawing
    process alone, but a process that draws here beside threads of its own (a test) may meet another caller:
    every `ast.parse` in the process takes one lock, so neither side can be hit."""
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
# A default run sends the first four in one reply (on every protocol, streamed too). The fourth holds a line of
# 5,000 characters: each stream then carries a frame far over what a writer or reader capping its lines at 1, 2 or
# 4 KB passes whole (the 20,000-character text comes in at depth >= 2). Its characters take 1 to 4 bytes, so a writer
# that cuts a long piece every so many bytes cuts through one of them wherever it cuts.
LONG_LINE = "a long line: " + "0123456789abc\u00e9\u20ac\U0001f600" * 312
FIXED_TEXTS = [
    "error: none, a reply that only starts like one\nline one\nline two\r\nline three\rend",
    'quotes " and \\ backslash, <b>markup</b> & entities &amp; <, a terminal\'s \x1b[31mcolour\x1b[0m',
    "emoji \U0001f680 and U+2028 \u2028 U+2029 \u2029 here",
    f"\n\nleading and trailing blank lines, {LONG_LINE}\n\n",
    "data: looks like a frame\n\nevent: done\n\n",
    "x" * 20000,
]


# -- hypothesis, imported only to draw ----------------------------------------------------------------------
@functools.cache
def _hypothesis() -> Any:
    """hypothesis, made to draw the same values for the same seed whatever else is imported.

    Hypothesis mixes in constants it finds by `ast.parse`-ing every newly imported local module, on the drawing
    thread. That parse races any import compiling source on another thread (the lock above cannot cover imports:
    "AST constructor recursion depth mismatch", the flaky SystemError of issue 13), and it makes the draws depend
    on which modules happen to be imported, so one seed would not reproduce one input set. Draws here use
    hypothesis' built-in constants only."""
    import hypothesis
    from hypothesis.internal.conjecture import providers
    if hasattr(providers, "_get_local_constants") and not getattr(providers, "_conformance_no_local", False):
        # none at all, not the ones found so far: a process that already ran a @given (a test session) has some
        none = type(providers._local_constants)(**{f: type(v)(key=v.key)
                                                   for f, v in vars(providers._local_constants).items()})
        providers._get_local_constants = lambda: none
        providers._conformance_no_local = True
        if hasattr(providers, "CONSTANTS_CACHE"):
            providers.CONSTANTS_CACHE.cache.clear()
    return hypothesis


@functools.cache
def _strategies() -> Any:
    """The generators of the round-trip texts and of arbitrary JSON values."""
    from types import SimpleNamespace
    _hypothesis()
    from hypothesis import strategies as st

    chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
    reply_text = st.one_of(
        st.text(chars, min_size=1, max_size=200),
        st.lists(st.one_of(st.sampled_from(TRICKY), st.text(chars, min_size=1, max_size=20)),
                 min_size=1, max_size=30).map("".join),
        st.integers(1000, 60000).map(lambda n: ("long line " * (n // 10 + 1))[:n]),
    )
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1),
                     st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda f: f == f),
                     st.text(chars, max_size=40))
    json_value = st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(chars, min_size=1, max_size=12), inner, max_size=5)),
        max_leaves=20)
    return SimpleNamespace(chars=chars, reply_text=reply_text, json_value=json_value)


@functools.cache
def _extra_fields(reserved: frozenset[str]) -> Any:
    """Objects of 1 to 6 fields (unicode names, none of `reserved`, any JSON value), at most 1500 bytes as JSON."""
    from hypothesis import strategies as st
    s = _strategies()
    name = st.text(s.chars, min_size=1, max_size=16).filter(lambda k: k not in reserved)
    return st.dictionaries(name, s.json_value, min_size=1, max_size=6).filter(
        lambda d: len(canonical_bytes(d)) <= 1500)


@contextlib.contextmanager
def _storage_outside_cwd() -> Iterator[None]:
    """Even with no database, hypothesis caches unicode tables and source constants under .hypothesis/ in
    the current directory; a run must leave the directory it starts from untouched. A scratch directory
    takes them (HYPOTHESIS_STORAGE_DIRECTORY, when the user sets it, still wins)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    from hypothesis import configuration
    with tempfile.TemporaryDirectory(prefix="conformance-hypothesis-") as scratch:
        configuration.set_hypothesis_home_dir(scratch)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(None)


def examples(strategy: Any, n: int, seed: int | None = None) -> list:
    """n examples of a hypothesis strategy, deterministic for a seed (no database, no shrinking, no replay).

    Nothing here ever reaches a server: values are only drawn. A draw that raises is a fault of the
    suite (SuiteFault), caught inside the test body so hypothesis never sees a failing example and
    never re-runs one ("Inconsistent results ... FlakyFailure" cannot arise).
    """
    with GENERATION_LOCK:
        _hypothesis()
        return _examples(strategy, n, seed)


def _examples(strategy: Any, n: int, seed: int | None) -> list:
    from hypothesis import HealthCheck, Phase, given, seed as with_seed, settings, strategies as st
    from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption

    drawn: list = []
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
    with _storage_outside_cwd():
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


# -- what the scenarios send, drawn once per seed ------------------------------------------------------------
def texts(n: int, seed: int) -> list[str]:
    """Half fixed tricky texts, half generated ones (all fixed ones come in at depth >= 2)."""
    fixed = FIXED_TEXTS[:min(len(FIXED_TEXTS), max(1, n // 2))]
    count = max(0, n - len(fixed))
    return fixed + draw_cache.remembered("texts", {"n": count}, seed, lambda: drawn(_draw_texts, count, seed))


def _draw_texts(n: int, seed: int) -> list[str]:
    return examples(_strategies().reply_text, n, seed)


def extra_fields(n: int, seed: int, reserved: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """n objects of extra fields (any JSON values, unicode names), none of them named in `reserved`."""
    return draw_cache.remembered("extra_fields", {"n": n, "reserved": sorted(reserved)}, seed,
                                 lambda: drawn(_draw_extra_fields, n, seed, sorted(reserved)))


def _draw_extra_fields(n: int, seed: int, reserved: list[str]) -> list[dict[str, Any]]:
    return examples(_extra_fields(frozenset(reserved)), n, seed)


def cases(operation: str, mode: str, n: int, seed: int, path_parameters: dict[str, str] | None,
          headers: dict[str, str]) -> list[dict[str, Any]]:
    """n schemathesis cases of one operation of schemas/openapi.yaml (`mode` "positive" or "negative"), each as
    plain data: `path_parameters`, `headers`, `query`, `cookies`, `media_type` and `body` (absent: no body).
    `path_parameters` and `headers` are given to the generator as they are: placeholders, never the target's."""
    if n <= 0:
        return []
    return draw_cache.remembered("cases", {"operation": operation, "mode": mode, "n": n,
                                           "path_parameters": path_parameters, "headers": headers}, seed,
                                 lambda: drawn(_draw_cases, operation, mode, n, seed, path_parameters, headers))


def _draw_cases(operation: str, mode: str, n: int, seed: int, path_parameters: dict[str, str] | None,
                headers: dict[str, str]) -> list[dict[str, Any]]:
    with GENERATION_LOCK:
        from hypothesis.errors import Unsatisfiable
        from schemathesis import GenerationMode
        op = schemathesis_operations()[2][operation]
        strategy = op.as_strategy(generation_mode=GenerationMode(mode), path_parameters=path_parameters,
                                  headers=headers)
        try:
            return [_plain_case(c) for c in examples(strategy, n, seed)]
        except Unsatisfiable:
            return []


def _plain_case(case: Any) -> dict[str, Any]:
    from schemathesis.core import NOT_SET
    out = {"path_parameters": dict(case.path_parameters or {}), "headers": dict(case.headers or {}),
           "query": dict(case.query or {}), "cookies": dict(case.cookies or {}), "media_type": case.media_type}
    if case.body is not NOT_SET:
        out["body"] = case.body
    return out


# -- the OpenAPI document in schemathesis, loaded once (only to draw) --------------------------------------
_load_lock = threading.Lock()   # the four fuzz scenarios start together, each in its own thread


def schemathesis_operations():
    """(the schemathesis module, the loaded schema, operation name -> its APIOperation)."""
    with _load_lock:   # functools.cache alone lets concurrent first calls import schemathesis twice at once
        return _load_operations()


@functools.cache
def _load_operations():
    _hypothesis()
    import schemathesis
    from conformance.vocab.fuzzing import OPENAPI, OPERATIONS

    schema = schemathesis.openapi.from_path(str(OPENAPI))
    ops = {}
    for res in schema.get_all_operations():
        op = res.ok()
        for name, (method, path) in OPERATIONS.items():
            if op.method.upper() == method and op.path == path:
                ops[name] = op
    return schemathesis, schema, ops


# -- the drawing process ------------------------------------------------------------------------------------
def drawn(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` called in the drawing process, its value as read back from JSON (`draw_cache.encoded`): how
    the suite draws. `fn` is a function of a module of the suite (it is found again there by its name), `args`
    are JSON data. A draw that crashed, or a drawing process that ended, is a SuiteFault."""
    activity = ACTIVITY.get()      # the scenario drawing: its deadline does not count the suite's own work
    with activity.suite_work() if activity else contextlib.nullcontext():
        return _DRAWER.call(f"{fn.__module__}:{fn.__qualname__}", list(args))


# the child's first line: the suite it imports is this one, from where this one was imported
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from conformance.generate import serve_draws; serve_draws()"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class _DrawingProcess:
    """The process every draw of this one is made in: started on the first draw that is not kept (a run whose draws
    are all kept starts none), one draw at a time, ended when its input closes (this process's end closes it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._pid = os.getpid()
        self._errors: Any = None

    def call(self, name: str, args: list[Any]) -> Any:
        request = json.dumps({"call": name, "args": args}) + "\n"
        with self._lock:
            proc = self._running()
            try:
                proc.stdin.write(request)
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (OSError, ValueError):
                line = ""
            if not line:
                self._proc = None          # the next draw starts another
                raise SuiteFault(f"the drawing process ended while drawing ({self._ended(proc)})")
        answer = json.loads(line)
        if "fault" in answer:
            raise SuiteFault(answer["fault"])
        return draw_cache.decoded(answer["value"])

    def _running(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None or self._pid != os.getpid():
            self._pid = os.getpid()      # a forked child draws in a process of its own, never through its parent's
            self._errors = tempfile.TemporaryFile()
            # -P: the working directory is not on its path (a file there named like a module must not be drawn with)
            self._proc = subprocess.Popen([sys.executable, "-P", "-c", _BOOT, str(PACKAGE_ROOT)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors,
                                          text=True, encoding="utf-8")
        return self._proc

    def _ended(self, proc: subprocess.Popen) -> str:
        try:
            code = proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        self._errors.seek(0)
        last = (self._errors.read().decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        return f"exit status {code}" + (f": {last[:300]}" if last else "")

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or self._pid != os.getpid():
            return
        try:
            proc.stdin.close()
            proc.wait(2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()


_DRAWER = _DrawingProcess()
atexit.register(_DRAWER.close)


def serve_draws() -> None:
    """The drawing process: one request a line on stdin (`call` "module:function", `args`), one answer a line on
    stdout (`value` as `draw_cache.encoded` writes it, or `fault`), one after the other on this one thread, until
    stdin closes."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())      # whatever else prints never reaches the answers
    for line in sys.stdin:
        request = json.loads(line)
        module, _, name = request["call"].partition(":")
        try:
            fn = functools.reduce(getattr, name.split("."), importlib.import_module(module))
            answer = {"value": draw_cache.encoded(fn(*request["args"]))}
        except Exception as exc:           # noqa: BLE001 - any crash of a draw is the suite's, said to the caller
            answer = {"fault": str(exc) if isinstance(exc, SuiteFault) else
                      f"drawing {request['call']} crashed: {type(exc).__name__}: "
                      f"{(str(exc).splitlines() or [''])[0][:300]}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def canonical_bytes(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
