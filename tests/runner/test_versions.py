"""The version model (`conformance/versions.py`) as data and its twins, without a server."""
from __future__ import annotations

import dataclasses

from conformance import registry
from conformance.registry import SCENARIOS
from conformance.versions import HTTP2_SCENARIOS, is_twin, twin_name


def test_every_twin_is_registered_with_the_scenarios_before_any_run() -> None:
    """The twins exist once the scenario modules are imported: a run never registers one while its recording threads
    read `SCENARIOS` (a dict that grows under a reader fails it)."""
    registry.load_all()
    assert {s for s in SCENARIOS if is_twin(s)} == {twin_name(s) for s in HTTP2_SCENARIOS}
    for name in HTTP2_SCENARIOS:
        assert dataclasses.replace(SCENARIOS[twin_name(name)], name=name) == SCENARIOS[name]


def test_a_derived_scenario_is_registered_for_those_before_and_after() -> None:
    registry.load_all()
    before = registry.Scenario("test.derive.before", lambda ctx: None, ("invoke",))
    SCENARIOS[before.name] = before
    maker = lambda scn: [dataclasses.replace(scn, name=scn.name + "@x")] if scn.name.startswith("test.derive.") else []
    try:
        registry.derive(maker)
        assert SCENARIOS["test.derive.before@x"].fn is before.fn

        @registry.scenario("test.derive.after", protocol="invoke", steps=())
        async def after(ctx) -> None:
            """A scenario registered after the maker."""
        assert SCENARIOS["test.derive.after@x"].fn is after
    finally:
        registry._DERIVERS.remove(maker)
        for name in [n for n in SCENARIOS if n.startswith("test.derive.")]:
            del SCENARIOS[name]
