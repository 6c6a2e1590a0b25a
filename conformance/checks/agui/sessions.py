"""agui checks: sessions."""
from __future__ import annotations


from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import Step, check
from conformance.vocab import protocols as p
from conformance.vocab.text import truncate
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import Run, _streamed, fail_all, need_runs, one_run, runs


def _replies(rec: Recording, wanted: dict[Step, str]) -> list[str]:
    problems = []
    for label, reply in wanted.items():
        r = one_run(rec, label)
        if r.text() != reply:
            problems.append(f"{r.where}: `count` replied {truncate(r.text(), 60, quoted=True)}, expected {reply!r}")
    return problems


@check("AGUI-SESS-001", scenarios=["agui.session"])
def generated_thread_continues(session):
    """Runs `count` without threadId (reply 1), then with the threadId RUN_STARTED gave it (reply 2)."""
    assert session.facts.get("generated_thread") is not None, (
        "the run without threadId got no string RUN_STARTED.threadId, so its session could not be continued")
    fail_all(_replies(session, {steps.GENERATED_1: "1", steps.GENERATED_2: "2"}))


@check("AGUI-SESS-002", scenarios=["agui.session"])
def same_thread_same_instance(session):
    """Runs `count` twice with one fresh threadId; the replies are 1 then 2."""
    fail_all(_replies(session, {steps.FRESH_1: "1", steps.FRESH_2: "2"}))


@check("GEN-SESS-002", scenarios=["agui.session"])
def fresh_key_starts_at_one(session):
    """Runs `count` on a fresh AG-UI threadId and on two generated ones; each replies 1 (a new instance)."""
    fail_all(_replies(session, {steps.FRESH_1: "1", steps.GENERATED_1: "1", steps.GENERATED_OTHER: "1"}))


@check("GEN-SESS-001", scenarios=["agui.cross_session"])
def one_key_across_protocols(rec):
    """Runs `count` with one fresh key as invoke sessionId, AG-UI threadId, MCP session_id; replies 1, 2, 3."""
    if rec.facts.get("no_mcp"):
        raise NotAssessed(rec.facts["no_mcp"])
    invoke = rec.get(steps.VIA_INVOKE)
    body = invoke.json()
    got_invoke = body.get("result") if isinstance(body, dict) else None
    got_agui = Run(rec, steps.VIA_AGUI, _streamed(rec, steps.VIA_AGUI), {"kind": "success", "reply": "2"}).text()
    mcp = p.mcp_response(rec.get(steps.VIA_MCP))
    result = mcp.get("result") if isinstance(mcp.get("result"), dict) else {}
    got_mcp = p.mcp_text(result) if isinstance(result.get("content"), list) else None
    got = [got_invoke, got_agui, got_mcp]
    assert got == ["1", "2", "3"], (f"`count` with key {rec.facts['key']!r} over invoke, AG-UI and MCP replied "
                                    f"{got}, expected ['1', '2', '3'] (one running instance)")


@check("AGUI-SESS-003", scenarios=["agui.key_lengths"])
def thread_id_bounds_accepted(rec):
    """Runs the plain prompt with threadIds of 1 and 256 characters; both stream and end with RUN_FINISHED."""
    fail_all([f"{r.where}: ended with {r.terminal().get('type')}" for r in need_runs(runs(rec), "a bound threadId")
              if r.terminal().get("type") != "RUN_FINISHED"])
