"""MCP checks: methods and the tool."""
from __future__ import annotations

import json

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check, rule
from conformance.vocab import protocols as p
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.checks.mcp._common import MODERN, NO_NAME, response, result_of, sent_id


def the_tools(rec: Recording) -> list[Any]:
    result = result_of(rec.get(steps.LIST), "tools/list")
    tools = result.get("tools")
    assert isinstance(tools, list), f"tools/list: `result.tools` is not an array: {truncate(result)}"
    return tools


def the_tool(rec: Recording) -> dict[str, Any]:
    tools = the_tools(rec)
    assert len(tools) == 1 and isinstance(tools[0], dict), \
        f"tools/list: expected exactly one tool object, got {len(tools)}: {truncate(tools)}"
    assert isinstance(tools[0].get("name"), str), f"tools/list: the tool has no string `name`: {truncate(tools[0])}"
    return tools[0]


@check("MCP-METH-001", scenarios=MODERN)
def discover_describes_tool(rec: Recording):
    """Sends server/discover; 200 with a JSON-RPC result that names the tool or declares the `tools` capability."""
    result = result_of(rec.get(steps.DISCOVER), "server/discover")
    tool = rec.facts.get("tool")
    caps = result.get("capabilities")
    named = isinstance(tool, str) and tool in json.dumps(result, ensure_ascii=False)
    declared = isinstance(caps, dict) and isinstance(caps.get("tools"), dict)
    assert named or declared, \
        f"server/discover: the result neither names the tool {tool!r} nor declares capabilities.tools: {truncate(result)}"


@check("MCP-METH-002", scenarios=MODERN)
def exactly_one_tool(rec: Recording):
    """Sends tools/list; 200 with `result.tools`, an array of exactly one object."""
    the_tool(rec)


@check("MCP-METH-003", scenarios=MODERN)
def tool_name_form(rec: Recording):
    """The tool's name is `ask_` followed by at least one character, with no hyphen."""
    name = the_tool(rec)["name"]
    assert name.startswith("ask_") and len(name) > 4 and "-" not in name, \
        f"the tool is named {name!r}; expected `ask_` + the slug with hyphens replaced by underscores"


@check("MCP-METH-004", scenarios=MODERN)
def tool_name_from_slug(rec: Recording):
    """The tool's name is `ask_` + --agent-slug with every `-` replaced by `_`."""
    if not rec.target.agent_slug:
        raise NotAssessed(f"needs {rec.target.option_for('agent_slug')}, which was not given")
    expected = p.slug_tool_name(rec.target.agent_slug)
    name = the_tool(rec)["name"]
    assert name == expected, f"the tool is named {name!r}, expected {expected!r} (from --agent-slug)"


def ids_kept(unjudged: tuple[str, ...]):
    """The MCP-METH-005 check of a scenario, leaving out the steps another requirement judges alone."""
    def fn(rec: Recording):
        """Every JSON-RPC response has `jsonrpc` "2.0" and the request's `id`, type kept (string and integer ids).
        The call without Mcp-Name is MCP-HDR-004's, not judged here."""
        judged = [ex for ex in rec.exchanges if ex.label not in unjudged]
        if not judged:
            raise NotAssessed(f"{rec.scenario} recorded no request")
        for ex in judged:
            msg = response(ex, f"{rec.scenario} {ex.label}")
            want = sent_id(ex)
            assert msg.get("jsonrpc") == "2.0", \
                f"{ex.label}: `jsonrpc` is {truncate(msg.get('jsonrpc'))}, expected \"2.0\""
            assert "id" in msg and msg["id"] == want and type(msg["id"]) is type(want), \
                f"{ex.label}: sent id {want!r} ({type(want).__name__}), the response has id {truncate(msg.get('id'))}"
    return fn


UNJUDGED_BY_IDS = {"mcp.modern": (NO_NAME,), "mcp.legacy": ()}   # each scenario's steps MCP-METH-005 leaves out
rule(lambda scn: ids_kept(UNJUDGED_BY_IDS[scn]), over=UNJUDGED_BY_IDS, requirements="MCP-METH-005",
     scenarios=lambda scn: [scn], name=lambda scn: f"ids_kept_{scn.split('.')[1]}")


@check("MCP-CLIENT-002", scenarios=MODERN)
def tool_matches_upstream(rec: Recording):
    """The listed tool validates as upstream `Tool`; its inputSchema is an object schema with a string `prompt` and
    accepts arguments `prompt`, `session_id` and `resume`."""
    tool = the_tool(rec)
    from mcp_types._v2026_07_28 import Tool
    from pydantic import ValidationError
    try:
        Tool.model_validate(tool)
    except ValidationError as exc:
        raise AssertionError(f"upstream Tool rejects the listed tool: {exc}"[:500]) from None
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    assert isinstance(schema, dict) and schema.get("type") == "object" and isinstance(props, dict), \
        f"inputSchema is not an object schema with properties: {truncate(schema)}"
    prompt = props.get("prompt")
    assert isinstance(prompt, dict) and prompt.get("type") == "string", \
        f"inputSchema declares no string `prompt`: {truncate(props)}"
    import jsonschema
    sample = {"prompt": "x", "session_id": "s-1", "resume": {"name": "Ada"}}
    try:
        jsonschema.validate(sample, schema)
    except jsonschema.ValidationError as exc:
        raise AssertionError(f"inputSchema rejects {truncate(sample)}: {exc.message}") from None
    except jsonschema.SchemaError as exc:
        raise AssertionError(f"inputSchema is not a valid JSON Schema: {exc.message}") from None
