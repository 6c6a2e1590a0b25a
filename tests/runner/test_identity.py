"""Every result names what judged it: the suite's version, the spec revision and the catalog's digest, the same in
report.json, the terminal, report.html, junit.xml, `conformance --version` and `conformance list --format json`."""
from __future__ import annotations

import json
import re
import shutil
from importlib import resources

import jsonschema

from conformance import __version__, catalog, cli
from conformance.report import suite_identity
from conformance.reporting import html, junit, terminal
from tests.reports.support import make_report

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def catalog_copy(tmp_path, name: str, edit=lambda text: text):
    """A copy of the catalog with general.toml edited (a directory of its own: the catalog is cached by path)."""
    copy = tmp_path / name
    shutil.copytree(catalog.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    general = copy / "general.toml"
    general.write_text(edit(general.read_text()))
    return copy


def test_the_catalog_digest_covers_ids_levels_and_quotes_and_nothing_else(tmp_path):
    assert DIGEST.match(catalog.digest())
    assert catalog.digest(catalog_copy(tmp_path, "same")) == catalog.digest()
    reworded = catalog_copy(tmp_path, "reworded", lambda t: t.replace('expect = "', 'expect = "(reworded) ', 1))
    assert catalog.digest(reworded) == catalog.digest()      # `expect` is ours, not the spec's: same digest
    relevelled = catalog_copy(tmp_path, "relevelled", lambda t: t.replace(
        'level = "MUST"', 'level = "SHOULD"\nsource = [\'spec › Limits: "a SHOULD cites its words"\']', 1))
    requoted = catalog_copy(tmp_path, "requoted", lambda t: t.replace('quote = "', 'quote = "Reworded: ', 1))
    assert len({catalog.digest(relevelled), catalog.digest(requoted), catalog.digest()}) == 3


def test_the_digest_is_the_documented_canonical_json():
    import hashlib
    entries = sorted(({"id": r.id, "level": r.level, "quote": r.quote} for r in catalog.load().values()),
                     key=lambda e: e["id"])
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert catalog.digest() == "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_report_json_names_the_suite_and_the_times_and_validates():
    rep = make_report(fail=("INV-RES-005",))
    assert rep["suite"] == {"version": __version__, "spec_revision": catalog.SPEC_REVISION,
                            "catalog_digest": catalog.digest()}
    assert TIMESTAMP.match(rep["started_at"]) and TIMESTAMP.match(rep["finished_at"])
    assert rep["started_at"] <= rep["finished_at"] and rep["seed"] == rep["options"]["seed"] == 7
    schema = json.loads(resources.files("conformance.reporting").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(rep)


def test_every_report_carries_the_same_identity():
    rep = make_report(fail=("INV-RES-005",))
    digest = rep["suite"]["catalog_digest"]
    header = terminal.render(rep)[1]
    assert header.startswith(f"conformance {__version__} · spec {catalog.SPEC_REVISION} · catalog {digest[:19]}")
    assert digest in html.banner(rep) and catalog.SPEC_REVISION in html.banner(rep)
    props = {p.get("name"): p.get("value") for p in junit.build(rep).find("testsuite").find("properties")}
    assert props["catalog_digest"] == digest and props["spec_revision"] == catalog.SPEC_REVISION
    assert props["suite_version"] == __version__ and props["started_at"] == rep["started_at"]


def test_version_and_list_show_the_same_digest(capsys):
    assert cli.main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == (f"conformance {__version__} (spec revision {catalog.SPEC_REVISION}, "
                    f"catalog {catalog.digest()})")
    assert cli.main(["list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["suite"] == suite_identity()
    assert [r["id"] for r in listed["requirements"]] == list(catalog.load())
