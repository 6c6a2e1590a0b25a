"""The pytest plugin: options (conformance.options), the run session, outcomes, and the reports.

Each check is one pytest item (conformance/test_suite.py). The session records
every scenario the selected checks need in the background as soon as
collection is over, so the items mostly wait for recordings that are already
there. Verdict and exit status are documented in docs/cli.md.

In a conformance run pytest's own terminal output is replaced by
conformance.reporting.terminal (unless -v), junit.xml is ours (one test case
per requirement), and report.html is pytest-html with our page on top.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from conformance import catalog, engine, judging, options, registry, report, versions
from conformance.reporting import decorate, html as html_report, junit, markdown, terminal
from conformance.target import FACTS, Profile, Target, env_or, from_server_facts

LEVEL_RANK = {"MUST": 0, "SHOULD": 1, "MAY": 2}
SIGNAL_EXIT = {signal.SIGINT: options.ExitStatus.SIGINT, signal.SIGTERM: options.ExitStatus.SIGTERM}
REPORT_FILES = ("report.json", "report.html", "report.md", "junit.xml")


class ConformanceWarning(UserWarning):
    """A SHOULD requirement failed: the run warns, it does not fail."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The options of conformance.options (the table `conformance run` reads too), each as `conf_<name>`."""
    group = parser.getgroup("conformance", "Agent Invocation Service conformance")
    for option in options.PYTEST_OPTIONS:
        group.addoption(option.flag, dest=option.pytest_dest, **option.argparse_kwargs())


def _config_getter(config: pytest.Config) -> Callable[[str], Any]:
    return lambda name: config.getoption(options.BY_NAME[name].pytest_dest, None)


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
        pytest.exit("the conformance suite records each scenario once and shares it between checks; "
                    "use --concurrency N instead of pytest-xdist's -n", returncode=2)
    config.option.conf_report_dir = config.getoption("conf_report_dir") or options.DEFAULT_REPORT_DIR
    problem = options.problem(_config_getter(config))
    if problem:
        pytest.exit(problem, returncode=2)
    _stop_assertion_rewriting()
    out = Path(config.getoption("conf_report_dir"))
    config._conformance_report_dir = out
    config._conformance_started = time.monotonic()
    config._conformance_interrupt = None
    if hasattr(config.option, "htmlpath") and not config.option.htmlpath:
        config.option.htmlpath = str(out / "report.html")
        config.option.self_contained_html = True
    config._conformance_terminal = terminal.Terminal(config, sys.stdout)
    config.pluginmanager.register(config._conformance_terminal, "conformance-terminal")
    if config.option.verbose <= 0:
        config.pluginmanager.set_blocked("terminalreporter")   # ours replaces pytest's progress and summary
    _install_signal_handlers(config)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """pytest-metadata's Environment table (paths, plugins, CI variables) is not part of the report:
    emptied before pytest-html reads it at its session start."""
    if not hasattr(session.config, "_conformance_report_dir"):
        return
    try:
        from pytest_metadata.plugin import metadata_key
        session.config.stash[metadata_key].clear()
    except (ImportError, KeyError):
        pass


def _stop_assertion_rewriting() -> None:
    """Scenarios import modules lazily from worker threads; pytest's rewriter parses them with `ast`,
    which is not thread-safe on CPython 3.11 ("AST constructor recursion depth mismatch"). Checks carry
    their own messages, so a conformance run loses nothing without it."""
    from _pytest.assertion.rewrite import AssertionRewritingHook
    sys.meta_path[:] = [h for h in sys.meta_path if not isinstance(h, AssertionRewritingHook)]


# -- interruption ----------------------------------------------------------------------
def _install_signal_handlers(config: pytest.Config) -> None:
    """SIGINT/SIGTERM end the run quickly with verdict error; a second signal leaves at once."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = {s: signal.getsignal(s) for s in SIGNAL_EXIT}

    def on_signal(signum: int, frame) -> None:
        if config._conformance_interrupt is not None:
            os._exit(SIGNAL_EXIT.get(signum, 2))
        config._conformance_interrupt = (signal.Signals(signum).name, signum,
                                         time.monotonic() - config._conformance_started)
        if not getattr(config, "_conformance_finishing", False):
            raise KeyboardInterrupt

    for s in SIGNAL_EXIT:
        signal.signal(s, on_signal)
    config._conformance_previous_signals = previous


def _restore_signal_handlers(config: pytest.Config) -> None:
    for s, handler in getattr(config, "_conformance_previous_signals", {}).items():
        signal.signal(s, handler)


def interrupted_reason(config: pytest.Config) -> str | None:
    state = getattr(config, "_conformance_interrupt", None)
    if state is None:
        return None
    name, _, after = state
    return f"interrupted after {after:.0f} s ({name})"


# -- the certification run ---------------------------------------------------------------------------
class Certification:
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
        self.target = Target(base_url=str(self._opt("base_url") or "(embedded reference server, not started)"),
                             agent_id=self._opt("agent_id"), embedded=not self._opt("base_url"))

    def start(self) -> None:
        try:
            self.target = self._target()
            self.baseline = report.Baseline.load(self.config.getoption("conf_baseline"))
        except Exception as exc:  # e.g. the embedded server did not start: verdict error, no traceback
            self.error = f"could not start: {exc}"
            return
        self.config._conformance_terminal.started(self)
        self.session = engine.Session(self.target, self.checks, concurrency=self.config.getoption("conf_concurrency"))
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
                      thorough=bool(self.config.getoption("conf_thorough")),
                      rate_limit=self.config.getoption("conf_rate_limit"),
                      rate_probe_max=self.config.getoption("conf_rate_probe_max"),
                      http2=not self.config.getoption("conf_no_http2"))
        if facts["base_url"] is None:
            from conformance.embedded import EmbeddedServer
            self.server = EmbeddedServer()
            return from_server_facts(self.server.start(), **common)
        return Target(**{k: v for k, v in facts.items() if v is not None}, **common)

    def close(self) -> None:
        if self.session:
            self.session.close()
            self.session_stats = self.session.stats()
        if self.server:
            self.server.stop()
            self.server = None

    def redact(self, text: str) -> str:
        return self.session.redactor.redact(text) if self.session else text

    @property
    def report_dir(self) -> Path:
        return getattr(self.config, "_conformance_report_dir", Path("reports"))

    def finish(self, interrupted: str | None = None) -> dict[str, Any]:
        if interrupted:
            self.close()          # stop the recorders now: an interrupted run ends quickly
        results = list(self.session.results.values()) if self.session else []
        for c in self.checks:
            if self.session and c.id not in self.session.results:
                self.not_run.setdefault(c.id, "interrupted before it ran" if interrupted else "deselected")
        stats = getattr(self, "session_stats", None) or (self.session.stats() if self.session else {})
        rep = report.build(
            target=self.target.public(), results=results, coverage=registry.coverage(), not_run=self.not_run,
            baseline=self.baseline, stats=stats, error=interrupted or self.error,
            options={"protocols": self.config.getoption("conf_protocols"), "level": self.config.getoption("conf_level"),
                     "depth": self.config.getoption("conf_depth"), "seed": self.target.seed,
                     "thorough": self.target.thorough, "rate_probe_max": self.target.rate_probe_max,
                     "seed_source": self.target.seed_source,
                     "requirements": self.config.getoption("conf_requirements"),
                     "run_tag": self.target.run_tag, "no_http2": not self.target.http2},
            http_versions=versions.summary(self.session, [r.check for r in results]) if self.session else None)
        rep = report.only_requested(rep, self.config.getoption("conf_requirements"), ran=len(results),
                              error=interrupted or self.error)
        from conformance import recording
        if self.session:
            rep["started_at"] = report.utc_timestamp(self.session.began)
        rep["recording"] = recording.keep(self.session, self.report_dir, checks=self.checks, report=rep,
                                          error=interrupted or self.error)
        if interrupted:
            rep["interrupted"] = interrupted
        rep["reports"] = {name: str(self.report_dir / name) for name in REPORT_FILES}
        self.report = target_first(decorate(rep))
        report.write_json(self.report, self.report_dir, self.redact)
        junit.write(self.report, self.report_dir / "junit.xml", self.redact)
        markdown.write(self.report, self.report_dir / "report.md", self.redact)
        return self.report


def target_first(rep: dict[str, Any]) -> dict[str, Any]:
    from conformance.reporting import target_label
    target = dict(rep.get("target") or {})
    target["label"] = target_label(target)
    return {"target": target, **{k: v for k, v in rep.items() if k != "target"}}


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if i.get_closest_marker("conformance_check")]
    if not ours:
        return
    checks = registry.load_all()
    protocols = config.getoption("conf_protocols")
    wanted = {p.strip() for p in protocols.split(",") if p.strip()} if protocols else None
    if wanted and not wanted <= set(registry.ENDPOINT_PROTOCOLS):
        raise pytest.UsageError(f"--protocols: unknown {sorted(wanted - set(registry.ENDPOINT_PROTOCOLS))}")
    chosen, skipped = engine.select(checks, level=config.getoption("conf_level"), protocols=wanted)
    requirement_ids = config.getoption("conf_requirements")
    if requirement_ids:
        ids = {i.strip() for i in requirement_ids.split(",") if i.strip()}
        chosen = [c for c in chosen if ids & set(c.requirements)]
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
    run = Certification(config, checks, skipped)
    config._conformance_run = run
    run.start()
    yield run
    run.close()


def judge(run: Certification, check_id: str, item_properties: list) -> None:
    """Assess one check and turn its outcome into the pytest outcome the contract implies."""
    check = registry.CHECKS[check_id]
    reqs = catalog.load()
    levels = sorted({reqs[r].level for r in check.requirements}, key=LEVEL_RANK.get)
    item_properties += [("requirements", ",".join(check.requirements)), ("levels", ",".join(levels))]
    if run.error:   # the run stopped before judging: its reason is reported once, not once per check
        item_properties.append(("status", "not_assessed"))
        pytest.skip(report.NOT_JUDGED)
    result = run.session.results[check.id] = judging.assess(run.session, check)
    item_properties.append(("status", result.status))
    if result.status == "not_assessed":
        pytest.skip(f"not assessed: {result.message}")
    if result.status == "blocked":
        pytest.skip(f"blocked by {result.blocked_by}: {result.message}")
    if result.status in ("failed", "error"):
        text = _failure_text(result, levels)
        if all(r in run.baseline.known for r in check.requirements):
            pytest.xfail(f"baselined: {text}")
        if levels[0] == "MUST" or result.status == "error":
            pytest.fail(text, pytrace=False)
        warnings.warn(ConformanceWarning(text))


def _failure_text(result: judging.CheckResult, levels: list[str]) -> str:
    parts = [f"[{'/'.join(levels)} {', '.join(result.requirements)}] {result.message}"]
    for ev in result.evidence[:2]:
        parts.append(f"--- {ev['scenario']} / {ev['label']} ---\n{ev['transcript'][:1500]}")
    return "\n".join(parts)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not hasattr(config, "_conformance_report_dir"):
        return
    config._conformance_finishing = True
    interrupted = interrupted_reason(config)
    run: Certification | None = getattr(config, "_conformance_run", None)
    if run is None and (interrupted or getattr(config, "_conformance_selection", None) is not None) \
            and not config.option.collectonly:
        checks, skipped = getattr(config, "_conformance_selection", ([], {}))
        run = config._conformance_run = Certification(config, checks, skipped)   # nothing ran: still a report, never a pass
        run.error = run.error or "no check ran"
    if run is None:
        if not config.option.collectonly:
            session.exitstatus = 2
        return
    rep = run.finish(interrupted)
    code = report.exit_code(rep, require_complete=bool(config.getoption("conf_require_complete")))
    if interrupted:
        code = SIGNAL_EXIT[config._conformance_interrupt[1]]
    session.exitstatus = code
    config._conformance_exit = code


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "_conformance_report_dir"):
        _restore_signal_handlers(config)
        run = getattr(config, "_conformance_run", None)
        if run is not None:
            run.close()


def pytest_html_results_summary(prefix, summary, postfix, session) -> None:
    run: Certification | None = getattr(session.config, "_conformance_run", None)
    if run is not None and run.report is not None:
        prefix.append(run.redact(html_report.page(run.report)))


def pytest_html_report_title(report) -> None:
    report.title = "Agent Invocation Service conformance"
