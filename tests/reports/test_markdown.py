"""report.md: verdict first, identity, counts, each failure with its curl and what it blocks, what was not assessed;
safe for untrusted text, and never over GitHub's job-summary limit."""
from __future__ import annotations

from markdown_it import MarkdownIt

from conformance import catalog, registry, report
from conformance.judging import CheckResult
from conformance.plugin import target_first
from conformance.reporting import decorate, markdown
from tests.reports.support import CURL, FAILING_MUST, TRANSCRIPT, make_report, should_requirement

BLOCKED = "INV-SEL-001"
HOSTILE = "<script>alert(1)</script> | [click](https://evil.example) ![x](https://evil.example/x.png) *b* `c` ~~d~~ $e$ # f"


def gfm() -> MarkdownIt:
    """CommonMark with tables and raw HTML, as GitHub and GitLab render it (no autolinks needed here)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def tokens(doc: str) -> list:
    out = []
    for tok in gfm().parse(doc):
        out += [tok, *(tok.children or [])]
    return out


def blocked_report(message: str = "`events` is missing from the result", curl: str = CURL) -> dict:
    """FAILING_MUST failed; BLOCKED's checks could not read their exchange because of it."""
    results = []
    for check in registry.load_all().values():
        if FAILING_MUST in check.requirements:
            results.append(CheckResult(check.id, check.requirements, "failed", message,
                                       [{"scenario": "invoke.plain_json", "label": "main", "transcript": TRANSCRIPT,
                                         "curl": "curl context-only", "broke": False},
                                        {"scenario": "invoke.plain_json", "label": "broken", "transcript": TRANSCRIPT,
                                         "curl": curl, "broke": True}]))
        elif BLOCKED in check.requirements:
            results.append(CheckResult(check.id, check.requirements, "blocked", "no result to read",
                                       blocked_by=FAILING_MUST))
        else:
            results.append(CheckResult(check.id, check.requirements, "passed"))
    rep = report.build(target={"base_url": "https://srv.example", "agent_id": "agt_1", "embedded": False,
                               "seed_source": "default"},
                       results=results, coverage=registry.coverage(), not_run={}, baseline=report.Baseline(),
                       stats={"wall_seconds": 3.0, "requests": 9}, error=None, options={"level": "may", "seed": 99})
    rep["reports"] = {name: f"out/{name}" for name in ("report.json", "report.html", "report.md", "junit.xml")}
    return target_first(decorate(rep))


def test_the_verdict_comes_first_then_target_identity_and_counts():
    rep = make_report(fail=(FAILING_MUST,))
    rep["suite"].update(spec_revision="2025-06-18", catalog_digest="sha256:abc123")
    doc = markdown.render(rep)
    assert doc.startswith("## ❌ NON-CONFORMANT\n")
    head = doc[:doc.index("### ")]
    for part in ("1 MUST requirement(s) failed", "https://127.0.0.1:8443", "conformance 0.1.0",
                 "spec revision 2025-06-18", "catalog digest `sha256:abc123`", "| passed | failed |", "seed | 7"):
        assert part in head, part


def test_a_failure_shows_level_sentence_message_and_the_curl_of_the_exchange_that_broke_it():
    rep = blocked_report()
    doc = markdown.render(rep)
    block = doc[doc.index(f"#### ❌ {FAILING_MUST} · MUST · failed"):]
    quote = catalog.load()[FAILING_MUST].quote
    assert f"> {markdown.prose(quote)}" in block and "**Got:**" in block and "**Expected:**" in block
    assert f"```sh\n{CURL}\n```" in block and "curl context-only" not in block
    blocked = block[block.index("**Blocked by this failure**"):block.index("```sh")]
    assert f"- {BLOCKED}:" in blocked
    missing = doc[doc.index("<details><summary>Not assessed"):]
    assert f"| {BLOCKED} | MUST | blocked by {FAILING_MUST}" in missing
    assert "the same generated inputs" in doc and "--seed random explores" in doc


def test_warnings_and_errors_have_their_own_sections():
    doc = markdown.render(make_report(fail=(FAILING_MUST, should_requirement())))
    assert "### Failures (MUST) (1)" in doc and "### Warnings (SHOULD) (1)" in doc
    assert doc.index("### Failures") < doc.index("### Warnings")


def test_a_run_that_judged_nothing_states_its_reason_once():
    rep = make_report(error="the API key given in CONFORMANCE_API_KEY was refused: invoke answered 401")
    rep["checks"] = []
    doc = markdown.render(rep)
    assert doc.startswith("## ⛔ ERROR")
    assert doc.count("was refused") == 1 and "###" not in doc and "Not assessed" not in doc


def test_untrusted_text_stays_text(tmp_path):
    rep = blocked_report(message=HOSTILE, curl="curl -d '```\n# not a heading' https://x")
    doc = markdown.render(rep)
    toks = tokens(doc)
    html = [t.content.strip() for t in toks if t.type in ("html_inline", "html_block")]
    assert all(h.startswith(("<details>", "</details>", "<summary>", "</summary>")) for h in html), html
    assert not [t for t in toks if t.type in ("link_open", "image", "s_open")]
    rendered = gfm().render(doc)
    assert "*b*" in rendered and "~~d~~" in rendered and "`c`" in rendered and "[click](https://evil.example)" in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered and "<script>" not in rendered
    fences = [t for t in toks if t.type == "fence"]
    assert any(t.content == "curl -d '```\n# not a heading' https://x\n" for t in fences)


def test_the_document_fits_githubs_job_summary_limit_and_points_to_the_html():
    rep = make_report(fail=tuple(r.id for r in catalog.load().values() if r.level == "MUST")[:80])
    for row in rep["requirements"]:
        row["message"] = "x" * 1400
    small = markdown.render(rep, limit=20_000)
    assert len(small.encode()) <= 20_000 and small.startswith("## ❌ NON-CONFORMANT")
    assert "**Not shown here:" in small and "report.html has everything" in small and small.rstrip().endswith(
        "`reports/junit.xml`")
    assert len(markdown.render(rep).encode()) <= markdown.SUMMARY_LIMIT == 1024 * 1024


def test_write_redacts_every_secret(tmp_path):
    rep = blocked_report(message="the server echoed ais_live_SECRET123 back")
    path = markdown.write(rep, tmp_path / "report.md", lambda s: s.replace("ais_live_SECRET123", "«redacted»"))
    assert "SECRET123" not in path.read_text() and "«redacted»" in path.read_text()


def test_an_agent_off_its_contract_has_its_section_before_the_failures():
    from tests.reports.test_terminal import AGENT_OFF
    report = {**make_report(fail=(FAILING_MUST,)), "agent": AGENT_OFF}
    document = markdown.render(report)
    assert document.count("### ⚠️ The deployed agent") == 1
    assert document.index("The deployed agent") < document.index("Failures (MUST)")
    assert "chain-6-agui-run" in document and "count in a paused and resumed run" in document
    assert "The deployed agent" not in markdown.render(make_report(fail=(FAILING_MUST,)))
