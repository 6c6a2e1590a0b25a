"""Certify a target from Python, without pytest (our self-tests and benches use this)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from conformance import engine, judging, recording, registry, report, versions
from conformance.baseline import Baseline
from conformance.target import Target


def select(*, level: str = "may", protocols: set[str] | None = None, requirements: Iterable[str] | None = None,
           check_ids: Iterable[str] | None = None) -> tuple[list[registry.Check], dict[str, str]]:
    """The checks a run with these options judges, and why the others are not run."""
    return engine.select(registry.load_all(), level=level, protocols=protocols, requirements=requirements,
                         check_ids=check_ids)


def coverage_of(check_ids: Iterable[str] | None) -> dict[str, list[str]]:
    """Which checks judge each requirement: all that cover it, or with an explicit subset of checks, those alone."""
    coverage = registry.coverage()
    if check_ids is None:
        return coverage
    chosen = set(check_ids)
    return {rid: [c for c in ids if c in chosen] for rid, ids in coverage.items()}


def certify(target: Target, *, requirements: Iterable[str] | None = None, check_ids: Iterable[str] | None = None,
            level: str = "may", protocols: set[str] | None = None, concurrency: int = 12,
            baseline: Baseline = Baseline(), report_dir: str | Path | None = None,
            keep_recording: bool = False) -> dict[str, Any]:
    """Run the selected checks (all by default) and return the report dict (as report.json holds it).

    `report_dir`: also write report.json and the run's recording (recording.json.gz) there. `keep_recording`:
    the report's `recording` entry also holds the recording itself (`document`), for `rejudge.verify`."""
    check_ids = list(check_ids) if check_ids is not None else None
    requirements = list(requirements) if requirements is not None else None
    chosen, skipped = select(level=level, protocols=protocols, requirements=requirements, check_ids=check_ids)
    session = engine.Session(target, chosen, concurrency=concurrency)
    try:
        session.start()
        for c in [] if session.preflight_error else sorted(chosen, key=lambda c: bool(c.every)):   # every exchange last
            session.results[c.id] = judging.assess(session, c)
        results = list(session.results.values())
    finally:
        session.close()
    options = {"level": level, "protocols": ",".join(sorted(protocols)) if protocols is not None else None,
               "requirements": ",".join(requirements) if requirements is not None else None,
               "run_tag": target.run_tag, "thorough": target.thorough}
    rep = report.build(target=target.public(), results=results, coverage=coverage_of(check_ids), not_run=skipped,
                       baseline=baseline, stats=session.stats(), error=session.preflight_error, options=options,
                       started_at=report.utc_timestamp(session.began),
                       http_versions=versions.summary(session, results))
    if report_dir is None and not keep_recording:
        return rep
    what = dict(checks=chosen, options={**options, "checks": check_ids}, error=session.preflight_error,
                started_at=rep["started_at"], finished_at=rep["finished_at"])
    if report_dir is not None:
        rep["recording"] = recording.save(session, Path(report_dir), **what)
        report.write_json(rep, Path(report_dir), session.redactor.redact)
    if keep_recording:
        rep["recording"] = {**rep.get("recording", {}), "document": recording.document(session, **what)}
    return rep
