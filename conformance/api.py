"""Certify a target from Python, without pytest (our self-tests and benches use this)."""
from __future__ import annotations

from typing import Any, Iterable

from conformance import engine, registry, report
from conformance.target import Target


def checks_for(requirements: Iterable[str]) -> list[registry.Check]:
    wanted = set(requirements)
    return [c for c in registry.load_all().values() if wanted & set(c.requirements)]


def certify(target: Target, *, requirements: Iterable[str] | None = None, check_ids: Iterable[str] | None = None,
            level: str = "may", protocols: set[str] | None = None, concurrency: int = 12,
            baseline: report.Baseline = report.Baseline()) -> dict[str, Any]:
    """Run the selected checks (all by default) and return the report dict (as report.json holds it)."""
    all_checks = registry.load_all()
    chosen, skipped = engine.select(all_checks, level=level, protocols=protocols)
    if requirements is not None:
        ids = {c.id for c in checks_for(requirements)}
        chosen = [c for c in chosen if c.id in ids]
    if check_ids is not None:
        ids = set(check_ids)
        chosen = [c for c in chosen if c.id in ids]
    session = engine.Session(target, chosen, concurrency=concurrency)
    try:
        session.start()
        results = [session.assess(c) for c in chosen] if not session.preflight_error else []
    finally:
        session.close()
    coverage = registry.coverage()
    if check_ids is not None:   # an explicit subset: its requirements are judged by the chosen checks alone
        chosen_ids = {c.id for c in chosen}
        coverage = {rid: [c for c in ids if c in chosen_ids] for rid, ids in coverage.items()}
    return report.build(target=target.public(), results=results, coverage=coverage, not_run=skipped,
                        baseline=baseline, stats=session.stats(), error=session.preflight_error,
                        options={"level": level, "run_tag": target.run_tag})
