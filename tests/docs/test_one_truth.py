"""One truth: every option, exit status and figure the docs state is read back from the code.

The pages (README.md, docs/, the packages' READMEs, action.yml) and the `--help` texts state facts the code
decides. Each kind is compared with the code itself, never with a copy:

- options: every `--option` written down exists in the `--help` of the command it is written for (or, in prose,
  of some `conformance` command, or of another tool named in OTHER_TOOLS); every option of `conformance run` has
  its row in docs/cli.md, with its environment variable and its default;
- exit statuses: every table and sentence that maps verdicts to exit statuses says what `report.exit_code` and
  the plugin's signal handling do, all of it (the baseline's waiver and the signals included);
- figures: each row of CLAIMS is a phrase the docs use, the figure in it, and the constant it must equal;
- durations are measurements: they are stated once, in docs/cli.md's "What a run costs", and linked from
  everywhere else; any other "N s" must be one of the code's own durations (KNOWN_SECONDS).

No server runs: the parsers print their help, the rest is constants and text.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import signal
import tomllib
from collections import Counter
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from conformance import __version__, catalog, cli, options, plugin, registry, report
from conformance.agent import MAX_CHUNKS, MAX_SLEEP
from conformance.checks.agui._common import PING_INTERVAL
from conformance.options import ExitStatus
from conformance.reporting.markdown import SUMMARY_LIMIT
from conformance.scenarios.agui import SILENCE_LONG_SECONDS
from conformance.options import RATE_PROBE_MAX
from conformance.scenarios.mcp import RATE_PROBE_BATCH, RATE_PROBE_CHEAP, RATE_PROBE_SECONDS
from conformance.server.config import SANDBOX_RATE_LIMIT
from conformance.target import AGENT_SCENARIOS, Timeouts
from conformance.wire.http import RecordingBudget

ROOT = Path(__file__).resolve().parents[2]
MiB = 2 ** 20
MEASURED = ("docs/cli.md", "What a run costs")   # the one place durations and run costs are stated


# -- the pages ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    page: str
    number: int
    text: str
    code: bool          # inside a fenced code block
    heading: str        # the nearest heading above it

    @property
    def where(self) -> str:
        return f"{self.page}:{self.number}"


@dataclass(frozen=True)
class Page:
    name: str
    text: str

    def lines(self) -> list[Line]:
        out, code, heading = [], False, ""
        for number, text in enumerate(self.text.splitlines(), 1):
            if text.lstrip().startswith("```"):
                code = not code
                continue
            if not code and self.name.endswith(".md") and (m := re.match(r"#{1,6}\s+(.*)", text)):
                heading = m.group(1).strip()
            out.append(Line(self.name, number, text, code, heading))
        return out

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1


def _help_of(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main(list(argv))
    return out.getvalue()


@cache
def helps() -> dict[str, str]:
    """command -> the text its `--help` prints."""
    return {command: _help_of(command, "--help") for command in cli.COMMANDS}


@cache
def pages() -> tuple[Page, ...]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("conformance/*/README.md")),
             ROOT / "action.yml"]
    written = [Page(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in files]
    return (*written, *(Page(f"`conformance {c} --help`", text) for c, text in helps().items()))


def page(name: str) -> Page:
    return next(p for p in pages() if p.name == name)


def in_measured_section(line: Line) -> bool:
    return (line.page, line.heading) == MEASURED


@dataclass(frozen=True)
class Pending:
    """A wrong statement in a page another change owns, reported to its owner: the test that finds it, the page,
    a piece of the finding, and what is true. Strict: an entry whose statement is gone fails, so it is removed."""
    test: str
    page: str
    finding: str
    truth: str


PENDING: tuple[Pending, ...] = ()   # wrong statements in pages another change is rewriting, each found


def settled(test: str, problems: list[str]) -> list[str]:
    """The problems no Pending entry of `test` accounts for; fails when an entry of it found nothing."""
    mine = [p for p in PENDING if p.test == test]
    known = lambda problem, p: problem.startswith(p.page + ":") and p.finding in problem
    stale = [p for p in mine if not any(known(problem, p) for problem in problems)]
    assert not stale, f"fixed, so remove from PENDING: {stale}"
    return [problem for problem in problems if not any(known(problem, p) for p in mine)]


# -- options ------------------------------------------------------------------------------------------------
OTHER_TOOLS = {   # options of other programs the docs show, and whose they are
    "--pyargs": "pytest", "--dist": "pytest-xdist", "--oauth2-bearer": "curl", "--cacert": "curl",
    "--no-deps": "pip wheel", "--disable-pip-version-check": "pip (action.yml)",
    "--http2": "curl (and conformance serve)", "--http1": "curl (its --http1.1)",
}
WRONG_ON_PURPOSE = {"--bse-url": "docs/cli.md shows the one-line error a mistyped option gets"}
COMMAND = re.compile(r"\bconformance (" + "|".join(cli.COMMANDS) + r")\b")
SHELL_BREAK = re.compile(r"\s(?:#|\|\|?|&&|;|>>?|--)(?:\s|$)|`")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


@cache
def command_options() -> dict[str, frozenset[str]]:
    """command -> the long options its `--help` lists."""
    out = {}
    for command, text in helps().items():
        invocations = re.findall(r"^ {2}(-\S.*?)(?: {2,}|$)", text, re.M)
        out[command] = frozenset(f for inv in invocations for f in FLAG.findall(inv))
    return out


def every_option() -> frozenset[str]:
    return frozenset().union(*command_options().values(), {"--version", "--help"}, OTHER_TOOLS, WRONG_ON_PURPOSE)


def mentions(lines: list[Line]) -> Iterator[tuple[Line, str, str | None]]:
    """(line, option, the command it is written for or None) for every --option written down. A command line
    (`conformance run …`, in a code block or a code span) scopes the options after it up to a shell break; a
    code block line ending in a backslash goes on on the next line."""
    carried = None
    for line in lines:
        spans = [line.text] if line.code or not line.page.endswith(".md") else re.findall(r"`([^`]*)`", line.text)
        scoped = [(flag, command) for span in spans for flag, command in _scoped(span, carried if line.code else None)]
        yield from ((line, flag, command) for flag, command in scoped)
        unscoped = Counter(FLAG.findall(line.text)) - Counter(flag for flag, _ in scoped)
        yield from ((line, flag, None) for flag in unscoped.elements())
        continues = line.code and line.text.rstrip().endswith("\\")
        carried = (COMMAND.findall(line.text) or [carried])[-1] if continues else None


def _scoped(span: str, command: str | None) -> Iterator[tuple[str, str]]:
    """(option, command) for the options a command line in `span` takes, up to a shell break."""
    pieces = COMMAND.split(span)          # text, command, text, command, text …
    for command, text in zip([command, *pieces[1::2]], pieces[0::2]):
        cut = SHELL_BREAK.search(text)
        if command:
            yield from ((flag, command) for flag in FLAG.findall(text[:cut.start()] if cut else text))


def test_every_option_the_docs_name_exists():
    known, by_command = every_option(), command_options()
    wrong = []
    for doc in pages():
        for line, flag, command in mentions(doc.lines()):
            if flag in WRONG_ON_PURPOSE:
                continue
            if command and flag not in by_command[command]:
                wrong.append(f"{line.where}: {flag} is not an option of `conformance {command}`")
            elif not command and flag not in known:
                wrong.append(f"{line.where}: {flag} is no option of any command (nor of OTHER_TOOLS)")
    assert not wrong, "options the docs name that do not exist:\n" + "\n".join(wrong)


def test_the_option_scan_sees_what_it_must():
    lines = Page("x.md", "```sh\nconformance list --thorough \\\n  --format json # --base-url\n```\n"
                         "prose `conformance serve --port 1` and --nope\n").lines()
    got = [(line.number, flag, command) for line, flag, command in mentions(lines)]
    assert got == [(2, "--thorough", "list"), (3, "--format", "list"), (3, "--base-url", None),
                   (5, "--port", "serve"), (5, "--nope", None)]


def option_rows(page_name: str) -> dict[str, list[str]]:
    """flag -> the table rows of a page whose first cell names it."""
    rows: dict[str, list[str]] = {}
    for line in page(page_name).lines():
        first = line.text.split("|")[1] if line.text.startswith("|") else ""
        for flag in FLAG.findall(first):
            rows.setdefault(flag, []).append(line.text)
    return rows


def documented_default(option: options.Option) -> str:
    """The default as a user reads it."""
    if option.name == "protocols":
        return "all"
    if option.name == "report_dir":
        return options.DEFAULT_REPORT_DIR
    return str(option.default)


def test_every_option_of_run_has_its_row_in_cli_md_with_its_variable():
    rows = option_rows("docs/cli.md")
    missing = [f"{o.flag}: no row" for o in options.OPTIONS if o.flag not in rows]
    missing += [f"{o.flag}: the row does not name {o.env}" for o in options.OPTIONS
                if o.env and o.flag in rows and not any(o.env in r for r in rows[o.flag])]
    assert not missing, missing


def test_every_stated_default_is_the_options_default():
    """`(default X)` in a doc row of the option, in its --help and in its action input's description."""
    action = action_input_descriptions()
    wrong = []
    for option in options.OPTIONS:
        texts = {f"{name} row": row for name in ("README.md", "docs/cli.md")
                 for row in option_rows(name).get(option.flag, [])}
        texts["--help"] = option.help
        texts["action.yml input"] = action.get(options.action_input(option), "")
        for where, text in texts.items():
            for stated in re.findall(r"\(default ([^);,]+)", text):
                if stated.strip(" `").rstrip("/") != documented_default(option):
                    wrong.append(f"{option.flag} ({where}): default {stated!r}, the code's is "
                                 f"{documented_default(option)!r}")
    assert not wrong, wrong


def action_input_descriptions() -> dict[str, str]:
    """action.yml input -> its description (one-line descriptions, enough for defaults)."""
    out, current = {}, None
    for line in page("action.yml").text.splitlines():
        if m := re.match(r"^  ([a-z][a-z-]*):\s*$", line):
            current = m.group(1)
        elif current and (m := re.match(r"^    description:\s*(.*)$", line)):
            out[current] = m.group(1).strip('"')
    return out


# Values the docs give an option, and whose checks are pure (no file, no directory made).
PURE_CHECKS = ("base_url", "protocols", "level", "requirements", "rate_limit", "seed", "depth", "concurrency")
PLACEHOLDER = re.compile(r"^[A-Z_,.…|/]+$|[…$<{]")


def test_every_example_value_of_a_run_option_is_accepted():
    """`--level must` in a command line, `e.g. \\`10/1\\`` in an option's row: the option's own parser and check
    take it."""
    wrong = []
    for option in (options.BY_NAME[n] for n in PURE_CHECKS):
        examples: list[tuple[str, str]] = []
        for doc in pages():
            for line in doc.lines():
                examples += [(line.where, v) for v in
                             re.findall(rf"conformance run\b[^`#|]*?{option.flag}[ =]([^\s`\\]+)", line.text)]
                first = line.text.split("|")[1] if line.text.startswith("|") else ""
                if option.flag in first:
                    for listed in re.findall(r"e\.g\.\s*((?:`[^`]+`(?:,\s*|\s+or\s+)?)+)", line.text):
                        examples += [(line.where, v) for v in re.findall(r"`([^`]+)`", listed)]
        for where, value in examples:
            value = value.strip("\"'[]")
            if PLACEHOLDER.search(value):
                continue
            try:
                parsed = option.type(value)
            except (ValueError, argparse.ArgumentTypeError) as exc:
                wrong.append(f"{where}: {option.flag} {value}: {exc}")
                continue
            problem = option.check(parsed, option.flag) if option.check else None
            if option.choices and parsed not in option.choices:
                problem = f"not one of {option.choices}"
            if problem:
                wrong.append(f"{where}: {problem}")
    assert not wrong, "example values the option refuses:\n" + "\n".join(wrong)


LAST_FAILED_IN_WORDS = {"failed": "failed", "warning": "warned", "error": "erred"}


def test_last_failed_is_described_with_the_statuses_it_takes():
    """`--last-failed` re-runs what cli.LAST_FAILED_STATUSES says; its help, its rows and its action input say
    the same."""
    descriptions = {"--help": options.BY_NAME["last_failed"].help,
                    "action.yml": action_input_descriptions()["last-failed"]}
    for name in ("README.md", "docs/cli.md"):
        for n, row in enumerate(option_rows(name)["--last-failed"]):
            descriptions[f"{name} row {n + 1}"] = row
    words = [LAST_FAILED_IN_WORDS[s] for s in cli.LAST_FAILED_STATUSES]
    wrong = {where: text for where, text in descriptions.items()
             if not all(re.search(rf"\b{w}\b", text) for w in words)}
    assert not wrong, f"--last-failed takes what {', '.join(words)}; these say otherwise: {wrong}"


def test_pytest_pyargs_names_the_module_conformance_run_runs():
    """`pytest --pyargs X` in the docs: X is the suite's test module, the very one `conformance run` hands
    pytest, importable; the plugin it needs is the package's pytest11 entry point."""
    args = cli.pytest_args_for(argparse.Namespace(verbose=0, quiet=0), [])
    module = args[args.index("--pyargs") + 1]
    stated = [(f"{d.name}:{d.line_of(m.start())}", m.group(1)) for d in pages()
              for m in re.finditer(r"--pyargs ([\w.]+)", d.text)]
    assert stated, "no page says how to run the suite under pytest"
    assert not [s for s in stated if s[1] != module], f"the run hands pytest --pyargs {module}; docs: {stated}"
    assert importlib.util.find_spec(module) is not None
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert entry == {"conformance": plugin.__name__}


# -- exit statuses --------------------------------------------------------------------------------------------
VERDICTS = tuple(report.EXIT)
VERDICT_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(VERDICTS, key=len, reverse=True)) + r")(?![\w-])")


@cache
def exit_facts() -> frozenset[tuple[int, str, str | None]]:
    """(exit status, verdict, the word for what makes the difference) for every way a run ends, asked of the
    code: report.exit_code and the plugin's signal handling."""
    def ends(verdict: str, *, require_complete: bool = False, waived: bool = False) -> int:
        failed = [{"id": "X-1", "level": "MUST", "status": "failed"}] if verdict == "non-conformant" else []
        rep = {"verdict": verdict, "requirements": failed, "waived": ["X-1"] if waived else []}
        return int(report.exit_code(rep, require_complete=require_complete))

    facts = {(ends(v), v, None) for v in VERDICTS}
    facts.add((ends("conformant-partial", require_complete=True), "conformant-partial", "require-complete"))
    facts.add((ends("non-conformant", waived=True), "non-conformant", "baseline"))
    facts |= {(int(status), "error", signal.Signals(sig).name) for sig, status in plugin.SIGNAL_EXIT.items()}
    return frozenset(facts)


def test_every_way_a_run_ends_has_its_name_in_the_code():
    assert {f[0] for f in exit_facts()} == {int(s) for s in ExitStatus}


def statuses_row_problems(numbers: list[int], text: str) -> list[str]:
    """A row (or sentence part) keyed by exit statuses: it names, for each, every verdict that ends with it
    (the condition instead when there is one), and no verdict that cannot."""
    problems = []
    for n in numbers:
        facts = [f for f in exit_facts() if f[0] == n]
        if not facts:
            problems.append(f"{n} is no exit status of a run (the code's: {sorted(int(s) for s in ExitStatus)})")
        for _, verdict, condition in facts:
            if condition and not re.search(rf"(?<!\w){re.escape(condition)}(?!\w)", text):
                problems.append(f"{n}: does not say {condition!r} ({verdict} with {condition})")
            elif not condition and verdict not in VERDICT_WORD.findall(text):
                problems.append(f"{n}: does not say {verdict!r} ({verdict})")
    named = set(VERDICT_WORD.findall(text))
    for verdict in named:
        if not any(f[0] in numbers and f[1] == verdict for f in exit_facts()):
            problems.append(f"{numbers}: names {verdict}, which never ends with it")
    return problems


def verdict_row_problems(verdict: str, exits: str) -> list[str]:
    """A row keyed by a verdict: its exit cell holds the verdict's usual status first, then every other it may
    end with, each with what makes the difference."""
    facts = [f for f in exit_facts() if f[1] == verdict]
    numbers = [int(n) for n in re.findall(r"\b\d+\b", exits)]
    problems = []
    if not numbers or numbers[0] != report.EXIT[verdict]:
        problems.append(f"{verdict}: the exit is {int(report.EXIT[verdict])} first, the row says {exits!r}")
    if set(numbers) != {f[0] for f in facts}:
        problems.append(f"{verdict}: ends with {sorted({f[0] for f in facts})}, the row says {sorted(set(numbers))}")
    problems += [f"{verdict}: {n} without saying when ({condition})" for n, _, condition in facts
                 if condition and condition not in exits]
    return problems


def cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def exit_tables() -> Iterator[tuple[Page, list[Line]]]:
    """Markdown tables about a run's exit status: a column headed exit or status, keyed by verdict or by status
    (the tables of `conformance rejudge` and `compare`, commands of their own, are not a run's)."""
    for doc in pages():
        lines, table = doc.lines(), []
        for line in [*lines, Line(doc.name, 0, "", False, "")]:
            if line.text.startswith("|") and not line.code:
                table.append(line)
                continue
            if table and not re.search(r"rejudge|compare", table[0].heading):
                header = [c.lower() for c in cells(table[0].text)]
                keyed_by_status = header[0] in ("exit", "status") and all(
                    re.fullmatch(r"[\d, ]+", cells(r.text)[0]) for r in table[2:])
                if keyed_by_status or (header[0] == "verdict" and any("exit" in h for h in header)):
                    yield doc, table
            table = []


def test_every_exit_status_table_is_the_codes():
    problems, seen = [], 0
    for doc, table in exit_tables():
        seen += 1
        header = [c.lower() for c in cells(table[0].text)]
        keys = []
        for row in table[2:]:
            row_cells = cells(row.text)
            if header[0] == "verdict":
                verdict = row_cells[0].strip("`")
                keys.append(verdict)
                exits = row_cells[next(i for i, h in enumerate(header) if "exit" in h)]
                problems += [f"{row.where}: {p}" for p in verdict_row_problems(verdict, exits)]
            else:
                numbers = [int(n) for n in re.findall(r"\d+", row_cells[0])]
                keys += numbers
                problems += [f"{row.where}: {p}" for p in statuses_row_problems(numbers, " ".join(row_cells[1:]))]
        expected = set(VERDICTS) if header[0] == "verdict" else {int(s) for s in ExitStatus}
        if set(keys) != expected:
            problems.append(f"{table[0].where}: the table lists {sorted(map(str, keys))}, a run ends with "
                            f"{sorted(map(str, expected))}")
    assert seen >= 5, f"found {seen} exit status tables; the scan lost some"
    assert not problems, "exit status tables that are not the code's:\n" + "\n".join(problems)


def exit_sentences() -> dict[str, str]:
    """The exit statuses in one sentence: `conformance run --help`'s epilog and the action's description."""
    found = {}
    for name in ("`conformance run --help`", "action.yml"):
        m = re.search(r"exit status[:\s(]+(0 .*?)\.(?:\s|$)", page(name).text, re.S)
        found[name] = " ".join(m.group(1).split()) if m else ""
    return found


def test_every_exit_status_sentence_is_the_codes():
    problems = []
    for where, sentence in exit_sentences().items():
        parts = re.split(r"[,;]\s+(?=\d)", sentence)
        numbers_seen = []
        for part in parts:
            numbers = [int(n) for n in re.findall(r"\d+", re.match(r"\d+(?:(?:,\s*|\s+and\s+)\d+)*", part).group())]
            numbers_seen += numbers
            problems += [f"{where}: {p}" for p in statuses_row_problems(numbers, part)]
        if set(numbers_seen) != {int(s) for s in ExitStatus}:
            problems.append(f"{where}: names {sorted(numbers_seen)}, a run ends with {sorted(map(int, ExitStatus))}")
    assert not problems, problems


def test_exit_written_in_prose_is_a_status_the_code_has():
    """Any "exit N" / "exits N": a status a run (or rejudge, compare: 0, 1, 2) can end with; next to
    --require-complete it is the incomplete status."""
    wrong = []
    for doc in pages():
        for line in doc.lines():
            for n in map(int, re.findall(r"\bexits? (?:status )?(\d+)\b", line.text, re.I)):
                if n not in {int(s) for s in ExitStatus}:
                    wrong.append(f"{line.where}: exit {n}")
                elif "require-complete" in line.text and n != ExitStatus.INCOMPLETE:
                    wrong.append(f"{line.where}: exit {n} next to --require-complete "
                                 f"(it is {int(ExitStatus.INCOMPLETE)})")
    assert not wrong, wrong


# -- figures -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    what: str
    phrases: tuple[str, ...]        # how the docs say it; {} is the figure (a number, or `hex` for a digest)
    truth: Callable[[], Any]        # the code's value
    where: tuple[str, ...] = ()     # pages that must state it (so the check cannot pass on nothing)


def _counts() -> dict[str, int]:
    reqs = catalog.load().values()
    testable = [r for r in reqs if r.testable]
    return {"all": len(list(catalog.load())), "testable": len(testable),
            **{lvl: sum(r.level == lvl for r in testable) for lvl in ("MUST", "SHOULD", "MAY")},
            "unspecified": sum(not r.testable for r in reqs)}


def _sandbox_bucket() -> tuple[float, float]:
    n, seconds = SANDBOX_RATE_LIMIT.rstrip("s").split("/")
    return float(n), float(seconds)


SILENCE = AGENT_SCENARIOS["silence"]["silent_seconds"]
CLAIMS: tuple[Claim, ...] = (
    Claim("the 429 probe's cap", ("never more than `--rate-probe-max`, default {}",
                                  "never more than `--rate-probe-max` (default {})"), lambda: RATE_PROBE_MAX,
          ("README.md", "docs/cli.md", "docs/ci.md")),
    Claim("what the 429 probe sends past the bucket", ("`X-RateLimit-Remaining` + {}",), lambda: RATE_PROBE_BATCH,
          ("README.md", "docs/cli.md")),
    Claim("a default run probes a nearly spent bucket", ("`X-RateLimit-Remaining` at most {}",),
          lambda: RATE_PROBE_CHEAP, ("docs/cli.md",)),
    Claim("the embedded server's bucket", ("bucket ({} requests\nrefilled over {} s)", "bucket ({} requests refilled over {} s)"),
          _sandbox_bucket, ("docs/cli.md",)),
    Claim("the spec's ping interval", ("{} s ping interval", "two {} s intervals", "every {} s of silence"),
          lambda: PING_INTERVAL, ("README.md", "docs/cli.md")),
    Claim("the silence scenario", ("the {} s silence of the ping check", "a {} s silence on AG-UI",
                                   "ping interval (default {})", "{} s with no event"), lambda: SILENCE,
          ("README.md", "docs/certify.md", "docs/cli.md")),
    Claim("the --thorough silence", ("over a {} s silence", "the {} s silence with `--thorough`",
                                     "at the cost of a {} s silence"), lambda: SILENCE_LONG_SECONDS,
          ("docs/cli.md", "docs/ci.md")),
    Claim("the recording phase's time limit", ("`[timeouts] run` ({} s)",), lambda: Timeouts().run,
          ("docs/writing-checks.md",)),
    *(Claim(f"the profile's [timeouts] {f.name}", (f"| `{f.name}` | {{}} |",), lambda f=f: getattr(Timeouts(), f.name),
            ("docs/profile.md",)) for f in fields(Timeouts)),
    Claim("report.md's size cap", ("never exceeds {} MiB", "at most {} MiB"), lambda: SUMMARY_LIMIT / MiB,
          ("README.md", "docs/reports.md")),
    Claim("the recording's body budget", ("`body_bytes` ({} MiB)", "twice the {} MiB body budget"),
          lambda: RecordingBudget().body_bytes / MiB, ("docs/reports.md",)),
    Claim("the recording's frame budget", ("`frames` ({})",), lambda: RecordingBudget().frames, ("docs/reports.md",)),
    Claim("the agent's longest sleep", ("0 < SECONDS ≤ {}",), lambda: MAX_SLEEP, ("docs/agent.md",)),
    Claim("the agent's most chunks", ("1 ≤ N ≤ {}",), lambda: MAX_CHUNKS, ("docs/agent.md",)),
    Claim("conformance serve's default bucket", ("by default {} requests refilled over {} s",
                                                  "a bucket of {} requests refilled over {} s"),
          _sandbox_bucket, ("docs/cli.md",)),
    Claim("the catalog's size", ("holds {} requirements",), lambda: _counts()["all"], ("docs/cli.md",)),
    Claim("the testable requirements", ("{} testable", "the same {} requirement statuses"),
          lambda: _counts()["testable"], ("docs/cli.md",)),
    Claim("the testable requirements by level", ("({} MUST, {} SHOULD, {} MAY)",),
          lambda: (_counts()["MUST"], _counts()["SHOULD"], _counts()["MAY"]), ("docs/cli.md",)),
    Claim("the unspecified requirements", ("and {} where the spec leaves",), lambda: _counts()["unspecified"],
          ("docs/cli.md",)),
    Claim("compare's example: one regression, the rest unchanged", ("unchanged: {} requirement",),
          lambda: _counts()["testable"] - 1, ("docs/cli.md",)),
    Claim("the checks a run judges", ("rejudged reports from its recording: {} checks", "{} check statuses"),
          lambda: len(registry.load_all()), ("docs/cli.md",)),
    Claim("the suite's version", ("conformance {} (", "conformance {} ·", "conformance-{}-py3"),
          lambda: __version__, ("docs/cli.md", "docs/certify.md")),
    Claim("the spec revision", ("spec revision {},", "spec {} ·"), lambda: catalog.SPEC_REVISION, ("docs/cli.md",)),
    Claim("the catalog digest", ("catalog sha256:{}", "catalog: sha256:{}"), lambda: catalog.digest(),
          ("docs/cli.md",)),
)
FIGURE = r"(\d{4}-\d\d-\d\d|\d[\d,]*(?:\.\d+)*|[0-9a-f]{8,64})"   # a date, a number or version, a digest


def _phrase(phrase: str) -> re.Pattern[str]:
    parts = [re.sub(r"(?:\\ )+", r"\\s+", re.escape(part)) for part in phrase.split("{}")]   # a space: any run of them
    return re.compile(FIGURE.join(parts))


def _same(stated: str, truth: Any) -> bool:
    if isinstance(truth, str):
        return truth == stated or (truth.startswith("sha256:") and truth.startswith(f"sha256:{stated}"))
    try:
        return float(stated.replace(",", "")) == float(truth)
    except ValueError:
        return False


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.what)
def test_every_figure_the_docs_state_is_the_codes(claim: Claim):
    truth = claim.truth()
    truths = truth if isinstance(truth, tuple) else (truth,)
    wrong, stated_in = [], set()
    for doc in pages():
        for phrase in claim.phrases:
            for m in _phrase(phrase).finditer(doc.text):
                stated_in.add(doc.name)
                if not all(_same(s, t) for s, t in zip(m.groups(), truths)):
                    wrong.append(f"{doc.name}:{doc.line_of(m.start())}: {m.group()!r}, the code's is {truth}")
    assert not wrong, "\n".join(wrong)
    assert set(claim.where) <= stated_in, f"no longer stated in {sorted(set(claim.where) - stated_in)}"


# -- durations: measured once, constants elsewhere ----------------------------------------------------------------
KNOWN_SECONDS = {   # every "N s" a page may state outside the measured section: the code's own durations
    "the spec's ping interval": PING_INTERVAL,
    "the silence scenario": SILENCE,
    "the --thorough silence": SILENCE_LONG_SECONDS,
    "the sandbox bucket period": _sandbox_bucket()[1],
    "the 429 probe's time limit": RATE_PROBE_SECONDS,
    **{f"[timeouts] {f.name}": getattr(Timeouts(), f.name) for f in fields(Timeouts)},
}
MEASUREMENT = re.compile(r"\babout \d[\d,.]*\s?(?:s|ms|seconds?|minutes?|min|(?:HTTP )?requests|agent runs|[kMG]i?B)\b"
                         r"|\b\d[\d.]*\s?s more\b", re.I)


def test_measurements_are_stated_once_and_linked():
    """A measured duration or cost ("about 15 s more", "about 250 requests") belongs to docs/cli.md's
    "What a run costs" alone; other pages link there."""
    elsewhere = [f"{line.where}: {m.group()!r}" for doc in pages() for line in doc.lines()
                 if not in_measured_section(line) for m in MEASUREMENT.finditer(line.text)]
    assert not elsewhere, (f"measurements outside {MEASURED[0]} ({MEASURED[1]}); state them there and link:\n"
                           + "\n".join(elsewhere))
    measured = [line for line in page(MEASURED[0]).lines() if in_measured_section(line)]
    assert any(line.text.startswith("| `--thorough`") for line in measured), "the measured table lost --thorough"


def test_every_other_duration_is_one_the_code_has():
    wrong = []
    for doc in pages():
        for line in doc.lines():
            if line.code or in_measured_section(line):
                continue
            for n in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?) s\b", line.text):
                if float(n) not in KNOWN_SECONDS.values():
                    wrong.append(f"{line.where}: {n} s")
    wrong = settled("durations", wrong)
    assert not wrong, ("durations that are none of the code's (KNOWN_SECONDS); a measured one goes to "
                       f"{MEASURED[0]} ({MEASURED[1]}):\n" + "\n".join(wrong))


def test_the_figure_rules_catch_what_they_must():
    assert MEASUREMENT.search("`--thorough` costs about 15 s more") and MEASUREMENT.search("about 250 HTTP requests")
    assert not MEASUREMENT.search("about 48 of 189 MUSTs")
    assert _phrase("never more than {}").search("and never more\nthan 600").group(1) == "600"
    assert _same("d6bee93c926b", "sha256:d6bee93c926b9706") and not _same("d6bee93c", "sha256:0000")
    assert statuses_row_problems([0], "`conformant` or `conformant-partial`") == \
        ["0: does not say 'baseline' (non-conformant with baseline)"]
    assert verdict_row_problems("non-conformant", "1") == \
        ["non-conformant: ends with [0, 1], the row says [1]", "non-conformant: 0 without saying when (baseline)"]


# -- what a listing is said to show ----------------------------------------------------------------------------
def prose_sentences(doc: Page) -> Iterator[tuple[int, str]]:
    """(line, sentence) of a page's prose: no code, headings or tables."""
    paragraph: list[Line] = []
    for line in [*doc.lines(), Line(doc.name, 0, "", False, "")]:
        if line.text.strip() and not line.code and not line.text.startswith(("#", "|")):
            paragraph.append(line)
            continue
        text = " ".join(l.text.strip() for l in paragraph)
        for sentence in re.split(r"(?<=\.)\s+", text):
            if sentence and paragraph:
                yield paragraph[0].number, sentence
        paragraph = []


def test_what_conformance_list_is_said_to_show_it_shows():
    """A page saying a profile key (a scenario) shows in `conformance list` means the listing a user reads, not
    its JSON."""
    listing = io.StringIO()
    with contextlib.redirect_stdout(listing):
        cli.main(["list"])
    rows = {line.split()[0]: line for line in listing.getvalue().splitlines() if line.strip()}
    shows_keys = all(re.search(rf"(?<![\w.]){re.escape(key.strip())}(?!\w)", rows.get(r.id, ""))
                     for r in catalog.load().values() if r.scenario for key in r.scenario.split(","))
    said = [f"{doc.name}:{number}: profile key in `conformance list`: {sentence[:100]}" for doc in pages()
            if doc.name.endswith(".md") for number, sentence in prose_sentences(doc)
            if re.search(r"`conformance list`(?! --format)", sentence)
            and re.search(r"profile key|`scenario`", sentence)]
    wrong = settled("conformance list", [] if shows_keys else said)
    assert not wrong, wrong
