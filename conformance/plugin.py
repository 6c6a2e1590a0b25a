"""The pytest plugin: options, the run session, outcomes, and the three reports.

Each check is one pytest item (conformance/test_suite.py). The session records
every scenario the selected checks need in the background as soon as
collection is over, so the items mostly wait for recordings that are already
there. Verdict and exit status follow shared/design/runner-contract.md.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from conformance import catalog, engine, registry, report
from conformance.target import FACTS, Profile, Target, env_or, from_server_facts

LEVEL_RANK = {"MUST": 0, "SHOULD": 1, "MAY": 2}


class ConformanceWarning(UserWarning):
    """A SHOULD requirement failed: the run warns, it does not fail."""


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance", "Agent Invocation Service conformance")
    for fact, (opt, env) in FACTS.items():
        g.addoption(opt, dest=f"conf_{fact}", default=None, metavar="VALUE", help=f"(env {env})")
    g.addoption("--protocols", dest="conf_protocols", default=None,
                help="any of invoke,agui,mcp,metadata (default all)")
    g.addoption("--level", dest="conf_level", default="may", choices=("must", "should", "may"),
                help="the lowest requirement level that is checked (default may)")
    g.addoption("--report-dir", dest="conf_report_dir", default=None, help="where the reports go (default reports/)")
    g.addoption("--baseline", dest="conf_baseline", default=None, help="file of known failing requirement ids")
    g.addoption("--require-complete", dest="conf_require_complete", action="store_true",
                help="exit 3 when the verdict is conformant-partial")
    g.addoption("--insecure", dest="conf_insecure", action="store_true", help="do not verify TLS certificates")
    g.addoption("--depth", dest="conf_depth", type=int, default=1,
                help="multiplies the examples of generated-input checks (cost grows with it)")
    g.addoption("--thorough", dest="conf_thorough", action="store_true",
                help="also run the slow checks (the ping repeating over two 15 s intervals: ~31 s)")
    g.addoption("--seed", dest="conf_seed", type=int, default=None, help="seed for generated inputs")
    g.addoption("--concurrency", dest="conf_concurrency", type=int, default=12,
                help="scenarios recorded at once (default 12)")


def _is_conformance_run(config: pytest.Config) -> bool:
    if config.getoption("conf_report_dir"):
        return True
    return bool(config.getoption("pyargs", False)) and any(
        str(a).split("::")[0].startswith("conformance") for a in config.args)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance_check: one check of the conformance suite")
    if not _is_conformance_run(config):
        return
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        raise pytest.UsageError("the conformance suite records each scenario once and shares it between checks; "
                                "use --concurrency N instead of pytest-xdist's -n")
    _stop_assertion_rewriting()
    out = Path(config.getoption("conf_report_dir") or "reports")
    out.mkdir(parents=True, exist_ok=True)
    config._conformance_report_dir = out
    if not getattr(config.option, "xmlpath", None):
        config.option.xmlpath = str(out / "junit.xml")
    if hasattr(config.option, "htmlpath") and not config.option.htmlpath:
        config.option.htmlpath = str(out / "report.html")
        config.option.self_contained_html = True


def _stop_assertion_rewriting() -> None:
    """Scenarios import modules lazily from worker threads; pytest's rewriter parses them with `ast`,
    which is not thread-safe on CPython 3.11 ("AST constructor recursion depth mismatch"). Checks carry
    their own messages, so a conformance run loses nothing without it."""
    from _pytest.assertion.rewrite import AssertionRewritingHook
    sys.meta_path[:] = [h for h in sys.meta_path if not isinstance(h, AssertionRewritingHook)]


# -- the run ---------------------------------------------------------------------------
class Run:
    """Options → target (starting the embedded server if no URL), session, results, report."""

    def __init__(self, config: pytest.Config, checks: list[registry.Check], not_run: dict[str, str]):
        self.config = config
        self.checks = checks
        self.not_run = dict(not_run)
        self.server = None
        self.session: engine.Session | None = None
        self.error: str | None = None
        self.report: dict[str, Any] | None = None
        self.baseline = report.Baseline()
        try:
            self.target = self._target()
            self.baseline = report.Baseline.load(config.getoption("conf_baseline"))
        except Exception as exc:  # bad options: verdict error, no traceback
            self.error = f"bad options: {exc}"
            self.target = Target(base_url=str(self._opt("base_url") or "embedded"))
            return
        self.session = engine.Session(self.target, checks, concurrency=config.getoption("conf_concurrency"))
        self.session.start()
        self.error = self.session.preflight_error

    def _opt(self, fact: str) -> Any:
        return env_or(self.config.getoption(f"conf_{fact}"), fact)

    def _target(self) -> Target:
        facts = {f: self._opt(f) for f in FACTS if f != "profile"}
        profile = Profile.load(self._opt("profile"))
        if profile.extra_data_field and not facts.get("extra_data_field"):
            facts["extra_data_field"] = profile.extra_data_field
        common = dict(profile=profile, insecure=bool(self.config.getoption("conf_insecure")),
                      depth=max(1, self.config.getoption("conf_depth")), seed=self.config.getoption("conf_seed"),
                      thorough=bool(self.config.getoption("conf_thorough")))
        if not facts["base_url"]:
            from conformance.embedded import EmbeddedServer
            self.server = EmbeddedServer()
            return from_server_facts(self.server.start(), **common)
        if not facts["agent_id"]:
            raise ValueError("--agent-id is required with --base-url")
        return Target(**{k: v for k, v in facts.items() if v is not None}, **common)

    def close(self) -> None:
        if self.session:
            self.session.close()
        if self.server:
            self.server.stop()

    def redact(self, text: str) -> str:
        return self.session.redactor.redact(text) if self.session else text

    def finish(self) -> dict[str, Any]:
        results = list(self.session.results.values()) if self.session else []
        for c in self.checks:
            if self.session and c.id not in self.session.results:
                self.not_run.setdefault(c.id, "deselected")
        self.report = report.build(
            target=self.target.public(), results=results, coverage=registry.coverage(), not_run=self.not_run,
            baseline=self.baseline, stats=self.session.stats() if self.session else {}, error=self.error,
            options={"protocols": self.config.getoption("conf_protocols"), "level": self.config.getoption("conf_level"),
                     "depth": self.config.getoption("conf_depth"), "run_tag": self.target.run_tag})
        out = getattr(self.config, "_conformance_report_dir", Path("reports"))
        report.write_json(self.report, out, self.redact)
        return self.report


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if i.get_closest_marker("conformance_check")]
    if not ours:
        return
    checks = registry.load_all()
    protocols = config.getoption("conf_protocols")
    wanted = set(protocols.split(",")) if protocols else None
    if wanted and not wanted <= set(registry.PROTOCOLS):
        raise pytest.UsageError(f"--protocols: unknown {sorted(wanted - set(registry.PROTOCOLS))}")
    chosen, skipped = engine.select(checks, level=config.getoption("conf_level"), protocols=wanted)
    chosen_ids = {c.id for c in chosen}
    keep = [i for i in ours if i.callspec.params["check_id"] in chosen_ids]
    deselected = [i for i in ours if i not in keep]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    # slow scenarios' checks last: by then their recordings (started first) are done
    keep.sort(key=lambda i: checks[i.callspec.params["check_id"]].slow)
    items[:] = [i for i in items if i not in ours] + keep
    config._conformance_selection = ([checks[i.callspec.params["check_id"]] for i in keep], skipped)


@pytest.fixture(scope="session")
def conformance_run(request: pytest.FixtureRequest):
    config = request.config
    checks, skipped = getattr(config, "_conformance_selection", ([], {}))
    run = Run(config, checks, skipped)
    config._conformance_run = run
    yield run
    run.close()


def judge(run: Run, check_id: str, item_properties: list) -> None:
    """Assess one check and turn its outcome into the pytest outcome the contract implies."""
    check = registry.CHECKS[check_id]
    reqs = catalog.load()
    levels = sorted({reqs[r].level for r in check.requirements}, key=LEVEL_RANK.get)
    item_properties += [("requirements", ",".join(check.requirements)), ("levels", ",".join(levels))]
    if run.error and not run.session:
        item_properties.append(("status", "error"))
        pytest.fail(run.error, pytrace=False)
    result = run.session.assess(check)
    item_properties.append(("status", result.status))
    if result.status == "not_assessed":
        pytest.skip(f"not assessed: {result.message}")
    if result.status in ("failed", "error"):
        text = _failure_text(result, levels)
        if all(r in run.baseline.known for r in check.requirements):
            pytest.xfail(f"baselined: {text}")
        if levels[0] == "MUST" or result.status == "error":
            pytest.fail(text, pytrace=False)
        warnings.warn(ConformanceWarning(text))


def _failure_text(result: engine.CheckResult, levels: list[str]) -> str:
    parts = [f"[{'/'.join(levels)} {', '.join(result.requirements)}] {result.message}"]
    for ev in result.evidence[:2]:
        parts.append(f"--- {ev['scenario']} / {ev['label']} ---\n{ev['transcript'][:1500]}")
    return "\n".join(parts)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run: Run | None = getattr(session.config, "_conformance_run", None)
    if run is None:
        if getattr(session.config, "_conformance_selection", None) is not None and not session.config.option.collectonly:
            session.exitstatus = 2   # checks were collected but none ran: never a pass
        return
    rep = run.finish()
    code = report.EXIT[rep["verdict"]]
    if rep["verdict"] == "conformant-partial" and session.config.getoption("conf_require_complete"):
        code = 3
    session.exitstatus = code


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    run: Run | None = getattr(config, "_conformance_run", None)
    if run is None or run.report is None:
        return
    terminalreporter.section("conformance")
    for line in report.summary_lines(run.report):
        terminalreporter.write_line(run.redact(line))


def pytest_html_results_summary(prefix, summary, postfix, session) -> None:
    run: Run | None = getattr(session.config, "_conformance_run", None)
    if run is not None and run.report is not None:
        prefix.append(run.redact(report.html_matrix(run.report)))


def pytest_html_report_title(report) -> None:
    report.title = "Agent Invocation Service conformance"
