"""The wheel holds everything the suite reads at run time, and building it leaves the checkout as it was.

The expected contents come from the source tree (every schema, catalog file, module and entry point
there), so a file added later cannot be forgotten by the packaging. The wheel is built once per run.
"""
from __future__ import annotations

import configparser
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "conformance"

pytestmark = [pytest.mark.xdist_group("packaging"), pytest.mark.timeout(300)]


def _build_leftovers() -> dict[str, int]:
    """Every file (with its mtime) under build/ or *.egg-info/ at the top of the checkout."""
    found: dict[str, int] = {}
    for top in [ROOT / "build", *ROOT.glob("*.egg-info")]:
        for path in [top, *top.rglob("*")] if top.exists() else []:
            found[str(path.relative_to(ROOT))] = path.stat().st_mtime_ns
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict[str, int], dict[str, int]]:
    """(the wheel, build leftovers before, build leftovers after); offline: no build isolation."""
    out = tmp_path_factory.mktemp("wheel")
    before = _build_leftovers()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, cwd=out)
    (wheel,) = out.glob("conformance-*.whl")
    return wheel, before, _build_leftovers()


@pytest.fixture(scope="module")
def names(built) -> set[str]:
    with zipfile.ZipFile(built[0]) as archive:
        return set(archive.namelist())


def _dist_info(names: set[str]) -> str:
    (info,) = {name.split("/")[0] for name in names if name.split("/")[0].endswith(".dist-info")}
    return info


def _runtime_resources() -> dict[str, Path]:
    """Path inside the wheel -> source file, for every file the suite reads at run time."""
    schemas = ROOT / "schemas"
    expected = {f"conformance/_schemas/{p.name}": p for p in schemas.iterdir() if p.suffix in (".json", ".yaml")}
    expected |= {f"conformance/catalog/{p.name}": p for p in (PACKAGE / "catalog").glob("*.toml")}
    expected |= {f"conformance/reporting/{p.name}": p for p in (PACKAGE / "reporting").glob("*.json")}
    expected["conformance/agent/vectors.json"] = PACKAGE / "agent" / "vectors.json"
    expected["conformance/draws.json"] = PACKAGE / "draws.json"
    expected["conformance/py.typed"] = PACKAGE / "py.typed"
    return expected


def test_source_tree_has_the_resources():
    resources = _runtime_resources()
    assert "conformance/_schemas/openapi.yaml" in resources
    assert sum(name.endswith(".json") for name in resources) >= 14
    assert sum(name.endswith(".toml") for name in resources) >= 7


def test_wheel_holds_every_runtime_resource_unchanged(built, names):
    missing = sorted(set(_runtime_resources()) - names)
    assert not missing, f"the wheel lacks {missing}"
    with zipfile.ZipFile(built[0]) as archive:
        stale = [name for name, source in _runtime_resources().items() if archive.read(name) != source.read_bytes()]
    assert not stale, f"the wheel's copy differs from the source for {stale}"


def test_wheel_holds_every_module(names):
    modules = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert not sorted(modules - names), f"the wheel lacks {sorted(modules - names)}"


def test_wheel_holds_only_the_package(names):
    tops = {name.split("/")[0] for name in names}
    assert tops == {"conformance", _dist_info(names)}


def test_wheel_declares_the_entry_points(built, names):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {"console_scripts": project["scripts"], **project["entry-points"]}
    with zipfile.ZipFile(built[0]) as archive:
        text = archive.read(f"{_dist_info(names)}/entry_points.txt").decode()
    found = configparser.ConfigParser()
    found.read_string(text)
    for group, points in declared.items():
        assert dict(found[group]) == points, group


def test_building_leaves_no_build_files_in_the_checkout(built):
    _, before, after = built
    assert after == before, "the build created or changed build/ or *.egg-info/ in the checkout"


def test_installed_wheel_reads_resources_from_itself(built, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                    "--target", str(target), str(built[0])], check=True, capture_output=True, text=True)
    code = ("from conformance import catalog, schemas\n"
            "from conformance.vocab import fuzzing as fuzz\n"
            "assert schemas.names() and fuzz.OPENAPI.is_file() and catalog.load()\n"
            "print(schemas.SCHEMA_DIR, fuzz.OPENAPI, catalog.CATALOG_DIR, sep='\\n')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    for line in run.stdout.splitlines():
        assert Path(line).is_relative_to(target), f"{line} is read from outside the installed wheel"
