"""Self-test tables: the zoo table, gathered across xdist workers and written at the end of the session.

Each zoo case writes one JSON file into a session directory (its path travels to the
workers in an environment variable set by the controller); the controller (or the
only process without xdist) turns them into ``reports/selftest-zoo.md`` and prints
the table in the terminal summary. The hooks are wired in ``tests/conftest.py``: the
controller of an xdist run loads only the initial conftests, never this folder's. The hostile-server cases do the same into
``reports/selftest-hostile.md``, the correct-server certifications (test_variant.py)
into ``reports/selftest-variant.md``.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

RESULTS_ENV = "CONFORMANCE_SELFTEST_RESULTS"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def results_dir() -> Path | None:
    path = os.environ.get(RESULTS_ENV)
    return Path(path) if path else None


def record_result(kind: str, name: str, data: dict[str, Any]) -> None:
    """Called by a case: leaves its row for the table (kind: 'zoo' | 'hostile' | 'variant')."""
    base = results_dir()
    if base is None:
        return
    folder = base / kind
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    (folder / f"{safe}.json").write_text(json.dumps({"name": name, **data}))


def configure(config: pytest.Config) -> None:
    if not _is_worker(config) and not os.environ.get(RESULTS_ENV):
        path = tempfile.mkdtemp(prefix="conformance-selftest-")
        os.environ[RESULTS_ENV] = path
        config._selftest_results = path  # type: ignore[attr-defined]
    config._selftest_t0 = time.monotonic()  # type: ignore[attr-defined]


def _load(kind: str) -> list[dict[str, Any]]:
    base = results_dir()
    if base is None or not (base / kind).is_dir():
        return []
    rows = []
    for f in sorted((base / kind).glob("*.json")):
        try:
            rows.append(json.loads(f.read_text()))
        except ValueError:
            continue
    return sorted(rows, key=lambda r: r["name"])


def _cell(text: Any, limit: int = 160) -> str:
    s = " ".join(str(text).split()).replace("|", "\\|")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def zoo_table(rows: list[dict[str, Any]]) -> list[str]:
    caught = sum(1 for r in rows if r.get("caught"))
    spans = [r for r in rows if "t_start" in r]
    wall = (max(r["t_end"] for r in spans) - min(r["t_start"] for r in spans)) if spans else 0.0
    lines = [f"# Broken-server zoo: {caught}/{len(rows)} caught",
             "",
             f"Zoo wall time {wall:.1f} s (first case start to last case end, all workers); "
             f"sum of case times {sum(r.get('seconds', 0) for r in rows):.1f} s.",
             "",
             "`via`: `check` when a check judged the deviation, `scenario` when a scenario could not continue.",
             "",
             "| broken server | breaks | level | expected | got | caught | via | s | message |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r.get('breaks', '')} | {r.get('level', '')} | {r.get('expected', '')} | "
                     f"{r.get('status', '')} | {'yes' if r.get('caught') else '**NO**'} | {r.get('cause', '')} | "
                     f"{r.get('seconds', 0):.1f} | {_cell(r.get('message', ''))} |")
    return lines


def hostile_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["# Hostile servers", "",
             "| server | wall s | exit | verdict | peak RSS MB | reports | problems |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r.get('seconds', 0):.1f} | {r.get('exit')} | {r.get('verdict')} | "
                     f"{r.get('peak_rss_mb', 0):.0f} | {r.get('reports', '')} | {_cell(r.get('problems', '') or 'none')} |")
    return lines


def variant_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["# Correct servers certified over all checks", "",
             "| server | verdict | statuses | s | MUST failures and SHOULD warnings |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r.get('verdict')} | {_cell(r.get('summary', ''))} | {r.get('seconds', 0):.1f} | "
                     f"{_cell('; '.join(r.get('problems') or []) or 'none', 600)} |")
    return lines


def _write(config: pytest.Config, name: str, lines: list[str]) -> Path:
    out = Path(config.rootpath) / "reports" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


def terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    for kind, fname, make in (("zoo", "selftest-zoo.md", zoo_table), ("hostile", "selftest-hostile.md", hostile_table),
                               ("variant", "selftest-variant.md", variant_table)):
        rows = _load(kind)
        if not rows:
            continue
        lines = make(rows)
        path = _write(config, fname, lines)
        terminalreporter.write_sep("=", f"self-test {kind} ({path.relative_to(config.rootpath)})")
        for line in lines:
            terminalreporter.write_line(line)


def unconfigure(config: pytest.Config) -> None:
    path = getattr(config, "_selftest_results", None)
    if path:
        shutil.rmtree(path, ignore_errors=True)
        os.environ.pop(RESULTS_ENV, None)
