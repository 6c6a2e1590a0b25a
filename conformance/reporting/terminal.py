"""What a conformance run prints: the target, progress, requirements by section, failures, the verdict.

`render(report)` is a pure function of the report dict (tests call it
directly); `Terminal` is the pytest plugin object that prints it, replacing
pytest's own progress and summary unless -v asked for them. The header (the
target and what judges it) is printed once: when the run starts, or with the
report when the run stopped before it started; the run's plan and pace follow it
(`progress`). -q prints the verdict line alone. The verdict is always the last
line. `--format json` prints JSON events instead, one a line (`progress.event`).
"""
from __future__ import annotations

import codecs
import os
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from conformance import catalog, registry, report as report_module
from conformance.reporting import progress
from conformance.reporting import (PROTOCOL_TITLE, agent_texts, blocked_line, cost_text, counts_text, curl_of, failures,
                                   grouped,
                                   http_text, judged_nothing, primary_evidence, protocol_of, seed_of, seed_text,
                                   size_text,
                                   suite_text, target_label, title)

MARKS_UNICODE = {"passed": "✔", "failed": "✘", "warning": "!", "not_assessed": "–", "info": "i", "error": "‼"}
MARKS_ASCII = {"passed": "+", "failed": "x", "warning": "!", "not_assessed": "-", "info": "i", "error": "E"}
ANSI = {"passed": "32", "failed": "31", "warning": "33", "not_assessed": "2", "info": "34", "error": "35",
        "conformant": "1;32", "conformant-partial": "1;33", "non-conformant": "1;31", "bold": "1"}
VERDICT_STATUS = {"conformant": "passed", "conformant-partial": "warning", "non-conformant": "failed",
                  "error": "error"}
CURL_NOTE = ("curl lines read credentials from the same environment variables as the suite "
             "(export them first); add --cacert \"$CONFORMANCE_CA_BUNDLE\" for a private CA")


@dataclass
class Style:
    unicode: bool = True
    colour: bool = False
    width: int = 100

    @classmethod
    def for_stream(cls, stream: IO[str]) -> "Style":
        tty = bool(getattr(stream, "isatty", lambda: False)())
        enc = getattr(stream, "encoding", None) or "ascii"
        try:
            utf = codecs.lookup(enc).name == "utf-8"
        except LookupError:
            utf = False
        width = shutil.get_terminal_size((120, 24)).columns if tty else 120
        return cls(unicode=utf, colour=tty and not os.environ.get("NO_COLOR"), width=max(60, width))

    def mark(self, status: str) -> str:
        return (MARKS_UNICODE if self.unicode else MARKS_ASCII).get(status, "?")

    def paint(self, text: str, key: str) -> str:
        return f"\033[{ANSI[key]}m{text}\033[0m" if self.colour and key in ANSI else text

    def text(self, s: str) -> str:
        """Typographic characters of our own wording, in ASCII when the stream cannot show them."""
        if self.unicode:
            return s
        return (s.replace("›", ">").replace("·", "-").replace("…", "...").replace("—", "-").replace("–", "-")
                .replace("≥", ">=").replace("\u201c", '"').replace("\u201d", '"').encode("ascii", "replace").decode())

    def clip(self, s: str, width: int | None = None) -> str:
        width = width or self.width
        return s if len(s) <= width else s[: max(1, width - 1)] + ("…" if self.unicode else "~")


# -- the report as lines ------------------------------------------------------------------
def target_lines(report: dict[str, Any], style: Style, checks: int | None = None) -> list[str]:
    """The header: the target, then the suite that judges it, the checks (when known), the seed and the
    selection."""
    opts = report.get("options") or {}
    seed, source = seed_of(report), opts.get("seed_source")
    extra = [(f"seed {seed}" + (f" ({source})" if source else "")) if seed is not None else "seed (none)",
             f"protocols {opts.get('protocols') or 'all'}", f"level {opts.get('level') or 'may'}"]
    if checks is not None:
        extra.insert(0, f"{checks} checks")
    if opts.get("requirements"):
        extra.append(f"requirements {opts['requirements']}")
    return [style.text(f"target: {target_label(report.get('target') or {})}"),
            style.text(suite_text(report.get("suite") or report_module.suite_identity()) + " · " + " · ".join(extra))]


def agent_lines(report: dict[str, Any], style: Style) -> list[str]:
    """The deployed agent, named once before the requirements when its readings showed it off its contract: one
    line saying how (the first way's reason), then what it left not assessed, then each way with an exchange that
    shows it."""
    said = agent_texts(report)
    if said is None:
        return []
    _, ways = said
    width = max(40, style.width - 4)
    deviations = (report.get("agent") or {}).get("deviations") or []
    hidden = sorted({rid for way in deviations for rid in way.get("not_assessed") or ()})
    left = (f"{len(hidden)} requirement(s) it keeps from being read are not assessed ({', '.join(hidden)}); "
            f"docs/agent.md says what it should do" if hidden else
            "it left no requirement not assessed; docs/agent.md says what it should do")
    out = ["", style.paint(style.text(agent_line(deviations)), "warning")]
    out += [f"  {line}" for line in textwrap.wrap(style.text(left), width - 2)]
    for way in ways:
        wrapped = textwrap.wrap(style.text(way), width - 4, max_lines=4, placeholder=" …" if style.unicode else " ...")
        out += [f"  - {wrapped[0]}"] + [f"    {more}" for more in wrapped[1:]]
    return out


def agent_line(deviations: list[dict[str, Any]]) -> str:
    """`agent: the deployed agent is off its contract, not the service: it counts a resumed run again (`count`, 5
    readings)`: how the agent departs from its contract, in one line (report.json `agent.deviations`, the first way
    first)."""
    first = deviations[0]
    n = first.get("readings") or 0
    more = f"; {len(deviations) - 1} more way(s) below" if len(deviations) > 1 else ""
    return (f"agent: the deployed agent is off its contract, not the service: it {first.get('way', 'departs from it')} "
            f"({first.get('reading', '')}, {n} reading{'' if n == 1 else 's'}{more})")


def requirement_lines(report: dict[str, Any], style: Style) -> list[str]:
    lines: list[str] = []
    for proto, sections in grouped(report):
        lines.append("")
        lines.append(style.paint(PROTOCOL_TITLE.get(proto, proto), "bold"))
        for section, rows in sections:
            lines.append(style.text(f"  {section}"))
            for row in rows:
                mark = style.paint(style.mark(row["status"]), row["status"])
                head = f"{row['id']:<15} {row['level']:<6} "
                tail = title(row.get("quote", ""), 12)
                if row.get("blocked_by"):
                    tail = blocked_line(row)
                elif row["status"] == "not_assessed" and row.get("message"):
                    tail = f"not assessed: {row['message']}"
                elif row.get("baselined") and row["status"] in ("failed", "warning"):
                    tail = f"baselined: {tail}"
                lines.append(f"    {mark} " + style.clip(style.text(head + tail), style.width - 6))
    return lines


def failure_lines(report: dict[str, Any], style: Style) -> list[str]:
    rows = failures(report)
    if not rows:
        return []
    lines = ["", style.paint(f"Failures and warnings ({len(rows)})", "bold")]
    wrap = lambda label, text, n=2: _wrapped(label, text, style, n)
    for row in rows:
        mark = style.paint(style.mark(row["status"]), row["status"])
        status = {"failed": "FAILED", "warning": "WARNING", "error": "ERROR"}[row["status"]]
        lines.append("")
        lines.append(style.text(f"{mark} {row['id']} {row['level']} {status} · {row.get('section', '')}"))
        lines += wrap("spec", f"\u201c{row.get('quote', '')}\u201d" if style.unicode else f'"{row.get("quote", "")}"', 3)
        lines += wrap("expected", row.get("expect", ""))
        lines += wrap("got", row.get("message", ""))
        if row.get("blocks"):
            lines += wrap("blocks", f"{', '.join(row['blocks'])} (not assessed: they cannot be read on what broke "
                                    f"this one)")
        ev = primary_evidence(row)
        if ev.get("scenario"):
            lines.append(f"  evidence: {ev['scenario']} / {ev.get('label', '')} (transcript in report.html)")
        curl = curl_of(row)
        if curl:
            lines.append(f"  reproduce: {curl}")
    lines += ["", style.text(f"({CURL_NOTE})")]
    return lines


def _wrapped(label: str, text: str, style: Style, max_lines: int) -> list[str]:
    prefix = f"  {label + ':':<10}"
    body = style.text(" ".join(str(text).split()))
    out = textwrap.wrap(body, width=max(40, style.width - len(prefix)), max_lines=max_lines,
                        placeholder=" …" if style.unicode else " ...") or [""]
    return [prefix + out[0]] + [" " * len(prefix) + more for more in out[1:]]


def verdict_line(report: dict[str, Any], style: Style) -> str:
    verdict = report.get("verdict", "error")
    paths = report.get("reports") or {}
    shown = " ".join(paths[k] for k in ("report.json", "report.html", "report.md", "junit.xml") if k in paths)
    mark = style.mark(VERDICT_STATUS.get(verdict, "error"))
    judged = "nothing judged" if judged_nothing(report) else counts_text(report)
    line = style.text(f"{mark} {verdict.upper()} · {judged} · {cost_text(report)}"
                      + (f" · reports: {shown}" if shown else ""))
    return style.paint(line, verdict if verdict in ANSI else "error")


def render(report: dict[str, Any], style: Style | None = None, *, quiet: bool = False,
           header: bool = True) -> list[str]:
    """Every line of the final report; quiet: the verdict line alone; header=False: without the header (the run
    printed it when it started)."""
    style = style or Style(colour=False)
    if quiet:
        return [verdict_line(report, style)]
    head = target_lines(report, style) if header else []
    if judged_nothing(report):   # the reason once, then the verdict
        return head + [""] + _wrapped("why", report.get("verdict_reason", ""), style, 4) + [verdict_line(report, style)]
    lines = head + agent_lines(report, style) + requirement_lines(report, style) + failure_lines(report, style)
    base = report.get("baseline") or {}
    if base.get("stale"):
        lines += ["", "stale baseline entries (now passing): " + ", ".join(base["stale"])]
    lines += [""] + _wrapped("why", report.get("verdict_reason", ""), style, 2)
    if report.get("run_cut"):
        lines += _wrapped("cut", report["run_cut"], style, 3)
    if seed_of(report) is not None:
        lines.append(style.text(f"seed: {seed_text(report)}"))
    if http_text(report):
        lines.append(style.text(f"HTTP versions judged: {http_text(report)}"))
    kept = recording_line(report)
    if kept:
        lines.append(style.text(kept))
    lines.append(verdict_line(report, style))
    return lines


def recording_line(report: dict[str, Any]) -> str | None:
    """Where the run's recording went and its size, or why it was not written."""
    kept = report.get("recording") or {}
    if kept.get("error"):
        return f"recording: {kept['error']}"
    if not kept.get("file"):
        return None
    # a file under the working directory is named relative to it; one elsewhere by its name alone (shown_path)
    folder = Path(kept["file"]).parent.as_posix() if re.search(r"[/\\]", kept["file"]) else None
    rejudge = f"`conformance rejudge {folder}`" if folder else "`conformance rejudge` on the --report-dir"
    return (f"recording: {kept['file']} ({size_text(kept.get('bytes', 0))}, {size_text(kept.get('json_bytes', 0))} "
            f"as JSON) · {rejudge} judges it again without the server")


# -- the pytest plugin object -----------------------------------------------------------------
class Terminal:
    """Prints the target when the run starts, progress per protocol, and the report at the end."""

    def __init__(self, config, stream: IO[str]):
        self.config = config
        self.stream = stream
        self.style = Style.for_stream(stream)
        self.quiet = config.option.verbose < 0
        self.verbose = config.option.verbose > 0
        self.json = (config.getoption("conf_format", None) or "text") == "json"
        self.ci = progress.in_ci()
        self.live = bool(getattr(stream, "isatty", lambda: False)()) and not self.ci and not self.json
        self.progress = ""       # the live line's part about requests (requests 120/290 · 2 min left)
        self.ticker: progress.Ticker | None = None
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.headed = False      # the header went out when the run started
        self.printed = False

    def write(self, line: str = "") -> None:
        enc = getattr(self.stream, "encoding", None) or "utf-8"
        line = line.encode(enc, "replace").decode(enc)   # e.g. a generated body in a curl line on an ASCII stream
        capman = self.config.pluginmanager.getplugin("capturemanager")
        try:
            if capman is not None:
                with capman.global_and_fixture_disabled():
                    self.stream.write(line + "\n")
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
        except BrokenPipeError:
            _silence_stdout()

    def started(self, run) -> None:
        """The run's target is known (and the embedded server up): name it before anything else."""
        for check in run.checks:
            proto = _check_protocol(check)
            self.totals[proto] = self.totals.get(proto, 0) + 1
        if self.quiet and not self.json:
            return
        option = self.config.getoption
        head = {"target": run.target.public(), "suite": report_module.suite_identity(),
                "options": {"seed": run.target.seed, "seed_source": run.target.seed_source,
                            "protocols": option("conf_protocols"), "level": option("conf_level"),
                            "requirements": option("conf_requirements")}}
        if self.json:
            self.write(run.redact(progress.event_line(progress.event(
                "start", target=target_label(head["target"]), suite=head["suite"], checks=len(run.checks),
                seed=run.target.seed, seed_source=run.target.seed_source))))
        else:
            if self.verbose:
                self.write()
            for line in target_lines(head, self.style, checks=len(run.checks)):
                self.write(run.redact(line))
        self.headed = True
        session = run.session
        if session is not None and not run.error:
            every = progress.QUIET_EVERY if self.ci or not (self.json or self.live) else progress.EVENTS_EVERY
            self.ticker = progress.Ticker(session.estimate, lambda kind, est: self._say(kind, est, session),
                                          live=self.live, every=every)
            session.on_wait = self.ticker.tick
            self.ticker.start()

    def _say(self, kind: str, est, session) -> None:
        """The plan, the pace or progress, as a line (live on a terminal) or as a JSON event."""
        if self.json:
            more = {"max_run_time_seconds": session.max_run_time} if kind == "plan" else {}
            self.write(progress.event_line(progress.event(kind, est, **more)))
        elif kind == "progress" and self.live:
            self.progress = progress.progress_line(est)
            self._live(self.style.text(self._live_text()))
        else:
            line = {"plan": lambda: progress.plan_line(est, session.max_run_time), "pace": lambda: progress.pace_line(est),
                    "progress": lambda: progress.progress_line(est)}[kind]()
            if self.live and (self.done or self.progress):
                self._live("")
                self.stream.write("\r")
            self.write(self.style.text(("  " if kind == "progress" else "") + line))

    def _live_text(self) -> str:
        parts = [f"{p} {self.done.get(p, 0)}/{n}" for p, n in self.totals.items()]
        return "  " + (f"{self.progress} · " if self.progress else "") + "checks: " + " · ".join(parts)

    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self, excrepr, excinfo) -> bool | None:
        """A crash of the suite is one line; CONFORMANCE_DEBUG=1 or -v shows pytest's traceback."""
        if self.verbose or os.environ.get("CONFORMANCE_DEBUG"):
            return None
        first = (str(excinfo.value).splitlines() or [""])[0]
        sys.stderr.write(f"conformance: internal error: {excinfo.typename}: {first} "
                         "(CONFORMANCE_DEBUG=1 shows the traceback)\n")
        return True

    def pytest_runtest_logreport(self, report) -> None:
        if self.quiet or self.verbose or not self.totals or getattr(self.config, "_conformance_run", None) is None \
                or self.config._conformance_run.error:   # a run that stopped before judging judges nothing
            return
        if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
            return
        check_id = report.nodeid.rsplit("[", 1)[-1].rstrip("]")
        check = registry.CHECKS.get(check_id)
        if check is None:
            return
        proto = _check_protocol(check)
        self.done[proto] = self.done.get(proto, 0) + 1
        if self.ticker is not None:
            self.ticker.tick()
        if self.json:
            return
        if self.live:
            self._live(self.style.text(self._live_text()))
        elif self.done[proto] == self.totals.get(proto):
            self.write(f"  {proto:<9} {self.totals[proto]} checks judged")

    def _live(self, text: str) -> None:
        try:
            self.stream.write("\r\033[K" + self.style.clip(text))
            self.stream.flush()
        except BrokenPipeError:
            _silence_stdout()

    def pytest_unconfigure(self, config) -> None:
        run = getattr(config, "_conformance_run", None)
        if self.printed or run is None or run.report is None:
            return
        self.printed = True
        if self.json:
            rep = run.report
            self.write(run.redact(progress.event_line(progress.event(
                "verdict", verdict=rep.get("verdict"), reason=rep.get("verdict_reason"), summary=rep.get("summary"),
                run_cut=rep.get("run_cut"), cost=rep.get("cost"), reports=rep.get("reports")))))
            return
        if self.live and (self.done or self.progress):
            self._live("")
            self.stream.write("\r")
        for line in render(run.report, self.style, quiet=self.quiet, header=not self.headed):
            self.write(run.redact(line))


def _check_protocol(check: registry.Check) -> str:
    protos = sorted(check.protocols)
    if len(protos) == 1:
        return protos[0]
    return protocol_of(check.requirements[0]) if check.requirements[0] in catalog.load() else protos[0]


def _silence_stdout() -> None:
    """The reader went away (`| head`): stop writing, without a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass
