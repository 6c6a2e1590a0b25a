"""`conformance rejudge REPORT_DIR`: judge a run again from its recording, with no server and no network, and say
whether its report.json follows from it.

Every check the run judged is judged again by the engine's own code (`judging.assess`) on the recording
(`recording.Replay`), the report rebuilt by `report.build`, and each requirement's and check's status and the
verdict compared with report.json's. The same: verified (exit 0). Different: each difference named (exit 1), either
because the report was edited after the run or because this suite judges differently (a suite of another catalog
says so first: that is how a fix of the suite is tried on old recordings). Bad input is one line (exit 2).
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import __version__, api, judging, recording, report, versions
from conformance.baseline import Baseline
from conformance.recording import RecordingError


class BadInput(ValueError):
    """A report directory that cannot be re-judged: one line saying why."""


# -- loading ------------------------------------------------------------------------------------------------
def load(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(report.json, the recording, the recording's path) of a report directory (or of its report.json)."""
    path = Path(path)
    directory = path.parent if path.name == "report.json" else path
    if not directory.is_dir():
        raise BadInput(f"{path}: no such report directory")
    rep = read_report(directory / "report.json")
    kept = directory / recording.FILE
    if not kept.exists():
        raise BadInput(f"{directory}: no {recording.FILE} beside report.json (every `conformance run` writes one; "
                       f"without it there is nothing to re-judge)")
    try:
        doc = recording.read(kept)
    except RecordingError as exc:
        raise BadInput(str(exc)) from None
    known_version(doc["suite"].get("version"), str(kept))
    return rep, doc, kept


def read_report(path: Path, *, any_version: bool = False) -> dict[str, Any]:
    """A report.json a conformance run wrote (BadInput when it is missing, not JSON or not a report, or made by a
    suite this one does not know, unless `any_version`)."""
    if not path.is_file():
        raise BadInput(f"{path}: no such file")
    try:
        rep = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise BadInput(f"{path}: not JSON ({exc})") from None
    if not isinstance(rep, dict) or not isinstance(rep.get("requirements"), list) or "verdict" not in rep \
            or not isinstance(rep.get("suite"), dict):
        raise BadInput(f"{path}: not a conformance report (no verdict, suite or requirements)")
    if not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in rep["requirements"]):
        raise BadInput(f"{path}: not a conformance report (a requirement without an id)")
    if not any_version:
        known_version(rep["suite"].get("version"), str(path))
    return rep


def known_version(version: Any, where: str) -> None:
    """A suite version this suite can judge after: this one or an earlier one."""
    from packaging.version import InvalidVersion, Version

    try:
        theirs = Version(str(version))
    except InvalidVersion:
        raise BadInput(f"{where}: made by an unknown suite version {version!r}") from None
    if theirs > Version(__version__):
        raise BadInput(f"{where}: made by conformance {version}, newer than this suite ({__version__}): "
                       f"re-judge it with conformance {version} or later")


# -- judging again ------------------------------------------------------------------------------------------
def rejudge(doc: dict[str, Any], rep: dict[str, Any] | None = None) -> dict[str, Any]:
    """The report this suite builds from the recording: the checks its options select, judged on it (a check
    the recorded run did not judge is not run, unless it is new to this suite and its scenarios were recorded).
    `rep`: the original report, for what judging does not decide (cost, baseline)."""
    replay = recording.Replay(doc)
    opts = doc["options"]
    names = lambda text: [x.strip() for x in text.split(",") if x.strip()] if text else None
    protocols = names(opts["protocols"])
    chosen, not_run = api.select(level=opts["level"] or "may", protocols=set(protocols) if protocols else None,
                                 requirements=names(opts["requirements"]), check_ids=opts["checks"])
    judged, selected = set(doc["judged"]), set(doc["checks"])
    todo = []
    for c in chosen:
        missing = [s for s in c.scenarios if s not in replay.recorded]
        if c.id in judged or (c.id not in selected and not missing):
            todo.append(c)
        else:
            not_run[c.id] = (f"needs scenario {missing[0]}, which the recorded run did not record" if missing
                             else "not judged in the recorded run")
    results = []
    for c in ([] if replay.preflight_error else sorted(todo, key=lambda c: bool(c.every))):
        results.append(replay.results.setdefault(c.id, judging.assess(replay, c)))   # every exchange's rules last
    rep = rep or {}
    base = rep.get("baseline") or {}
    baseline = Baseline(set(base.get("known") or ()), base.get("file") or "")
    rebuilt = report.build(target=replay.target.public(), results=results, coverage=api.coverage_of(opts["checks"]),
                           not_run=not_run, baseline=baseline, stats=rep.get("cost") or {}, error=doc["error"],
                           options=rep.get("options") or {}, started_at=doc["started_at"],
                           finished_at=doc["finished_at"],
                           http_versions=versions.summary(replay, results))
    if opts.get("only_requested"):
        rebuilt = report.only_requested(rebuilt, opts["requirements"], ran=len(results), error=doc["error"])
    return rebuilt


@dataclass
class Verification:
    differences: list[str] = field(default_factory=list)
    #: the report's suite identity, when it is not this suite's (then differences are this suite's judgement)
    other_suite: dict[str, Any] | None = None
    report_suite: dict[str, Any] | None = None
    rebuilt: dict[str, Any] = field(default_factory=dict)
    checks: int = 0
    exchanges: int = 0
    scenarios: int = 0
    seconds: float = 0.0

    @property
    def verified(self) -> bool:
        return not self.differences and self.other_suite is None


def verify(rep: dict[str, Any], doc: dict[str, Any], *, recording_sha256: str | None = None) -> Verification:
    """Re-judge the recording and compare with the report: every difference in words."""
    t0 = time.monotonic()
    out = Verification()
    if doc["run_tag"] != (rep.get("options") or {}).get("run_tag") or doc["started_at"] != rep.get("started_at"):
        raise BadInput(f"the recording is not this report's: it was made by run {doc['run_tag']} at "
                       f"{doc['started_at']}, the report by run {(rep.get('options') or {}).get('run_tag')} at "
                       f"{rep.get('started_at')}")
    ours = report.suite_identity()
    out.report_suite = rep["suite"]
    if rep["suite"].get("catalog_digest") != ours["catalog_digest"]:
        out.other_suite = rep["suite"]
    if rep["suite"] != doc["suite"]:
        out.differences.append(f"suite: the report names {_suite(rep['suite'])}, its recording {_suite(doc['suite'])}")
    named = (rep.get("recording") or {}).get("sha256")
    if recording_sha256 and named and named != recording_sha256:
        out.differences.append(f"{recording.FILE}: its sha256 is {recording_sha256}, report.json names {named}")
    try:
        out.rebuilt = rejudge(doc, rep)
    except RecordingError as exc:
        raise BadInput(str(exc)) from None
    out.differences += differences(rep, out.rebuilt)
    out.checks = len(out.rebuilt.get("checks") or [])
    out.scenarios = len(doc["scenarios"])
    kept = [s if s["outcome"] == "recorded" else s.get("recording") for s in doc["scenarios"]]
    out.exchanges = sum(len(r["exchanges"]) for r in kept if r)
    out.seconds = time.monotonic() - t0
    return out


def differences(rep: dict[str, Any], rebuilt: dict[str, Any]) -> list[str]:
    """What the report says that the re-judged report does not: the verdict, each requirement's and each check's
    status (one missing from either side too), the deployed agent's, and the counts."""
    out = []
    if rep.get("verdict") != rebuilt["verdict"]:
        out.append(f"verdict: the report says {rep.get('verdict')}, the recording judges {rebuilt['verdict']}")
    out += _statuses("requirement", rep.get("requirements") or [], rebuilt["requirements"])
    out += _statuses("check", rep.get("checks") or [], rebuilt["checks"])
    said, got = rep.get("http_versions"), rebuilt.get("http_versions") or {}
    if said is not None and (not isinstance(said, dict) or any(got.get(k) != v for k, v in said.items())):
        # what the report says of them (a report of an earlier version says less: `other`, `left_out` came later)
        out.append(f"http_versions: the report says {said}, the recording {got}")
    if "agent" in rep and _agent(rep["agent"]) != _agent(rebuilt.get("agent")):
        out.append(f"agent: the report says {_agent(rep['agent'])}, the recording {_agent(rebuilt.get('agent'))}")
    if (rep.get("summary") or {}) != rebuilt["summary"]:
        out.append(f"summary: the report counts {_counts(rep.get('summary') or {})}, the recording "
                   f"{_counts(rebuilt['summary'])}")
    return out


def _statuses(kind: str, reported: list[dict[str, Any]], judged: list[dict[str, Any]]) -> list[str]:
    said = {r.get("id"): r.get("status") for r in reported if isinstance(r, dict)}
    seen = {r["id"]: r["status"] for r in judged}
    out = []
    for rid, status in seen.items():
        if rid not in said:
            out.append(f"{kind} {rid}: missing from the report (the recording judges it {status})")
        elif said[rid] != status:
            out.append(f"{kind} {rid}: the report says {said[rid]}, the recording judges {status}")
    out += [f"{kind} {rid}: in the report ({status}) but not judged from the recording"
            for rid, status in said.items() if rid not in seen]
    return out


def _agent(agent: dict[str, Any] | None) -> str:
    """The deployed agent as a report names it: its status and the ways it departed from its contract."""
    agent = agent or {}
    ways = "; ".join(f"{w.get('reading')} {w.get('way')}" for w in agent.get("deviations") or ())
    return f"{agent.get('status')}" + (f" ({ways})" if ways else "")


def _counts(summary: dict[str, Any]) -> str:
    return ", ".join(f"{n} {s}" for s, n in sorted(summary.items())) or "nothing"


def _suite(suite: dict[str, Any]) -> str:
    return (f"conformance {suite.get('version')} (spec revision {suite.get('spec_revision')}, "
            f"catalog {suite.get('catalog_digest')})")


# -- the command ----------------------------------------------------------------------------------------------
def lines(v: Verification, where: str) -> list[str]:
    out = [f"rejudged {where} from its recording: {v.checks} checks over {v.exchanges} exchanges of "
           f"{v.scenarios} scenarios in {v.seconds:.1f} s, no server contacted"]
    if v.other_suite is not None:
        out.append(f"the report was judged by {_suite(v.other_suite)}; this is {_suite(report.suite_identity())}: "
                   + ("what this suite judges differently:" if v.differences else "it judges nothing differently"))
    elif v.differences:
        made_by = (v.report_suite or {}).get("version")
        out.append(f"NOT VERIFIED: {len(v.differences)} difference(s) between report.json and what its recording "
                   f"shows (the report was edited after the run, or this suite's code judges differently"
                   + (f": the report was made by conformance {made_by}, this is {__version__}" if made_by != __version__
                      else "") + "):")
    out += [f"  {d}" for d in v.differences]
    if v.verified:
        rows = v.rebuilt["requirements"]
        out.append(f"verified: the same {len(rows)} requirement statuses, {v.checks} check statuses and verdict "
                   f"{v.rebuilt['verdict']}")
    return out


def main(path: str, *, as_json: bool = False) -> int:
    """The command: 0 verified, 1 differences, 2 bad input (raised as BadInput for the caller's one line)."""
    t0 = time.monotonic()
    rep, doc, kept = load(path)
    v = verify(rep, doc, recording_sha256=hashlib.sha256(kept.read_bytes()).hexdigest())
    v.seconds = time.monotonic() - t0      # reading and validating the recording included
    if as_json:
        print(json.dumps({"verified": v.verified, "differences": v.differences, "verdict": v.rebuilt["verdict"],
                          "suite": report.suite_identity(), "report_suite": rep["suite"], "checks": v.checks,
                          "seconds": round(v.seconds, 3)}, indent=2, ensure_ascii=False))
    else:
        print("\n".join(lines(v, str(path))))
    return 0 if v.verified or (v.other_suite is not None and not v.differences) else 1
