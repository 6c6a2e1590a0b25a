"""The other half of the proof for the conditional broken servers of zoo_sequences.py: the catch is due to the
sequence scenarios. Certified on their requirement by every check except those over the chains, overlaps and long
runs (conformance/vocab/sequences.py), each passes: the scripted scenarios alone do not see the deviation.
(test_zoo.py proves the first half: with them, each is caught.)"""
from __future__ import annotations

import pytest

from conformance import catalog, registry
from tests.selftest.test_zoo import exploration, passes_without
from tests.selftest.zoo import load_zoo

SEQUENCE_SCENARIOS = exploration()    # the silences at every position stay open through the long runs' idle too
CONDITIONAL = sorted(name for name, b in load_zoo().items() if b.module.endswith("zoo_sequences"))


@pytest.mark.parametrize("name", CONDITIONAL)
def test_conditional_server_passes_the_scripted_scenarios(name: str) -> None:
    passes_without(load_zoo()[name], SEQUENCE_SCENARIOS, "the sequence and silence scenarios")


def test_every_conditional_server_breaks_a_must() -> None:
    reqs = catalog.load()
    registry.load_all()
    assert CONDITIONAL and all(reqs[load_zoo()[n].breaks].level == "MUST" for n in CONDITIONAL)
