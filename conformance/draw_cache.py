"""Generated inputs drawn once: what a seed fixes is kept on disk and read back by every later run.

A seed fixes the draw, and drawing (hypothesis, schemathesis) costs seconds of CPU: the same inputs for the same
seed in every run. So each draw is kept under a key naming everything it depends on: the suite's version, the
source of the generators (conformance/generate.py) and the schemas they read, the draw itself (what and how many)
and its seed, and the versions of Python, hypothesis and schemathesis. Nothing of the target is in a draw: the
generators see placeholders for the agent and the credential, which the scenario replaces after loading.

Where: `$CONFORMANCE_CACHE_DIR` (empty: no cache), else `$XDG_CACHE_HOME/conformance`, else
`~/.cache/conformance`; never the working directory. One file per draw under `draws/`, written atomically
(a temporary file renamed into place), the oldest read removed beyond MAX_BYTES. A file that cannot be read, is
cut short, holds another key or does not match its digest, and a directory that cannot be written, are passed
over: the inputs are drawn afresh, and they are the same ones (a value is always handed out as read back from its
JSON, so a cold draw and a warm one are equal).

The default seed's draws at depth 1 ship with the suite (`draws.json` beside this module, written by
`python -m tests.checks.make_draws`): a freshly installed suite draws nothing in a default run. They are keyed
without the library versions: a default run sends the inputs of its suite version whatever hypothesis and
schemathesis releases are installed. They are used only while the generators and schemas are those they were
drawn from (`suite_identity`); a stale file is passed over.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from conformance import __version__, schemas

FORMAT = 1
MAX_BYTES = 32 * 1024 * 1024            # the draws directory is kept under this (a default run's draws: ~0.2 MB)
SHIPPED = Path(__file__).with_name("draws.json")
GENERATORS = Path(__file__).with_name("generate.py")
LIBRARIES = ("hypothesis", "schemathesis")


# -- what a draw depends on ------------------------------------------------------------------------------------
@functools.cache
def suite_identity() -> str:
    """The suite's part of every key: its version, the generators' source and the schemas they read."""
    digest = hashlib.sha256(f"{FORMAT} {__version__}".encode())
    for path in [GENERATORS, *sorted(p for p in schemas.SCHEMA_DIR.iterdir() if p.suffix in (".json", ".yaml"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def library_versions() -> str:
    """Python's and the generators' versions, read without importing them."""
    from importlib import metadata
    found = []
    for name in LIBRARIES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} -")
    return f"python {sys.version_info.major}.{sys.version_info.minor}; " + "; ".join(found)


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def shipped_key(kind: str, params: dict[str, Any], seed: int) -> str:
    return _key(suite_identity(), kind, params, seed)


def cache_key(kind: str, params: dict[str, Any], seed: int) -> str:
    return _key(suite_identity(), library_versions(), kind, params, seed)


# -- values as JSON --------------------------------------------------------------------------------------------
def _plain(text: str) -> str:
    return text


def encoded(value: Any) -> Any:
    """A drawn value as JSON data (bytes, `$`-names and non-finite floats tagged as a recording tags them)."""
    from conformance.recording.codec import encode_value
    return encode_value(value, _plain)


def dumps(value: Any) -> str:
    """A drawn value as JSON text; ASCII, so lone surrogates survive."""
    return json.dumps(encoded(value), ensure_ascii=True, separators=(",", ":"))


def decoded(data: Any) -> Any:
    from conformance.recording.codec import decode_value
    return decode_value(data)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- where -----------------------------------------------------------------------------------------------------
def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off (`CONFORMANCE_CACHE_DIR` set empty, or no home)."""
    given = os.environ.get("CONFORMANCE_CACHE_DIR")
    if given is not None:
        return Path(given).expanduser() if given.strip() else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):              # the XDG spec: a relative path is invalid and ignored
        return Path(xdg) / "conformance"
    try:
        return Path.home() / ".cache" / "conformance"
    except RuntimeError:                # no home directory to speak of
        return None


def _draws_dir() -> Path | None:
    base = cache_dir()
    return base / "draws" if base is not None else None


# -- reading and writing ---------------------------------------------------------------------------------------
@functools.cache
def _shipped() -> dict[str, Any]:
    try:
        doc = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("suite") != suite_identity():
        return {}                       # stale (the generators or schemas changed since it was written)
    draws = doc.get("draws")
    return draws if isinstance(draws, dict) else {}


def _verified(entry: Any, key: str) -> str | None:
    """The JSON text of a kept entry, or None when it is not exactly what was written under this key."""
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("value"), str):
        return None
    if entry.get("digest") != _digest(entry["value"]):
        return None
    return entry["value"]


def _read(path: Path, key: str) -> Any:
    """The JSON data of the draw kept under a key, or None."""
    try:
        text = _verified(json.loads(path.read_text(encoding="utf-8")), key)
        if text is None:
            return None
        data = json.loads(text)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    try:
        os.utime(path)                  # recently used: evicted last
    except OSError:
        pass
    return data


def _entry(key: str, text: str) -> dict[str, str]:
    return {"key": key, "digest": _digest(text), "value": text}


def _write(folder: Path, key: str, text: str) -> None:
    """Atomically: a reader sees the whole file or none. Any failure leaves the cache as it was."""
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, prefix=".draw-", suffix=".tmp",
                                         delete=False) as f:
            tmp = f.name
            json.dump(_entry(key, text), f)
        os.replace(tmp, folder / f"{key}.json")
        tmp = None
        _evict(folder)
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _evict(folder: Path) -> None:
    """The least recently used draws removed until the directory is under MAX_BYTES."""
    kept = []
    for path in folder.glob("*.json"):
        try:
            st = path.stat()
        except OSError:
            continue
        kept.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in kept)
    for _, size, path in sorted(kept):
        if total <= MAX_BYTES:
            break
        try:
            path.unlink()
        except OSError:
            pass
        total -= size


def remembered(kind: str, params: dict[str, Any], seed: int, draw: Callable[[], Any]) -> Any:
    """The draw named by (kind, params, seed): shipped with the suite, kept from an earlier run, or drawn now and
    kept. Always the value as read back from its JSON, so a cold run and a warm one hand out equal values."""
    found, folder, key = None, None, None
    try:
        found = _shipped().get(shipped_key(kind, params, seed))
        folder = _draws_dir()
        key = cache_key(kind, params, seed) if found is None and folder is not None else None
    except OSError:                     # the suite's own files cannot be read: drawn, nothing kept
        pass
    if folder is not None and key is not None:
        found = _read(folder / f"{key}.json", key)
    if found is not None:
        try:
            return decoded(found)
        except (ValueError, TypeError, KeyError, AttributeError):      # not a draw after all: drawn afresh
            pass
    text = dumps(draw())
    if folder is not None and key is not None:
        _write(folder, key, text)
    return decoded(json.loads(text))
