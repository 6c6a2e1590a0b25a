"""The input model (conformance/vocab/inputs.py): its classes, their reasons and bounds (held to schemas/), what a
run sends of them (every judged class under every seed, deterministic per seed, more with --depth, the baseline when
withheld), and what the reports say (report.json rows, `conformance list`)."""
from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from conformance import catalog, registry, schemas
from conformance.api import certify
from conformance.judging import CheckResult
from conformance.report import requirement_rows
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import DEFAULT_SEED, from_server_facts
from conformance.model.values import ID_RIDES
from conformance.vocab import inputs
from conformance.vocab.protocols import canonical

JUDGED = [c for c in inputs.CLASSES.values() if c.judged]


def run(seed=DEFAULT_SEED, depth=1):
    return SimpleNamespace(seed=seed, depth=depth)


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# -- the classes -------------------------------------------------------------------------------------------------
def test_every_class_names_its_field_a_reason_and_what_it_applies_to():
    reqs = catalog.load()
    covered = registry.coverage()
    for c in inputs.CLASSES.values():
        assert c.field in inputs.FIELDS and c.name == f"{c.field}:{c.kind}"
        assert len(c.reason) > 40, c.name
        if c.judged:
            assert c.values and c.applies, c.name
            for rid in c.applies:
                assert rid in reqs and reqs[rid].testable and covered[rid], (c.name, rid)
        else:
            assert not c.values and not c.applies and "not sent" in c.reason, c.name


def test_the_session_key_bounds_and_id_types_are_the_schemas():
    bounds = {(s["minLength"], s["maxLength"]) for s in (
        schemas.schema("invoke-request")["properties"]["sessionId"],
        schemas.schema("agui-request")["properties"]["threadId"],
        schemas.schema("mcp-tools-call-params")["properties"]["arguments"]["properties"]["session_id"])}
    assert bounds == {(1, 256)}
    for kind in ("256-multibyte", "257-multibyte"):
        length = int(kind[:3])
        for char in inputs.CLASSES[f"session-key:{kind}"].values:
            key = char * length
            assert len(key) == utf16_units(key) == length and len(key.encode()) > 256, (kind, char)
    assert schemas.schema("mcp-request")["properties"]["id"]["type"] == ["string", "integer"]
    for name in ("jsonrpc-id", "progress-token"):
        for c in JUDGED:
            if c.field == name:
                assert all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in c.values), c.name


def test_string_kinds_hold_what_they_say():
    assert all(any(ord(ch) > 0xFFFF for ch in s) for s in inputs.ASTRAL)
    assert all(all(0x7F < ord(ch) <= 0xFFFF for ch in s) for s in inputs.NON_ASCII)
    assert all({'"', "\\", "\u2028", "\u2029"} <= set(s) for s in inputs.JSON_ESCAPES)
    assert all(s.isascii() and not s.isalnum() for s in inputs.PUNCTUATION)


def test_extra_data_classes_sit_inside_and_outside_4_kb_by_every_count():
    from conformance.scenarios.invoke import (EXTRA_INSIDE_BYTES, EXTRA_OUTSIDE_BYTES, MULTIBYTE_INSIDE_REPEAT,
                                              MULTIBYTE_OUTSIDE_CHARS, sized_value)
    for rep in inputs.CLASSES["extra-data:multibyte-inside"].values:
        text = canonical(sized_value(EXTRA_INSIDE_BYTES, True, rep * MULTIBYTE_INSIDE_REPEAT))
        escaped = json.dumps(json.loads(text), separators=(",", ":"))      # ASCII only: the largest writing
        assert max(len(text.encode()), len(escaped), utf16_units(text)) < 3 * 1024, rep
    for rep in inputs.CLASSES["extra-data:multibyte-outside"].values:
        text = canonical(sized_value(EXTRA_OUTSIDE_BYTES, False, rep * MULTIBYTE_OUTSIDE_CHARS))
        assert len(text.encode()) >= 7900 and utf16_units(text) < 3000, rep


# -- what a run sends --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [DEFAULT_SEED, 1, 2**32 - 1] + random.Random(7).sample(range(2**32), 5))
def test_every_seed_sends_every_judged_class(seed):
    for c in JUDGED:
        got = inputs.values(run(seed), c.name, "BASELINE")
        assert got and "BASELINE" not in got and set(map(repr, got)) <= set(map(repr, c.values)), c.name
        assert len(got) == min(c.sent, len(c.values))


def test_values_are_deterministic_per_seed_and_grow_with_depth():
    name = "accept:weight"
    assert inputs.values(run(5), name) == inputs.values(run(5), name)
    assert {tuple(inputs.values(run(s), name)) for s in range(40)} == {(v,) for v in inputs.CLASSES[name].values}
    assert len(inputs.values(run(5, depth=3), "jsonrpc-id:numeric-string")) == 3


def test_a_withheld_class_sends_its_baseline_and_carries_nothing():
    ctx = SimpleNamespace(target=run(), recording=SimpleNamespace(facts={}), unique=lambda stem, plain=False: f"conf-{stem}")
    with inputs.withheld("jsonrpc-id:falsy", *inputs.string_kinds("session-key")):
        assert inputs.values(run(), "jsonrpc-id:falsy", lambda i: f"b{i}") == ["b0", "b1"]
        assert inputs.keyed(ctx, "k", "step") == "conf-k"
        inputs.carry(ctx, "step", "jsonrpc-id:falsy", "run-id:astral")
    assert ctx.recording.facts["input_classes"] == {"step": ["run-id:astral"]}
    assert inputs.is_sent("jsonrpc-id:falsy")
    with pytest.raises(KeyError):
        with inputs.withheld("no-such:class"):
            pass


# -- what the reports say ----------------------------------------------------------------------------------------
def test_a_check_is_judged_on_the_classes_its_recordings_carried_that_apply_to_it():
    rec = SimpleNamespace(facts={"input_classes": {"a": ["session-key:astral", "jsonrpc-id:falsy"], "b": ["x:y"]}})
    assert inputs.judged_on(["INV-SESS-003"], [rec]) == ("session-key:astral",)
    assert inputs.judged_on(["MCP-METH-005", "INV-SESS-003"], [rec, SimpleNamespace(facts={})]) == \
        ("jsonrpc-id:falsy", "session-key:astral")
    results = [CheckResult("x.y", ("INV-SESS-003", "MCP-METH-005"), "passed",
                           input_classes=("jsonrpc-id:falsy", "session-key:astral"))]
    rows = {r["id"]: r for r in requirement_rows(results, {"INV-SESS-003": ["x.y"], "MCP-METH-005": ["x.y"]}, {})}
    assert rows["INV-SESS-003"]["input_classes"] == ["session-key:astral"]
    assert rows["MCP-METH-005"]["input_classes"] == ["jsonrpc-id:falsy"]
    assert "input_classes" not in rows["INV-SESS-002"]


def test_conformance_list_names_the_classes_of_each_requirement(capsys):
    from conformance.cli import list_catalog
    list_catalog(["--format", "json"])
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["requirements"]}
    assert rows["MCP-METH-005"]["input_classes"] == inputs.applies_to("MCP-METH-005")
    assert "jsonrpc-id:falsy" in rows["MCP-METH-005"]["input_classes"]
    list_catalog([])
    assert "[inputs: " in capsys.readouterr().out


# the classes that ride on the ids the run chooses (`forms.ID_WRITINGS`), each on requests its seed draws: over the
# few requests of the checks' own scenarios a seed may leave one out, so they are held over a whole default run
RIDING = {c.name for c in JUDGED if c.applies == ID_RIDES}


def test_a_run_judges_every_class_on_every_requirement_it_applies_to():
    """The carriers: a run of the reference server names, on each requirement's row, every judged class the model
    applies to it (derived from the recording, so `conformance rejudge` says the same)."""
    registry.load_all()
    wanted = {rid for c in JUDGED for rid in c.applies}
    ids = [c.id for c in registry.CHECKS.values() if set(c.requirements) & wanted and not c.slow
           and not any(s.startswith(("fuzz.", "generated.")) for s in c.scenarios)]
    with ReferenceServer(ServerConfig()) as srv:
        report = certify(from_server_facts(srv.facts, seed=random.randrange(2**32)), check_ids=ids)
    rows = {r["id"]: r for r in report["requirements"]}
    missing = [f"{rid}: {c.name}" for c in JUDGED for rid in c.applies
               if c.name not in rows[rid].get("input_classes", ()) and c.name not in RIDING]
    assert not missing, missing
    assert all(rows[rid]["status"] in ("passed", "warning", "info") for rid in wanted), \
        {rid: rows[rid]["status"] for rid in wanted if rows[rid]["status"] not in ("passed",)}


@pytest.mark.xdist_group("default-runs")
def test_a_default_run_judges_the_id_classes_its_ids_carry():
    """What the classes riding on the run's own ids are judged on: a whole default run of the reference server (the
    suite's seed) names each on MCP-METH-005, the id echoed, read on every MCP answer."""
    with ReferenceServer(ServerConfig()) as srv:
        report = certify(from_server_facts(srv.facts))
    row = next(r for r in report["requirements"] if r["id"] == "MCP-METH-005")
    assert RIDING and RIDING <= set(row.get("input_classes", ())), row.get("input_classes")
