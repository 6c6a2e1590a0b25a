"""Which requirement reports an exchange that several checks could not read (`report.resolve_blocked`)."""
from __future__ import annotations

from conformance import report
from conformance.judging import CheckResult

RESUME = (("mcp.sequences", "history-3-mcp-resume"),)
DEEP, ROOT, READER = "MCP-HDR-001", "MCP-PAUSE-002", "MCP-SESS-003"   # none a basic rule


def _reader() -> CheckResult:
    """A reading of a refused resume's echo that says the resume's rule is what the exchange broke."""
    return CheckResult("mcp.key_echoed", (READER,), "blocked", "the resume was refused", blocked_by=ROOT,
                       precondition=True, broke=RESUME)


def test_a_root_no_check_of_its_own_read_fails_by_the_reading():
    results = [_reader(), CheckResult("mcp.resume_continues", (ROOT,), "passed", broke=())]
    resolved = report.resolve_blocked(results, covered={ROOT, READER})
    assert [(r.requirements, r.status) for r in resolved if r.status == "failed"] == [((ROOT,), "failed")]


def test_a_root_whose_own_reading_of_the_exchange_was_blocked_deeper_rests_on_that_failure():
    """A resume turned away for its form (a failure of its own, DEEP): the resume's rule could not be read on it
    either, so it does not fail by another check's reading; the run reports DEEP alone."""
    results = [CheckResult("mcp.refusal_form", (DEEP,), "failed", "refused for its Content-Type", broke=RESUME),
               CheckResult("mcp.resume_continues", (ROOT,), "blocked", "refused", blocked_by=DEEP, precondition=True,
                           broke=RESUME),
               _reader()]
    resolved = report.resolve_blocked(results, covered={DEEP, ROOT, READER})
    assert [r.requirements for r in resolved if r.status == "failed"] == [(DEEP,)]
    assert [(r.requirements, r.blocked_by) for r in resolved if r.status == "blocked"] == [((ROOT,), DEEP),
                                                                                        ((READER,), ROOT)]


def test_a_root_blocked_on_another_exchange_still_fails_by_the_reading():
    results = [CheckResult("mcp.refusal_form", (DEEP,), "failed", "refused", broke=(("mcp.modern", "call"),)),
               CheckResult("mcp.resume_continues", (ROOT,), "blocked", "refused", blocked_by=DEEP, precondition=True,
                           broke=(("mcp.modern", "call"),)),
               _reader()]
    resolved = report.resolve_blocked(results, covered={DEEP, ROOT, READER})
    assert sorted(r.requirements for r in resolved if r.status == "failed") == [(DEEP,), (ROOT,)]



def test_a_root_blocked_by_what_no_check_of_its_own_failed_on_rests_on_that_reading():
    """The resume's rule's own reading names DEEP, which failed nowhere else: DEEP fails by it, and the echo's
    reading rests on the resume's rule, blocked by DEEP: still one failed requirement."""
    results = [CheckResult("mcp.resume_continues", (ROOT,), "blocked", "refused", blocked_by=DEEP, precondition=True,
                           broke=RESUME),
               _reader()]
    resolved = report.resolve_blocked(results, covered={DEEP, ROOT, READER})
    assert [r.requirements for r in resolved if r.status == "failed"] == [(DEEP,)]
    assert [(r.requirements, r.blocked_by) for r in resolved if r.status == "blocked"] == [((ROOT,), DEEP),
                                                                                        ((READER,), ROOT)]
