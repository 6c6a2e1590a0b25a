"""The catalog is data validated at load; a check naming an unknown id is an error at collection."""
import pytest

from conformance import catalog, registry


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
