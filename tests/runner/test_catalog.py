"""The catalog is data validated at load; a check naming an unknown id is an error at collection."""
import re
from pathlib import Path

import pytest

from conformance import catalog, registry, target


def test_catalog_loads_with_unique_ids_and_valid_levels():
    reqs = catalog.load()
    assert len(reqs) >= 100
    assert {r.level for r in reqs.values()} <= set(catalog.LEVELS)
    assert all(r.supply for r in reqs.values() if r.level == "UNSPECIFIED")


def test_a_defective_catalog_is_refused(tmp_path):
    (tmp_path / "x.toml").write_text('[[requirement]]\nid = "X-1"\nlevel = "MUSTN\'T"\nsection = "s"\n'
                                     'quote = "q"\nexpect = "e"\nprotocol = "invoke"\n')
    with pytest.raises(catalog.CatalogError, match="level"):
        catalog.load.__wrapped__(tmp_path)


def test_duplicate_ids_are_refused(tmp_path):
    row = '[[requirement]]\nid = "X-1"\nlevel = "MUST"\nsection = "s"\nquote = "q"\nexpect = "e"\nprotocol = "invoke"\n'
    (tmp_path / "a.toml").write_text(row)
    (tmp_path / "b.toml").write_text(row)
    with pytest.raises(catalog.CatalogError, match="duplicate"):
        catalog.load.__wrapped__(tmp_path)


def test_a_check_naming_an_unknown_requirement_is_an_error():
    registry.load_all()

    @registry.check("NOPE-000", scenarios=[next(iter(registry.SCENARIOS))], name="bogus_for_test")
    def bogus(rec):
        pass

    try:
        with pytest.raises(registry.RegistryError, match="NOPE-000"):
            registry.validate()
    finally:
        registry.CHECKS.pop("test_catalog.bogus_for_test", None)


def test_every_check_names_known_requirements_and_scenarios():
    registry.load_all()
    registry.validate()
    assert registry.CHECKS, "no check registered"


SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "agent-invocation-service.md"
AGENT_SCENARIOS = set(target.AGENT_SCENARIOS) | {"refusal"}   # one name per scenario: the profile keys


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _verbatim(quote: str, spec: str) -> bool:
    pos = 0
    for part in filter(None, (_normal(p) for p in quote.split("…"))):
        pos = spec.find(part, pos)
        if pos < 0:
            return False
        pos += len(part)
    return True


@pytest.mark.skipif(not SPEC.exists(), reason=f"the spec is not beside the checkout ({SPEC})")
def test_every_quote_is_verbatim_spec_text():
    spec = _normal(SPEC.read_text(encoding="utf-8"))
    bad = [f"{r.id}: {r.quote[:80]!r}" for r in catalog.load().values() if not _verbatim(r.quote, spec)]
    assert not bad, "quotes that are not in the spec:\n" + "\n".join(bad)


def test_ids_and_scenarios_are_well_formed():
    bad = [r.id for r in catalog.load().values() if not re.fullmatch(r"(GEN|INV|AGUI|MCP|AUTH|META)-[A-Z]+-\d{3}", r.id)]
    assert not bad, f"ids not of the form SURFACE-GROUP-NNN: {bad}"
    unknown = {(r.id, s.strip()) for r in catalog.load().values() for s in r.scenario.split(",")
               if s.strip() and s.strip() not in AGENT_SCENARIOS}
    assert not unknown, f"scenario names not in the conformance agent's table: {sorted(unknown)}"


def test_every_should_and_may_cites_the_words_it_rests_on():
    unsourced = [r.id for r in catalog.load().values() if r.level in catalog.SOURCED_LEVELS and not r.source]
    assert not unsourced, f"SHOULD/MAY requirements without a `source`: {unsourced}"
    bad = [f"{r.id}: {problem}" for r in catalog.load().values() for c in r.source
           if (problem := catalog.citation_problem(c))]
    assert not bad, "citations not of the form `<document> › <where>: \"<its words>\"`:\n" + "\n".join(bad)


@pytest.mark.skipif(not SPEC.exists(), reason=f"the spec is not beside the checkout ({SPEC})")
def test_every_citation_of_the_spec_is_verbatim_spec_text():
    spec = _normal(SPEC.read_text(encoding="utf-8"))
    cited = [(r.id, catalog.CITATION.fullmatch(c)["words"]) for r in catalog.load().values() for c in r.source
             if c.startswith("spec › ")]
    assert cited, "no requirement cites the spec"
    bad = [f"{rid}: {words[:80]!r}" for rid, words in cited if not _verbatim(words, spec)]
    assert not bad, "`source` cites words that are not in the spec:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, match", [
    ("", "must cite"),
    ('source = ["the spec says so"]', "is not `<document>"),
    ('source = ["a blog › somewhere: \\"it is nice\\""]', "not among"),
])
def test_a_should_without_a_proper_source_is_refused(tmp_path, source, match):
    (tmp_path / "x.toml").write_text('[[requirement]]\nid = "X-1"\nlevel = "SHOULD"\nsection = "s"\nquote = "q"\n'
                                     f'expect = "e"\nprotocol = "invoke"\n{source}\n')
    with pytest.raises(catalog.CatalogError, match=match):
        catalog.load.__wrapped__(tmp_path)
