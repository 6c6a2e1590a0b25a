"""`conformance run | serve | list | explain` (names fixed by the runner contract).

`run` has its own option parser: every option of the suite, grouped, with its
environment variable. A wrong option or file is one line on stderr naming the
option, exit 2, before anything starts. pytest runs underneath; its own options
are reachable only after `--` or inside `--pytest-args "…"`.
"""
from __future__ import annotations

import argparse
import difflib
import gc
import json
import logging
import os
import shlex
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Sequence

from pluggy import HookimplMarker

from conformance import __version__, options
from conformance.options import ExitStatus

pytest_hook = HookimplMarker("pytest")   # pytest.hookimpl, without importing pytest for list/explain/--version

USAGE = """usage: conformance {run,serve,list,explain,rejudge,compare,judge} [options]

  run              certify a server (no --base-url: the embedded reference server); `run --help` lists the options
  serve            run the reference server alone
  list             the requirement catalog with the checks that cover it
  explain ID       one requirement: its sentence, level, section, what is expected, checks, how to re-run it
  rejudge DIR      judge a run again from its recording, without the server: does its report.json follow from it?
  compare OLD NEW  two reports, requirement by requirement: regressions, fixes, newly (not) assessed
  judge CAPTURE    judge captured traffic (a HAR file: a browser's, Playwright's, mitmproxy's) by every rule that
                   reads an exchange
"""
LAST_FAILED_STATUSES = ("failed", "warning", "error")   # what --last-failed runs again
# A run keeps every exchange it recorded and makes many short-lived containers (parsed JSON, readings), as does the
# server answering it: at CPython's default (700 allocations) the cyclic collector ran thousands of times a run, about
# a twentieth of its CPU; almost everything is freed by reference counts anyway
GC_FIRST_THRESHOLD = 10_000
# and the middle generation every 50 young collections, not 10: each of its passes walked again the objects the run's
# recordings had added since the last, which the young passes had found alive (0.06 of the collector's 0.14 CPU-s)
GC_SECOND_THRESHOLD = 50
# pytest plugins installed beside the suite that a run uses none of (their imports were about a tenth of a run's)
UNUSED_PLUGINS = ("html", "html_fixtures", "metadata", "xdist", "xdist.looponfail", "timeout", "anyio",
                  "hypothesispytest")
COMMANDS = ("run", "serve", "list", "explain", "rejudge", "compare", "judge")


class UsageProblem(Exception):
    """A bad option or file: one line, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but an error is one line naming the option (no usage dump)."""

    def error(self, message: str):
        raise UsageProblem(message)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["run"], ["serve"]) and gc.get_threshold()[0] < GC_FIRST_THRESHOLD:
        gc.set_threshold(GC_FIRST_THRESHOLD, max(GC_SECOND_THRESHOLD, gc.get_threshold()[1]), gc.get_threshold()[2])
    if argv[:1] == ["run"] and not logging.getLogger().handlers:
        # the libraries the suite drives log what a run's own cancelling causes (the official MCP client, reading a
        # stream a Ctrl-C closed, logs a traceback): with no handler Python prints it on stderr; a run's findings
        # are in its reports, and what the suite itself cannot do is an error there
        logging.getLogger().addHandler(logging.NullHandler())
    try:
        return _dispatch(argv)
    except UsageProblem as exc:
        prog = f"conformance {argv[0]}" if argv and argv[0] in COMMANDS else "conformance"
        _err(f"{prog}: {exc}")
        return ExitStatus.ERROR
    except BrokenPipeError:        # `conformance list | head`: the reader left; that is fine
        _silence_stdout()
        return ExitStatus.OK
    except KeyboardInterrupt:
        _err("conformance: interrupted")
        return ExitStatus.SIGINT


def console() -> None:
    """The `conformance` command: `main()`, then the process ends as soon as its output is flushed, without
    waiting for what a finished run leaves behind (idle recorder threads, the interpreter's teardown)."""
    code = main()
    if "conformance.embedded" in sys.modules:    # the embedded server ends while the reports are written
        sys.modules["conformance.embedded"].wait_stopped()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(int(code))


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return ExitStatus.OK if argv else ExitStatus.ERROR
    if argv[0] == "--version":
        print(version_line())
        return ExitStatus.OK
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run(rest)
    if command == "serve":
        from conformance.server import serve_main
        return serve_main(rest)
    if command == "list":
        return list_catalog(rest)
    if command == "explain":
        return explain(rest)
    if command == "rejudge":
        return rejudge(rest)
    if command == "compare":
        return compare(rest)
    if command == "judge":
        return judge(rest)
    close = difflib.get_close_matches(command, COMMANDS, n=1)
    raise UsageProblem(f"unknown command {command!r}" + (f" (did you mean {close[0]}?)" if close else "")
                       + f"; commands: {', '.join(COMMANDS)}")


def version_line() -> str:
    """'conformance 0.1.0 (spec revision 2026-11-22, catalog sha256:…)': the identity every report carries."""
    from conformance.report import suite_identity

    suite = suite_identity()
    return f"conformance {suite['version']} (spec revision {suite['spec_revision']}, catalog {suite['catalog_digest']})"


def _err(line: str) -> None:
    print(line, file=sys.stderr)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# -- run ------------------------------------------------------------------------------------
RUN_EPILOG = """\
exit status: 0 conformant or conformant-partial (also non-conformant when --baseline lists every
failed MUST), 1 non-conformant, 2 error (bad option or file, target unreachable, report directory
not writable, nothing ran), 3 conformant-partial with --require-complete, 130 interrupted by
SIGINT (Ctrl-C), 143 by SIGTERM. docs/cli.md tells each, and what a run costs.

pytest's own options: after `--` (conformance run --base-url … -- -x) or --pytest-args "…".
"""


def run_parser() -> OneLineParser:
    """The options of conformance.options (the table the pytest plugin reads too), grouped, then run's own."""
    p = OneLineParser(prog="conformance run", allow_abbrev=False, epilog=RUN_EPILOG,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      description="Certify a server against the Agent Invocation Service spec.")
    groups = {g: p.add_argument_group(t) for g, t in options.GROUP_TITLES.items()}
    for option in options.OPTIONS:
        groups[option.group].add_argument(option.flag, dest=option.name, **option.argparse_kwargs())
    out = groups["reports"]
    out.add_argument("-v", "--verbose", action="count", default=0,
                     help="also show pytest's own progress and detail")
    out.add_argument("-q", "--quiet", action="count", default=0, help="print the verdict line only")
    p.add_argument("--pytest-args", dest="pytest_args", metavar='"ARGS"', default="",
                   help="options passed to pytest as they are (quoted as one argument)")
    p.add_argument("--version", action="version", version=__version__)
    return p


def parse_run(args: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The suite's options, and what goes to pytest untouched (after `--`)."""
    extra: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, extra = args[:at], args[at + 1:]
    parser = run_parser()
    opts, unknown = parser.parse_known_args(args)
    if unknown:
        raise UsageProblem(_unknown_option(unknown[0], parser))
    try:
        extra = shlex.split(opts.pytest_args) + extra
    except ValueError as exc:
        raise UsageProblem(f"--pytest-args: {exc}") from None
    return opts, extra


def _unknown_option(arg: str, parser: argparse.ArgumentParser) -> str:
    if not arg.startswith("-"):
        return f"unexpected argument {arg!r}: `conformance run` takes options only (see --help)"
    name = arg.split("=", 1)[0]
    known = [s for a in parser._actions for s in a.option_strings]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (f"unknown option {name}{hint}; `conformance run --help` lists the options, "
            "pytest's own go after --")


def last_failed(report_dir: str) -> list[str]:
    """Requirement ids that failed, warned or erred in the last report.json of report_dir."""
    path = Path(report_dir) / "report.json"
    if not path.is_file():
        raise UsageProblem(f"--last-failed: no report.json in {report_dir} (run once without --last-failed first)")
    try:
        rows = json.loads(path.read_text())["requirements"]
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise UsageProblem(f"--last-failed: {path} is not a conformance report ({type(exc).__name__})") from None
    return [r["id"] for r in rows if r.get("status") in LAST_FAILED_STATUSES]


def pytest_args_for(opts: argparse.Namespace, extra: list[str]) -> list[str]:
    """pytest's own arguments; the suite's options reach the plugin as values (OptionHandover), not as argv."""
    args = ["--pyargs", "conformance.test_suite", "-c", os.devnull, "--rootdir", os.getcwd(),
            "-p", "no:cacheprovider", "-p", "no:schemathesis",    # its pytest plugin imports it: ~0.4 CPU-s unused
            "--assert=plain", "-W", "ignore::DeprecationWarning",
            # a full garbage collection at the end, to report exceptions nothing raised: a run has none to report
            "-p", "no:unraisableexception", "-p", "no:threadexception",
            # no check logs: capturing logs around each of a run's checks cost more than some checks themselves
            "-p", "no:logging",
            # a check prints nothing: swapping sys.stdout around each is enough (fd capture read a file per phase)
            "--capture=sys",
            "--tb=short" if opts.verbose else "--tb=no"]
    if not extra:   # pytest's own options of the user's (--html, -n, --timeout) need the plugins installed beside it
        args += [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    return args + ["-v"] * opts.verbose + ["-q"] * opts.quiet + extra


class OptionHandover:
    """The bridge to pytest: puts the values `run` parsed where the plugin reads them (before it configures), hands
    over the run `run` already started (`plugin.HANDOVER`), and reads back the exit status the plugin chose before
    pytest's own codes can blur it."""
    code: int | None = None

    def __init__(self, opts: argparse.Namespace, started: Any = None):
        # only what was given: an option repeated after `--` still reaches the plugin when `run` left it unset
        self.values = {o.pytest_dest: getattr(opts, o.name) for o in options.PYTEST_OPTIONS
                       if getattr(opts, o.name) != o.unset}
        self.started = started

    @pytest_hook(tryfirst=True)
    def pytest_cmdline_main(self, config) -> None:
        for dest, value in self.values.items():
            setattr(config.option, dest, value)
        if self.started is not None:
            from conformance.plugin import HANDOVER
            config.stash[HANDOVER] = self.started

    def pytest_unconfigure(self, config) -> None:
        self.code = getattr(config, "_conformance_exit", None)


def _names_an_option(extra: list[str]) -> bool:
    """Whether pytest's own arguments (after `--`) give one of the suite's options: then the plugin starts the run."""
    flags = {o.flag for o in options.OPTIONS}
    return any(a.split("=", 1)[0] in flags for a in extra)


def start_early(opts: argparse.Namespace) -> Any:
    """The run, started before pytest is even imported: the embedded server boots in its own process while the
    checks load, and the recorders start (the slowest scenario first) as soon as the target is known. A signal
    meanwhile is kept by the run: pytest then only writes its reports."""
    kept: list[tuple[str, int, float]] = []
    began = time.monotonic()
    previous = {s: signal.signal(s, lambda n, f: kept.append((signal.Signals(n).name, n, time.monotonic() - began)))
                for s in (signal.SIGINT, signal.SIGTERM)}   # while the run's own handlers are not in place yet
    try:
        from conformance.embedded import EmbeddedServer
        from conformance.target import env_or
        server = EmbeddedServer() if env_or(opts.base_url, "base_url") is None else None
        if server is not None:
            server.launch()     # it boots while the suite loads
        from conformance.certification import Certification
        run = Certification(lambda name: getattr(opts, name, None), server=server)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    run.install_signal_handlers()
    run.interrupt = kept[0] if kept else None
    try:
        if run.interrupt is None:
            run.start()
    except KeyboardInterrupt:
        pass
    run.raising = False     # until the plugin takes the run over, a signal is kept, and pytest then reports it
    return run


def run(args: list[str]) -> int:
    if args and args[0] in ("-h", "--help"):
        run_parser().print_help()
        return ExitStatus.OK
    opts, extra = parse_run(args)
    opts.report_dir = opts.report_dir or options.DEFAULT_REPORT_DIR
    if opts.last_failed:
        ids = last_failed(opts.report_dir)
        if ids:
            opts.requirements = ",".join(sorted(set(ids) | set((opts.requirements or "").split(",")) - {""}))
        else:
            print(f"--last-failed: nothing failed in {Path(opts.report_dir) / 'report.json'}; running every check",
                  file=sys.stderr)
    problem = options.problem(lambda name: getattr(opts, name, None))
    if problem:
        raise UsageProblem(problem)
    started = None if _names_an_option(extra) else start_early(opts)

    import pytest

    # what is loaded by now lives as long as the process: the collector need not walk it again on each full pass
    # over a heap the run's recordings keep growing (once per process: a program that runs the suite again and
    # again would keep each run's uncollected garbage forever)
    if gc.get_freeze_count() == 0:
        gc.freeze()
    handover = OptionHandover(opts, started)
    rc = int(pytest.main(pytest_args_for(opts, extra), plugins=[handover]))
    if handover.code is not None:
        return handover.code
    if started is not None and started.interrupt is not None:
        return int(started.exit_code())
    if rc in (ExitStatus.OK, ExitStatus.SIGINT, ExitStatus.SIGTERM):
        return rc
    return ExitStatus.ERROR    # pytest refused its own options or crashed: an error, never a verdict


# -- list and explain -------------------------------------------------------------------------
def catalog_rows() -> list[dict[str, Any]]:
    from conformance import catalog, coverage, exchange_rules, registry, report, versions

    from conformance.vocab import inputs, sequences, silences
    cov = registry.coverage()
    ops, ruled = report.requirement_operations(), set(exchange_rules.requirements())
    return [{**r.as_dict(), "needs_agent": list(r.agent_needs), "checks": cov.get(r.id, []),
             "scope": {d: list(v) for d, v in coverage.scope(ops.get(r.id, ()), True, r.id in ruled, r.id).items()},
             "every_exchange": r.id in ruled,
             "input_classes": inputs.applies_to(r.id), "histories": sequences.histories_for(r.id),
             "silences": silences.applies_to(r.id), "silences_left_out": silences.left_out_for(r.id),
             **(versions.of_requirement(r.id) if cov.get(r.id) else {"http_versions": [], "http2_left_out": []}),
             "coverage": ("unspecified" if not r.testable else "covered" if cov.get(r.id) else "uncovered")}
            for r in catalog.load().values()]


def _agent_needs_legend() -> str:
    from conformance.catalog import AGENT_NEEDS
    return "needs agent:\n" + "\n".join(f"  {need:<14} {what}" for need, what in AGENT_NEEDS.items())


def list_catalog(args: list[str]) -> int:
    p = OneLineParser(prog="conformance list", allow_abbrev=False,
                      description="Every requirement with its id, level, spec section and the checks that cover it.")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--uncovered", action="store_true", help="only testable requirements no check covers")
    opts = p.parse_args(args)
    rows = catalog_rows()
    testable = [r for r in rows if r["coverage"] != "unspecified"]
    covered = sum(1 for r in testable if r["coverage"] == "covered")
    if opts.uncovered:
        rows = [r for r in rows if r["coverage"] == "uncovered"]
    if opts.format == "json":   # the rows under the identity of the suite that lists them (as report.json names it)
        from conformance import versions
        from conformance.report import suite_identity
        model = {"over_http2": versions.HTTP2_SCENARIOS, "left_out": versions.model_left_out()}
        print(json.dumps({"suite": suite_identity(), "requirements": rows, "http_versions": model}, indent=2,
                         ensure_ascii=False))
        return ExitStatus.OK
    if opts.uncovered and not rows:
        print(f"every testable requirement is covered by at least one check ({len(testable)} testable)")
        return ExitStatus.OK
    width = max(len(r["section"]) for r in rows)
    print(f"{'ID':<16} {'LEVEL':<11} {'SECTION':<{width}}  CHECKS")
    for r in rows:
        if r["coverage"] == "unspecified":
            checks = f"(not judged; supply: {r.get('supply', '')})"
        else:
            checks = ", ".join(r["checks"]) or "UNCOVERED"
        needs = f"  [needs agent: {', '.join(r['needs_agent'])}]" if r["needs_agent"] else ""
        classes = f"  [inputs: {', '.join(r['input_classes'])}]" if r["input_classes"] else ""
        silent = f"  [silences: {', '.join(r['silences'])}]" if r["silences"] else ""
        print(f"{r['id']:<16} {r['level']:<11} {r['section']:<{width}}  {checks}{needs}{classes}{silent}")
    if opts.uncovered:
        print(f"\n{len(rows)} of {len(testable)} testable requirements are not covered by any check")
    else:
        needing = sum(1 for r in rows if r["needs_agent"])
        print(f"\n{_agent_needs_legend()}")
        print(f"\n{len(rows)} requirements: {len(testable)} testable, {covered} covered, "
              f"{len(testable) - covered} uncovered, {len(rows) - len(testable)} unspecified; {needing} need the "
              f"agent to do more than answer the eight prompts any agent can map (`needs agent`)")
    return ExitStatus.OK


def explain(args: list[str]) -> int:
    p = OneLineParser(prog="conformance explain", allow_abbrev=False,
                      description="One requirement: what the spec says, what is checked, how to re-run it.")
    p.add_argument("id", metavar="ID", help="a requirement id, e.g. INV-SEL-001 (`conformance list` shows them)")
    opts = p.parse_args(args)
    from conformance import catalog, registry

    reqs = catalog.load()
    rid = opts.id.strip().upper()
    if rid not in reqs:
        close = difflib.get_close_matches(rid, list(reqs), n=3)
        raise UsageProblem(f"no requirement {opts.id!r}" + (f" (did you mean {', '.join(close)}?)" if close else "")
                           + "; `conformance list` shows every id")
    req = reqs[rid]
    checks = [c for c in registry.load_all().values() if rid in c.requirements]
    out = [f"{req.id} · {req.level} · {req.protocol}",
           *_field("section", req.section), *_field("spec", f"\u201c{req.quote}\u201d"),
           *_field("expected", req.expect)]
    if req.scenario:
        out += _field("scenario", req.scenario)
    if req.note:
        out += _field("note", req.note)
    for n, citation in enumerate(req.source):   # the words that make a SHOULD warn or a MAY inform
        lines = _field("source", citation)
        out += lines if n == 0 else [" " * 10 + lines[0][10:], *lines[1:]]
    if not req.testable:
        out += _field("judged", f"never: the spec does not show this; supply: {req.supply}")
    elif not checks:
        out += _field("checks", "none yet: this requirement is uncovered")
    else:
        out.append("checks:")
        for c in checks:
            out += textwrap.wrap(f"{c.id}: {c.doc or '(no description)'} [scenarios: {', '.join(c.scenarios)}]",
                                 width=100, initial_indent="  - ", subsequent_indent="    ")
        out += ["reproduce:",
                f"  conformance run --requirements {req.id}          (the embedded reference server)",
                f"  conformance run --base-url URL --agent-id ID --requirements {req.id}"]
    print("\n".join(out))
    return ExitStatus.OK


# -- rejudge and compare ----------------------------------------------------------------------------------
def rejudge(args: list[str]) -> int:
    p = OneLineParser(prog="conformance rejudge", allow_abbrev=False,
                      description="Judge a run again from the recording beside its report, with no server and no "
                                  "network, and compare with its report.json. Exit 0: verified; 1: differences "
                                  "(each named); 2: bad input.")
    p.add_argument("report_dir", metavar="REPORT_DIR", help="a report directory (report.json, recording.json.gz)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    opts = p.parse_args(args)
    from conformance import rejudge as rejudging

    try:
        return rejudging.main(opts.report_dir, as_json=opts.format == "json")
    except rejudging.BadInput as exc:
        raise UsageProblem(str(exc)) from None


def compare(args: list[str]) -> int:
    p = OneLineParser(prog="conformance compare", allow_abbrev=False,
                      description="Two reports of the same server, requirement by requirement: newly failed "
                                  "(regressions), fixed, newly assessed, newly not assessed. Exit 1 when a MUST "
                                  "regressed, 2 on bad input.")
    p.add_argument("old", metavar="OLD", help="the earlier report: a report directory or its report.json")
    p.add_argument("new", metavar="NEW", help="the later one")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    opts = p.parse_args(args)
    from conformance import compare as comparing

    try:
        return comparing.main(opts.old, opts.new, fmt=opts.format)
    except comparing.BadInput as exc:
        raise UsageProblem(str(exc)) from None


def judge(args: list[str]) -> int:
    p = OneLineParser(prog="conformance judge", allow_abbrev=False,
                      description="Judge captured traffic: every exchange of a HAR file (HAR 1.2: a browser's "
                                  "developer tools, Playwright's record_har_path, mitmproxy's hardump) that addresses "
                                  "the service, by every rule that reads an exchange. The verdict stands on the "
                                  "capture alone. Exit status as `run`'s (a bad capture is an error).")
    p.add_argument("capture", metavar="CAPTURE", help="the capture: a .har file")
    p.add_argument("--base-url", help="judge only the exchanges under this base URL (default: the service's paths "
                                      "anywhere in the capture)")
    p.add_argument("--agent-id", help="the agent the capture calls (default: the one its accepted calls address)")
    p.add_argument("--report-dir", default=options.DEFAULT_REPORT_DIR, help="where the reports go (default reports/)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    opts = p.parse_args(args)
    from conformance import capture, report as report_module
    from conformance.reporting import decorate, html, junit, markdown

    try:
        rep, redact = capture.judge(opts.capture, base_url=opts.base_url, agent_id=opts.agent_id)
    except capture.CaptureError as exc:
        raise UsageProblem(str(exc)) from None
    out = Path(opts.report_dir)
    out.mkdir(parents=True, exist_ok=True)
    rep = decorate(rep)
    report_module.write_json(rep, out, redact)
    junit.write(rep, out / "junit.xml", redact)
    markdown.write(rep, out / "report.md", redact)
    html.write(rep, out / "report.html", redact)
    if opts.format == "json":
        print(json.dumps({"verdict": rep["verdict"], "capture": rep["capture"], "summary": rep["summary"]}))
    else:
        cap = rep["capture"]
        print(f"capture: {cap['file']}: {cap['entries']:,} entries, {cap['exchanges']:,} addressing the service; "
              f"{len(cap['judged_requirements'])} requirements judged on it")
        for row in rep["requirements"]:
            if row["status"] in ("failed", "warning"):
                print(redact(f"✘ {row['id']} {row['level']} {row['status'].upper()}: {row['message'][:400]}"))
                ev = (row.get("evidence") or [{}])[0]
                if ev.get("curl"):
                    print(redact(f"  reproduce: {ev['curl'][:600]}"))
        for why in cap["skipped"][:5]:
            print(f"left out: {why}")
        print(f"{rep['verdict'].upper()} on captured traffic only · {rep['verdict_reason']} · reports: {out}")
    return report_module.exit_code(rep, require_complete=False)


def _field(label: str, text: str) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width=100, initial_indent=f"{label + ':':<10}",
                         subsequent_indent=" " * 10) or [f"{label}:"]


if __name__ == "__main__":
    raise SystemExit(main())
