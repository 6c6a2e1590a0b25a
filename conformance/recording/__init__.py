"""A run's recording, kept beside its reports as `recording.json.gz`: everything its checks were judged on, so
anyone can re-judge the verdict without the server (`conformance rejudge`).

It holds every scenario's outcome (recorded, not assessed and why, failed, a fault of the suite) with its exchanges
and facts, the preflight, the target (credentials as placeholders), the profile, the options that change what is
judged, and the selected checks; every string redacted like every report. `save()` writes it from a Session
(`keep()` for `conformance run`), `document()` builds it in memory, `read()` loads and validates one, and `Replay`
serves it to the engine's judging as the live Session would (`judging.RecordingSource`). Format: docs/reports.md;
JSON Schema: `reporting/recording.schema.json`.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import zlib
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

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

__all__ = ["FORMAT", "FILE", "RecordingError", "pieces", "encode_outcome", "document", "save", "keep", "read", "Replay",
           "schema"]


# -- writing -------------------------------------------------------------------------------------------------
# The recording is written as a stream of JSON pieces, one exchange at a time, straight into the gzip file: a run
# that recorded its whole budget (up to 96 MiB of bodies) never holds its recording as one string as well.
def pieces(session: Session, *, checks: Iterable[Check], options: dict[str, Any], error: str | None,
           started_at: str, finished_at: str, encoded: dict[str, bytes] | None = None) -> Iterator[str | bytes]:
    """The recording of a run as JSON text, piece by piece (str, or UTF-8 bytes where `encoded` gave them): what its
    checks were judged on, redacted by the run's redactor. `encoded`: scenarios already encoded (`encode_outcome`)
    while the run was still recording."""
    from conformance.report import suite_identity

    redact = session.redactor.redact
    target = session.target
    judging = {"seed": target.seed, "depth": target.depth, "thorough": target.thorough, "checks": None,
               "only_requested": False, **options}
    head = {
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
    }
    preflight_error = redact(session.preflight_error) if session.preflight_error else None
    yield _open(head) + ',"preflight":' + _open({"error": preflight_error}) + ',"recording":'
    yield from _recording(session.preflight, redact)
    yield '},"scenarios":['
    for n, (name, got) in enumerate(sorted(session.outcomes().items())):
        yield "," if n else ""
        if encoded and name in encoded:     # what the checks were handed (`seen`) is never replaced
            yield encoded[name]
        else:
            yield from _outcome(name, got, redact)
    yield "]}"


def encode_outcome(session: Session, name: str) -> bytes:
    """A scenario's outcome as the recording holds it, once the checks have been handed it (`Session.seen`): done
    while slower scenarios still record, so the end of the run only writes. Kept as UTF-8, not as a str: one
    astral character (a generated value has some) makes CPython store a whole str at 4 bytes a character, and a
    run that recorded its whole body budget would hold its recording four times over."""
    return "".join(_outcome(name, session.seen[name], session.redactor.redact)).encode("utf-8")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _open(obj: dict[str, Any]) -> str:
    """A non-empty object's JSON without its closing brace, for more members to follow."""
    return _json(obj)[:-1]


def _recording(rec: Recording, redact, head: dict[str, Any] | None = None) -> Iterator[str]:
    yield (_open(head) + ',"exchanges":[') if head else '{"exchanges":['
    for n, ex in enumerate(rec.exchanges):
        yield ("," if n else "") + _json(encode_exchange(ex, redact))
    yield '],"facts":' + _json({redact(k): _fact(rec.scenario, k, v, redact) for k, v in rec.facts.items()}) + "}"


def _fact(scenario: str, name: str, value: Any, redact) -> Any:
    try:
        return encode_value(value, redact)
    except TypeError as exc:
        raise RecordingError(f"scenario {scenario}'s fact {name!r}: {exc} (a fault of the suite)") from None


def _outcome(name: str, got: Recording | BaseException | None, redact) -> Iterator[str]:
    if isinstance(got, Recording):
        yield from _recording(got, redact, {"scenario": name, "outcome": "recorded"})
    elif got is None:
        yield _json({"scenario": name, "outcome": "not_recorded", "reason": "still running when the run ended"})
    elif isinstance(got, NotAssessed):
        yield _json({"scenario": name, "outcome": "not_assessed", "reason": redact(str(got))})
    elif isinstance(got, ScenarioFailed):
        detail = getattr(got, "detail", None)
        stopped = next((i for i, ex in enumerate(got.recording.exchanges) if ex is got.exchange), None) \
            if got.recording is not None and got.exchange is not None else None
        yield _open({"scenario": name, "outcome": "scenario_failed", "reason": redact(str(got)),
                     "suite_fault": bool(detail), "detail": redact(detail) if detail else None,
                     "stopped_at": stopped}) + ',"recording":'
        yield from _recording(got.recording, redact) if got.recording is not None else ["null"]
        yield "}"
    else:
        yield _json({"scenario": name, "outcome": "suite_fault", "type": type(got).__name__,
                     "reason": redact(str(got))})


def document(session: Session, **what: Any) -> dict[str, Any]:
    """The recording in memory, exactly as `save` writes it (`pieces`' arguments)."""
    return json.loads(b"".join(_utf8(piece) for piece in pieces(session, **what)))


class _Counted(io.RawIOBase):
    """A file the gzip stream writes through: counts and hashes the compressed bytes on their way."""

    def __init__(self, file: BinaryIO):
        self.file, self.size, self.sha256 = file, 0, hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.file.write(data)
        self.size += len(data)
        self.sha256.update(data)
        return len(data)


COMPRESSION = 1    # gzip's fastest: a run's recording is mostly bodies that repeat (2.5x faster than 6, 1.6x larger)


def save(session: Session, directory: Path, **what: Any) -> dict[str, Any]:
    """Writes `recording.json.gz` into `directory` (`pieces`' arguments): where, its size compressed and as JSON,
    and the sha256 of the file as a certifier receives it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE
    raw = 0
    with path.open("wb") as file:
        counted = _Counted(file)
        with gzip.GzipFile(fileobj=counted, mode="wb", compresslevel=COMPRESSION, mtime=0) as packed:
            for piece in pieces(session, **what):
                data = _utf8(piece)
                raw += len(data)
                packed.write(data)
    return {"file": str(path), "bytes": counted.size, "json_bytes": raw, "sha256": counted.sha256.hexdigest()}


def _utf8(piece: str | bytes) -> bytes:
    return piece if isinstance(piece, bytes) else piece.encode("utf-8")


def keep(session: Session | None, directory: Path, *, checks: Iterable[Check], report: dict[str, Any],
         error: str | None, encoded: dict[str, bytes] | None = None) -> dict[str, Any] | None:
    """The recording of a `conformance run` written beside its report (options and times from the report, which is
    about `options.requirements` alone when they were given): what `save` says, `{"error": …}` when it could not
    be written (the reports are written all the same), None when the run never started a session."""
    if session is None:
        return None
    options = dict(report.get("options") or {})
    options["only_requested"] = bool(options.get("requirements"))
    try:
        return save(session, directory, checks=checks, options=options, error=error,
                    started_at=report["started_at"], finished_at=report["finished_at"], encoded=encoded)
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
    """A kept recording as the engine's judging reads recordings (`judging.RecordingSource`): each scenario's
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
        #: check id -> its result, as `rejudge` judges them (the checks over every exchange read the others')
        self.results: dict[str, Any] = {}

    def scenario_names(self) -> list[str]:
        return sorted(self.outcomes)

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
            at = s.get("stopped_at")
            if failed.recording is not None and isinstance(at, int) and 0 <= at < len(failed.recording.exchanges):
                failed.exchange = failed.recording.exchanges[at]
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
