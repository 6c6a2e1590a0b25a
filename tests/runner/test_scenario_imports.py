"""A scenario never makes its recording loop import a large package.

A first import runs on whichever thread asks for it: inside a scenario, on the event loop that reads every stream of
its lane. Under load the official MCP SDK took 10 s to import there, and every stream of the shared HTTP/2
connection was cut as idle meanwhile (a correct server failed INV-TERM-001/002/003 and INV-STREAM-008). So a module a
scenario module imports late (inside a function) is one its scenarios declare (`@scenario(imports=...)`: the engine
imports it in a worker thread first), the standard library, or already loaded with the suite.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import conformance
from conformance.registry import SCENARIOS, load_all

load_all()      # every scenario and check, as a run has them before it records

ROOT = Path(conformance.__file__).parent / "scenarios"
#: functions that run in a worker thread of their own (`fuzz.in_daemon_thread`), never on a recording loop
OFF_LOOP = {"fuzz.py": {"draw", "build_probes"}}


def late_imports(path: Path) -> list[tuple[str, int, str]]:
    """(function, line, module) of every absolute import inside a function of the module at `path`."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    out += [(fn.name, node.lineno, alias.name) for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    out.append((fn.name, node.lineno, node.module or ""))
    return out


def declared(module: str) -> set[str]:
    return {m for s in SCENARIOS.values() if s.fn.__module__ == module for m in s.imports}


def covered(name: str, imports: set[str]) -> bool:
    """Loaded by importing one of `imports` (a package comes with its submodules' import)."""
    return any(m == name or m.startswith(name + ".") for m in imports)


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    """The modules a run has loaded before it records (a fresh interpreter: this one has run other tests)."""
    code = "import json, sys; from conformance.registry import load_all; load_all(); print(json.dumps(list(sys.modules)))"
    return set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout))


def harmless(name: str, loaded: set[str]) -> bool:
    top = name.split(".")[0]
    return top in sys.stdlib_module_names or top == "conformance" or name in loaded


@pytest.mark.parametrize("path", sorted(ROOT.glob("*.py")), ids=lambda p: p.name)
def test_a_late_import_of_a_scenario_is_declared_for_the_engine(path: Path, loaded: set[str]) -> None:
    module = f"conformance.scenarios.{path.stem}"
    imports = declared(module)
    bad = [f"line {line} in {fn}(): {name}" for fn, line, name in late_imports(path)
           if fn not in OFF_LOOP.get(path.name, ()) and not harmless(name, loaded) and not covered(name, imports)]
    assert not bad, (f"{path.name} imports on its recording loop what its scenarios do not declare "
                     f"(@scenario(imports=...)): {bad}")


def test_the_rule_sees_an_undeclared_late_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import json\nasync def s(ctx):\n    import ag_ui.core as core\n    from mcp.client import x\n")
    found = [(fn, name) for fn, _, name in late_imports(probe) if not harmless(name, {"json"})]
    assert found == [("s", "ag_ui.core"), ("s", "mcp.client")]
    assert covered("mcp.client", {"mcp.client.client"}) and not covered("ag_ui.core", {"ag_ui"})
