"""The layout rule: scenarios and checks share a vocabulary and never import each other.

A check module imports no scenario module and no other check module; a scenario module imports no check module
and no other scenario module. What both need lives in `conformance.vocab` (or the engine, wire, registry ...).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conformance

ROOT = Path(conformance.__file__).parent
ALLOWED = ("conformance.vocab", "conformance.wire", "conformance.engine", "conformance.registry",
           "conformance.outcomes", "conformance.generate", "conformance.schemas", "conformance.target",
           "conformance.catalog")
MODULES = sorted(p for pkg in ("checks", "scenarios") for p in (ROOT / pkg).rglob("*.py"))


def imported(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every import of a module of `package`, top level or inside a function."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            out.append((node.lineno, base))
    return out


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def broken_rule(name: str) -> bool:
    """A name under `conformance` that is not (inside) an allowed package, and not `conformance` itself."""
    if not within(name, "conformance") or name == "conformance":
        return False
    return not any(within(name, allowed) for allowed in ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_the_shared_layers(path):
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    bad = sorted({f"line {line}: {name}" for line, name in imported(path, package) if broken_rule(name)})
    assert not bad, f"{path.relative_to(ROOT)} imports outside the shared layers: {bad}"


def test_the_rule_sees_a_cross_import(tmp_path):
    """The parser catches every spelling of a forbidden import: absolute, relative, top level and late."""
    sample = ("from conformance.scenarios.mcp import x\n"
              "def f():\n    from conformance.checks import auth\n"
              "from conformance import protocols, schemas\n"
              "from .invoke import RUNS\n")
    fake = tmp_path / "probe.py"
    fake.write_text(sample)
    names = {name for _, name in imported(fake, "conformance.checks")}
    assert {n for n in names if broken_rule(n)} == {"conformance.scenarios.mcp.x", "conformance.scenarios.mcp",
                                                    "conformance.checks", "conformance.checks.auth", "conformance.protocols",
                                                    "conformance.checks.invoke", "conformance.checks.invoke.RUNS"}
