"""One certification run, whichever front end drives it (`conformance run`, or pytest on its own).

options → target (the embedded server boots in a process of its own while the suite loads) → the checks
selected → the recording session, started as soon as the target is known (slowest scenario first) → the checks
judged as their recordings arrive → the reports. Nothing here knows pytest: the plugin turns each judged check
into a pytest outcome, `conformance run` starts the run before pytest does so the silence the ping check needs
begins at once.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Callable

from conformance import engine, judging, options, recording, registry, report, versions
from conformance.baseline import Baseline
from conformance.embedded import EmbeddedServer
from conformance.profile import Profile
from conformance.reporting import decorate, junit, markdown, shown_path, target_label
from conformance.target import FACTS, Target, env_or, from_server_facts

SIGNAL_EXIT = {signal.SIGINT: options.ExitStatus.SIGINT, signal.SIGTERM: options.ExitStatus.SIGTERM}
REPORT_FILES = ("report.json", "report.html", "report.md", "junit.xml")


class Certification:
    """A run's state from its options to its report. `get(name)` is an option's value by its name in
    `conformance.options` (None when not given); the target's facts fall back to their environment variables."""

    def __init__(self, get: Callable[[str], Any], server: EmbeddedServer | None = None):
        """`server`: the embedded server, already launched by the caller (no --base-url)."""
        self.get = get
        self.report_dir = Path(get("report_dir") or options.DEFAULT_REPORT_DIR)
        self.checks: list[registry.Check] = []
        self.not_run: dict[str, str] = {}
        self.selected = False
        self.server = server
        self.session: engine.Session | None = None
        self.error: str | None = None
        self.report: dict[str, Any] | None = None
        self.baseline = Baseline()
        #: scenario -> its outcome as recording.json.gz holds it, encoded as soon as its checks were judged
        self.encoded: dict[str, bytes] = {}
        self.began = time.monotonic()
        #: (signal name, number, seconds into the run) once SIGINT or SIGTERM arrived
        self.interrupt: tuple[str, int, float] | None = None
        #: whether a signal raises KeyboardInterrupt where the run is (False: it is only kept, e.g. while pytest
        #: starts up between `conformance run` starting the run and the plugin taking it over, or while finishing)
        self.raising = True
        self._previous_signals: dict[int, Any] = {}
        self.target = Target(base_url=str(self.fact("base_url") or "(embedded reference server, not started)"),
                             agent_id=self.fact("agent_id"), embedded=not self.fact("base_url"))

    def fact(self, name: str) -> Any:
        return env_or(self.get(name), name)

    # -- before judging ------------------------------------------------------------------------------
    def launch_server(self) -> None:
        """No --base-url: the embedded reference server starts booting now, in its own process."""
        if self.fact("base_url") is None and self.server is None:
            self.server = EmbeddedServer()
            self.server.launch()

    def select(self) -> None:
        """The checks this run judges (level, protocols, requirements), and why the others are not run."""
        if self.selected:
            return
        protocols = self.get("protocols")
        wanted = {p.strip() for p in protocols.split(",") if p.strip()} if protocols else None
        requirements = self.get("requirements")
        chosen, skipped = engine.select(registry.load_all(), level=self.get("level") or "may", protocols=wanted,
                                        requirements=[i.strip() for i in requirements.split(",") if i.strip()]
                                        if requirements else None)
        self.checks, self.not_run, self.selected = chosen, {**skipped, **self.not_run}, True

    def start(self) -> None:
        """The target (waiting for the embedded server's facts) and the session: the preflight, then every scenario
        the selected checks need, slowest first. A start that fails is the run's error, reported, never raised."""
        if self.session is not None or self.error is not None:
            return
        self.select()
        try:
            self.launch_server()
            self.target = self._target()
            self.baseline = Baseline.load(self.get("baseline"))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # e.g. the embedded server did not start: verdict error, no traceback
            self.error = f"could not start: {exc}"
            return
        self.session = engine.Session(self.target, self.checks, concurrency=self.get("concurrency") or 12)
        try:
            self.session.start()
        except KeyboardInterrupt:
            raise
        except Exception as exc:   # a fault of the suite: the run's error, reported with the reports, never a traceback
            self.error = f"could not start recording (a fault of the suite): {type(exc).__name__}: {exc}"
            return
        self.error = self.session.preflight_error

    def _target(self) -> Target:
        facts = {f: self.fact(f) for f in FACTS if f not in ("profile", "max_run_time")}
        profile = Profile.load(self.fact("profile"))
        if profile.extra_data_field and not facts.get("extra_data_field"):
            facts["extra_data_field"] = profile.extra_data_field
        common = dict(profile=profile, insecure=bool(self.get("insecure")), depth=max(1, self.get("depth") or 1),
                      seed=self.get("seed"), thorough=bool(self.get("thorough")), rate_limit=self.get("rate_limit"),
                      rate_probe_max=self.get("rate_probe_max") or options.RATE_PROBE_MAX,
                      max_run_time=self.fact("max_run_time"),
                      http2=not self.get("no_http2"))
        if facts["base_url"] is None:
            return from_server_facts(self.server.facts(), **common)
        return Target(**{k: v for k, v in facts.items() if v is not None}, **common)

    # -- judging -------------------------------------------------------------------------------------
    def assess(self, check: registry.Check) -> judging.CheckResult:
        result = self.session.results[check.id] = judging.assess(self.session, check)
        if not check.every:             # the rules over every exchange read each finished recording now, while the
            judging.read_ahead(self.session)    # slowest scenarios still record: the checks judged last find them read
        for name in list(self.session.seen):    # a recording handed out is final: encoded now, while slower scenarios
            if name not in self.encoded:        # still record (those no scenario's check reads, once read ahead)
                self.encoded[name] = recording.encode_outcome(self.session, name)
        return result

    def redact(self, text: str) -> str:
        return self.session.redactor.redact(text) if self.session else text

    # -- after ---------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the recorders and the embedded server (which is not waited for: it ends when its stdin closes)."""
        if self.session:
            self.session.close()
            self.session_stats = self.session.stats()
        if self.server:
            self.server.stop()
            self.server = None

    @property
    def interrupted(self) -> str | None:
        if self.interrupt is None:
            return None
        name, _, after = self.interrupt
        return f"interrupted after {after:.0f} s ({name})"

    def finish(self) -> dict[str, Any]:
        """The report, written as report.json, junit.xml, report.md and recording.json.gz (report.html is written
        by the plugin after this, with pytest's own errors of the suite). The reports name the files a run wrote
        relative to the working directory, or by name alone (`shown_path`): never a directory of the machine."""
        interrupted = self.interrupted
        self.close()
        results = list(self.session.results.values()) if self.session else []
        for c in self.checks:
            if self.session and c.id not in self.session.results:
                self.not_run.setdefault(c.id, "interrupted before it ran" if interrupted else "deselected")
        stats = getattr(self, "session_stats", None) or (self.session.stats() if self.session else {})
        error = interrupted or self.error
        rep = report.build(
            target=self.target.public(), results=results, coverage=registry.coverage(), not_run=self.not_run,
            baseline=self.baseline, stats=stats, error=error,
            options={"protocols": self.get("protocols"), "level": self.get("level") or "may",
                     "depth": self.get("depth") or 1, "seed": self.target.seed, "thorough": self.target.thorough,
                     "rate_probe_max": self.target.rate_probe_max, "seed_source": self.target.seed_source,
                     "requirements": self.get("requirements"), "run_tag": self.target.run_tag,
                     "no_http2": not self.target.http2},
            http_versions=versions.summary(self.session, results) if self.session else None)
        rep = report.only_requested(rep, self.get("requirements"), ran=len(results), error=error)
        if self.session:
            rep["started_at"] = report.utc_timestamp(self.session.began)
        rep["recording"] = recording.keep(self.session, self.report_dir, checks=self.checks, report=rep, error=error,
                                          encoded=self.encoded)
        if interrupted:
            rep["interrupted"] = interrupted
        for kept in (rep.get("recording"), rep.get("baseline")):     # files named as the run was given them
            if (kept or {}).get("file"):
                kept["file"] = shown_path(kept["file"])
        rep["reports"] = {name: shown_path(self.report_dir / name) for name in REPORT_FILES}
        self.report = report.Redacted(report.redacted(target_first(decorate(rep)), self.redact))
        report.write_json(self.report, self.report_dir, self.redact)
        junit.write(self.report, self.report_dir / "junit.xml", self.redact)
        markdown.write(self.report, self.report_dir / "report.md", self.redact)
        return self.report

    def exit_code(self) -> int:
        if self.interrupt is not None:
            return SIGNAL_EXIT[self.interrupt[1]]
        return report.exit_code(self.report, require_complete=bool(self.get("require_complete")))

    # -- interruption ----------------------------------------------------------------------------------
    def install_signal_handlers(self) -> None:
        """SIGINT/SIGTERM end the run quickly with verdict error (the reports say so); a second signal leaves at
        once. Only from the main thread, once."""
        if threading.current_thread() is not threading.main_thread() or self._previous_signals:
            return
        self._previous_signals = {s: signal.getsignal(s) for s in SIGNAL_EXIT}

        def on_signal(signum: int, frame) -> None:
            if self.interrupt is not None:
                os._exit(SIGNAL_EXIT.get(signum, options.ExitStatus.ERROR))
            self.interrupt = (signal.Signals(signum).name, signum, time.monotonic() - self.began)
            if self.raising:
                raise KeyboardInterrupt

        for s in SIGNAL_EXIT:
            signal.signal(s, on_signal)

    def restore_signal_handlers(self) -> None:
        for s, handler in self._previous_signals.items():
            signal.signal(s, handler)
        self._previous_signals = {}


def target_first(rep: dict[str, Any]) -> dict[str, Any]:
    target = dict(rep.get("target") or {})
    target["label"] = target_label(target)
    return {"target": target, **{k: v for k, v in rep.items() if k != "target"}}
