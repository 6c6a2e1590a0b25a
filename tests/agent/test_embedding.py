"""The agent taken into a service without the suite: stdlib-only imports, the package alone, a vendored copy."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENT_DIR = ROOT / "conformance" / "agent"
PACKAGE_INIT = ROOT / "conformance" / "__init__.py"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(relative level, module) of every import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def agent_files() -> list[Path]:
    return sorted(AGENT_DIR.glob("*.py"))


@pytest.mark.parametrize("path", agent_files() + [PACKAGE_INIT], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_only_the_standard_library_and_its_own_modules(path):
    outside = [name for level, name in _imports(path)
               if level == 0 and name.partition(".")[0] not in sys.stdlib_module_names]
    assert not outside, f"{path.name} imports {outside}: the agent must need nothing beyond the standard library"
    absolute_own = [name for level, name in _imports(path) if level == 0 and name.startswith("conformance")]
    assert not absolute_own, f"{path.name}: import the agent's own modules relatively, so a vendored copy works"
    escaping = [name for level, name in _imports(path) if level > 1]
    assert not escaping, f"{path.name} reaches outside the agent's directory: {escaping}"


def _copy_agent(into: Path) -> None:
    shutil.copytree(AGENT_DIR, into, ignore=shutil.ignore_patterns("__pycache__"))


def _run_isolated(path_entry: Path, code: str) -> subprocess.CompletedProcess:
    """`python -I -S`: no site-packages, no PYTHONPATH, no current directory; only the stdlib and `path_entry`."""
    program = f"import sys; sys.path.insert(0, {str(path_entry)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-I", "-S", "-c", program], capture_output=True, text=True, timeout=120,
                          cwd=path_entry)


PLAY_VECTORS = """
    import {package}.vectors as vectors
    from {package} import ConformanceAgent
    assert "pytest" not in sys.modules and not any(p.endswith("site-packages") for p in sys.path)
    assert vectors.check() == [], vectors.check()
    def two_workers():
        store = {{}}
        return ConformanceAgent(store), ConformanceAgent(store)
    assert vectors.check(new_workers=two_workers) == []
    print("vectors ok from", vectors.__file__)
"""


def test_the_package_alone_runs_the_vectors(tmp_path):
    """What `pip install --no-deps conformance` gives a service is enough: conformance/__init__.py and agent/."""
    (tmp_path / "conformance").mkdir()
    shutil.copy(PACKAGE_INIT, tmp_path / "conformance" / "__init__.py")
    _copy_agent(tmp_path / "conformance" / "agent")
    result = _run_isolated(tmp_path, PLAY_VECTORS.format(package="conformance.agent"))
    assert result.returncode == 0, result.stderr
    assert f"from {tmp_path}" in result.stdout


def test_a_vendored_copy_under_another_name_works(tmp_path):
    """The agent/ directory copied into a service's own package, under another name."""
    vendor = tmp_path / "myservice" / "_vendor"
    vendor.mkdir(parents=True)
    (tmp_path / "myservice" / "__init__.py").write_text("")
    (vendor / "__init__.py").write_text("")
    _copy_agent(vendor / "conformance_agent")
    result = _run_isolated(tmp_path, PLAY_VECTORS.format(package="myservice._vendor.conformance_agent") + """
    assert not any(name == "conformance" or name.startswith("conformance.") for name in sys.modules)
    """)
    assert result.returncode == 0, result.stderr


def test_the_vectors_entry_point_in_an_isolated_interpreter(tmp_path):
    (tmp_path / "conformance").mkdir()
    shutil.copy(PACKAGE_INIT, tmp_path / "conformance" / "__init__.py")
    _copy_agent(tmp_path / "conformance" / "agent")
    result = _run_isolated(tmp_path, """
        import runpy
        runpy.run_module("conformance.agent.vectors", run_name="__main__")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: ") and "canonical JSON cases" in result.stdout
