"""The other half of the proof for the broken servers of zoo_silences.py: the catch is due to the silence scenarios.
Certified on their requirement by every check except those over the silence scenarios (conformance/vocab/silences.py),
each passes: agui.silence (silent before the first output), the 6 s runs of *.slow_run and the scripted runs do not
see the deviation. (test_zoo.py proves the first half: with them, each is caught.)"""
from __future__ import annotations

import pytest

from conformance import catalog, registry
from conformance.vocab import silences
from tests.selftest.test_zoo import exploration, passes_without
from tests.selftest.zoo import load_zoo

SILENCE_SCENARIOS = exploration()     # the 15 s long runs of the sequences model fall silent after text too
CONDITIONAL = sorted(name for name, b in load_zoo().items() if b.module.endswith("zoo_silences"))


@pytest.mark.parametrize("name", CONDITIONAL)
def test_conditional_server_passes_without_the_silences(name: str) -> None:
    passes_without(load_zoo()[name], SILENCE_SCENARIOS, "the silence and sequence scenarios")


def test_every_conditional_server_breaks_a_must_the_model_judges() -> None:
    reqs = catalog.load()
    registry.load_all()
    assert CONDITIONAL
    for name in CONDITIONAL:
        b = load_zoo()[name]
        assert reqs[b.breaks].level == "MUST" and silences.applies_to(b.breaks), name
