"""junit.xml for CI: one test case per requirement, so annotations name requirements, not checks.

- passed: a plain test case (info: the observation in <system-out>);
- failed (MUST): <failure> with the spec sentence, expected vs got and the curl line;
- warning (SHOULD): <skipped message="warning: …"> plus the detail in <system-err> and a
  property status=warning. JUnit has no "passed with warning"; every common reader (GitHub
  test-report actions, GitLab's test report, Jenkins) shows a skipped case with its message and
  none of them fails the job for it, while a <failure> would;
- not assessed: <skipped message="not assessed: …"> with the reason (the option that would assess it);
- baselined failures: <skipped message="baselined: …">;
- a run that could not judge (unreachable, interrupted): one extra case `conformance.run` with <error>.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from conformance.reporting import blocked_line, curl_of, decorate, judged_nothing, title
from conformance.vocab.text import truncate


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def classname(row: dict[str, Any]) -> str:
    """protocol.section, dotted: 'invoke.Endpoints.POST_v1_agents_agentId_invoke.Rules_1'."""
    parts = [row.get("protocol", "general")] + [p for p in re.split(r"\s*›\s*", row.get("section", "")) if p]
    return ".".join(_segment(p) for p in parts if _segment(p))


def _segment(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]+", "_", text)).strip("_")


def case_name(row: dict[str, Any]) -> str:
    return f"{row['id']} {title(row.get('quote', ''), 8)}"


def _detail(row: dict[str, Any]) -> str:
    lines = [f"{row['id']} ({row['level']}) {row.get('section', '')}", f"spec: {row.get('quote', '')}",
             f"expected: {row.get('expect', '')}", f"got: {row.get('message', '')}"]
    if row.get("blocks"):
        lines.append(f"blocks: {', '.join(row['blocks'])} (not assessed: they cannot be read on what broke this one)")
    curl = curl_of(row)
    if curl:
        lines.append(f"reproduce: {curl}")
    for ev in (row.get("evidence") or [])[:2]:
        lines += ["", f"--- {ev.get('scenario')} / {ev.get('label')} ---", ev.get("transcript", "")]
    return "\n".join(lines)



def _headline(text: str) -> str:
    """A failure's `message` attribute: one line, as CI summaries show it."""
    return truncate(text, 300, one_line=True)


def build(report: dict[str, Any]) -> ET.Element:
    decorate(report)
    started = report.get("started_at") or datetime.now(timezone.utc).isoformat(timespec="seconds")
    suite = ET.Element("testsuite", name="conformance", timestamp=started.removesuffix("Z"),
                       time=str((report.get("cost") or {}).get("wall_seconds", 0)))
    props = ET.SubElement(suite, "properties")
    target = report.get("target") or {}
    identity = report.get("suite") or {}
    for name, value in (("verdict", report.get("verdict")), ("verdict_reason", report.get("verdict_reason")),
                        ("base_url", target.get("base_url")), ("agent_id", target.get("agent_id")),
                        ("embedded", target.get("embedded")), ("seed", (report.get("options") or {}).get("seed")),
                        ("seed_source", (report.get("options") or {}).get("seed_source")),
                        ("suite_version", identity.get("version")), ("spec_revision", identity.get("spec_revision")),
                        ("catalog_digest", identity.get("catalog_digest")), ("started_at", report.get("started_at")),
                        ("finished_at", report.get("finished_at"))):
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))
    n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if report.get("verdict") == "error":
        case = ET.SubElement(suite, "testcase", classname="conformance", name="conformance.run", time="0")
        ET.SubElement(case, "error", message=_headline(report.get("verdict_reason", "")), type="error").text = \
            report.get("verdict_reason", "")
        n["tests"] += 1
        n["errors"] += 1
    for row in [] if judged_nothing(report) else report.get("requirements", []):
        n["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=classname(row), name=case_name(row), time="0")
        cprops = ET.SubElement(case, "properties")
        for key in ("id", "level", "status"):
            ET.SubElement(cprops, "property", name=key, value=str(row.get(key, "")))
        ET.SubElement(cprops, "property", name="checks", value=",".join(row.get("checks", [])))
        status = row["status"]
        if row.get("baselined") and status in ("failed", "warning"):
            ET.SubElement(case, "skipped", message=_headline(f"baselined: {row.get('message', '')}"))
            ET.SubElement(case, "system-err").text = _detail(row)
            n["skipped"] += 1
        elif status == "failed":
            el = ET.SubElement(case, "failure", message=_headline(f"{row['id']} {row['level']}: {row.get('message', '')}"),
                               type=row["level"])
            el.text = _detail(row)
            n["failures"] += 1
        elif status == "error":
            ET.SubElement(case, "error", message=_headline(row.get("message", "")), type="error").text = _detail(row)
            n["errors"] += 1
        elif status == "warning":
            ET.SubElement(case, "skipped", message=_headline(f"warning: {row['id']} SHOULD: {row.get('message', '')}"))
            ET.SubElement(case, "system-err").text = _detail(row)
            n["skipped"] += 1
        elif status == "not_assessed" and row.get("blocked_by"):
            ET.SubElement(case, "skipped", message=_headline(blocked_line(row)))
            ET.SubElement(case, "system-out").text = row.get("message", "")
            n["skipped"] += 1
        elif status == "not_assessed":
            ET.SubElement(case, "skipped", message=_headline(f"not assessed: {row.get('message', '')}"))
            n["skipped"] += 1
        elif status == "info" and row.get("message"):
            ET.SubElement(case, "system-out").text = f"info: {row['message']}"
    for key, value in n.items():
        suite.set(key, str(value))
    root = ET.Element("testsuites", name="Agent Invocation Service conformance", **{k: str(v) for k, v in n.items()})
    root.append(suite)
    return root


def write(report: dict[str, Any], path: Path, redact: Callable[[str], str] = lambda s: s) -> Path:
    root = build(report)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    text = _NOT_XML.sub("\ufffd", redact(text))   # a hostile server's control bytes must not break the file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n", encoding="utf-8")
    return path
