"""The pytest plugin: options (conformance.options), one pytest item per check, outcomes, and the reports.

The run itself is a `conformance.certification.Certification`: `conformance run` starts it before pytest does and
hands it over (`HANDOVER`); under plain pytest the plugin starts it when collection is over. Either way the
session records every scenario the selected checks need in the background, so the items mostly wait for
recordings that are already there. Verdict and exit status are documented in docs/cli.md.

In a conformance run pytest's own terminal output is replaced by
conformance.reporting.terminal (unless -v), junit.xml is ours (one test case
per requirement), and so is report.html (conformance.reporting.html), with pytest's
own errors of the suite, if any, at its end.
"""
from __future__ import annotations

import sys
import warnings
from typing import Any, Callable

import pytest

from conformance import catalog, judging, options, registry, report
from conformance.certification import SIGNAL_EXIT, Certification, target_first  # noqa: F401 (re-exported)
from conformance.reporting import html as html_report, terminal

LEVEL_RANK = {"MUST": 0, "SHOULD": 1, "MAY": 2}
#: the key under which `conformance run` hands its already started Certification to the plugin (config.stash)
HANDOVER = pytest.StashKey[Certification]()


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
    if config.getoption("conf_report_dir") or HANDOVER in config.stash:
        return True
    return bool(config.getoption("pyargs", False)) and any(
        str(a).split("::")[0].startswith("conformance") for a in config.args)


def _run(config: pytest.Config) -> Certification | None:
    return getattr(config, "_conformance_run", None)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance_check: one check of the conformance suite")
    if not _is_conformance_run(config):
        return
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        pytest.exit("the conformance suite records each scenario once and shares it between checks; "
                    "use --concurrency N instead of pytest-xdist's -n", returncode=2)
    config.option.conf_report_dir = config.getoption("conf_report_dir") or options.DEFAULT_REPORT_DIR
    run = config.stash.get(HANDOVER, None)
    if run is None:
        problem = options.problem(_config_getter(config))
        if problem:
            pytest.exit(problem, returncode=2)
        run = Certification(_config_getter(config))
        run.launch_server()      # it boots while pytest collects
    _stop_assertion_rewriting()
    config._conformance_run = run
    config._conformance_report_dir = run.report_dir
    config._conformance_suite_errors = html_report.SuiteErrors()   # pytest's errors of the suite, for report.html
    config.pluginmanager.register(config._conformance_suite_errors, "conformance-suite-errors")
    config._conformance_terminal = terminal.Terminal(config, sys.stdout)
    config.pluginmanager.register(config._conformance_terminal, "conformance-terminal")
    if config.option.verbose <= 0:
        config.pluginmanager.set_blocked("terminalreporter")   # ours replaces pytest's progress and summary
    run.raising = False              # a signal before the collection is kept, and ends the run there
    run.install_signal_handlers()
    if run.session is not None or run.error is not None:
        config._conformance_terminal.started(run)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """pytest-metadata's Environment table (paths, plugins, CI variables) is not part of any report: emptied
    before a plugin reads it at its session start (pytest-html, when a user asks for its page with --html)."""
    if _run(session.config) is None:
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


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i in items if i.get_closest_marker("conformance_check")]
    run = _run(config)
    if not ours or run is None:
        return
    run.select()
    checks = registry.CHECKS
    chosen_ids = set() if run.interrupt else {c.id for c in run.checks}
    keep = [i for i in ours if i.callspec.params["check_id"] in chosen_ids]
    deselected = [i for i in ours if i.callspec.params["check_id"] not in chosen_ids]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    # slow scenarios' checks last: by then their recordings (started first) are done; the late scenarios' before
    # them; the checks over every exchange after all of them (they read every recording, and what the scenarios'
    # checks failed on)
    def order(item: pytest.Item) -> tuple[bool, bool, bool]:
        c = checks[item.callspec.params["check_id"]]
        return bool(c.every), c.slow, c.late
    keep.sort(key=order)
    items[:] = [i for i in items if i not in ours] + keep
    config._conformance_selection = True
    # from here pytest's session is running: a signal interrupts it, and its end writes the reports
    run.raising = True


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under plain pytest the run starts here, as soon as the selection is known."""
    run = _run(session.config)
    if run is None or not getattr(session.config, "_conformance_selection", False) or session.config.option.collectonly:
        return
    if run.session is None and run.error is None and run.interrupt is None:
        try:
            run.start()
        finally:
            session.config._conformance_terminal.started(run)


@pytest.fixture(scope="session")
def conformance_run(request: pytest.FixtureRequest):
    run = _run(request.config)
    if run is None:    # a test_suite item outside a conformance run (e.g. `pytest --pyargs conformance` with -k)
        run = request.config._conformance_run = Certification(_config_getter(request.config))
    run.start()
    yield run


def judge(run: Certification, check_id: str, item_properties: list) -> None:
    """Assess one check and turn its outcome into the pytest outcome the contract implies."""
    check = registry.CHECKS[check_id]
    reqs = catalog.load()
    levels = sorted({reqs[r].level for r in check.requirements}, key=LEVEL_RANK.get)
    item_properties += [("requirements", ",".join(check.requirements)), ("levels", ",".join(levels))]
    if run.error:   # the run stopped before judging: its reason is reported once, not once per check
        item_properties.append(("status", "not_assessed"))
        pytest.skip(report.NOT_JUDGED)
    result = run.assess(check)
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
    run = _run(config)
    if run is None:
        return
    run.raising = False
    if config.option.collectonly and run.interrupt is None:
        return
    if run.session is None and run.error is None:
        # nothing ran (interrupted before the run started, or no check selected): still a report, never a pass
        run.error = "no check ran"
    run.finish()
    errors = getattr(config, "_conformance_suite_errors", None)   # None: a run the session fixture started
    html_report.write(run.report, run.report_dir / "report.html", run.redact,
                      suite_errors=errors.errors if errors else ())
    session.exitstatus = config._conformance_exit = run.exit_code()


def pytest_unconfigure(config: pytest.Config) -> None:
    run = _run(config)
    if run is not None:
        run.restore_signal_handlers()
        run.close()
