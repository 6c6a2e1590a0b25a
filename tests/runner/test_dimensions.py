"""The inventory of request dimensions is complete by construction: every backticked name and every table row of the
spec is a dimension, a value of one, or listed with what it is and why it is no request dimension; and what a run
varies for free is drawn the same for the same seed and covers every value early."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.model import dimensions
from conformance.model.dimensions import DIMENSIONS, DIMENSION_TERMS, FREE, SPEC_TERMS
from conformance.vocab import forms

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "agent-invocation-service.md"


def spec_text() -> str:
    if not SPEC.exists():    # as tests/runner/test_catalog.py: the spec is the team's, beside the checkout
        pytest.skip(f"the spec is not beside the checkout ({SPEC})")
    return SPEC.read_text(encoding="utf-8")


def terms(text: str) -> set[str]:
    found = set(re.findall(r"`([^`]+)`", text))
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|- "):
            found.add(line.strip("|").split("|")[0].strip())
    return found


def test_every_term_of_the_spec_is_a_dimension_or_left_out_with_its_reason():
    known = set(SPEC_TERMS) | set(DIMENSION_TERMS) | {v for d in DIMENSIONS.values() for v in d.values}
    missing = sorted(t for t in terms(spec_text()) if t not in known)
    assert not missing, f"spec terms neither a dimension nor listed in SPEC_TERMS with their reason: {missing}"


def test_every_term_names_a_dimension_that_exists():
    assert not {d for d in DIMENSION_TERMS.values() if d not in DIMENSIONS}
    assert all(reason for reason in SPEC_TERMS.values())


def test_the_lint_sees_a_new_term():
    assert "newField" in terms("| `newField` | string | no |") - set(SPEC_TERMS) - set(DIMENSION_TERMS)


def test_every_narrowing_names_a_dimension_and_its_reason():
    assert set(dimensions.NARROWED) <= set(DIMENSIONS) and all(dimensions.NARROWED.values())


@pytest.mark.parametrize("scenario", ["invoke.runs", "mcp.modern", "forms.refusals"])
def test_a_scenario_meets_every_free_value_in_its_first_requests(scenario):
    seen = {dim: set() for dim in FREE}
    for n in range(1, 9):
        for dim, value in forms.draw(7, scenario, n).items():
            seen[dim].add(value)
    assert {dim: set(forms.drawn(dim)) - got for dim, got in seen.items() if set(forms.drawn(dim)) - got} == {}


def test_a_run_never_draws_a_value_the_spec_leaves_open():
    assert all(v not in dimensions.OPEN_VALUES.get(dim, ()) for n in range(40) for dim, v in forms.draw(3, "s", n).items())


def test_every_tie_names_a_dimension_and_its_values_and_reason():
    for ids, dim, values, why in dimensions.TIED:
        assert ids and why and dim in DIMENSIONS and set(values) <= set(DIMENSIONS[dim].values)


def test_same_seed_same_forms_and_another_seed_others():
    assert [forms.draw(1, "s", n) for n in range(20)] == [forms.draw(1, "s", n) for n in range(20)]
    assert [forms.draw(1, "s", n) for n in range(20)] != [forms.draw(2, "s", n) for n in range(20)]
