"""MCP checks: the official client."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.checks.mcp._common import resumed_reply


def client_run(rec: Recording, mode: str) -> dict[str, Any]:
    run = (rec.facts.get("runs") or {}).get(mode)
    if not run:
        raise NotAssessed(f"the official mcp client did not run in mode {mode}")
    if run.get("error"):
        raise AssertionError(f"the official mcp client ({mode}) failed at step {run.get('step')!r}: {run['error']}")
    return run


def client_plain(rec: Recording, mode: str) -> str:
    run = client_run(rec, mode)
    tools = run.get("tools")
    assert isinstance(tools, list) and len(tools) == 1, f"the official client ({mode}) listed tools {tools}"
    expected = rec.facts.get("expected")
    if expected is not None:
        assert run.get("plain") == expected and not run.get("plain_is_error"), \
            f"the official client ({mode}) got {truncate(run.get('plain'))}, expected {expected!r}"
    return f"{run['counts']['requests']} requests, protocol {run.get('protocol_version')}"


@check("MCP-CLIENT-001", scenarios=["mcp.official_client"])
def official_client_legacy(rec: Recording):
    """The official `mcp` client on the 2025-11-25 handshake initializes, lists one tool and gets the plain reply."""
    return client_plain(rec, "legacy")


@check("MCP-CLIENT-003", scenarios=["mcp.official_client"])
def official_client_modern(rec: Recording):
    """The official `mcp` client in mode 2026-07-28 lists one tool and gets the plain reply."""
    return client_plain(rec, "2026-07-28")


@check("MCP-CLIENT-004", scenarios=["mcp.official_client"])
def official_client_elicits(rec: Recording):
    """The official client (2026-07-28, elicitation callback) answers the form for the question prompt and gets
    `answer: <content>thanks`."""
    run = client_run(rec, "2026-07-28")
    elicited = run.get("elicited") or []
    assert len(elicited) == 1, f"the official client's elicitation callback ran {len(elicited)} times, expected once " \
                               f"(the call answered {truncate(run.get('question'))})"
    expected = resumed_reply(rec, elicited[0]["content"])
    assert run.get("question") == expected, f"after the form, the official client got {truncate(run.get('question'))}, " \
                                            f"expected {expected!r}"


@check("MCP-CLIENT-005", scenarios=["mcp.official_client"])
def official_client_resumes(rec: Recording):
    """The official client (2025-11-25, no elicitation) gets the question as text, then answers it with the `resume`
    argument and gets `answer: {"name":"Ada"}thanks`."""
    run = client_run(rec, "legacy")
    question = rec.facts.get("question")
    if question is not None:
        assert question in (run.get("question") or ""), \
            f"the official client got {truncate(run.get('question'))}, expected the question {question!r} as text"
    expected = resumed_reply(rec, run.get("resume_value"))
    assert run.get("resumed") == expected, f"after resume the official client got {truncate(run.get('resumed'))}, " \
                                           f"expected {expected!r}"
