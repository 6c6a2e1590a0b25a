"""The model is the ground floor: data that imports nothing of how a run sends or judges it (no `vocab`, no engine,
no checks), and the step labels it names as plain strings are the very labels the scenarios declare."""
from __future__ import annotations

import ast
from pathlib import Path

import conformance
from conformance import registry
from conformance.model import silences, versions
from conformance.vocab.steps import silences as silence_steps

MODEL = Path(conformance.__file__).parent / "model"
ALLOWED = ("conformance.model", "conformance.profile", "conformance.target")


def test_the_model_imports_nothing_of_how_a_run_sends_or_judges():
    bad = []
    for path in MODEL.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad += [f"{path.name}: {n}" for n in names if n.startswith("conformance") and not n.startswith(ALLOWED)]
    assert not bad, bad


def test_the_labels_the_model_names_are_the_scenarios_steps():
    registry.load_scenarios()
    for scenario, steps in versions.HTTP1_ONLY_STEPS.items():
        for label in steps:
            assert registry.SCENARIOS[scenario].declares(label) or any(
                p == label for p in registry.SCENARIOS[scenario].steps or ()), (scenario, label)
    for twin, label in versions.PLAIN_CALLS_OVER_HTTP2.values():
        assert registry.SCENARIOS[twin].declares(label), (twin, label)
    assert all(silence_steps.SILENT.names(s.label) for s in silences.SILENCES.values())
