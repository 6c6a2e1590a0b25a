"""Scenarios (exchanges recorded once) and checks (plain functions over recordings).

A scenario is an async function that talks to the server through a Context and
leaves behind a Recording. A check is a plain function that takes the
recordings of the scenarios it names, in order, and raises AssertionError with
a precise message when the server is wrong. Both register by decorator:

    @scenario("invoke.plain_json", protocol="invoke", prompts=("plain_reply",))
    async def plain_json(ctx): ...

    @check("INV-RES-001", scenarios=["invoke.plain_json"])
    def result_is_json_200(rec): ...

A rule applied over several parameters (scenarios, labels, groups) registers once per parameter with `rule(...)`.
These two are the only ways a check is registered.
"""
from __future__ import annotations

import fnmatch
import functools
import importlib
import pkgutil
import types
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

from conformance import catalog

ENDPOINT_PROTOCOLS = catalog.ENDPOINT_PROTOCOLS


@dataclass(frozen=True)
class Scenario:
    name: str
    fn: Callable[..., Awaitable[Any]]
    protocols: tuple[str, ...]       # every protocol it sends requests over (--protocols filters on them)
    needs: tuple[str, ...] = ()      # target facts, e.g. "access_token", "extra_data_field"
    prompts: tuple[str, ...] = ()    # agent scenarios whose prompts it sends
    slow: bool = False               # started first (e.g. the 16 s silence)
    deadline: float = 90.0           # overall seconds for the whole scenario
    doc: str = ""
    timing: bool = False             # its checks judge arrival times
    last: bool = False               # started once the shared lane's other scenarios are done (e.g. a load probe)
    steps: tuple[str, ...] | None = None   # the step labels it records (glob patterns allowed); None = not declared
    # modules it imports late (large SDKs a run without it never loads): imported off the recording loop before it
    # starts, since a first import holds the loop for seconds and nobody reads the other scenarios' streams meanwhile
    imports: tuple[str, ...] = ()
    # sent for the rules over every exchange (`exchange_rules`) of these requirements alone: recorded whenever the
    # check of one of them runs, though no check names it
    sweep: tuple[str, ...] = ()
    # its requests are other forms of what earlier scenarios send (the refusal sweeps, the histories, the fuzzing):
    # started halfway through the run (`engine.LATE_SHARE`), so each is sent both early and late
    late: bool = False

    def declares(self, label: str) -> bool:
        return any(fnmatch.fnmatchcase(label, pattern) for pattern in self.steps or ())

    @functools.cached_property
    def named_steps(self) -> tuple[str, ...]:
        """The labels it declares by name (not a family's pattern), in the order declared."""
        return tuple(s for s in self.steps or () if not any(c in s for c in "*?["))

    @property
    def ordinal(self) -> int:
        """Its place among the registered scenarios: what keeps the keys it makes apart from another's."""
        return list(SCENARIOS).index(self.name) if self.name in SCENARIOS else len(SCENARIOS)

    @property
    def isolated(self) -> bool:
        """Recorded on a lane of its own, so its timestamps measure the server, not our other work."""
        return self.slow or self.timing


@dataclass(frozen=True)
class Check:
    id: str
    fn: Callable[..., Any]
    requirements: tuple[str, ...]
    scenarios: tuple[str, ...]
    doc: str = ""
    module: str = ""
    supplementary: bool = False      # extra evidence (schemas over all traffic, generated inputs): its failure
                                     # fails the requirement, its pass alone never satisfies it
    # an exchange rule's check (`checks/every`): judged last, on every exchange of these protocols the run recorded,
    # whatever scenario sent it; it names no scenario, so it makes none run
    every: tuple[str, ...] = ()

    @property
    def protocols(self) -> set[str]:
        if self.every:
            return set(self.every)
        return {p for s in self.scenarios for p in SCENARIOS[s].protocols}

    @property
    def slow(self) -> bool:
        return any(SCENARIOS[s].slow for s in self.scenarios)

    @property
    def late(self) -> bool:
        return any(SCENARIOS[s].late for s in self.scenarios)


SCENARIOS: dict[str, Scenario] = {}
CHECKS: dict[str, Check] = {}
#: what makes further scenarios of one as it registers (`derive`)
_DERIVERS: list[Callable[[Scenario], Iterable[Scenario]]] = []


class RegistryError(ValueError):
    pass


class UnknownStep(RegistryError):
    """A check asked a recording for a step its scenario never declares: a bug of the suite (a typo), not a step
    the server kept the scenario from reaching (that one is NotAssessed)."""


class Step(str):
    """A step label shared by a scenario and its checks (`conformance.vocab.steps`); checks that use one are
    validated at collection against their scenarios' declared steps. A family of labels is one pattern ending in
    `*` (`Step("sse-*")`), and `.of(part)` names one member (`sse-plain_reply`)."""

    def of(self, part: object) -> "Step":
        if not self.endswith("*"):
            raise RegistryError(f"step {self!r} is not a family (a pattern ending in '*')")
        return Step(f"{self[:-1]}{part}")

    def names(self, label: str) -> bool:
        """Whether `label` is this step, or a member of this family."""
        return fnmatch.fnmatchcase(label, self)

    def members(self, exchanges: Iterable[Any]) -> list[tuple[int, Any]]:
        """(n, exchange) for each exchange labelled `of(n)` with a whole number n, in recorded order."""
        stem = self[:-1]
        numbered = ((ex.label[len(stem):], ex) for ex in exchanges if ex.label.startswith(stem))
        return [(int(n), ex) for n, ex in numbered if n.isascii() and n.isdigit()]


def unknown_step(scenario: str, label: str) -> UnknownStep | None:
    """The error for asking `scenario`'s recording for `label`, or None when the label is declared (or the scenario
    declares no steps)."""
    scn = SCENARIOS.get(scenario)
    if scn is None or scn.steps is None or scn.declares(label):
        return None
    return UnknownStep(f"scenario {scenario} declares no step {label!r} (its steps: {', '.join(scn.steps)})")


def unknown_family(scenario: str, family: str) -> UnknownStep | None:
    """The error for asking `scenario`'s recording for a label family (a `Step` pattern or a prefix) that none of
    its declared steps could belong to, or None."""
    scn = SCENARIOS.get(scenario)
    if scn is None or scn.steps is None:
        return None
    stem = family[:-1] if family.endswith("*") else family
    if any(pattern.startswith(stem) or (pattern.endswith("*") and stem.startswith(pattern[:-1]))
           for pattern in scn.steps):
        return None
    return UnknownStep(f"scenario {scenario} declares no step of the family {family!r} "
                       f"(its steps: {', '.join(scn.steps)})")


def _summary(fn) -> str:
    """The docstring's first paragraph as one line (its first line alone cut most sentences mid-word)."""
    return " ".join(line.strip() for line in (fn.__doc__ or "").strip().split("\n\n")[0].splitlines())


def scenario(name: str, *, protocol: str | tuple[str, ...], needs=(), prompts=(), slow=False, deadline=90.0,
             timing=False, last=False, steps=None, imports=(), sweep=(), late=False):
    protocols = (protocol,) if isinstance(protocol, str) else tuple(protocol)
    if not protocols or not set(protocols) <= set(ENDPOINT_PROTOCOLS):
        raise RegistryError(f"scenario {name}: protocol {protocol!r} not among {ENDPOINT_PROTOCOLS}")

    def register(fn):
        if name in SCENARIOS and SCENARIOS[name].fn is not fn:
            raise RegistryError(f"scenario {name} registered twice")
        SCENARIOS[name] = Scenario(name, fn, protocols, tuple(needs), tuple(prompts), slow, deadline,
                                   _summary(fn), timing, last, None if steps is None else tuple(steps),
                                   tuple(imports), tuple(sweep), late)
        for make in _DERIVERS:
            _add_derived(make, SCENARIOS[name])
        return fn

    return register


def derive(make: Callable[[Scenario], Iterable[Scenario]]) -> None:
    """Registers the scenarios `make(scenario)` derives from each scenario: those registered so far, and each one as
    it registers (`versions`: a core scenario's HTTP/2 twin). So every scenario a run can record exists once the
    modules are imported, and nothing is registered while a run records: `SCENARIOS` never grows under a thread
    that reads it."""
    _DERIVERS.append(make)
    for scn in list(SCENARIOS.values()):
        _add_derived(make, scn)


def _add_derived(make: Callable[[Scenario], Iterable[Scenario]], scn: Scenario) -> None:
    for made in make(scn):
        SCENARIOS.setdefault(made.name, made)


def needed_scenarios(checks: Iterable[Check]) -> set[str]:
    """The scenarios a run of `checks` records: those they name, and the sweep scenarios of the requirements their
    checks over every exchange judge (on a protocol of the scenario's: one of several sends only what such checks
    read, `swept`)."""
    checks = list(checks)
    every = [c for c in checks if c.every]
    return {s for c in checks for s in c.scenarios} | {
        s.name for s in SCENARIOS.values() if s.sweep and any(
            set(c.requirements) & set(s.sweep) and set(s.protocols) & set(c.every) for c in every)}


def swept(scenario: Scenario, checks: Iterable[Check]) -> tuple[str, ...]:
    """The protocols of a sweep scenario that the run's checks over every exchange judge its requirements on."""
    judged = {p for c in checks if c.every and set(c.requirements) & set(scenario.sweep) for p in c.every}
    return tuple(p for p in scenario.protocols if p in judged)


def surface_module(module: str) -> str:
    """`conformance.checks.mcp.refusals` -> `conformance.checks.mcp`: a surface split into one module per catalog
    section keeps the check ids `<surface>.<name>` that reports, baselines and tests use."""
    parts = module.split(".")
    if parts[:2] == ["conformance", "checks"] and len(parts) > 3:
        return ".".join(parts[:3])
    return module


def check(*requirements: str, scenarios: list[str] | tuple[str, ...], name: str | None = None,
          supplementary: bool = False, doc: str | None = None, every: tuple[str, ...] = ()):
    """Register a check function. `name` (default: the function's) makes the id `<module>.<name>`; `doc` replaces
    the docstring (a check built by a factory); `supplementary`: its failure fails the requirement, its pass alone
    never satisfies it; `every` (protocols, with `scenarios=[]`): the function takes the list of every recording
    the run made and judges each exchange of those protocols (`conformance.checks.every`)."""
    if every and scenarios:
        raise RegistryError("a check over every exchange names no scenario")
    if not requirements:
        raise RegistryError("a check must name at least one requirement")

    def register(fn):
        if doc is not None:
            fn.__doc__ = doc
        surface = surface_module(fn.__module__)
        check_id = f"{surface.rsplit('.', 1)[-1]}.{name or fn.__name__}"
        if check_id in CHECKS and CHECKS[check_id].fn is not fn:
            raise RegistryError(f"check {check_id} registered twice")
        CHECKS[check_id] = Check(check_id, fn, tuple(requirements), tuple(scenarios), _summary(fn), surface,
                                 supplementary, tuple(every))
        return fn

    return register


def rule(make: Callable[[Any], Callable[..., Any]], over: Iterable[Any], *, requirements: Any, scenarios: Any,
         name: Any = None, doc: Any = None, supplementary: Any = False, every: Any = ()) -> list[Callable[..., Any]]:
    """One rule applied over several parameters: for each `param` of `over`, `make(param)` builds a check function
    and registers it as by `@check`. `requirements` (one id or several), `scenarios` (one name or several), `name`,
    `doc`, `supplementary` and `every` are values or functions of the parameter. The check id is `<module>.<name>` (default
    name: the built function's `__name__`).

        rule(lambda scn: lambda rec: judge(rec.get(steps.CALL)), over=["access.invoke", "access.agui"],
             requirements="AUTH-KEY-001", scenarios=lambda scn: [scn],
             name=lambda scn: f"api_key_accepted_{scn.split('.')[-1]}")
    """
    def value(x: Any, param: Any) -> Any:
        return x(param) if callable(x) else x

    made = []
    for param in over:
        fn = make(param)
        text = value(doc, param)
        if text:
            fn.__doc__ = text
        reqs, scns = value(requirements, param), value(scenarios, param)
        reqs = (reqs,) if isinstance(reqs, str) else tuple(reqs)
        scns = [scns] if isinstance(scns, str) else list(scns)
        check(*reqs, scenarios=scns, name=value(name, param) if name is not None else fn.__name__,
              supplementary=bool(value(supplementary, param)), every=tuple(value(every, param)))(fn)
        made.append(fn)
    return made


_loaded = False


def load_scenarios() -> None:
    """Import every module of conformance.scenarios (a check module never imports them itself)."""
    pkg = importlib.import_module("conformance.scenarios")
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"conformance.scenarios.{info.name}")


def load_all() -> dict[str, Check]:
    """Import every module of conformance.scenarios and conformance.checks. `validate()` (run by the project's own
    tests, tests/runner/test_layout.py) proves what they register is consistent; a run need not pay for it again."""
    global _loaded
    if not _loaded:
        for pkg_name in ("conformance.scenarios", "conformance.checks"):
            pkg = importlib.import_module(pkg_name)
            for info in pkgutil.iter_modules(pkg.__path__):
                importlib.import_module(f"{pkg_name}.{info.name}")
        _register_exchange_rules()
        _loaded = True
    return CHECKS


def _register_exchange_rules() -> None:
    """One check per requirement with exchange rules (`exchange_rules`), over every exchange of the run: registered
    once every check module has registered its rules, as extra evidence (its failure fails the requirement, its
    pass alone never satisfies it). Their ids read `every.<requirement>`."""
    from conformance import exchange_rules

    def made(rid: str) -> Callable[..., Any]:
        fn = exchange_rules.over_every_exchange(rid)
        fn.__module__ = "conformance.checks.every"
        return fn

    rule(made, over=exchange_rules.requirements(), requirements=lambda rid: rid, scenarios=[],
         every=exchange_rules.protocols_of, supplementary=True, name=lambda rid: rid.lower().replace("-", "_"))


def validate() -> None:
    """A check naming an unknown requirement or scenario, or using a step (`Step`) that none of its scenarios
    declares, is an error at collection."""
    reqs = catalog.load()
    problems = []
    for c in CHECKS.values():
        for r in c.requirements:
            if r not in reqs:
                problems.append(f"check {c.id} names unknown requirement {r}")
            elif not reqs[r].testable:
                problems.append(f"check {c.id} names {r}, which is UNSPECIFIED (nothing to judge)")
        for s in c.scenarios:
            if s not in SCENARIOS:
                problems.append(f"check {c.id} names unknown scenario {s}")
        declaring = [SCENARIOS[s] for s in c.scenarios if s in SCENARIOS and SCENARIOS[s].steps is not None]
        for label in steps_used(c.fn) if declaring else ():
            if not any(scn.declares(label) for scn in declaring):
                problems.append(f"check {c.id} reads step {label!r}, which none of {c.scenarios} declares")
    if problems:
        raise RegistryError("; ".join(problems))


def steps_used(fn: Callable[..., Any]) -> set[str]:
    """The `Step` labels a check function refers to, found statically: names of its code (and nested code, and
    functions it wraps via `__wrapped__`) that resolve to a `Step` in its globals or in a module it reads."""
    found: set[str] = set()
    seen: set[int] = set()

    def visit(f) -> None:
        if id(f) in seen or not hasattr(f, "__code__"):
            return
        seen.add(id(f))
        g = dict(getattr(f, "__globals__", {}))
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                g[name] = cell.cell_contents
            except ValueError:
                continue
        modules = [v for v in g.values() if isinstance(v, types.ModuleType)]
        codes = [f.__code__]
        while codes:
            code = codes.pop()
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            for name in code.co_names:
                for value in [g.get(name)] + [getattr(m, name, None) for m in modules]:
                    if isinstance(value, Step):
                        found.add(str(value))
                    elif _is_check_helper(value):
                        visit(value)
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, Step):
                found.add(str(value))
            elif isinstance(value, (tuple, list)):
                found.update(str(v) for v in value if isinstance(v, Step))
            elif callable(value):
                visit(value)
        if hasattr(f, "__wrapped__"):
            visit(f.__wrapped__)

    visit(fn)
    return found


def _is_check_helper(value: Any) -> bool:
    """A plain function of a check module (a helper that reads steps for the check calling it)."""
    return isinstance(value, types.FunctionType) and (value.__module__ or "").startswith("conformance.checks.")


def coverage() -> dict[str, list[str]]:
    """requirement id -> ids of the checks that cover it (empty list: uncovered)."""
    load_all()
    cov: dict[str, list[str]] = {rid: [] for rid in catalog.load()}
    for c in CHECKS.values():
        for r in c.requirements:
            cov[r].append(c.id)
    return cov
