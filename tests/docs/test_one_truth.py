"""One truth: every option and exit status the docs state is read back from the code.

The pages (README.md, docs/, the packages' READMEs, action.yml) and the `--help` texts state facts the code
decides. Each kind is compared with the code itself, never with a copy:

- options: every `--option` written down exists in the `--help` of the command it is written for (or, in prose,
  of some `conformance` command, or of another tool named in OTHER_TOOLS); every option of `conformance run` has
  its row in docs/cli.md, with its environment variable and its default;
- exit statuses: every table and sentence that maps verdicts to exit statuses says what `report.exit_code` and
  the plugin's signal handling do, all of it (the baseline's waiver and the signals included).

Every other number the pages state is read in test_figures.py. No server runs: the parsers print their help, the
rest is constants and text.
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
from dataclasses import dataclass
from functools import cache
from typing import Iterator

import yaml

from conformance import catalog, certification, cli, options, plugin, report
from conformance.options import ExitStatus
from tests.docs.pages import ROOT, Line, Page, helps, page, pages


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
    "--mode": "mitmdump", "--listen-port": "mitmdump", "--set": "mitmdump",
    "--pyargs": "pytest", "--dist": "pytest-xdist", "--oauth2-bearer": "curl", "--cacert": "curl",
    "--no-deps": "pip wheel", "--disable-pip-version-check": "pip (action.yml)",
    "--http2": "curl (and conformance serve)", "--http1": "curl (its --http1.1)",
    "--agent": "python -m conformance.agent.vectors", "--without": "python -m conformance.agent.vectors",
    "--draws": "bench/bench_gated.py", "--family": "bench/bench_gated.py", "--servers": "bench/bench_gated.py",
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
    if option.name == "max_run_time":
        return options.DEFAULT_MAX_RUN_TIME
    return str(option.default)


def test_every_option_of_run_has_its_row_in_cli_md_with_its_variable():
    rows = option_rows("docs/cli.md")
    missing = [f"{o.flag}: no row" for o in options.OPTIONS if o.flag not in rows]
    missing += [f"{o.flag}: the row does not name {o.env}" for o in options.OPTIONS
                if o.env and o.flag in rows and not any(o.env in r for r in rows[o.flag])]
    assert not missing, missing


def option_entries() -> Iterator[tuple[Page, int, int, options.Option]]:
    """(page, start, end, option) of every place that describes one option of `conformance run` on its own: its
    table rows in README.md and docs/cli.md, its entry in `conformance run --help`, its action input."""
    by_flag = {o.flag: o for o in options.OPTIONS}
    by_input = {options.action_input(o): o for o in options.OPTIONS}
    goes_on = {"`conformance run --help`": re.compile(r" {3,}\S"), "action.yml": re.compile(r" {4,}\S")}
    for doc in pages():
        current: tuple[int, options.Option] | None = None
        for line in [*doc.lines(), Line(doc.name, 0, "", False, "", len(doc.text))]:
            if current and doc.name in goes_on and goes_on[doc.name].match(line.text):
                continue                                  # the entry goes on
            if current:
                yield doc, current[0], line.start, current[1]
                current = None
            if doc.name in ("README.md", "docs/cli.md") and line.text.startswith("|"):
                flag = next((f for f in FLAG.findall(line.text.split("|")[1]) if f in by_flag), None)
                if flag:
                    yield doc, line.start, line.start + len(line.text), by_flag[flag]
            elif doc.name == "`conformance run --help`" and (m := re.match(r"^  (--[a-z-]+)", line.text)):
                current = (line.start, by_flag[m.group(1)]) if m.group(1) in by_flag else None
            elif doc.name == "action.yml" and (m := re.match(r"^  ([a-z][a-z-]*):\s*$", line.text)):
                current = (line.start, by_input[m.group(1)]) if m.group(1) in by_input else None


DEFAULT = re.compile(r"\(default ([^);,]+)")


def stated_defaults() -> Iterator[tuple[Page, re.Match[str], options.Option]]:
    """Every `(default X)` said of an option of `conformance run` (in one of its option_entries): of the entry's
    option, or of the option named right before it (`--rate-probe-max` (default 1000) in the row of --thorough)."""
    by_flag = {o.flag: o for o in options.OPTIONS}
    for doc, start, end, option in option_entries():
        for m in DEFAULT.finditer(doc.text, start, end):
            named = re.search(r"`(--[a-z][a-z0-9-]*)`\s*$", doc.text[start:m.start()])
            yield doc, m, by_flag.get(named.group(1), option) if named else option


def test_every_stated_default_is_the_options_default():
    """`(default X)` in a doc row of the option, in its entry of --help and in its action input's description."""
    wrong = [f"{doc.name}:{doc.line_of(m.start())}: {option.flag}: default {m.group(1)!r}, the code's is "
             f"{documented_default(option)!r}" for doc, m, option in stated_defaults()
             if " ".join(m.group(1).split()).strip(" `").rstrip("/") != documented_default(option)]
    assert not wrong, wrong
    said = {option.flag for _, _, option in stated_defaults()}
    assert {"--concurrency", "--depth", "--rate-probe-max", "--level"} <= said, "the scan lost the defaults"


def action_input_descriptions() -> dict[str, str]:
    """action.yml input -> its description (one-line descriptions, enough for defaults)."""
    out, current = {}, None
    for line in page("action.yml").text.splitlines():
        if m := re.match(r"^  ([a-z][a-z-]*):\s*$", line):
            current = m.group(1)
        elif current and (m := re.match(r"^    description:\s*(.*)$", line)):
            out[current] = m.group(1).strip('"')
    return out


def test_every_output_the_action_describes_has_a_value():
    """An output with a description and no value tells a workflow of something the action never sets (an input
    copied into `outputs:` did)."""
    outputs = yaml.safe_load(page("action.yml").text)["outputs"]
    assert not [name for name, output in outputs.items() if "value" not in output], outputs


# Values the docs give an option, and whose checks are pure (no file, no directory made).
PURE_CHECKS = ("base_url", "protocols", "level", "requirements", "rate_limit", "seed", "depth", "concurrency")
PLACEHOLDER = re.compile(r"^[A-Z_,.…|/]+$|[…$<{]")
CODE_SPAN = re.compile(r"`([^`]+)`")
EXAMPLES = re.compile(r"e\.g\.\s*((?:`[^`]+`(?:,\s*|\s+or\s+)?)+)")


def example_values() -> Iterator[tuple[Page, re.Match[str], options.Option]]:
    """`--level must` in a command line, `e.g. \\`10/1\\`` in an option's row, `e.g. 10/1` in its --help entry or
    action input (the value is the match's group 1), for the options whose checks are pure."""
    pure = {options.BY_NAME[n] for n in PURE_CHECKS}
    for doc, start, end, option in option_entries():
        if option in pure and doc.name in ("`conformance run --help`", "action.yml"):
            yield from ((doc, m, option) for m in re.finditer(r"e\.g\.\s+([^\s),`]+)", doc.text[:end]) if m.start() >= start)
    for option in (options.BY_NAME[n] for n in PURE_CHECKS):
        command = re.compile(rf"conformance run\b[^`#|\n]*?{option.flag}[ =]([^\s`\\]+)")
        for doc in pages():
            for line in doc.lines():
                end = line.start + len(line.text)
                yield from ((doc, m, option) for m in command.finditer(doc.text, line.start, end))
                first = line.text.split("|")[1] if line.text.startswith("|") else ""
                if option.flag in first:
                    for listed in EXAMPLES.finditer(doc.text, line.start, end):
                        yield from ((doc, m, option) for m in CODE_SPAN.finditer(doc.text, listed.start(1), listed.end(1)))


def test_every_example_value_of_a_run_option_is_accepted():
    """`--level must` in a command line, `e.g. \\`10/1\\`` in an option's row: the option's own parser and check
    take it."""
    wrong = []
    for doc, m, option in example_values():
        where, value = f"{doc.name}:{doc.line_of(m.start())}", m.group(1).strip("\"'[]")
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
    facts |= {(int(status), "error", signal.Signals(sig).name) for sig, status in certification.SIGNAL_EXIT.items()}
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


def exit_sentences() -> dict[str, re.Match[str] | None]:
    """The exit statuses in one sentence: `conformance run --help`'s epilog and the action's description (the
    statuses are the match's group 1)."""
    return {name: re.search(r"exit status[:\s(]+(0 .*?)\.(?:\s|$)", page(name).text, re.S)
            for name in ("`conformance run --help`", "action.yml")}


def test_every_exit_status_sentence_is_the_codes():
    problems = []
    for where, found in exit_sentences().items():
        sentence = " ".join(found.group(1).split()) if found else ""
        parts = re.split(r"[,;]\s+(?=\d)", sentence)
        numbers_seen = []
        for part in parts:
            numbers = [int(n) for n in re.findall(r"\d+", re.match(r"\d+(?:(?:,\s*|\s+and\s+)\d+)*", part).group())]
            numbers_seen += numbers
            problems += [f"{where}: {p}" for p in statuses_row_problems(numbers, part)]
        if set(numbers_seen) != {int(s) for s in ExitStatus}:
            problems.append(f"{where}: names {sorted(numbers_seen)}, a run ends with {sorted(map(int, ExitStatus))}")
    assert not problems, problems


EXIT_IN_PROSE = re.compile(r"\bexits? (?:status (?:is )?)?(\d+(?:(?:, | or | and )\d+)*)\b", re.I)


def exits_in_prose() -> Iterator[tuple[Line, re.Match[str], list[int]]]:
    """Every "exit N", "exits N or M", "exit status is N" of a line, with its statuses."""
    for doc in pages():
        for line in doc.lines():
            for m in EXIT_IN_PROSE.finditer(doc.text, line.start, line.start + len(line.text)):
                yield line, m, [int(n) for n in re.findall(r"\d+", m.group(1))]


def test_exit_written_in_prose_is_a_status_the_code_has():
    """Any "exit N" / "exits N": a status a run (or rejudge, compare: 0, 1, 2) can end with; next to
    --require-complete it is the incomplete status; a verdict named on the same line can end with it."""
    wrong = []
    for line, _, statuses in exits_in_prose():
        for n in statuses:
            named = set(VERDICT_WORD.findall(line.text))
            if n not in {int(s) for s in ExitStatus}:
                wrong.append(f"{line.where}: exit {n}")
            elif "require-complete" in line.text and n != ExitStatus.INCOMPLETE:
                wrong.append(f"{line.where}: exit {n} next to --require-complete "
                             f"(it is {int(ExitStatus.INCOMPLETE)})")
            elif named and not any(f[0] == n and f[1] in named for f in exit_facts()):
                wrong.append(f"{line.where}: exit {n} next to {sorted(named)}, which never end with it")
    assert not wrong, wrong


def test_the_exit_rules_catch_what_they_must():
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
