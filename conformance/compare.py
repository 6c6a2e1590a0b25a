"""`conformance compare OLD NEW`: two reports of a server, requirement by requirement, so a release can be gated
on "no worse than the last one" without a hand-kept baseline.

Each requirement falls in one class per report: failing (failed, warning), passing (passed, info) or unassessed
(not assessed, error, absent). From OLD to NEW it is newly failed (a regression: failing now, not before), fixed
(failing before, passing now), newly assessed (unassessed before, passing now) or newly not assessed (assessed
before, unassessed now). Exit 1 when a MUST regressed; bad input is one line (exit 2).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.rejudge import BadInput, read_report
from conformance.reporting import target_label
from conformance.vocab.text import truncate

FAILING = {"failed", "warning"}
PASSING = {"passed", "info"}
KINDS = ("regressions", "fixed", "newly_assessed", "newly_not_assessed")
TITLES = {"regressions": "newly failed (regressions)", "fixed": "fixed", "newly_assessed": "newly assessed",
          "newly_not_assessed": "newly not assessed"}


def load(path: str | Path) -> dict[str, Any]:
    """A report: a report directory or its report.json (BadInput, one line, otherwise)."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path}: no such report directory or report.json")
    return read_report(path / "report.json" if path.is_dir() else path, any_version=True)


def _class(status: str | None) -> str:
    return "failing" if status in FAILING else "passing" if status in PASSING else "unassessed"


@dataclass
class Change:
    id: str
    level: str
    old: str | None     # None: not in that report
    new: str | None
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "old": self.old, "new": self.new, "message": self.message}


@dataclass
class Comparison:
    old: dict[str, Any]
    new: dict[str, Any]
    changes: dict[str, list[Change]] = field(default_factory=lambda: {k: [] for k in KINDS})
    unchanged: int = 0
    only_old: list[str] = field(default_factory=list)   # requirements NEW's report does not hold

    @property
    def must_regressions(self) -> list[str]:
        return [c.id for c in self.changes["regressions"] if c.level == "MUST"]


def compare(old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    out = Comparison(old, new)
    before = {r["id"]: r for r in old["requirements"]}
    after = {r["id"]: r for r in new["requirements"]}
    for rid, row in after.items():
        was = before.get(rid, {}).get("status")
        now = row.get("status")
        kind = {("passing", "failing"): "regressions", ("unassessed", "failing"): "regressions",
                ("failing", "passing"): "fixed", ("unassessed", "passing"): "newly_assessed",
                ("passing", "unassessed"): "newly_not_assessed",
                ("failing", "unassessed"): "newly_not_assessed"}.get((_class(was), _class(now)))
        if kind is None:
            out.unchanged += 1
            continue
        out.changes[kind].append(Change(rid, row.get("level", "?"), was, now, str(row.get("message") or "")))
    out.only_old = [rid for rid in before if rid not in after]
    return out


# -- output -------------------------------------------------------------------------------------------------
def _when(rep: dict[str, Any]) -> str:
    return str(rep.get("finished_at") or rep.get("started_at") or "date unknown")


def _digest(rep: dict[str, Any]) -> str:
    return str((rep.get("suite") or {}).get("catalog_digest") or "(no catalog digest)")


def context(c: Comparison) -> list[str]:
    """Whether the two reports are about the same target and were judged by the same catalog."""
    lines = []
    old_target, new_target = target_label(c.old.get("target") or {}), target_label(c.new.get("target") or {})
    lines.append(f"target: {new_target}" if old_target == new_target else
                 f"targets differ: OLD {old_target}; NEW {new_target}")
    lines.append(f"catalog: {_digest(c.new)}" if _digest(c.old) == _digest(c.new) else
                 f"catalogs differ: OLD {_digest(c.old)}; NEW {_digest(c.new)} (requirements may have changed)")
    return lines


def conclusion(c: Comparison) -> str:
    must = c.must_regressions
    if must:
        return f"REGRESSED: {len(must)} MUST requirement(s) newly failed: {', '.join(must)}"
    others = len(c.changes["regressions"])
    return "no MUST regressed" + (f" ({others} SHOULD/MAY newly failed)" if others else "")


def _status(status: str | None) -> str:
    return "absent" if status is None else status.replace("_", " ")


def text(c: Comparison, old_name: str, new_name: str) -> str:
    lines = [f"OLD {old_name}: {c.old.get('verdict')} ({_when(c.old)})",
             f"NEW {new_name}: {c.new.get('verdict')} ({_when(c.new)})", *context(c)]
    for kind in KINDS:
        rows = c.changes[kind]
        if not rows:
            continue
        lines += ["", f"{TITLES[kind]}: {len(rows)}"]
        for ch in rows:
            said = f"  {truncate(ch.message, 160, one_line=True)}" if ch.message and kind != "newly_assessed" else ""
            lines.append(f"  {ch.id:<15} {ch.level:<6} {_status(ch.old)} → {_status(ch.new)}{said}")
    if c.only_old:
        lines += ["", f"not in NEW's report ({len(c.only_old)}): {', '.join(c.only_old)}"]
    lines += ["", f"unchanged: {c.unchanged} requirement(s)", conclusion(c)]
    return "\n".join(lines)


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown(c: Comparison, old_name: str, new_name: str) -> str:
    lines = ["## Conformance: NEW against OLD", "", "| | OLD | NEW |", "|---|---|---|",
             f"| report | `{_cell(old_name)}` | `{_cell(new_name)}` |",
             f"| verdict | {c.old.get('verdict')} | {c.new.get('verdict')} |",
             f"| finished | {_when(c.old)} | {_when(c.new)} |",
             f"| target | {_cell(target_label(c.old.get('target') or {}))} | "
             f"{_cell(target_label(c.new.get('target') or {}))} |",
             f"| catalog | `{_digest(c.old)}` | `{_digest(c.new)}` |", "", f"**{conclusion(c)}**"]
    for kind in KINDS:
        rows = c.changes[kind]
        if not rows:
            continue
        lines += ["", f"### {TITLES[kind].capitalize()}: {len(rows)}", "",
                  "| requirement | level | OLD | NEW | message |", "|---|---|---|---|---|"]
        lines += [f"| {ch.id} | {ch.level} | {_status(ch.old)} | {_status(ch.new)} | "
                  f"{_cell(truncate(ch.message, 300, one_line=True))} |" for ch in rows]
    if c.only_old:
        lines += ["", f"Not in NEW's report ({len(c.only_old)}): {', '.join(c.only_old)}"]
    lines += ["", f"Unchanged: {c.unchanged} requirement(s)."]
    return "\n".join(lines)


def as_json(c: Comparison) -> str:
    return json.dumps({"old": {"verdict": c.old.get("verdict"), "finished_at": c.old.get("finished_at"),
                               "suite": c.old.get("suite")},
                       "new": {"verdict": c.new.get("verdict"), "finished_at": c.new.get("finished_at"),
                               "suite": c.new.get("suite")},
                       **{k: [ch.as_dict() for ch in c.changes[k]] for k in KINDS},
                       "not_in_new": c.only_old, "unchanged": c.unchanged,
                       "must_regressions": c.must_regressions}, indent=2, ensure_ascii=False)


def main(old_path: str, new_path: str, *, fmt: str = "text") -> int:
    """The command: 1 when a MUST regressed, else 0 (bad input raises BadInput for the caller's one line)."""
    c = compare(load(old_path), load(new_path))
    render = {"text": text, "markdown": markdown}.get(fmt)
    print(render(c, old_path, new_path) if render else as_json(c))
    return 1 if c.must_regressions else 0


__all__ = ["BadInput", "Change", "Comparison", "compare", "load", "main", "markdown", "text"]
