"""A run's recording, kept beside its reports as `recording.json.gz`: everything its checks were judged on, so
anyone can re-judge the verdict without the server (`conformance rejudge`).

It holds every scenario's outcome (recorded, not assessed and why, failed, a fault of the suite) with its exchanges
and facts, the preflight, the target (credentials as placeholders), the profile, the options that change what is
judged, and the selected checks; every string redacted like every report. `document()` builds it from a Session,
`save()` writes it, `read()` loads and validates one, and `Replay` serves it to the engine's judging as the live
Session would (`engine.RecordingSource`). Format: docs/reports.md; JSON Schema: `reporting/recording.schema.json`.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import json
import zlib
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from conformance.engine import PREFLIGHT, Recording, ScenarioFailed, Session
from conformance.outcomes import NotAssessed
from conformance.recording.codec import (RecordingError, decode_exchange, decode_target, decode_value,
                                         encode_exchange, encode_target, encode_value)
from conformance.registry import Check
from conformance.wire.redact import Redactor

FORMAT = "conformance-recording/1"
FILE = "recording.json.gz"
#: the options that change what is judged (the rest change only how the run talked to the server)
#: (`only_requested`: the report holds the requested requirements alone, as `conformance run --requirements` does)
JUDGING_OPTIONS = ("seed", "depth", "thorough", "level", "protocols", "requirements", "checks", "only_requested")

__all__ = ["FORMAT", "FILE", "RecordingError", "document", "save", "read", "Replay", "schema"]


# -- writing -------------------------------------------------------------------------------------------------
def document(session: Session, *, checks: Iterable[Check], options: dict[str, Any], error: str | None,
             started_at: str, finished_at: str) -> dict[str, Any]:
    """The recording of a run: what its checks were judged on, redacted by the run's redactor."""
    from conformance.report import suite_identity

    redact = session.redactor.redact
    target = session.target
    judging = {"seed": target.seed, "depth": target.depth, "thorough": target.thorough, "checks": None,
               "only_requested": False, **options}
    return {
        "format": FORMAT,
        "suite": suite_identity(),
        "started_at": started_at,
        "finished_at": finished_at,
        "run_tag": target.run_tag,
        "target": encode_target(target, redact),
        "options": {k: judging.get(k) for k in JUDGING_OPTIONS},
        "checks": [c.id for c in checks],
        "judged": sorted(session.results),
        "error": redact(error) if error else None,
        "budget": {"frames": session.budget.frames, "frames_used": session.budget.used,
                   "body_bytes": session.budget.body_bytes, "body_bytes_used": session.budget.used_bytes},
        "preflight": {"error": redact(session.preflight_error) if session.preflight_error else None,
                      "recording": _recording(session.preflight, redact)},
        "scenarios": [_outcome(name, got, redact) for name, got in sorted(session.outcomes().items())],
    }


def _recording(rec: Recording, redact) -> dict[str, Any]:
    return {"exchanges": [encode_exchange(ex, redact) for ex in rec.exchanges],
            "facts": {redact(k): _fact(rec.scenario, k, v, redact) for k, v in rec.facts.items()}}


def _fact(scenario: str, name: str, value: Any, redact) -> Any:
    try:
        return encode_value(value, redact)
    except TypeError as exc:
        raise RecordingError(f"scenario {scenario}'s fact {name!r}: {exc} (a fault of the suite)") from None


def _outcome(name: str, got: Recording | BaseException | None, redact) -> dict[str, Any]:
    if isinstance(got, Recording):
        return {"scenario": name, "outcome": "recorded", **_recording(got, redact)}
    if got is None:
        return {"scenario": name, "outcome": "not_recorded", "reason": "still running when the run ended"}
    if isinstance(got, NotAssessed):
        return {"scenario": name, "outcome": "not_assessed", "reason": redact(str(got))}
    if isinstance(got, ScenarioFailed):
        detail = getattr(got, "detail", None)
        return {"scenario": name, "outcome": "scenario_failed", "reason": redact(str(got)),
                "suite_fault": bool(detail), "detail": redact(detail) if detail else None,
                "recording": _recording(got.recording, redact) if got.recording is not None else None}
    return {"scenario": name, "outcome": "suite_fault", "type": type(got).__name__, "reason": redact(str(got))}


def encoded(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def save(doc: dict[str, Any], directory: Path) -> dict[str, Any]:
    """Writes `recording.json.gz` into `directory`: where, its size compressed and as JSON, and its sha256 (of
    the compressed file, as a certifier receives it)."""
    raw = encoded(doc)
    packed = gzip.compress(raw, compresslevel=6, mtime=0)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE
    path.write_bytes(packed)
    return {"file": str(path), "bytes": len(packed), "json_bytes": len(raw),
            "sha256": hashlib.sha256(packed).hexdigest()}


def keep(session: Session | None, directory: Path, *, checks: Iterable[Check], report: dict[str, Any],
         error: str | None) -> dict[str, Any] | None:
    """The recording of a `conformance run` written beside its report (options and times from the report, which is
    about `options.requirements` alone when they were given): what `save` says, `{"error": …}` when it could not
    be written (the reports are written all the same), None when the run never started a session."""
    if session is None:
        return None
    options = dict(report.get("options") or {})
    options["only_requested"] = bool(options.get("requirements"))
    try:
        doc = document(session, checks=checks, options=options, error=error, started_at=report["started_at"],
                       finished_at=report["finished_at"])
        return save(doc, directory)
    except (RecordingError, OSError, ValueError) as exc:
        return {"error": f"{FILE} not written: {exc}"}


# -- reading -------------------------------------------------------------------------------------------------
@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(resources.files("conformance.reporting").joinpath("recording.schema.json").read_text())


def read(path: Path) -> dict[str, Any]:
    """A recording file, validated: a RecordingError (one line) when it is missing, truncated, not JSON, or not
    a recording this suite reads."""
    try:
        packed = path.read_bytes()
    except FileNotFoundError:
        raise RecordingError(f"{path}: no such file (every run since the recording was introduced writes one "
                             f"beside report.json)") from None
    except OSError as exc:
        raise RecordingError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        raw = gzip.decompress(packed)
    except EOFError:
        raise RecordingError(f"{path}: the gzip data ends early (a truncated file)") from None
    except (OSError, zlib.error) as exc:
        raise RecordingError(f"{path}: not a gzip file ({exc})") from None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise RecordingError(f"{path}: not JSON ({exc})") from None
    return validated(doc, str(path))


def validated(doc: Any, where: str = "recording") -> dict[str, Any]:
    import jsonschema

    if isinstance(doc, dict) and doc.get("format") != FORMAT:
        raise RecordingError(f"{where}: format {doc.get('format')!r}, this suite reads {FORMAT!r}")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema()).iter_errors(doc))
    if error is not None:
        at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise RecordingError(f"{where}: not a valid recording at ${at}: {error.message[:200]}")
    return doc


class Replay:
    """A kept recording as the engine's judging reads recordings (`engine.RecordingSource`): each scenario's
    outcome, the preflight, and the target rebuilt with credentials as their placeholders."""

    def __init__(self, doc: dict[str, Any]):
        self.doc = doc
        # already redacted: this one masks any bearer token a check's message would quote
        self.redactor = Redactor()
        try:
            self.target = decode_target(doc["target"])
            self.preflight = self._rebuild(PREFLIGHT, doc["preflight"]["recording"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordingError(f"recording: cannot rebuild the target or the preflight ({type(exc).__name__}: "
                                 f"{exc})") from None
        self.preflight_error = doc["preflight"]["error"]
        #: every scenario's outcome, rebuilt now: a recording nothing can rebuild is bad input, found before judging
        self.outcomes = {s["scenario"]: self._outcome(s["scenario"], s) for s in doc["scenarios"]}
        #: the scenarios the run left an outcome for (a scenario still running when it ended left none)
        self.recorded = {s["scenario"] for s in doc["scenarios"] if s["outcome"] != "not_recorded"}

    def recording(self, name: str) -> Recording | BaseException:
        return self.outcomes.get(name) or self._outcome(name, None)

    def _outcome(self, name: str, s: dict[str, Any] | None) -> Recording | BaseException:
        if s is None or s["outcome"] == "not_recorded":
            return NotAssessed(f"scenario {name} is not in the recording "
                               + (f"({s['reason']})" if s else "(the recorded run did not need it)"))
        if s["outcome"] == "recorded":
            return self._rebuild(name, s)
        if s["outcome"] == "not_assessed":
            return NotAssessed(s["reason"])
        if s["outcome"] == "scenario_failed":
            failed = ScenarioFailed(s["reason"])
            failed.recording = self._rebuild(name, s["recording"]) if s["recording"] is not None else None
            if s["suite_fault"]:
                failed.detail = s["detail"] or "(no detail recorded)"
            return failed
        # a fault of the suite: an exception of the recorded type's name, so its message reads as in the run
        return type(s["type"], (Exception,), {})(s["reason"])

    def _rebuild(self, name: str, rec: dict[str, Any]) -> Recording:
        try:
            return Recording(name, self.target, [decode_exchange(ex, self.redactor) for ex in rec["exchanges"]],
                             {k: decode_value(v) for k, v in rec["facts"].items()})
        except RecordingError:
            raise
        except Exception as exc:   # a hand-edited value the schema lets through but nothing can rebuild
            raise RecordingError(f"recording: scenario {name} cannot be rebuilt ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})") from None
