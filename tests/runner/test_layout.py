"""The layout rule: scenarios and checks share a vocabulary and never import each other.

A check module imports no scenario module and no other check module (a surface split into section modules,
conformance/checks/<surface>/, reads only its own package); a scenario module imports no check module and no other
scenario module. What both need lives in `conformance.vocab` (or the engine, wire, registry ...).
"""
from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

import conformance

ROOT = Path(conformance.__file__).parent
ALLOWED = ("conformance.vocab", "conformance.wire", "conformance.engine", "conformance.registry",
           "conformance.outcomes", "conformance.generate", "conformance.schemas", "conformance.target",
           "conformance.catalog", "conformance.model", "conformance.exchange_rules")
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


def own_surface(name: str, package: str) -> bool:
    """A surface split into section modules (conformance/checks/mcp/) reads its own package: the section modules
    from `__init__`, what they share from `_common`."""
    return package.count(".") == 2 and within(name, package)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_the_shared_layers(path):
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(ROOT.parent).parts[:-1])
    bad = sorted({f"line {line}: {name}" for line, name in imported(path, package)
                  if broken_rule(name) and not own_surface(name, package)})
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


# -- step labels: a typo is a bug, not "not assessed" ----------------------------------------------
def test_an_undeclared_step_is_an_error_and_an_unreached_one_not_assessed():
    from conformance import canned, registry
    from conformance.outcomes import NotAssessed
    from conformance.vocab.steps import mcp as steps

    registry.load_all()
    rec = canned.recording("mcp.refusals", [])
    with pytest.raises(registry.UnknownStep, match="method-mising"):
        rec.get("method-mising")
    with pytest.raises(NotAssessed):
        rec.get(steps.METHOD_MISSING)


def test_validate_finds_the_steps_a_check_uses():
    from conformance import registry
    from conformance.vocab.steps import mcp as steps

    def reads_a_declared_step(rec):
        return rec.get(steps.METHOD_MISSING)

    typo = registry.Step("method-mising")

    def reads_an_undeclared_step(rec):
        return rec.get(typo)

    assert registry.steps_used(reads_a_declared_step) == {"method-missing"}
    assert registry.steps_used(reads_an_undeclared_step) == {"method-mising"}
    registry.load_all()
    scn = registry.SCENARIOS["mcp.refusals"]
    assert scn.declares("method-missing") and not scn.declares("method-mising")


def test_every_check_reads_only_declared_steps():
    from conformance import registry

    registry.load_all()
    registry.validate()   # raises RegistryError naming the check and the step


def test_a_section_module_may_read_only_its_own_surface():
    assert own_surface("conformance.checks.mcp._common", "conformance.checks.mcp")
    assert not own_surface("conformance.checks.auth", "conformance.checks.mcp")
    assert not own_surface("conformance.checks.mcp", "conformance.checks")   # a flat check module reads no other


def test_a_label_family_is_validated_like_a_step():
    from conformance import canned, registry

    registry.load_all()
    rec = canned.recording("mcp.refusals", [])
    assert rec.labelled("version-") == []
    assert rec.labelled(registry.Step("version-*")) == []
    with pytest.raises(registry.UnknownStep, match="verson-"):
        rec.labelled("verson-")
    assert registry.Step("sse-*").of("plain_reply") == "sse-plain_reply"
    with pytest.raises(registry.RegistryError):
        registry.Step("sse").of("x")


def test_every_scenario_declares_its_steps():
    from conformance import registry

    registry.load_all()
    undeclared = sorted(name for name, scn in registry.SCENARIOS.items() if scn.steps is None)
    assert not undeclared, f"scenarios without `steps=` (a typo in their labels would read as not assessed): {undeclared}"


def _literal_labels(path: Path, declared) -> list[str]:
    """String literals a check passes as a step label: to `rec.get` / `rec.labelled`, or to a helper called with
    `rec` first, when the literal is a label some scenario declares (then the constant should have been used)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        on_rec = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "rec" and node.func.attr in ("get", "labelled")
        rec_first = bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "rec"
        for arg in node.args[0 if on_rec else 1:] if (on_rec or rec_first) else ():
            if isinstance(arg, ast.JoinedStr) and on_rec:
                found.append(f"line {node.lineno}: an f-string label")
            elif isinstance(arg, ast.Constant) and isinstance(arg.value, str) and (on_rec or declared(arg.value)):
                found.append(f"line {node.lineno}: {arg.value!r}")
    return found


@pytest.mark.parametrize("path", [p for p in MODULES if "checks" in p.parts], ids=lambda p: str(p.relative_to(ROOT)))
def test_checks_read_steps_by_name(path):
    from conformance import registry

    registry.load_all()
    patterns = {pattern for scn in registry.SCENARIOS.values() for pattern in scn.steps or ()}

    def declared(text: str) -> bool:
        return any(fnmatch.fnmatchcase(text, pattern) for pattern in patterns)

    literal = _literal_labels(path, declared)
    assert not literal, f"{path.relative_to(ROOT)} names steps by literal string, not by `conformance.vocab.steps`: {literal}"


def test_validate_follows_the_helpers_a_check_calls():
    """A step read in a helper of a check module counts for the check calling it (here AG-UI's resume checks,
    whose `resume` step is read only inside the shared helper)."""
    from conformance import registry

    registry.load_all()
    assert "resume" in registry.steps_used(registry.CHECKS["agui.resume_continues_run"].fn)
