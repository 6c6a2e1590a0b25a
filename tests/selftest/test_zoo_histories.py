"""The history's broken servers (zoo_histories.py), proven the other way: without the history scenario each passes on
its requirement (so its catch in test_zoo.py is the history's)."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import Profile, from_server_facts
from conformance.vocab import sequences
from tests.selftest.test_zoo import ZOO_TIMEOUTS, covering_checks, row_of
from tests.selftest.zoo import load_zoo

ZOO = load_zoo()
HISTORY_SERVERS = sorted(name for name, b in ZOO.items() if b.module == "tests.selftest.zoo_histories")
# Faults of a transition the run's other scenarios take too, so their catch is not the history's alone
MET_OUTSIDE = {"GEN-SESS-001-session-recreated-after-a-tool-call":
               "a tool call: every scenario's runs call tools beside their reply (forms.AGENT_EVENTS)"}


def test_the_history_has_its_broken_servers():
    assert len(HISTORY_SERVERS) >= 6


@pytest.mark.parametrize("name", [n for n in HISTORY_SERVERS if n not in MET_OUTSIDE])
def test_passes_without_the_history(name):
    b = ZOO[name]
    ids = [c.id for c in covering_checks(b.breaks) if sequences.HISTORIES not in c.scenarios and not c.slow]
    with ReferenceServer(b.server_config()) as srv:
        report = certify(from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS)), check_ids=ids)
    row = row_of(report, b.breaks)
    assert row["status"] in ("passed", "not_assessed"), \
        f"{name} ({b.doc}) without the history: {row['status']}: {row.get('message', '')[:600]}"
