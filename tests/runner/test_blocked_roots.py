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


def _roots_own(broke=RESUME) -> CheckResult:
    """The resume rule's own check, which read `broke` blocked by DEEP."""
    return CheckResult("mcp.resume_continues", (ROOT,), "blocked", "refused", blocked_by=DEEP, precondition=True,
                       broke=broke)


def _deep(broke=RESUME) -> CheckResult:
    return CheckResult("mcp.refusal_form", (DEEP,), "failed", "refused for its Content-Type", broke=broke)


def _resolved(*results: CheckResult) -> tuple[list[tuple[str, ...]], list[tuple[tuple[str, ...], str]]]:
    """The requirements of the failed results, and (requirements, root) of the blocked ones."""
    out = report.resolve_blocked(list(results), covered={DEEP, ROOT, READER})
    return ([r.requirements for r in out if r.status == "failed"],
            [(r.requirements, r.blocked_by) for r in out if r.status == "blocked"])


def test_a_root_no_check_of_its_own_read_fails_by_the_reading():
    failed, blocked = _resolved(_reader(), CheckResult("mcp.resume_continues", (ROOT,), "passed"))
    assert failed == [(ROOT,)] and blocked == [((READER,), ROOT)]


def test_a_root_whose_own_reading_of_the_exchange_was_blocked_deeper_rests_on_that_failure():
    """A resume turned away for its form (a failure of its own, DEEP): the resume's rule could not be read on it
    either, so it does not fail by another check's reading; the run reports DEEP alone."""
    failed, blocked = _resolved(_deep(), _roots_own(), _reader())
    assert failed == [(DEEP,)] and blocked == [((ROOT,), DEEP), ((READER,), ROOT)]


def test_a_root_blocked_on_another_exchange_still_fails_by_the_reading():
    other = (("mcp.modern", "call"),)
    failed, _ = _resolved(_deep(other), _roots_own(other), _reader())
    assert sorted(failed) == [(DEEP,), (ROOT,)]


def test_a_root_blocked_by_what_no_check_of_its_own_failed_on_rests_on_that_reading():
    """The resume's rule's own reading names DEEP, which failed nowhere else: DEEP fails by it, and the echo's
    reading rests on the resume's rule, blocked by DEEP: still one failed requirement."""
    failed, blocked = _resolved(_roots_own(), _reader())
    assert failed == [(DEEP,)] and blocked == [((ROOT,), DEEP), ((READER,), ROOT)]
