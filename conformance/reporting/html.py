"""The top of report.html: a verdict banner naming the target, then requirements by protocol and section.

pytest-html still writes the file (the contract says so) and keeps its per-check
table at the bottom; this page goes first and its stylesheet hides what a
reader does not need (pytest-metadata's Environment table, pytest-html's own
headings). Everything here is escaped: the server's answers are untrusted text.
"""
from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any

from conformance.reporting import (PROTOCOL_TITLE, STATUS_COLOUR, STATUS_LABEL, VERDICT_COLOUR, blocked_line,
                                   cost_text, counts, counts_text, curl_of, grouped, judged_nothing, primary_evidence,
                                   seed_of, suite_text, target_label, title)

CSS = """
#environment-header, #environment, body > p:first-of-type, .summary__data > h2, .summary__reload,
.summary__spacer { display: none; }
.summary { display: block; }
.summary__data { flex: none; width: auto; }
#conformance, #conformance summary, #conformance dd { color: #1f2328; }
#conformance { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; font-size: 14px;
  max-width: 1200px; }
#conformance .banner { color: #fff; padding: 14px 18px; border-radius: 6px; margin: 6px 0 14px; }
#conformance .banner .verdict { font-size: 26px; font-weight: 700; letter-spacing: .5px; }
#conformance .banner .reason { font-size: 15px; margin-top: 4px; }
#conformance .banner .target { font-size: 16px; margin-top: 8px; font-weight: 600; word-break: break-all; }
#conformance .banner .meta { font-size: 13px; margin-top: 6px; opacity: .92; }
#conformance .chips { margin: 0 0 12px; }
#conformance .chip { display: inline-block; padding: 2px 9px; margin: 0 6px 4px 0; border-radius: 11px;
  color: #fff; font-weight: 600; font-size: 13px; }
#conformance h2 { font-size: 18px; margin: 18px 0 6px; }
#conformance details { margin: 2px 0; }
#conformance details.protocol > summary { font-size: 16px; font-weight: 700; padding: 4px 0; cursor: pointer; }
#conformance details.section { margin-left: 16px; }
#conformance details.section > summary { font-weight: 600; padding: 2px 0; cursor: pointer; }
#conformance details.req { margin-left: 18px; border-left: 3px solid #ddd; padding-left: 8px; }
#conformance details.req > summary { cursor: pointer; padding: 1px 0; }
#conformance .mark { display: inline-block; width: 1.3em; font-weight: 700; }
#conformance .id { font-family: ui-monospace, Menlo, Consolas, monospace; font-weight: 600; }
#conformance .level { display: inline-block; min-width: 4.5em; color: #555; font-size: 12px; }
#conformance .status { font-weight: 700; }
#conformance blockquote { margin: 6px 0; padding: 4px 10px; background: #f6f8fa; border-left: 3px solid #999; }
#conformance dl { margin: 4px 0; display: grid; grid-template-columns: 7em minmax(0, 1fr); gap: 2px 10px; }
#conformance dt { font-weight: 600; color: #444; }
#conformance dd { margin: 0; min-width: 0; white-space: pre-wrap; word-break: break-word; }
#conformance pre { background: #f6f8fa; padding: 6px 8px; white-space: pre-wrap; word-break: break-all;
  font-size: 12px; margin: 4px 0; max-height: 420px; overflow: auto; }
#conformance pre.curl { background: #fffbe6; }
#conformance .muted { color: #666; }
h2.checks-heading { font-size: 16px; margin-top: 28px; }
#results-table .log { white-space: pre-wrap; word-break: break-all; }
"""
MARK = {"passed": "✔", "failed": "✘", "warning": "!", "not_assessed": "–", "info": "i", "error": "‼"}


def page(report: dict[str, Any], now: datetime | None = None) -> str:
    """The HTML inserted first into pytest-html's page."""
    parts = [f"<style>{CSS}</style>", '<section id="conformance">', banner(report, now), chips(report)]
    problems = [r for r in report.get("requirements", []) if r["status"] in ("failed", "warning", "error")]
    if problems:
        parts.append(f"<h2>Failures and warnings ({len(problems)})</h2>")
        parts += [requirement(r, open_=True) for r in problems]
    if not judged_nothing(report):   # a run that stopped before judging says why once, in the banner
        parts.append("<h2>Requirements by protocol and section</h2>")
        parts += [protocol_block(proto, sections) for proto, sections in grouped(report)]
    unspecified = report.get("unspecified") or []
    if unspecified:
        parts.append(f"<details class='protocol'><summary>Not specified by the spec ({len(unspecified)}): "
                     "facts supplied by options, never judged</summary><ul>"
                     + "".join(f"<li><span class='id'>{escape(u['id'])}</span> {escape(u.get('quote', ''))} "
                               f"<span class='muted'>— supply: {escape(u.get('supply', ''))}</span></li>"
                               for u in unspecified) + "</ul></details>")
    parts.append("</section><h2 class='checks-heading'>Checks (one pytest test per check)</h2>")
    return "\n".join(parts)


def banner(report: dict[str, Any], now: datetime | None = None) -> str:
    verdict = report.get("verdict", "error")
    colour = VERDICT_COLOUR.get(verdict, VERDICT_COLOUR["error"])
    when = (now.strftime("%Y-%m-%d %H:%M UTC") if now else
            str(report.get("finished_at") or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
    seed = seed_of(report)
    source = (report.get("options") or {}).get("seed_source")
    meta = [when, (f"seed {seed}" + (f" ({source})" if source else "")) if seed is not None else "no seed",
            cost_text(report), suite_text(report.get("suite") or {}, short=False)]
    return (f"<div class='banner' style='background:{colour}' data-verdict='{escape(verdict)}'>"
            f"<div class='verdict'>{escape(verdict.upper())}</div>"
            f"<div class='reason'>{escape(report.get('verdict_reason', ''))}</div>"
            f"<div class='target'>Target: {escape(target_label(report.get('target') or {}))}</div>"
            f"<div class='meta'>{' · '.join(escape(m) for m in meta)}</div></div>")


def chips(report: dict[str, Any]) -> str:
    c = counts(report)
    shown = [f"<span class='chip' style='background:{STATUS_COLOUR[s]}'>{c[s]} {STATUS_LABEL[s]}</span>"
             for s in ("failed", "warning", "error", "not_assessed", "info", "passed") if c.get(s)]
    return f"<div class='chips' title='{escape(counts_text(report))}'>{''.join(shown)}</div>"


def _summary_counts(rows: list[dict[str, Any]]) -> str:
    c: dict[str, int] = {}
    for r in rows:
        c[r["status"]] = c.get(r["status"], 0) + 1
    return ", ".join(f"<span style='color:{STATUS_COLOUR[s]}'>{c[s]} {STATUS_LABEL[s]}</span>"
                     for s in ("failed", "warning", "error", "not_assessed", "info", "passed") if c.get(s))


def _bad(rows: list[dict[str, Any]]) -> bool:
    return any(r["status"] in ("failed", "warning", "error") for r in rows)


def protocol_block(proto: str, sections: list[tuple[str, list[dict[str, Any]]]]) -> str:
    rows = [r for _, rs in sections for r in rs]
    inner = "".join(
        f"<details class='section'{' open' if _bad(rs) else ''}><summary>{escape(section)} "
        f"<span class='muted'>({_summary_counts(rs)})</span></summary>"
        + "".join(requirement(r) for r in rs) + "</details>"
        for section, rs in sections)
    return (f"<details class='protocol'{' open' if _bad(rows) else ''}>"
            f"<summary>{escape(PROTOCOL_TITLE.get(proto, proto))} — {len(rows)} requirements "
            f"<span class='muted'>({_summary_counts(rows)})</span></summary>{inner}</details>")


def _long_text(text: str, shown: int = 700) -> str:
    """A long message: its beginning, the rest one click away."""
    if len(text) <= shown:
        return escape(text)
    cut = text.rfind(" ", 0, shown)
    cut = cut if cut > shown // 2 else shown
    return (f"{escape(text[:cut])} <details class='more'><summary>… {len(text) - cut:,} more characters</summary>"
            f"{escape(text[cut:])}</details>")


def requirement(row: dict[str, Any], open_: bool = False) -> str:
    status = row["status"]
    colour = STATUS_COLOUR.get(status, "#000")
    label = STATUS_LABEL.get(status, status) + (" (baselined)" if row.get("baselined") else "")
    head = (f"<span class='mark' style='color:{colour}'>{MARK.get(status, '?')}</span>"
            f"<span class='id'>{escape(row['id'])}</span> <span class='level'>{escape(row['level'])}</span> "
            f"<span class='status' style='color:{colour}'>{escape(label)}</span> — "
            f"{escape(title(row.get('quote', ''), 14))}")
    body = [f"<blockquote>{escape(row.get('quote', ''))}</blockquote><dl>",
            f"<dt>section</dt><dd>{escape(row.get('section', ''))}</dd>"]
    if status in ("failed", "warning", "error", "info"):
        body.append(f"<dt>expected</dt><dd>{escape(row.get('expect', ''))}</dd>")
        body.append(f"<dt>got</dt><dd>{_long_text(row.get('message', ''))}</dd>")
        if row.get("blocks"):
            links = ", ".join(f"<a href='#req-{escape(b)}'>{escape(b)}</a>" for b in row["blocks"])
            body.append(f"<dt>blocks</dt><dd>{links} (not assessed: they cannot be read on what broke this "
                        f"one)</dd>")
    elif status == "not_assessed" and row.get("blocked_by"):
        body.append(f"<dt>not assessed</dt><dd>{escape(blocked_line(row))}: {_long_text(row.get('message', ''))}</dd>")
    elif status == "not_assessed":
        body.append(f"<dt>not assessed</dt><dd>{escape(row.get('message', ''))}</dd>")
    elif row.get("message"):
        body.append(f"<dt>noted</dt><dd>{escape(row['message'])}</dd>")
    body.append(f"<dt>checks</dt><dd>{escape(', '.join(row.get('checks', [])) or 'none')}</dd></dl>")
    curl = curl_of(row)
    if curl:
        body.append(f"<div><b>Reproduce</b></div><pre class='curl'>{escape(curl)}</pre>")
    evidence = sorted(row.get("evidence") or [], key=lambda ev: ev is not primary_evidence(row))
    for n, ev in enumerate(evidence):
        broke = " (broke the rule)" if ev.get("broke") else ""
        body.append(f"<details class='transcript'{' open' if open_ and n == 0 else ''}><summary>transcript: "
                    f"{escape(str(ev.get('scenario')))} / {escape(str(ev.get('label')))}{broke}</summary>"
                    f"<pre>{escape(ev.get('transcript', ''))}</pre></details>")
    anchor = "" if open_ else f" id='req-{escape(row['id'])}'"
    return (f"<details class='req status-{escape(status)}'{anchor}{' open' if open_ else ''}><summary>{head}</summary>{''.join(body)}</details>")
