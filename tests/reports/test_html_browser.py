"""report.html of real runs (conftest.py) in a real browser: headless Chromium over the DevTools protocol loads the
page of a failing and of a passing run, its console stays free of errors, it fetches nothing, the verdict shows at the
top and every failure shows with its spec sentence, message, exchange and curl line. A screenshot of each is kept in
reports/screenshots/ of the checkout (CI keeps reports/ as an artifact). No chromium: the tests skip."""
from __future__ import annotations

import json

import pytest

from tests.reports.browser import SCREENSHOTS, Browser, executable
from tests.reports.support import FAILING_MUST

#: what the page shows, read in the browser: every element checked with checkVisibility (no display:none,
#: visibility:hidden, zero opacity or closed <details> in the way) and a size
SHOWN = """(() => {
  const shown = el => !!el && el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
                      && el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().height > 0;
  const banner = document.querySelector('header.banner');
  const verdict = banner && banner.querySelector('.verdict');
  return {
    verdict: banner ? banner.dataset.verdict : null,
    verdictText: verdict ? verdict.innerText : '',
    verdictShown: shown(verdict),
    verdictTop: verdict ? verdict.getBoundingClientRect().bottom <= innerHeight : false,
    verdictFontPx: verdict ? parseFloat(getComputedStyle(verdict).fontSize) : 0,
    reason: shown(banner && banner.querySelector('.reason')) ? banner.querySelector('.reason').innerText : '',
    counts: shown(banner && banner.querySelector('.counts')) ? banner.querySelector('.counts').innerText : '',
    failures: [...document.querySelectorAll('[data-failure]')].map(card => ({
      id: card.dataset.failure, shown: shown(card), text: card.innerText,
      spec: shown(card.querySelector('blockquote.spec')), message: shown(card.querySelector('.message')),
      transcript: shown(card.querySelector('pre.transcript')), curl: shown(card.querySelector('pre.curl'))})),
    rows: document.querySelectorAll('table.reqs tbody tr').length,
    scripts: document.scripts.length,
    text: document.body.innerText,
  };
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    executable()
    with Browser(tmp_path_factory.mktemp("chromium-profile")) as b:
        yield b


def _load(browser: Browser, page, shot: str) -> dict:
    browser.load(page.resolve().as_uri())
    got = browser.evaluate(SHOWN)
    got["errors"], got["requests"] = browser.console_errors(), browser.requests()
    got["screenshot"] = browser.screenshot(SCREENSHOTS / shot)
    return got


def _self_contained(got: dict, page) -> None:
    assert got["errors"] == [], got["errors"]
    assert got["requests"] == [page.resolve().as_uri()], got["requests"]   # nothing fetched: no CSS, font, image
    assert got["scripts"] == 0
    assert got["screenshot"].stat().st_size > 10_000


def test_a_failing_run_shows_its_verdict_and_every_failure(browser, failing):
    out, _, facts = failing
    page = out / "report.html"
    got = _load(browser, page, "report-failing.png")
    _self_contained(got, page)
    assert got["verdict"] == "non-conformant" and "NON-CONFORMANT" in got["verdictText"]
    assert got["verdictShown"] and got["verdictTop"] and got["verdictFontPx"] >= 24   # big, in the first screen
    assert f"MUST requirement(s) failed: {FAILING_MUST}" in got["reason"] and "1 failed" in got["counts"]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    failed = [r["id"] for r in report["requirements"] if r["status"] in ("failed", "warning", "error")]
    assert [f["id"] for f in got["failures"]] == failed == [FAILING_MUST]
    for card in got["failures"]:
        assert card["shown"] and card["spec"] and card["message"] and card["transcript"] and card["curl"], card
        assert "MUST" in card["text"] and "curl -sS" in card["text"] and "The exchange:" in card["text"]
    assert got["rows"] == 1
    assert f"Target: {facts['base_url']} · agent {facts['agent_id']}" in got["text"]
    for key in ("api_key", "access_token", "revoked_key", "expired_token"):
        assert facts[key] not in got["text"]


def test_a_passing_run_shows_its_verdict_and_no_failure(browser, passing):
    out, _ = passing
    page = out / "report.html"
    got = _load(browser, page, "report-passing.png")
    _self_contained(got, page)
    assert got["verdict"] == "conformant" and got["verdictShown"] and got["verdictTop"]
    assert "2 passed" in got["counts"] and got["failures"] == [] and got["rows"] == 2
    assert "Failures and warnings" not in got["text"] and "embedded reference server" in got["text"]
    assert "seed 11" in got["text"] and "Platform" not in got["text"] and "test_check[" not in got["text"]
