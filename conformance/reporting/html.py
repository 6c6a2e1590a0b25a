"""report.html: the page people read, written from the report dict alone.

One self-contained file (inline CSS, no script, nothing fetched), in the order a reader needs it:

1. the verdict, big and in its colour, with the one-line reason, the counts, the target and what judged it;
2. every failure, suite error and warning: its requirement, level, the spec sentence, the message (a
   `difference:` or `cause:` part on its own line), the exchange that broke the rule and its `curl` line;
3. the deployed agent, when its readings showed it off its contract;
4. every requirement, a table per spec section (id, level, status, spec, message shortened);
5. the coverage grid, when report.json has `dimensions`;
6. pytest's own errors, only when the suite itself failed (a collection error, a check that raised), as text;
7. what else describes the run (seed, HTTP versions, the recording, the other reports).

Everything is escaped: the server's answers are untrusted text. No directory of the machine running the suite
is written: `reports` are relative (`shown_path`), pytest's text goes through `strip_paths`.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

from conformance.reporting import (PROTOCOL_TITLE, STATUS_COLOUR, STATUS_LABEL, VERDICT_COLOUR, agent_texts,
                                   blocked_line, cost_text, counts, counts_text, curl_of, failures, grouped,
                                   http_text, judged_nothing, primary_evidence, seed_of, seed_text, strip_paths,
                                   suite_text, target_label, title)

PAGE_TITLE = "Agent Invocation Service conformance"
MARK = {"passed": "✔", "failed": "✘", "warning": "!", "not_assessed": "–", "info": "i", "error": "‼"}
VERDICT_MARK = {"conformant": "✔", "conformant-partial": "!", "non-conformant": "✘", "error": "‼"}
STATUS_ORDER = ("failed", "error", "warning", "not_assessed", "info", "passed")
MESSAGE_SHOWN = 1500      # characters of a failure's message before the rest folds away
TABLE_MESSAGE = 160       # characters of a message in the requirement tables
#: a cell of the coverage grid by the share of the scope's values judged
SHARE_CLASS = (("none", "0 %"), ("partial", "partial"), ("full", "100 %"))

CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: #1f2328; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  Helvetica, Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 16px 20px 40px; }
a { color: #0b57d0; }
code, pre, .id, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.banner { color: #fff; padding: 18px 22px 16px; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.2); }
.banner .verdict { font-size: 34px; font-weight: 800; letter-spacing: .5px; line-height: 1.15; }
.banner .verdict .glyph { margin-right: 10px; }
.banner .reason { font-size: 17px; margin-top: 6px; font-weight: 500; }
.banner .counts { margin-top: 12px; }
.banner .chip { display: inline-block; background: #fff; border-radius: 12px; padding: 2px 10px; margin: 0 6px 4px 0;
  font-weight: 700; font-size: 13px; }
.banner .target { font-size: 15px; margin-top: 8px; font-weight: 600; word-break: break-all; }
.banner .meta { font-size: 12.5px; margin-top: 4px; opacity: .95; }
nav.jump { margin: 10px 2px 0; font-size: 13px; color: #555; }
nav.jump a { margin-right: 14px; }
section.part { background: #fff; border-radius: 8px; padding: 4px 18px 14px; margin-top: 16px;
  box-shadow: 0 1px 2px rgba(0,0,0,.08); }
h2 { font-size: 20px; margin: 14px 0 8px; }
h3 { font-size: 16px; margin: 16px 0 6px; }
h4 { font-size: 13.5px; margin: 12px 0 4px; color: #333; }
.muted { color: #666; }
p.index { margin: 0 0 4px; line-height: 1.9; } p.index a { font-family: ui-monospace, Menlo, Consolas, monospace;
  font-weight: 600; text-decoration: none; white-space: nowrap; }
.badge { display: inline-block; color: #fff; border-radius: 4px; padding: 0 7px; font-size: 12px; font-weight: 700;
  white-space: nowrap; }
.problem { border: 1px solid #d0d7de; border-left: 6px solid #999; border-radius: 6px; padding: 10px 14px;
  margin: 12px 0; }
.problem h3 { margin: 0 0 6px; display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; }
.problem h3 .id { font-size: 17px; }
.problem h3 .section { font-weight: 400; color: #555; font-size: 13px; }
.problem h3 .level { border: 1px solid #8c959f; border-radius: 4px; padding: 0 6px; font-size: 12px; color: #333; }
blockquote.spec { margin: 6px 0 8px; padding: 6px 12px; background: #f6f8fa; border-left: 3px solid #8c959f;
  font-style: italic; }
dl.facts { margin: 4px 0; display: grid; grid-template-columns: 8.5em minmax(0, 1fr); gap: 3px 12px; }
dl.facts dt { font-weight: 600; color: #444; }
dl.facts dd { margin: 0; min-width: 0; word-break: break-word; }
.message { white-space: pre-wrap; word-break: break-word; }
.message .part { font-weight: 700; }
.message details { display: inline; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 4px; padding: 8px 10px; white-space: pre-wrap;
  word-break: break-all; font-size: 12px; margin: 4px 0; max-height: 460px; overflow: auto; }
pre.curl { background: #fffbe6; border-color: #f0e0a0; max-height: 200px; }
.label { font-weight: 600; margin-top: 8px; }
details > summary { cursor: pointer; }
table.reqs { border-collapse: collapse; width: 100%; table-layout: fixed; margin-bottom: 6px; }
table.reqs th, table.reqs td { border-bottom: 1px solid #eaeef2; padding: 3px 6px; text-align: left;
  vertical-align: top; }
table.reqs th { font-size: 12px; color: #555; font-weight: 600; }
table.reqs col.c-id { width: 9.5em; } table.reqs col.c-level { width: 5em; } table.reqs col.c-status { width: 8.5em; }
table.reqs col.c-spec { width: 32%; }
table.reqs td.msg { word-break: break-word; color: #333; }
table.reqs tr.bad { background: #fff5f5; } table.reqs tr.warn { background: #fff8eb; }
.agent { border-left: 6px solid #9e6a03; }
table.grid { border-collapse: separate; border-spacing: 3px; font-size: 11.5px; table-layout: fixed; }
table.grid col.c-req { width: 11em; } table.grid col.c-dim { width: 3.6em; }
table.grid th { font-weight: 600; color: #444; text-align: left; padding: 2px 4px; }
table.grid thead th { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; vertical-align: bottom;
  font-weight: 600; padding: 4px 2px; }
table.grid th.sec { padding-top: 8px; color: #222; white-space: nowrap; overflow: visible; }
table.grid tbody th.id { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
table.grid td { height: 1.7em; text-align: center; border-radius: 3px;
  font-variant-numeric: tabular-nums; }
table.grid td.none { background: #f8c9c4; } table.grid td.partial { background: #fde7a8; }
table.grid td.full { background: #b7e4c0; } table.grid td.na { background: transparent; color: #bbb; }
.legend span.sw { display: inline-block; width: 1.6em; height: 1em; vertical-align: middle; border-radius: 3px;
  margin: 0 4px 0 12px; }
footer { margin-top: 16px; font-size: 12.5px; color: #555; }
"""


# -- the page ------------------------------------------------------------------------------------------------
def render(report: dict[str, Any], suite_errors: Iterable[dict[str, str]] = (), now: datetime | None = None) -> str:
    """The whole of report.html. `suite_errors`: pytest's own errors of the run (`SuiteErrors.errors`)."""
    suite_errors = list(suite_errors)
    verdict = str(report.get("verdict", "error"))
    parts = [banner(report, now)]
    nav: list[tuple[str, str]] = []
    problems = failures(report)
    if problems:
        nav.append(("failures", f"Failures and warnings ({len(problems)})"))
        links = [f"<a href='#fail-{escape(r['id'])}' style='color:{STATUS_COLOUR.get(r['status'], '#555')}'>"
                 f"{MARK.get(r['status'], '?')} {escape(r['id'])}</a>" for r in problems]
        index = f"<p class='index'>{' · '.join(links)}</p>" if len(problems) > 1 else ""
        parts.append(_part("failures", f"Failures and warnings ({len(problems)})",
                           index + "".join(failure_card(r) for r in problems)))
    agent = agent_section(report)
    if agent:
        nav.append(("agent", "The deployed agent"))
        parts.append(agent)
    if not judged_nothing(report):      # a run that stopped before judging says why once, in the banner
        nav.append(("requirements", "Requirements"))
        parts.append(requirements_section(report))
    grid = coverage_section(report)
    if grid:
        nav.append(("coverage", "Coverage"))
        parts.append(grid)
    if suite_errors:
        nav.append(("suite-errors", f"Errors of the suite ({len(suite_errors)})"))
        parts.append(suite_errors_section(suite_errors))
    nav.append(("run", "About this run"))
    parts.append(about_section(report))
    parts.insert(1, "<nav class='jump'>" + "".join(f"<a href='#{key}'>{escape(text)}</a>" for key, text in nav)
                 + "</nav>")
    head = (f"<title>{escape(verdict.upper())} · {escape(target_label(report.get('target') or {}))} — "
            f"{PAGE_TITLE}</title>")
    return ("<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">\n"
            f"{head}\n<style>{CSS}</style>\n</head>\n<body>\n<main id='conformance'>\n" + "\n".join(parts)
            + f"\n<footer>{escape(PAGE_TITLE)} · {escape(suite_text(report.get('suite') or {}, short=False))}"
            "</footer>\n</main>\n</body>\n</html>\n")


def write(report: dict[str, Any], path: Path, redact: Callable[[str], str] = lambda s: s,
          suite_errors: Iterable[dict[str, str]] = ()) -> Path:
    """report.html, every string redacted (the credentials the run used never reach the page)."""
    from conformance.report import redacted   # report imports the engine, which imports this package

    page = render(redacted(report, redact), redacted(list(suite_errors), redact))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8", errors="replace")
    return path


def _part(key: str, heading: str, body: str, extra_class: str = "") -> str:
    return (f"<section class='{f'part {extra_class}'.strip()}' id='{key}'><h2>{escape(heading)}</h2>{body}"
            "</section>")


# -- 1. the verdict ------------------------------------------------------------------------------------------
def banner(report: dict[str, Any], now: datetime | None = None) -> str:
    """The verdict in its colour, why, the counts, the target, when, the seed, the cost and the suite (its whole
    catalog digest)."""
    verdict = str(report.get("verdict", "error"))
    colour = VERDICT_COLOUR.get(verdict, VERDICT_COLOUR["error"])
    when = (now.strftime("%Y-%m-%d %H:%M UTC") if now else
            str(report.get("finished_at") or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
    seed = seed_of(report)
    source = (report.get("options") or {}).get("seed_source")
    seeded = (f"seed {seed}" + (f" ({source})" if source else "")) if seed is not None else "no seed"
    meta = [f"finished {when}", seeded,
            cost_text(report), suite_text(report.get("suite") or {}, short=False)]
    return (f"<header class='banner' id='verdict' style='background:{colour}' data-verdict='{escape(verdict)}'>"
            f"<div class='verdict'><span class='glyph'>{VERDICT_MARK.get(verdict, '‼')}</span>"
            f"{escape(verdict.upper())}</div>"
            f"<div class='reason'>{escape(str(report.get('verdict_reason', '')))}</div>"
            f"{chips(report)}"
            f"<div class='target'>Target: {escape(target_label(report.get('target') or {}))}</div>"
            f"<div class='meta'>{' · '.join(escape(m) for m in meta)}</div></header>")


def chips(report: dict[str, Any]) -> str:
    c = counts(report)
    shown = [f"<span class='chip' style='color:{STATUS_COLOUR[s]}'>{c[s]} {STATUS_LABEL[s]}</span>"
             for s in STATUS_ORDER if c.get(s)]
    return f"<div class='counts' title='{escape(counts_text(report))}'>{''.join(shown) or 'no requirement'}</div>"


def _badge(status: str, baselined: bool = False) -> str:
    label = STATUS_LABEL.get(status, status) + (" (baselined)" if baselined else "")
    return (f"<span class='badge status-{escape(status)}' style='background:{STATUS_COLOUR.get(status, '#555')}'>"
            f"{MARK.get(status, '?')} {escape(label)}</span>")


# -- 2. failures and warnings --------------------------------------------------------------------------------
_PART_WORDS = re.compile(r"[ \t]+(?=(?:difference|cause):\s)")
_PART_HEAD = re.compile(r"(?m)^(difference|cause):")


def message_html(text: str, shown: int = MESSAGE_SHOWN) -> str:
    """A message as it is, its `difference:` and `cause:` parts each on a line of their own; past `shown`
    characters the rest folds away (one click shows it)."""
    text = _PART_WORDS.sub("\n", str(text))
    mark = lambda s: _PART_HEAD.sub(r"<span class='part'>\1:</span>", escape(s))
    if len(text) <= shown:
        return f"<div class='message'>{mark(text)}</div>"
    cut = max(text.rfind(" ", 0, shown), text.rfind("\n", 0, shown))
    cut = cut if cut > shown // 2 else shown
    return (f"<div class='message'>{mark(text[:cut])}<details class='more'><summary>… "
            f"{len(text) - cut:,} more characters</summary>{mark(text[cut:])}</details></div>")


def failure_card(row: dict[str, Any]) -> str:
    """A failed, erred or warned requirement: what the spec says, what went wrong, and the exchange that shows it."""
    status = row["status"]
    colour = STATUS_COLOUR.get(status, "#555")
    facts = [("expected", escape(str(row.get("expect", ""))) or "<span class='muted'>(not stated)</span>"),
             ("message", message_html(str(row.get("message", ""))))]
    if row.get("blocks"):
        links = ", ".join(f"<a href='#req-{escape(b)}'>{escape(b)}</a>" for b in row["blocks"])
        facts.append(("blocks", f"{links} (not assessed: they cannot be read on what broke this one)"))
    facts.append(("checks", escape(", ".join(row.get("checks") or ()) or "none")))
    body = [f"<blockquote class='spec'>{escape(str(row.get('quote', '')))}</blockquote>",
            "<dl class='facts'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"]
    ev = primary_evidence(row)
    if ev.get("transcript") is not None or ev.get("scenario"):
        broke = " — it broke the rule" if ev.get("broke") else ""
        body.append(f"<div class='label'>The exchange: {escape(str(ev.get('scenario', '')))} / "
                    f"{escape(str(ev.get('label', '')))}{broke}</div>"
                    f"<pre class='transcript'>{escape(str(ev.get('transcript', '')))}</pre>")
    curl = curl_of(row)
    if curl:
        body.append(f"<div class='label'>Reproduce it</div><pre class='curl'>{escape(curl)}</pre>")
    others = [e for e in row.get("evidence") or () if isinstance(e, dict) and e is not ev]
    if others:
        body.append(f"<details class='others'><summary>{len(others)} more exchange(s)</summary>"
                    + "".join(f"<div class='label'>{escape(str(e.get('scenario', '')))} / "
                              f"{escape(str(e.get('label', '')))}{' — it broke the rule' if e.get('broke') else ''}"
                              f"</div><pre class='transcript'>{escape(str(e.get('transcript', '')))}</pre>"
                              for e in others) + "</details>")
    return (f"<article class='problem status-{escape(status)}' id='fail-{escape(row['id'])}' data-failure="
            f"'{escape(row['id'])}' style='border-left-color:{colour}'><h3><span class='id'>{escape(row['id'])}</span>"
            f"<span class='level'>{escape(str(row.get('level', '')))}</span>"
            f"{_badge(status, bool(row.get('baselined')))}"
            f"<span class='section'>{escape(str(row.get('section', '')))}</span></h3>{''.join(body)}</article>")


# -- 3. the deployed agent -----------------------------------------------------------------------------------
def agent_section(report: dict[str, Any]) -> str:
    said = agent_texts(report)
    if said is None:
        return ""
    head, ways = said
    return _part("agent", "The deployed agent", f"<p><b>{escape(head[0].upper() + head[1:])}</b></p><ul>"
                 + "".join(f"<li>{escape(way)}</li>" for way in ways) + "</ul>", "agent")


# -- 4. the requirements by section --------------------------------------------------------------------------
def _short(text: str, limit: int = TABLE_MESSAGE) -> str:
    plain = " ".join(str(text).split())
    return plain if len(plain) <= limit else plain[:limit - 1].rstrip() + "…"


def _summary_counts(rows: list[dict[str, Any]]) -> str:
    c: dict[str, int] = {}
    for r in rows:
        c[r["status"]] = c.get(r["status"], 0) + 1
    return ", ".join(f"<span style='color:{STATUS_COLOUR[s]}'>{c[s]} {STATUS_LABEL[s]}</span>"
                     for s in STATUS_ORDER if c.get(s))


def _row_message(row: dict[str, Any]) -> str:
    status, message = row["status"], str(row.get("message") or "")
    if status == "not_assessed" and row.get("blocked_by"):
        message = f"{blocked_line(row)}: {message}"
    if not message:
        return ""
    shown = escape(_short(message))
    if status in ("failed", "warning", "error"):
        return f"{shown} <a href='#fail-{escape(row['id'])}'>details</a>"
    return f"<span title='{escape(_short(message, 2000))}'>{shown}</span>" if len(message) > TABLE_MESSAGE else shown


def requirement_row(row: dict[str, Any]) -> str:
    status = row["status"]
    kind = {"failed": " class='bad'", "error": " class='bad'", "warning": " class='warn'"}.get(status, "")
    return (f"<tr id='req-{escape(row['id'])}'{kind}><td class='id'>{escape(row['id'])}</td>"
            f"<td>{escape(str(row.get('level', '')))}</td><td>{_badge(status, bool(row.get('baselined')))}</td>"
            f"<td title='{escape(str(row.get('quote', '')))}'>{escape(title(str(row.get('quote', '')), 12))}</td>"
            f"<td class='msg'>{_row_message(row)}</td></tr>")


def requirements_section(report: dict[str, Any]) -> str:
    out = []
    for proto, sections in grouped(report):
        rows = [r for _, rs in sections for r in rs]
        out.append(f"<h3 id='protocol-{escape(proto)}'>{escape(PROTOCOL_TITLE.get(proto, proto))} "
                   f"<span class='muted'>— {len(rows)} requirement{'' if len(rows) == 1 else 's'}: "
                   f"{_summary_counts(rows)}</span></h3>")
        for section, rs in sections:
            out.append(f"<h4>{escape(section or '(no section)')}</h4><table class='reqs'><colgroup><col class='c-id'>"
                       "<col class='c-level'><col class='c-status'><col class='c-spec'><col></colgroup><thead><tr>"
                       "<th>id</th><th>level</th><th>status</th><th>spec</th><th>message</th></tr></thead><tbody>"
                       + "".join(requirement_row(r) for r in rs) + "</tbody></table>")
    unspecified = report.get("unspecified") or []
    if unspecified:
        out.append(f"<details class='unspecified'><summary>Not specified by the spec ({len(unspecified)}): facts "
                   "supplied by options, never judged</summary><ul>"
                   + "".join(f"<li><span class='id'>{escape(str(u.get('id', '')))}</span> "
                             f"{escape(str(u.get('quote', '')))} <span class='muted'>— supply: "
                             f"{escape(str(u.get('supply', '')))}</span></li>" for u in unspecified)
                   + "</ul></details>")
    return _part("requirements", "Requirements by protocol and section", "".join(out))


# -- 5. coverage ---------------------------------------------------------------------------------------------
def share_class(judged: Iterable[str], scope: Iterable[str]) -> tuple[str, int, int]:
    """('none' | 'partial' | 'full', values of the scope judged, values in the scope)."""
    wanted = list(dict.fromkeys(str(v) for v in scope))
    seen = {str(v) for v in judged}
    got = sum(1 for v in wanted if v in seen)
    return ("full" if got == len(wanted) else "none" if got == 0 else "partial"), got, len(wanted)


def coverage_section(report: dict[str, Any]) -> str:
    """report.json `dimensions`, as a grid: a requirement a row (grouped by section), a dimension a column, each
    cell coloured by the share of the requirement's scope of that dimension it was judged on, outlined in the
    requirement's status. Nothing when the report has no `dimensions`."""
    dims = (report.get("dimensions") or {}).get("requirements") if isinstance(report.get("dimensions"), dict) else None
    if not dims:
        return ""
    columns: list[str] = []
    for entry in dims.values():
        for key in (entry or {}).get("scope") or {}:
            if key not in columns:
                columns.append(key)
    rows_by_id = {r["id"]: r for r in report.get("requirements", [])}
    ordered: list[tuple[str, str]] = []    # (section title, id), the report's order, then the rest
    for proto, sections in grouped(report):
        for section, rs in sections:
            ordered += [(f"{PROTOCOL_TITLE.get(proto, proto)} › {section}", r["id"]) for r in rs if r["id"] in dims]
    ordered += [("Not in this report's requirements", rid) for rid in dims if rid not in rows_by_id]
    body, last = [], None
    for section, rid in ordered:
        if section != last:
            body.append(f"<tr><th class='sec' colspan='{len(columns) + 1}'>{escape(section)}</th></tr>")
            last = section
        entry = dims.get(rid) or {}
        status = (rows_by_id.get(rid) or {}).get("status", "")
        ring = STATUS_COLOUR.get(status, "#999")
        cells = []
        for dim in columns:
            scope = ((entry.get("scope") or {}).get(dim)) or []
            if not scope:
                cells.append("<td class='na' title='not in its scope'>·</td>")
                continue
            judged = (entry.get("judged_on") or {}).get(dim) or []
            kind, got, total = share_class(judged, scope)
            missing = [str(v) for v in scope if str(v) not in {str(j) for j in judged}]
            tip = f"{rid} · {dim}: judged on {got} of {total}" + (f"; not on {', '.join(missing)}" if missing else "")
            cells.append(f"<td class='{kind}' style='box-shadow: inset 0 0 0 2px {ring}' "
                         f"title='{escape(_short(tip, 600))}'>{got}/{total}</td>")
        body.append(f"<tr data-status='{escape(status)}'><th class='id' title="
                    f"'{escape(STATUS_LABEL.get(status, status))}'><span style='color:{ring}'>"
                    f"{MARK.get(status, '?')}</span> {escape(rid)}</th>{''.join(cells)}</tr>")
    legend = ("<p class='legend'>The share of each requirement's scope (the values of a dimension it applies to) "
              "its checks were judged on:"
              + "".join(f"<span class='sw' style='background:{c}'></span>{label}"
                        for c, label in (("#f8c9c4", "0 %"), ("#fde7a8", "partial"), ("#b7e4c0", "100 %")))
              + "<span class='sw' style='box-shadow: inset 0 0 0 2px #555'></span>outline: the requirement's status"
              "</p>")
    for key, what in (("pairwise", "Pairs of values of two request dimensions"),
                      ("triples", "Triples of values of three free request dimensions (--thorough)")):
        met = (report.get("dimensions") or {}).get(key) or {}
        if met:
            legend += (f"<p class='legend'>{what} met on one judged exchange: "
                       + ", ".join(f"{escape(op)} {row.get('covered')}/{row.get('possible')}"
                                   + (f" ({100 * row['share']:.1f} %)" if isinstance(row.get("share"), (int, float))
                                      else "")
                                   for op, row in met.items() if isinstance(row, dict)) + "</p>")
    cols = "<colgroup><col class='c-req'>" + "<col class='c-dim'>" * len(columns) + "</colgroup>"
    head = "<thead><tr><th></th>" + "".join(f"<th>{escape(d)}</th>" for d in columns) + "</tr></thead>"
    width = f"calc(11em + {len(columns)} * (3.6em + 3px) + 6px)"
    return _part("coverage", "Coverage", legend + f"<table class='grid' style='width:{width}'>{cols}{head}<tbody>"
                 f"{''.join(body)}</tbody></table>")


# -- 6. pytest's own errors ----------------------------------------------------------------------------------
def suite_errors_section(errors: list[dict[str, str]]) -> str:
    items = "".join(f"<div class='label'>{escape(e.get('where', ''))} ({escape(e.get('when', ''))})</div>"
                    f"<pre>{escape(e.get('text', ''))}</pre>" for e in errors)
    return _part("suite-errors", f"Errors of the suite ({len(errors)})",
                 "<p>pytest saw these errors in the suite itself (not a verdict on the server): a fault of the "
                 "suite to report to its maintainers.</p>" + items)


class SuiteErrors:
    """A pytest plugin: pytest's own errors of a conformance run that no requirement row tells (a collection error,
    a fixture's error, a check that raised instead of judging), with their traceback (a run prints none: --tb=no),
    without the machine's paths."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append({"where": strip_paths(report.nodeid).lstrip(":") or "collection", "when": "collection",
                                "text": strip_paths(report.longreprtext)})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield      # built: the traceback can be cut to the test's own frames (pytest's machinery out)
        excinfo = call.excinfo
        if excinfo is not None and report.failed:
            try:
                excinfo.traceback = excinfo.traceback.cut(path=item.path)
            except Exception:   # pragma: no cover - the whole traceback then
                pass
        if report.failed:   # (a run's thousands of passing phases need no place named)
            self.runtest(report, f"{strip_paths(str(item.path))}::{item.name}", excinfo)
        return report

    def runtest(self, report, where: str, excinfo=None) -> None:
        if not report.failed:
            return
        judged = dict(report.user_properties).get("status") in ("failed", "error")
        if report.when == "call" and judged:    # a check's verdict: its requirement's row tells it
            return
        text = str(excinfo.getrepr(style="short", chain=True)) if excinfo is not None else report.longreprtext
        self.errors.append({"where": where, "when": report.when, "text": strip_paths(text)})


# -- 7. about the run ----------------------------------------------------------------------------------------
def about_section(report: dict[str, Any]) -> str:
    opts = report.get("options") or {}
    facts = [("target", target_label(report.get("target") or {})),
             ("suite", suite_text(report.get("suite") or {}, short=False)),
             ("selection", f"level {opts.get('level') or 'may'} · protocols {opts.get('protocols') or 'all'}"
                           + (f" · requirements {opts['requirements']}" if opts.get("requirements") else "")),
             ("seed", seed_text(report))]
    if report.get("started_at") or report.get("finished_at"):
        facts.append(("run", f"{report.get('started_at', '?')} – {report.get('finished_at', '?')}"))
    facts.append(("cost", cost_text(report)))
    if http_text(report):
        facts.append(("HTTP versions", http_text(report)))
    if report.get("interrupted"):
        facts.append(("interrupted", str(report["interrupted"])))
    if report.get("run_cut"):
        facts.append(("cut", str(report["run_cut"])))
    stale = (report.get("baseline") or {}).get("stale")
    if stale:
        facts.append(("stale baseline", f"{', '.join(stale)} (now passing)"))
    kept = report.get("recording") or {}
    if kept.get("error"):
        facts.append(("recording", f"not written: {kept['error']}"))
    elif kept.get("file"):
        folder = Path(kept["file"]).parent.as_posix() if re.search(r"[/\\]", kept["file"]) else None
        rejudge = f"`conformance rejudge {folder}`" if folder else "`conformance rejudge` on the report directory"
        facts.append(("recording", f"{kept['file']} · {rejudge} judges it again without the server"))
    paths = report.get("reports") or {}
    if paths:
        facts.append(("reports", " · ".join(str(p) for p in paths.values())))
    return _part("run", "About this run", "<dl class='facts'>" + "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts) + "</dl>")
