"""MCP checks: tools/call results."""
from __future__ import annotations

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import SCENARIOS, check
from conformance.vocab.steps import generated as generated_steps, mcp as steps
from conformance.vocab.readers import got
from conformance.vocab.text import truncate
from conformance.checks.mcp._common import MODERN, labels, result_of, text_block


CALLS = (steps.CALL, steps.CALL_TOOL)   # the plain-reply and tool-call prompts, both with Mcp-Name


@check("MCP-TOOL-001", scenarios=MODERN)
def one_text_block(rec: Recording):
    """Sends tools/call without a progress token; 200, `result.content` is exactly one `{type: text, text}` block."""
    for label, ex in labels(rec, *CALLS):
        text_block(result_of(ex, f"tools/call ({label})"), f"tools/call ({label})")


@check("MCP-TOOL-002", scenarios=MODERN)
def text_is_reply(rec: Recording):
    """The text block of the plain-reply and tool-call prompts equals their reply exactly."""
    replies = rec.facts.get("replies", {})
    compared = 0
    for label, ex in labels(rec, *CALLS):
        text = text_block(result_of(ex, f"tools/call ({label})"), f"tools/call ({label})")
        if replies.get(label) is not None:
            assert text == replies[label], f"tools/call ({label}): expected {replies[label]!r}, got {truncate(text)}"
            compared += 1
    if not compared:
        raise NotAssessed("the profile gives no expected reply for these prompts")




if "generated.round_trip" in SCENARIOS:  # the lead's shared generated-text scenario, when present
    @check("MCP-TOOL-002", scenarios=["generated.round_trip"])
    def generated_text_round_trip(rec: Recording):
        """Sends generated texts as `say-json` prompts over MCP; each text block equals its text exactly."""
        texts = rec.facts.get("texts") or []
        runs = generated_steps.MCP.members(rec.labelled(generated_steps.MCP))   # runs `mcp-<i>`, not a lookup
        if not runs:
            raise NotAssessed("the generated round trip sent no tools/call over MCP")
        for i, ex in runs:
            text = text_block(result_of(ex, f"round trip {ex.label}"), f"round trip {ex.label}")
            assert 0 <= i < len(texts) and text == texts[i], \
                f"round trip {ex.label}: sent {truncate(texts[i] if 0 <= i < len(texts) else None, 120)}, " \
                f"got {truncate(text, 120)}"


@check("MCP-TOOL-003", scenarios=MODERN)
def result_type_complete(rec: Recording):
    """A finished run's result has `resultType` "complete"."""
    for label, ex in labels(rec, *CALLS):
        rt = result_of(ex, f"tools/call ({label})").get("resultType")
        assert rt == "complete", f"tools/call ({label}): `resultType` is {truncate(rt)}, expected \"complete\""


@check("MCP-TOOL-005", scenarios=MODERN)
def success_is_not_error(rec: Recording):
    """A run that ends normally has `isError` absent or false."""
    for label, ex in labels(rec, *CALLS):
        flag = result_of(ex, f"tools/call ({label})").get("isError", False)
        assert flag is False, f"tools/call ({label}): a finished run has `isError` {truncate(flag)}"


@check("MCP-TOOL-004", scenarios=["mcp.failures"])
def failure_is_tool_result(rec: Recording):
    """Sends the two failing prompts; each answers 200 with a `result` (no JSON-RPC error) whose `isError` is true."""
    for label, ex in labels(rec, steps.FAIL_AFTER, steps.FAIL_BEFORE):
        result = result_of(ex, f"failed run ({label})")
        assert result.get("isError") is True, \
            f"failed run ({label}): `isError` is {truncate(result.get('isError'))}, expected true"


@check("MCP-TOOL-006", scenarios=["mcp.failures"])
def failure_has_content(rec: Recording):
    """A failed run's result still has `content` with one text block (upstream CallToolResult needs it)."""
    text_block(result_of(rec.get(steps.FAIL_AFTER), "failed run"), "failed run")


@check("MCP-PROG-011", scenarios=MODERN)
def no_token_one_json_body(rec: Recording):
    """Sends tools/call without a progress token (Accept lists both types); one application/json response."""
    ex = rec.get(steps.CALL)
    assert ex.status == 200 and ex.content_type == "application/json", \
        f"tools/call without a progress token: expected one application/json body, got {got(ex)}"


@check("MCP-SESS-005", scenarios=MODERN)
def stateless(rec: Recording):
    """Sends tools/list and tools/call with no prior initialize and no Mcp-Session-Id; both answer with results."""
    for label in (steps.LIST, steps.CALL):
        result_of(rec.get(label), f"{label} without initialize or Mcp-Session-Id")
