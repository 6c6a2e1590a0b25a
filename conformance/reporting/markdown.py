"""report.md: the report in Markdown, for a CI job summary or a merge request (GitHub and GitLab render it).

`render(report)` is a pure function of the report dict, like the other renderers. The verdict comes first, then
the target and what judged it, the counts, each failure with the request that shows it, and what was not
assessed and why; a run that stopped before judging states its reason once. Everything the server sent is
escaped: it is untrusted text. The document stays under GitHub's job-summary limit (1 MiB): what does not fit
is left out, saying so and pointing to report.html.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from conformance.reporting import (STATUS_LABEL, agent_texts, blocked_line, cost_text, counts, curl_of, failures, judged_nothing,
                                   http_text, seed_text, target_label, title)

SUMMARY_LIMIT = 1024 * 1024   # bytes GitHub accepts in $GITHUB_STEP_SUMMARY for one step
MESSAGE_CHARS = 1500          # of one message; report.html has the rest
REASON_CHARS = 300            # of one "not assessed" reason
CURL_CHARS = 8000             # a longer curl line (a large generated body) is left to report.html
VERDICT_MARK = {"conformant": "✅", "conformant-partial": "🟡", "non-conformant": "❌", "error": "⛔"}
STATUS_MARK = {"failed": "❌", "warning": "⚠️", "error": "⛔"}
SECTION_TITLE = {"failed": "Failures (MUST)", "warning": "Warnings (SHOULD)",
                 "error": "Errors (the suite could not judge: not a verdict on the server)"}
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#&$!])")


def text(value: Any, limit: int | None = None) -> str:
    """Untrusted text as one line of Markdown that shows exactly these characters: no markup, link or HTML."""
    return _escape(_one_line(value, limit))


def prose(value: Any, limit: int | None = None) -> str:
    """The catalog's own text (a spec sentence, what is expected): its `code spans` kept, the rest as text()."""
    parts = re.split(r"(`[^`]+`)", _one_line(value, limit))
    return "".join(part if len(part) > 1 and part[0] == part[-1] == "`" else _escape(part) for part in parts)


def _one_line(value: Any, limit: int | None) -> str:
    plain = " ".join(str(value).split())
    if limit is not None and len(plain) > limit:
        plain = plain[:limit] + f"… ({len(plain) - limit:,} more characters in report.html)"
    return plain


def _escape(plain: str) -> str:
    return _SPECIAL.sub(r"\\\1", plain)


def code(value: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any run of backticks inside, so nothing can close it early."""
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{value}\n{fence}"


def render(report: dict[str, Any], limit: int = SUMMARY_LIMIT) -> str:
    """report.md, at most `limit` bytes in UTF-8."""
    head = "\n\n".join(_head(report))
    footer = _footer(report)
    if judged_nothing(report):   # its reason is the verdict's, stated once above
        return _fit([head, "Nothing was judged: the run stopped before any check could read an answer."], footer,
                    [], limit)
    return _fit([head, _counts_table(report), _agent(report)], footer, _body(report), limit)


def write(report: dict[str, Any], path: Path, redact: Callable[[str], str] = lambda s: s) -> Path:
    from conformance.report import redacted   # report imports the engine, which imports this package

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(redacted(report, redact)), encoding="utf-8")
    return path


# -- the parts ----------------------------------------------------------------------------------------------
def _head(report: dict[str, Any]) -> list[str]:
    verdict = str(report.get("verdict", "error"))
    suite = report.get("suite") or {}
    identity = [f"conformance {text(suite.get('version', '?'))}"]
    if suite.get("spec_revision"):
        identity.append(f"spec revision {text(suite['spec_revision'])}")
    if suite.get("catalog_digest"):
        identity.append(f"catalog digest `{text(suite['catalog_digest'])}`")
    opts = report.get("options") or {}
    rows = [("target", text(target_label(report.get("target") or {}))), ("suite", " · ".join(identity)),
            ("seed", text(seed_text(report))),
            *([("HTTP versions", text(http_text(report)))] if http_text(report) else []),
            ("selection", text(f"level {opts.get('level') or 'may'} · protocols {opts.get('protocols') or 'all'}"
                               + (f" · requirements {opts['requirements']}" if opts.get("requirements") else "")))]
    if report.get("started_at") or report.get("finished_at"):
        rows.append(("run", text(f"{report.get('started_at', '?')} – {report.get('finished_at', '?')}")))
    rows.append(("cost", text(cost_text(report))))
    return [f"## {VERDICT_MARK.get(verdict, '⛔')} {text(verdict.upper())}",
            f"**{text(report.get('verdict_reason', ''), MESSAGE_CHARS)}**",
            "| | |\n|---|---|\n" + "\n".join(f"| {name} | {value} |" for name, value in rows)]


def _counts_table(report: dict[str, Any]) -> str:
    c = counts(report)
    shown = [s for s in ("passed", "failed", "warning", "error", "not_assessed", "info") if c.get(s)]
    if not shown:
        return "No requirement was judged."
    return ("| " + " | ".join(STATUS_LABEL[s] for s in shown) + " |\n|" + "---:|" * len(shown) + "\n| "
            + " | ".join(str(c[s]) for s in shown) + " |")


def _agent(report: dict[str, Any]) -> str:
    """The deployed agent, named once when its readings showed it off its contract (report.json `agent`)."""
    said = agent_texts(report)
    if said is None:
        return ""
    _, ways = said
    deviations = (report.get("agent") or {}).get("deviations") or []
    first = deviations[0]
    n = first.get("readings") or 0
    more = f"; {len(deviations) - 1} more way(s) below" if len(deviations) > 1 else ""
    how = (f"The deployed agent is off its contract (docs/agent.md), not the service: it "
           f"{first.get('way', 'departs from it')} ({first.get('reading', '')}, {n} "
           f"reading{'' if n == 1 else 's'}{more})")
    hidden = sorted({rid for way in deviations for rid in way.get("not_assessed") or ()})
    left = (f"{len(hidden)} requirement(s) it keeps from being read are not assessed: {', '.join(hidden)}." if hidden
            else "It left no requirement not assessed.")
    return "\n".join([f"### ⚠️ The deployed agent", "", f"**{text(how, MESSAGE_CHARS)}**", "",
                      text(left, MESSAGE_CHARS), "", *(f"- {text(line, MESSAGE_CHARS)}" for line in ways)])


def _body(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The blocks after the head, most important first (the order they are cut in), each with what it shows."""
    by_id = {r["id"]: r for r in report.get("requirements", [])}
    blocks: list[tuple[str, str | None]] = []
    rows = failures(report)
    for status in ("failed", "error", "warning"):
        of_status = [r for r in rows if r["status"] == status]
        if of_status:
            blocks.append((f"### {SECTION_TITLE[status]} ({len(of_status)})", None))
            blocks += [(_problem(row, by_id), status) for row in of_status]
    missing = [r for r in report.get("requirements", []) if r["status"] == "not_assessed"]
    if missing:
        blocks.append((_not_assessed(missing), "not_assessed"))
    stale = (report.get("baseline") or {}).get("stale")
    if stale:
        blocks.append(("Stale baseline entries (they pass now: remove them from the baseline): "
                       + ", ".join(f"`{text(i)}`" for i in stale), None))
    return blocks


def _problem(row: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str:
    baselined = " (baselined: it does not fail the run)" if row.get("baselined") else ""
    lines = [f"#### {STATUS_MARK.get(row['status'], '')} {text(row['id'])} · {text(row['level'])} · "
             f"{text(STATUS_LABEL.get(row['status'], row['status']))}{baselined}",
             f"> {prose(row.get('quote', ''))}", ""]
    if row.get("section"):
        lines.append(f"*{text(row['section'])}*")
        lines.append("")
    if row.get("expect"):
        lines.append(f"**Expected:** {prose(row['expect'], MESSAGE_CHARS)}  ")
    lines.append(f"**Got:** {text(row.get('message', ''), MESSAGE_CHARS)}")
    if row.get("blocks"):
        lines += ["", "**Blocked by this failure** (not assessed: they cannot be read on what broke it):", ""]
        lines += [f"- {text(b)}: {text(title(by_id[b].get('quote', ''), 12))}" if b in by_id else f"- {text(b)}"
                  for b in row["blocks"]]
    curl = curl_of(row)
    if curl and len(curl) <= CURL_CHARS:
        lines += ["", "Reproduce (credentials from the same `CONFORMANCE_*` variables as the suite):", "",
                  code(curl, "sh")]
    elif curl:
        lines += ["", f"Reproduce: the curl line is {len(curl):,} characters long; it is in report.html."]
    return "\n".join(lines)


def _not_assessed(rows: list[dict[str, Any]]) -> str:
    lines = [f"<details><summary>Not assessed ({len(rows)}): what was not judged, and why</summary>", "",
             "| requirement | level | why |", "|---|---|---|"]
    for row in rows:
        why = blocked_line(row) if row.get("blocked_by") else row.get("message", "")
        lines.append(f"| {text(row['id'])} | {text(row['level'])} | {text(why, REASON_CHARS)} |")
    return "\n".join(lines + ["", "</details>"])


def _footer(report: dict[str, Any]) -> str:
    paths = report.get("reports") or {}
    shown = [f"`{text(paths[k])}`" for k in ("report.html", "report.json", "junit.xml") if k in paths]
    return ("The whole report, with every exchange's transcript: " + " · ".join(shown)) if shown else ""


def _fit(head: list[str], footer: str, body: list[tuple[str, str | None]], limit: int) -> str:
    """head, as many body blocks as fit in `limit` bytes with the footer, and a line saying what was left out."""
    size = lambda parts: len("\n\n".join(p for p in parts if p).encode("utf-8")) + 1
    kept = list(head)
    for n, (block, _) in enumerate(body):
        note = _left_out([shows for _, shows in body[n:]], limit)
        if size([*kept, block, note, footer]) > limit:
            kept.append(note)
            break
        kept.append(block)
    document = "\n\n".join(part for part in [*kept, footer] if part) + "\n"
    if len(document.encode("utf-8")) > limit:   # a head alone over the limit: only a tiny limit allows that
        document = document.encode("utf-8")[:limit].decode("utf-8", "ignore")
    return document


def _left_out(shows: list[str | None], limit: int) -> str:
    problems = {s: shows.count(s) for s in ("failed", "error", "warning") if s in shows}
    parts = [f"{n} {STATUS_LABEL[s]}" for s, n in problems.items()]
    if "not_assessed" in shows:
        parts.append("the list of requirements not assessed")
    what = ", ".join(parts) or "the rest"
    return (f"**Not shown here: {what}** (this summary stops at {limit:,} bytes, GitHub's job-summary limit); "
            "report.html has everything.")
