"""What a default run covers of the request dimensions (report.json `dimensions`), held: every value of every free
dimension is carried by an exchange some rule judged, and the share of (requirement, dimension, value) in scope that
was judged does not fall (a rule read on one exchange, a scenario whose requests all go as built, lower it)."""
from __future__ import annotations

import dataclasses

import pytest

from conformance.api import certify
from conformance.model.dimensions import DIMENSIONS
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.vocab import forms

# 85.7 % measured (seed of the suite's default), counting for a scenario's check the exchanges it looked up or judged,
# not every exchange of its recordings (94.8 % so counted); a busy machine's deadline may cut a scenario short
SHARE_FLOOR = 0.84


@pytest.fixture(scope="module")
def covered() -> dict:
    with ReferenceServer(ServerConfig()) as srv:
        return certify(from_server_facts(srv.facts))["dimensions"]


@pytest.mark.xdist_group("default-runs")
def test_every_free_value_is_judged_somewhere(covered):
    judged = {(d, v) for row in covered["requirements"].values() for d, values in row["judged_on"].items()
              for v in values}
    missing = [(d.name, v) for d in DIMENSIONS.values() if d.free for v in forms.drawn(d.name)
               if (d.name, v) not in judged]
    assert not missing, f"free values no judged exchange carried: {missing}"


@pytest.mark.xdist_group("default-runs")
def test_the_share_of_scope_judged_holds(covered):
    assert covered["share"] >= SHARE_FLOOR, (covered["values_covered"], covered["values_in_scope"])


# the run's requests meet the pairs of values of the request they travel with: invoke 99.8 %, AG-UI 98.5 %, MCP
# 99.7 % measured; metadata's dozen GETs cannot hold its pairs (at least 16 requests would be needed), so not held
PAIRWISE_FLOOR = {"invoke": 0.95, "agui": 0.95, "mcp": 0.95}


@pytest.mark.xdist_group("default-runs")
def test_the_runs_requests_meet_the_pairs_of_free_values(covered):
    got = {op: row["share"] for op, row in covered["pairwise"].items()}
    assert all(got[op] >= floor for op, floor in PAIRWISE_FLOOR.items()), got


# -- --thorough: the triples ------------------------------------------------------------------------------------
OPERATIONS = ("invoke", "agui", "mcp", "metadata")


@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_covering_rows_carry_every_triple_a_request_may_carry(operation):
    rows = forms.covering_rows(7, operation)
    carried = set().union(*(forms.tuples_of(row, 3) for row in rows))
    assert forms.possible_tuples(operation, 3) <= carried
    assert not [row for row in rows if forms.shaped_out(tuple(row.items()))]
    assert all(set(row) == set(forms.free_values(operation)) for row in rows)
    assert forms.covering_rows(7, operation) == rows            # the same seed, the same rows
    met = set(sorted(forms.possible_tuples(operation, 3))[::2])
    rest = forms.covering_rows(7, operation, met)
    assert forms.possible_tuples(operation, 3) - met <= set().union(*(forms.tuples_of(row, 3) for row in rest))
    assert len(rest) < len(rows)


@pytest.mark.xdist_group("thorough-run")
def test_a_thorough_run_meets_every_triple_of_free_values():
    with ReferenceServer(ServerConfig()) as srv:
        got = certify(dataclasses.replace(from_server_facts(srv.facts), thorough=True))
    assert {op: row["share"] for op, row in got["dimensions"]["triples"].items()} == dict.fromkeys(OPERATIONS, 1.0)
    assert not [q["id"] for q in got["requirements"] if q["status"] == "failed"]


def test_a_default_run_reports_no_triples(covered):
    assert "triples" not in covered
