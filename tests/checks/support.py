"""Helpers shared by the tests of each check module."""
from __future__ import annotations

from conformance import registry


def checks_in(*modules: str, generated: bool | None = None) -> list[str]:
    """Ids of the checks in conformance/checks/<module>.py; `generated` keeps (True) or drops (False) those
    over the shared generated scenarios."""
    return [c.id for c in registry.load_all().values() if c.module.rsplit(".", 1)[-1] in modules
            and (generated is None or any(s.startswith("generated.") for s in c.scenarios) == generated)]


def rows(report: dict, ids=None) -> dict[str, dict]:
    """The report's requirement rows by id (only `ids` when given)."""
    return {r["id"]: r for r in report["requirements"] if ids is None or r["id"] in ids}
