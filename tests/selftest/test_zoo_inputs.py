"""The input model's broken servers (zoo_inputs.py), proven the other way: each passes when the classes it is wrong
for are withheld (`inputs.withheld`: their carriers send the baseline), so its catch in test_zoo.py is the model's.
And every class the model judges has such a server.

Only the scripted checks of the requirement run here (the classes ride on scripted requests; generated inputs may
reach a class by chance under some seed, which is their merit, not the model's), which keeps each case about a
second."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import Profile, from_server_facts
from conformance.vocab import inputs
from tests.selftest.test_zoo import ZOO_TIMEOUTS, covering_checks, row_of
from tests.selftest.zoo import load_zoo
from tests.selftest.zoo_inputs import INPUT_CLASSES

ZOO = load_zoo()


def test_every_judged_class_has_a_broken_server():
    covered = {c for classes in INPUT_CLASSES.values() for c in classes}
    missing = sorted(c.name for c in inputs.CLASSES.values() if c.judged and c.name not in covered)
    assert not missing, f"input classes without a broken server in zoo_inputs.py: {missing}"


def scripted_checks(requirement: str) -> list[str]:
    return [c.id for c in covering_checks(requirement) if not c.slow
            and not any(s.startswith(("fuzz.", "generated.")) for s in c.scenarios)]


@pytest.mark.parametrize("name", sorted(INPUT_CLASSES))
def test_passes_when_its_classes_are_withheld(name):
    b = ZOO[name]
    with inputs.withheld(*INPUT_CLASSES[name]), ReferenceServer(b.server_config()) as srv:
        report = certify(from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS)),
                         check_ids=scripted_checks(b.breaks))
    row = row_of(report, b.breaks)
    assert row["status"] == "passed", (f"{name} ({b.doc}) with {INPUT_CLASSES[name]} withheld: {row['status']}: "
                                       f"{row.get('message', '')[:600]}")
