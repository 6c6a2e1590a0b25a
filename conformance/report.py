"""From check results to requirement statuses, the verdict, and report.json.

MUST failed → failed; SHOULD failed → warning; MAY failed → info. A requirement
no check ran is not_assessed (with the reason); uncovered requirements say so.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from conformance import __version__, catalog
from conformance.engine import CheckResult

FAIL_AS = {"MUST": "failed", "SHOULD": "warning", "MAY": "info"}
EXIT = {"conformant": 0, "conformant-partial": 0, "non-conformant": 1, "error": 2}


@dataclass
class Baseline:
    """Known failures a server is burning down: they do not fail the run; ones that now pass are stale."""
    known: set[str] = field(default_factory=set)
    source: str = ""

    @classmethod
    def load(cls, path: str | None) -> "Baseline":
        if not path:
            return cls()
        text = Path(path).read_text()
        if path.endswith(".json"):
            data = json.loads(text)
            ids = data.get("known_failures", data) if isinstance(data, dict) else data
        else:  # one id per line, '#' comments
            ids = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        return cls({i for i in ids if i}, path)


def requirement_rows(results: Iterable[CheckResult], coverage: dict[str, list[str]],
                     not_run: dict[str, str], baseline: Baseline = Baseline()) -> list[dict[str, Any]]:
    by_req: dict[str, list[CheckResult]] = {}
    for r in results:
        for rid in r.requirements:
            by_req.setdefault(rid, []).append(r)
    rows = []
    for rid, req in catalog.load().items():
        if not req.testable:
            continue
        checks = coverage.get(rid, [])
        got = by_req.get(rid, [])
        row = {"id": rid, "level": req.level, "section": req.section, "checks": checks,
               "quote": req.quote}
        failed = [r for r in got if r.status in ("failed", "error")]
        if not checks:
            row.update(status="not_assessed", message="uncovered: no check covers this requirement")
        elif failed:
            row.update(status=FAIL_AS[req.level], message="; ".join(f"{r.check}: {r.message}" for r in failed))
            row["evidence"] = [e for r in failed for e in r.evidence]
        elif any(r.status == "passed" for r in got):
            infos = [f"{r.check}: {r.message}" for r in got if r.message]
            row.update(status="passed", message="; ".join(infos))
        elif any(r.status == "info" for r in got):
            row.update(status="info", message="; ".join(f"{r.check}: {r.message}" for r in got if r.status == "info"))
        else:
            reasons = [f"{r.check}: {r.message}" for r in got if r.status == "not_assessed"]
            reasons += [f"{c}: {not_run[c]}" for c in checks if c in not_run]
            row.update(status="not_assessed", message="; ".join(reasons) or "not run")
        if rid in baseline.known:
            row["baselined"] = True
        rows.append(row)
    return rows


def verdict(rows: list[dict[str, Any]], *, ran: int, error: str | None = None) -> tuple[str, str]:
    if error:
        return "error", error
    if ran == 0:
        return "error", "no check ran"
    must = [r for r in rows if r["level"] == "MUST"]
    failing = [r["id"] for r in must if r["status"] == "failed" and not r.get("baselined")]
    if failing:
        return "non-conformant", f"{len(failing)} MUST requirement(s) failed: {', '.join(failing)}"
    missing = [r["id"] for r in must if r["status"] == "not_assessed"]
    if missing:
        return "conformant-partial", f"{len(missing)} MUST requirement(s) not assessed: {', '.join(missing)}"
    return "conformant", "every MUST requirement was assessed and passed"


def build(*, target: dict[str, Any], results: list[CheckResult], coverage: dict[str, list[str]],
          not_run: dict[str, str], baseline: Baseline, stats: dict[str, Any], error: str | None,
          options: dict[str, Any]) -> dict[str, Any]:
    rows = requirement_rows(results, coverage, not_run, baseline)
    ran = sum(1 for r in results if r.status in ("passed", "failed", "info"))
    v, why = verdict(rows, ran=ran, error=error)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    stale = sorted(r["id"] for r in rows if r.get("baselined") and r["status"] == "passed")
    return {
        "verdict": v,
        "verdict_reason": why,
        "target": {k: target.get(k) for k in ("base_url", "agent_id", "embedded")},
        "suite": {"version": __version__},
        "options": options,
        "summary": counts,
        "cost": stats,
        "baseline": {"file": baseline.source, "known": sorted(baseline.known), "stale": stale} if baseline.source else None,
        "requirements": rows,
        "unspecified": [{"id": q.id, "quote": q.quote, "supply": q.supply, "section": q.section}
                        for q in catalog.load().values() if not q.testable],
        "checks": [{"id": r.check, "requirements": list(r.requirements), "status": r.status,
                    "message": r.message, "duration": round(r.duration, 3), "evidence": r.evidence}
                   for r in results],
    }


def write_json(report: dict[str, Any], directory: Path, redact) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "report.json"
    path.write_text(redact(json.dumps(report, indent=2, ensure_ascii=False)))
    return path
