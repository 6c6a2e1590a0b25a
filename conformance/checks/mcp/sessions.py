"""MCP checks: sessions."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.registry import check
from conformance.vocab.steps import mcp as steps
from conformance.checks.mcp._common import result_of, structured_session, text_block


def count_reply(rec: Recording, label: str) -> tuple[str, dict[str, Any]]:
    result = result_of(rec.get(label), f"count ({label})")
    return text_block(result, f"count ({label})"), result


@check("MCP-SESS-001", scenarios=["mcp.sessions"])
def session_generated(rec: Recording):
    """Sends tools/call without `session_id`; `structuredContent.sessionId` is a string of 1 to 256 characters."""
    _, result = count_reply(rec, steps.GENERATED_1)
    structured_session(result, "tools/call without session_id")


@check("MCP-SESS-002", scenarios=["mcp.sessions"])
def same_session_same_instance(rec: Recording):
    """Sends `count` twice with the same fresh session_id; the replies are 1 then 2."""
    got_ = [count_reply(rec, label)[0] for label in (steps.GIVEN_1, steps.GIVEN_2)]
    assert got_ == ["1", "2"], f"two `count` calls on one session_id replied {got_}, expected ['1', '2']"


@check("MCP-SESS-003", scenarios=["mcp.sessions"])
def session_echoed(rec: Recording):
    """With `arguments.session_id`, `structuredContent.sessionId` equals it."""
    for label in (steps.GIVEN_1, steps.GIVEN_2):
        _, result = count_reply(rec, label)
        sid = structured_session(result, f"count ({label})")
        assert sid == rec.facts["session"], f"count ({label}): sessionId {sid!r}, expected {rec.facts['session']!r}"


@check("MCP-SESS-004", scenarios=["mcp.sessions"])
def generated_session_reaches_instance(rec: Recording):
    """`count` without session_id replies 1; `count` on the returned sessionId replies 2."""
    first, result = count_reply(rec, steps.GENERATED_1)
    structured_session(result, "count without session_id")
    assert first == "1", f"count without session_id replied {first!r}, expected '1'"
    second, _ = count_reply(rec, steps.GENERATED_2)
    assert second == "2", f"count on the generated sessionId replied {second!r}, expected '2'"
