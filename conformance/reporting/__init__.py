"""The reports people and CI read: terminal, HTML, JUnit, and the curl line of a failure.

Every renderer works on the report dict (what report.json holds) and nothing
else, so a report can be re-rendered from its JSON. `decorate()` adds the
keys the renderers share: each requirement's protocol, the target's label,
and how the run ended when it was interrupted.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

from conformance import catalog

STATUSES = ("failed", "warning", "error", "not_assessed", "info", "passed")
STATUS_LABEL = {"passed": "passed", "failed": "failed", "warning": "warning", "not_assessed": "not assessed",
                "info": "info", "error": "error"}
STATUS_COLOUR = {"passed": "#2e7d32", "failed": "#c62828", "warning": "#ef6c00", "info": "#1565c0",
                 "not_assessed": "#757575", "error": "#6a1b9a"}
VERDICT_COLOUR = {"conformant": "#2e7d32", "conformant-partial": "#9e6a03", "non-conformant": "#c62828",
                  "error": "#6a1b9a"}
PROTOCOL_ORDER = ("invoke", "agui", "mcp", "metadata", "auth", "general")
PROTOCOL_TITLE = {"invoke": "Invoke", "agui": "AG-UI", "mcp": "MCP", "metadata": "Protected-resource metadata",
                  "auth": "Authentication", "general": "General"}


def protocol_of(requirement_id: str) -> str:
    req = catalog.load().get(requirement_id)
    return req.protocol if req else "general"


def decorate(report: dict[str, Any]) -> dict[str, Any]:
    """Adds `protocol` (and `expect`) to each requirement row; idempotent."""
    reqs = catalog.load()
    for row in report.get("requirements", []):
        req = reqs.get(row["id"])
        row.setdefault("protocol", req.protocol if req else "general")
        if req is not None:
            row.setdefault("expect", req.expect)
    return report


def grouped(report: dict[str, Any]) -> Iterator[tuple[str, list[tuple[str, list[dict[str, Any]]]]]]:
    """(protocol, [(section, rows)]) in catalog order: protocols as PROTOCOL_ORDER, sections as first seen."""
    decorate(report)
    by_protocol: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in report.get("requirements", []):
        by_protocol.setdefault(row["protocol"], {}).setdefault(row.get("section", ""), []).append(row)
    for proto in sorted(by_protocol, key=lambda p: PROTOCOL_ORDER.index(p) if p in PROTOCOL_ORDER else 99):
        yield proto, list(by_protocol[proto].items())


def title(quote: str, words: int = 9) -> str:
    """The first words of a spec sentence, without markdown, as a short title."""
    plain = re.sub(r"\s+", " ", quote.replace("`", "")).strip()
    parts = plain.split(" ")
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def target_label(target: dict[str, Any]) -> str:
    """'https://127.0.0.1:8443 · agent agt_123 · embedded reference server'."""
    parts = [str(target.get("base_url") or "(no base URL)")]
    if target.get("agent_id"):
        parts.append(f"agent {target['agent_id']}")
    if target.get("embedded"):
        parts.append("embedded reference server")
    return " · ".join(parts)


def counts(report: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in report.get("requirements", []):
        out[row["status"]] = out.get(row["status"], 0) + 1
    return out


def counts_text(report: dict[str, Any]) -> str:
    c = counts(report)
    shown = [f"{c[s]} {STATUS_LABEL[s]}" for s in ("passed", "failed", "warning", "error", "not_assessed", "info")
             if c.get(s)]
    total = sum(c.values())
    return f"{total} requirement{'' if total == 1 else 's'}: " + (", ".join(shown) or "none")


def cost_text(report: dict[str, Any]) -> str:
    cost = report.get("cost") or {}
    if not cost:
        return "no request sent"
    return (f"{cost.get('requests', 0)} requests, {cost.get('agent_runs', 0)} agent runs, "
            f"{size_text(cost.get('bytes_received', 0))} received, {cost.get('wall_seconds', 0):g} s")


def size_text(n: int) -> str:
    for unit, size in (("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def suite_text(suite: dict[str, Any], *, short: bool = True) -> str:
    """'conformance 0.1.0 · spec 2026-11-22 · catalog sha256:0a1b2c3d4e5f': what judged the run (a short digest
    for people; report.json, junit.xml and `conformance --version` carry the whole one)."""
    digest = str(suite.get("catalog_digest") or "")
    if short and digest.startswith("sha256:"):
        digest = digest[:19]
    parts = [f"conformance {suite.get('version', '?')}"]
    if suite.get("spec_revision"):
        parts.append(f"spec {suite['spec_revision']}")
    if digest:
        parts.append(f"catalog {digest}")
    return " · ".join(parts)


def seed_of(report: dict[str, Any]) -> Any:
    return (report.get("options") or {}).get("seed")


def http_text(report: dict[str, Any]) -> str | None:
    """The HTTP versions the checks were judged on (with the answered exchanges of each), whether HTTP/2 was spoken
    and why, and why any exchange went over another version; None for a report without them."""
    got = report.get("http_versions")
    if not got:
        return None
    exchanges = got.get("exchanges") or {}
    judged = got.get("judged") or []
    counts = ", ".join(f"{version} ({exchanges.get(version, 0):,} exchanges)" for version in judged)
    text = f"{counts or 'none'} · HTTP/2 {got.get('http2', '')}"
    for other in got.get("other") or ():
        text += (f" · {other.get('scenario')} / {other.get('label')} went over {other.get('http_version')}: "
                 f"{other.get('why')}")
    return text


def seed_text(report: dict[str, Any]) -> str:
    """The seed, how it was chosen, and how to send the same generated inputs again (or others)."""
    seed = seed_of(report)
    if seed is None:
        return "none"
    source = (report.get("options") or {}).get("seed_source")
    if source == "default":
        version = (report.get("suite") or {}).get("version", "")
        return (f"{seed} (no --seed: the default of suite {version}, so every run sends the same generated inputs; "
                "--seed random explores others)")
    how = {"given": "given", "random": "drawn at random"}.get(source)
    return f"{seed} ({how + '; ' if how else ''}the same generated inputs again: --seed {seed})"


def failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Failed requirements first, then warnings (SHOULD), then errors, in catalog order."""
    rank = {"failed": 0, "error": 1, "warning": 2}
    rows = [r for r in report.get("requirements", []) if r["status"] in rank]
    return sorted(rows, key=lambda r: rank[r["status"]])


def primary_evidence(row: dict[str, Any]) -> dict[str, Any]:
    """The exchange to show first: one a check named as breaking the rule, and among those (or when none was
    named) one built for the requirement by hand over a generated (fuzz) one."""
    evidence = [ev for ev in row.get("evidence") or () if isinstance(ev, dict)]
    evidence = [ev for ev in evidence if ev.get("broke")] or evidence
    handmade = [ev for ev in evidence if not str(ev.get("scenario", "")).startswith("fuzz.")]
    return (handmade or evidence or [{}])[0]


def judged_nothing(report: dict[str, Any]) -> bool:
    """The run stopped before judging (unreachable, key refused, agent unknown): its reason is the verdict's."""
    return report.get("verdict") == "error" and not report.get("checks") and bool(report.get("requirements"))


def blocked_line(row: dict[str, Any]) -> str:
    return f"blocked by {', '.join(row['blocked_by'])} (not assessed: that failure keeps it from being read)"


def curl_of(row: dict[str, Any]) -> str | None:
    return primary_evidence(row).get("curl") or None


def agent_texts(report: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(headline, one line per way) naming a deployed agent its readings showed off its contract (report.json
    `agent`), or None when none did: what every renderer says once, before the requirements."""
    agent = report.get("agent") or {}
    ways = agent.get("deviations") or []
    if agent.get("status") != "off-contract" or not ways:
        return None
    hidden = sorted({rid for way in ways for rid in way.get("not_assessed") or ()})
    head = ("the deployed agent is off its contract (docs/agent.md), not the service: "
            + (f"{len(hidden)} requirement(s) it keeps from being read are not assessed ({', '.join(hidden)})"
               if hidden else "it left no requirement not assessed"))
    lines = []
    for way in ways:
        ex = way.get("example") or {}
        where = "/".join(x for x in (ex.get("scenario"), ex.get("label")) if x)
        lines.append(f"{way['reading']} {way['way']}: {where} expected {_short(ex.get('expected'))}, got "
                     f"{_short(ex.get('got'))} ({way['readings']} reading(s)); the contract: \u201c{way['contract']}\u201d"
                     f" (test vector \u201c{way['vector']}\u201d)")
    return head, lines


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return repr(text if len(text) <= limit else text[:limit] + "…")


def shown_path(path: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None) -> str:
    """A file a run wrote, as every report names it: relative to the working directory when it is under it
    (`reports/report.json`, `./report.json` for the directory itself), else its name alone. No report names a
    directory of the machine running the suite."""
    given = Path(path)
    try:
        rel = given.resolve().relative_to(Path(cwd or os.getcwd()).resolve())
    except (ValueError, OSError):
        return given.name
    return rel.as_posix() if rel.parent != Path(".") else f"./{rel.as_posix()}"


_SUITE_ROOT = Path(__file__).resolve().parents[2]     # the checkout, or site-packages for an installed wheel
_LIBRARY_DIR = re.compile(r"[^\s'\"()\[\]<>=]*?[/\\](?:site|dist)-packages[/\\]"
                          r"|[^\s'\"()\[\]<>=]*?[/\\]lib[/\\]python\d+(?:\.\d+)?[/\\]")
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])(?:[A-Za-z]:)?[/\\](?:[\w.@+~-]+[/\\])+(?=[\w.@+~-])")


def strip_paths(text: str) -> str:
    """The suite's own text (a traceback pytest wrote) without the directories of the machine running it: the suite
    and the libraries from where they are installed (`conformance/plugin.py:161`), any other absolute path as its
    last name. Never used on what a server sent."""
    for root in {str(_SUITE_ROOT), os.getcwd()}:
        if len(root) > 1:
            text = text.replace(root.rstrip("/\\") + os.sep, "")
    return _ABSOLUTE.sub("", _LIBRARY_DIR.sub("", text))
