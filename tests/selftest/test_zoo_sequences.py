"""The other half of the proof for the conditional broken servers of zoo_sequences.py: the catch is due to the
sequence scenarios. Certified on their requirement by every check except those over the chains, overlaps and long
runs (conformance/vocab/sequences.py), each passes: the scripted scenarios alone do not see the deviation.
(test_zoo.py proves the first half: with them, each is caught.)"""
from __future__ import annotations

import pytest

from conformance import catalog, registry
from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import Profile, from_server_facts
from conformance.vocab import sequences
from tests.selftest.test_zoo import ZOO_SEED, ZOO_TIMEOUTS, covering_checks
from tests.selftest.zoo import load_zoo

SEQUENCE_SCENARIOS = set(sequences.CHAINS)
CONDITIONAL = sorted(name for name, b in load_zoo().items() if b.module.endswith("zoo_sequences"))


def scripted_checks(requirement: str) -> list[str]:
    return [c.id for c in covering_checks(requirement) if not set(c.scenarios) & SEQUENCE_SCENARIOS]


@pytest.mark.parametrize("name", CONDITIONAL)
def test_conditional_server_passes_the_scripted_scenarios(name: str) -> None:
    b = load_zoo()[name]
    ids = scripted_checks(b.breaks)
    assert ids, f"{name}: no scripted check covers {b.breaks}"
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS), seed=ZOO_SEED)
        report = certify(target, check_ids=ids)
    row = next(r for r in report["requirements"] if r["id"] == b.breaks)
    assert row["status"] == "passed", (f"{name} ({b.doc}) is already caught without the sequence scenarios, so it "
                                       f"is no conditional server: {b.breaks} {row['status']}: "
                                       f"{row.get('message', '')[:400]}")


def test_every_conditional_server_breaks_a_must() -> None:
    reqs = catalog.load()
    registry.load_all()
    assert CONDITIONAL and all(reqs[load_zoo()[n].breaks].level == "MUST" for n in CONDITIONAL)
