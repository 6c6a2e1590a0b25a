"""Correct servers that choose otherwise where HTTP leaves a request's form open pass (variant_forms.py), and the
measure of faults gated by a request condition holds on a few draws of a fresh seed (gated.py)."""
from __future__ import annotations

import random

import pytest

from conformance.api import certify
from conformance.server import ReferenceServer
from conformance.target import from_server_facts
from tests.selftest.gated import Witness, draws, gated
from tests.selftest.variant_servers import SERVERS, false_verdicts
from tests.selftest.zoo import load_zoo


@pytest.mark.xdist_group("default-runs")
def test_a_server_asking_a_length_for_every_body_is_conformant():
    server = SERVERS["forms-length-required"]
    with ReferenceServer(server.config()) as srv:
        rep = certify(from_server_facts(srv.facts))
    assert not false_verdicts(server, rep), false_verdicts(server, rep)


SEED = random.SystemRandom().randrange(2**32)   # a fresh draw every run: the measure cannot be tuned to a list


@pytest.mark.xdist_group("default-runs")
@pytest.mark.parametrize("n", range(2))
def test_a_fault_gated_by_a_request_condition_is_caught_when_it_shows(n):
    name, dimension, value = draws(SEED, 2)[n]
    b = load_zoo()[name]
    witness = Witness()
    with ReferenceServer(gated(b, dimension, value, witness)) as srv:
        rep = certify(from_server_facts(srv.facts))
    if not witness.changed:
        pytest.skip(f"seed {SEED}: {name} gated by {dimension}={value} never showed (no witness): not a real draw")
    rows = {r["id"]: r for r in rep["requirements"]}
    row = rows[b.breaks]
    caught = row["status"] in ("failed", "warning", "info") or rows.get(row.get("blocked_by") or "", {}).get(
        "status") == "failed"
    print(f"seed {SEED}: {name} gated by {dimension}={value}: {row['status']}")
    assert caught, f"seed {SEED}: {name} gated by {dimension}={value} (it showed on {witness.changed} of " \
                   f"{witness.seen} requests) was not caught: {b.breaks} {row['status']}: {row['message'][:300]}"
