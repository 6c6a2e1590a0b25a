"""Every number the pages state is a figure read from the code (or measured here), or said why it is none.

The pages are README.md, docs/, the packages' READMEs, action.yml's descriptions and every `--help`. A number no
reading of tests/docs/readings.py accounts for fails with its page, line and context: tie it to the code there
(a `Figure` with the phrase around it, or a `Checked` example), or say why it is no figure (a `NotFigure`). The
tests at the end plant drifts of each kind in the real pages and prove they are caught.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache

import pytest

from conformance import catalog
from tests.docs import truths
from tests.docs.figures import Audit, Page, audit, numbers
from tests.docs.pages import page, prose_pages
from tests.docs.readings import MEASURED, READINGS
from tests.docs.test_one_truth import prose_sentences

REQUIREMENT = re.compile(r"\b[A-Z]+-[A-Z]+-\d{3}\b")


@cache
def the_audit() -> Audit:
    return audit(prose_pages(), READINGS)


def test_every_number_the_pages_state_is_accounted_for():
    found = the_audit().unaccounted
    assert not found, ("numbers no reading accounts for: tie each to the code in tests/docs/readings.py (a Figure "
                       "with the words around it), or say there why it is no figure:\n" + "\n".join(found))


def test_every_figure_is_the_codes():
    wrong = the_audit().wrong
    assert not wrong, "figures that are not the code's:\n" + "\n".join(wrong)


def test_every_figure_is_stated_where_it_says():
    """A reading that names its pages must find its phrase there: a rewording cannot leave a figure unchecked."""
    stated_in = the_audit().stated_in
    lost = [f"{r.what}: not found in {sorted(set(r.where) - stated_in[r.what])}" for r in READINGS
            if getattr(r, "where", ()) and not set(r.where) <= stated_in[r.what]]
    assert not lost, "\n".join(lost)


# -- what only --thorough assesses ------------------------------------------------------------------------------
def thorough_statements() -> list[tuple[str, set[str]]]:
    """(where, requirement ids) of every sentence, or table cell, that names `--thorough` and requirements."""
    found = []
    for doc in prose_pages():
        if not doc.name.endswith(".md"):
            continue
        found += [(f"{doc.name}:{n}", set(REQUIREMENT.findall(s))) for n, s in prose_sentences(doc)
                  if "--thorough" in s and REQUIREMENT.search(s)]
        found += [(line.where, set(REQUIREMENT.findall(cell))) for line in doc.lines()
                  if line.text.startswith("|") and not line.code for cell in line.text.split("|")
                  if "--thorough" in cell and REQUIREMENT.search(cell)]
    return found


def test_what_the_docs_say_needs_thorough_is_what_only_thorough_assesses():
    """A requirement named beside `--thorough` is one only a --thorough run assesses (measured on the scenarios:
    truths.thorough_only), and README.md and docs/certify.md name all of them."""
    only = truths.thorough_only()
    statements = thorough_statements()
    wrong = [f"{where}: {sorted(ids - only)} beside --thorough; only {sorted(only)} need it"
             for where, ids in statements if not ids <= only]
    assert not wrong, "\n".join(wrong)
    for name in ("README.md", "docs/certify.md"):
        assert any(where.startswith(name + ":") and ids == only for where, ids in statements), \
            f"{name} no longer names every requirement only --thorough assesses: {sorted(only)}"


def test_only_thorough_assesses_the_ping_repetition_and_the_429():
    assert truths.thorough_scenarios() == {"agui.silence_long", "mcp.rate_limit", "forms.triples"}
    assert truths.thorough_only() == {"AGUI-PING-002", "GEN-RATE-003", "MCP-ERR-003"}


# -- measurements --------------------------------------------------------------------------------------------
MEASUREMENT = re.compile(r"\babout \d[\d,.]*\s?(?:s|ms|seconds?|minutes?|min|(?:HTTP )?requests|agent runs|[kMG]i?B)\b"
                         r"|\b\d[\d.]*\s?s more\b", re.I)


def test_measurements_are_stated_once_and_linked():
    """A measured duration or cost ("about 15 s more", "about 250 requests") belongs to docs/cli.md's
    "What a run costs" alone; other pages link there."""
    elsewhere = [f"{line.where}: {m.group()!r}" for doc in prose_pages() for line in doc.lines()
                 if (line.page, line.heading) != MEASURED for m in MEASUREMENT.finditer(line.text)]
    assert not elsewhere, (f"measurements outside {MEASURED[0]} ({MEASURED[1]}); state them there and link:\n"
                           + "\n".join(elsewhere))
    measured = [line for line in page(MEASURED[0]).lines() if (line.page, line.heading) == MEASURED]
    assert any(line.text.startswith("| `--thorough`") for line in measured), "the measured table lost --thorough"


def test_the_measured_section_adds_up():
    """What --thorough adds is the difference of the table's two rows."""
    text = "\n".join(line.text for line in page(MEASURED[0]).lines() if (line.page, line.heading) == MEASURED)
    requests = {kind: int(n) for kind, n in re.findall(r"^\| (default|`--thorough`) \| [\d.]+ s \| (\d+) \|", text, re.M)}
    more = re.search(r"made that (\d+) requests more", text)
    assert more and int(more.group(1)) == requests["`--thorough`"] - requests["default"], (requests, more)


def measured_rows() -> dict[str, dict[str, float]]:
    """The table of docs/cli.md's "What a run costs": run -> requests, agent runs, MB received."""
    rows = {}
    for line in page(MEASURED[0]).lines():
        if (line.page, line.heading) == MEASURED and (m := re.match(
                r"^\| (default|`--thorough`) \| [\d.]+ s \| (\d+) \| (\d+) \| ([\d.]+) MB \|", line.text)):
            rows[m.group(1).strip("`")] = {"requests": int(m.group(2)), "agent_runs": int(m.group(3)),
                                           "received": float(m.group(4))}
    return rows


@pytest.mark.skipif(not os.environ.get("CONFORMANCE_MEASURE_DOCS"),
                    reason="two certification runs of the embedded server (about a minute): set CONFORMANCE_MEASURE_DOCS=1")
def test_run_costs_match_a_fresh_measurement(tmp_path):
    """A default run's requests and agent runs are the table's (the same inputs every run), and the megabytes
    received within 0.1. What the 429 probe of --thorough sends grows with what the bucket refills while the run
    goes on, so a --thorough run sends at least the table's requests. Times are measurements the table states; no
    test asserts a speed."""
    for kind, flags in (("default", []), ("--thorough", ["--thorough"])):
        out = tmp_path / kind.strip("-")
        subprocess.run([sys.executable, "-m", "conformance", "run", "-q", "--report-dir", str(out), *flags],
                       capture_output=True, timeout=600, env={k: v for k, v in os.environ.items()
                                                              if not k.startswith("CONFORMANCE_")})
        cost = json.loads((out / "report.json").read_text())["cost"]
        stated = measured_rows()[kind]
        if kind == "--thorough":
            assert cost["requests"] >= stated["requests"] * 0.95, (kind, cost, stated)
        else:
            assert cost["requests"] == stated["requests"], (kind, cost, stated)
        assert cost["agent_runs"] == stated["agent_runs"], (kind, cost, stated)
        assert abs(cost["bytes_received"] / 1e6 - stated["received"]) <= 0.1, (kind, cost, stated)


# -- the scan itself -------------------------------------------------------------------------------------------
def test_the_number_scan_sees_what_it_must():
    text = ("INV-SEL-001 sha256:d6 agt_123 U+2028 `-32022` v1.4 are names. 2026-11-22 0.1.0 2,000 three "
            "600/300s 4xx 1e+16")
    assert [n.text for n in numbers(Page("x.md", text))] == ["2026-11-22", "0.1.0", "2,000", "three", "600", "300",
                                                             "4", "1"]


CATALOG_SIZE = len(catalog.load())
PLANTED = [   # (kind, page, the text as it is, a drifted text no longer than it, what the finding says)
    ("the issue's contradiction", "docs/cli.md", "requests, never more than `--rate-probe-max` (default 1000))",
     "requests, never more than 600)", r"^docs/cli.md:\d+: 600 \(.*never more than \[600\]"),
    ("a default", "docs/certify.md", "`--rate-probe-max` (default 1000). A bucket",
     "`--rate-probe-max` (default 600). A bucket", r"the 429 probe's cap is 1000$"),
    ("a default", "docs/cli.md", "`--ping-interval SECONDS` (default 15)", "`--ping-interval SECONDS` (default 20)",
     r"conformance serve's ping interval is 15$"),
    ("a bound", "docs/agent.md", "1 ≤ N ≤ 1000", "1 ≤ N ≤ 100", r"'1 ≤ N ≤ 100': not the bounds of chunks$"),
    ("a bound", "docs/agent.md", "0 < SECONDS ≤ 120", "0 < SECONDS ≤ 300", r"not the bounds of sleep$"),
    ("a bound", "conformance/catalog/README.md", "(session key 1–256)", "(session key 1–255)",
     r"the session key's length is \(1, 256\)$"),
    ("a count", "docs/cli.md", f"holds {CATALOG_SIZE} requirements", f"holds {CATALOG_SIZE + 1} requirements",
     rf"the catalog's size is {CATALOG_SIZE}$"),
    ("a count", "docs/certify.md", "(189 MUSTs)", "(190 MUSTs)", r"the MUSTs is 189$"),
    ("a count in words", "docs/ci.md", "without it three MUSTs are never", "without it two MUSTs are never",
     r"the MUSTs only --thorough assesses is 3$"),
    ("a duration", "README.md", "the 16 s silence of the ping check", "the 15 s silence of the ping check",
     r"the silence scenario is 16$"),
    ("a duration", "docs/profile.md", "| `run` | 150 |", "| `run` | 120 |", r"the profile's \[timeouts\] run is 150$"),
    ("a duration", "docs/ci.md", "32 s silence", "30 s silence", r"the --thorough silence is 32$"),
    ("a default", "docs/cli.md", "`--max-run-time` (default `30m`", "`--max-run-time` (default `45m`",
     r"the run's cap by default is 30$"),
    ("a number said anew", "docs/reports.md", "of everything recorded", "of at most 250 frames",
     r"^docs/reports.md:\d+: 250 \("),
    ("a status code is no quantity", "docs/reports.md", "of everything recorded", "at most 404 requests",
     r"^docs/reports.md:\d+: 404 \("),
    ("the HTTP versions", "docs/cli.md", "speaks HTTP/1.1 and HTTP/2", "speaks HTTP/1.1 only", r"not the HTTP versions"),
]


@pytest.mark.parametrize("kind, name, now, drifted, finding", PLANTED, ids=[f"{p[0]}: {p[3]}" for p in PLANTED])
def test_a_planted_drift_is_caught(kind, name, now, drifted, finding):
    """The drift is padded to the length of the text it replaces, so every other place of the page stays where
    the other tests found it."""
    real = next(p for p in prose_pages() if p.name == name)
    assert real.text.count(now) == 1, f"{name} no longer says {now!r} once: plant the drift elsewhere"
    assert len(drifted) <= len(now)
    found = audit([Page(name, real.text.replace(now, drifted.ljust(len(now))))], READINGS)
    assert [f for f in found.unaccounted + found.wrong if re.search(finding, f)], \
        (finding, found.unaccounted, found.wrong)
    assert len(found.unaccounted + found.wrong) == 1, "the drift and nothing else"


def test_a_planted_trigger_drift_is_caught(monkeypatch):
    """A requirement named as needing --thorough that a default run assesses."""
    monkeypatch.setattr(truths, "thorough_only", lambda: frozenset({"AGUI-PING-002", "GEN-RATE-003"}))
    with pytest.raises(AssertionError, match=r"README.md:\d+: \['MCP-ERR-003'\] beside --thorough"):
        test_what_the_docs_say_needs_thorough_is_what_only_thorough_assesses()
