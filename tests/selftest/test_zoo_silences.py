"""The other half of the proof for the broken servers of zoo_silences.py: the catch is due to the silence scenarios.
Certified on their requirement by every check except those over the silence scenarios (conformance/vocab/silences.py),
each passes: agui.silence (silent before the first output), the 6 s runs of *.slow_run and the scripted runs do not
see the deviation. (test_zoo.py proves the first half: with them, each is caught.)"""
from __future__ import annotations

import pytest

from conformance import catalog, registry
from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import Profile, from_server_facts
from conformance.vocab import silences
from tests.selftest.test_zoo import ZOO_SEED, ZOO_TIMEOUTS, covering_checks
from tests.selftest.zoo import load_zoo

SILENCE_SCENARIOS = {s.scenario for s in silences.SILENCES.values()} - {"agui.silence"}
CONDITIONAL = sorted(name for name, b in load_zoo().items() if b.module.endswith("zoo_silences"))


def checks_without_silences(requirement: str) -> list[str]:
    return [c.id for c in covering_checks(requirement) if not set(c.scenarios) & SILENCE_SCENARIOS]


@pytest.mark.parametrize("name", CONDITIONAL)
def test_conditional_server_passes_without_the_silences(name: str) -> None:
    b = load_zoo()[name]
    ids = checks_without_silences(b.breaks)
    assert ids, f"{name}: no other check covers {b.breaks}"
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS), seed=ZOO_SEED)
        report = certify(target, check_ids=ids)
    row = next(r for r in report["requirements"] if r["id"] == b.breaks)
    assert row["status"] == "passed", (f"{name} ({b.doc}) is already caught without the silence scenarios, so it is "
                                       f"no conditional server: {b.breaks} {row['status']}: "
                                       f"{row.get('message', '')[:400]}")


def test_every_conditional_server_breaks_a_must_the_model_judges() -> None:
    reqs = catalog.load()
    registry.load_all()
    assert CONDITIONAL
    for name in CONDITIONAL:
        b = load_zoo()[name]
        assert reqs[b.breaks].level == "MUST" and silences.applies_to(b.breaks), name
