"""MCP checks: methods and the tool."""
from __future__ import annotations

import functools
import json

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, judge_all, on, precondition
from conformance.registry import check, rule
from conformance.vocab import official_client as official
from conformance.vocab import protocols as p
from conformance.vocab.steps import mcp as steps
from conformance.vocab.text import truncate
from conformance.vocab.values import ABSENT, differs, same_json
from conformance.wire.exchange import Exchange
from conformance.checks.mcp._common import MODERN, NO_NAME, as_json, response, result_of, sent_id


ONE_TOOL = "MCP-METH-002"     # tools/list lists exactly one tool object: what every reading of the tool relies on
NAME_FORM = "MCP-METH-003"    # its name has the form `ask_…` without hyphens


def the_tool(rec: Recording) -> tuple[Exchange, dict[str, Any]]:
    """tools/list's exchange and its one tool; a list that is not one tool object breaks MCP-METH-002."""
    ex = rec.get(steps.LIST)
    result = result_of(ex)
    tools = result.get("tools")
    if not isinstance(tools, list):
        raise precondition(ONE_TOOL, ex, f"`result.tools` is not an array: {truncate(result)}")
    if len(tools) != 1 or not isinstance(tools[0], dict):
        raise precondition(ONE_TOOL, ex, f"expected exactly one tool object, got {len(tools)}: {truncate(tools)}")
    return ex, tools[0]


def tool_name(rec: Recording) -> tuple[Exchange, str]:
    """The tool's name; one that is not `ask_` + at least one character without a hyphen breaks MCP-METH-003."""
    ex, tool = the_tool(rec)
    name = tool.get("name")
    if not (isinstance(name, str) and name.startswith("ask_") and len(name) > 4 and "-" not in name):
        raise precondition(NAME_FORM, ex, f"the tool is named {truncate(name)}; expected `ask_` + the slug with "
                                          f"hyphens replaced by underscores")
    return ex, name


@check("MCP-METH-001", scenarios=MODERN)
def discover_describes_tool(rec: Recording):
    """Sends server/discover; 200 with a JSON-RPC result that names the tool or declares the `tools` capability."""
    ex = rec.get(steps.DISCOVER)
    result = result_of(ex)
    tool = rec.facts.get("tool")
    caps = result.get("capabilities")
    named = isinstance(tool, str) and tool in json.dumps(result, ensure_ascii=False)
    declared = isinstance(caps, dict) and isinstance(caps.get("tools"), dict)
    with on(ex):
        assert named or declared, \
            f"the result neither names the tool {tool!r} nor declares capabilities.tools: {truncate(result)}"


@check("MCP-METH-002", scenarios=MODERN)
def exactly_one_tool(rec: Recording):
    """Sends tools/list; 200 with `result.tools`, an array of exactly one object."""
    the_tool(rec)


@check("MCP-METH-003", scenarios=MODERN)
def tool_name_form(rec: Recording):
    """The tool's name is `ask_` followed by at least one character, with no hyphen."""
    return f"the tool is named {tool_name(rec)[1]!r}"


@check("MCP-METH-004", scenarios=MODERN)
def tool_name_from_slug(rec: Recording):
    """The tool's name is `ask_` + --agent-slug with every `-` replaced by `_`."""
    if not rec.target.agent_slug:
        raise NotAssessed(f"needs {rec.target.option_for('agent_slug')}, which was not given")
    expected = p.slug_tool_name(rec.target.agent_slug)
    ex, name = tool_name(rec)
    with on(ex):
        assert name == expected, f"the tool is not named after --agent-slug: {differs(expected, name)}"


def id_kept(ex: Exchange) -> None:
    """`jsonrpc` "2.0" and the request's `id`, compared as JSON values (1 and 1.0 are one number; "1" is not 1)."""
    msg = response(ex)
    want = sent_id(ex)
    assert msg.get("jsonrpc") == "2.0", f"`jsonrpc` is {as_json(msg.get('jsonrpc'))}, expected \"2.0\""
    assert "id" in msg and same_json(msg["id"], want), \
        f"sent id, the response has another: {differs(want, msg.get('id', ABSENT))}"


def ids_kept(unjudged: tuple[str, ...]):
    """The MCP-METH-005 check of a scenario, leaving out the steps another requirement judges alone."""
    def fn(rec: Recording):
        """Every JSON-RPC response has `jsonrpc` "2.0" and the request's `id`, its JSON type kept (string and
        integer ids; JSON has one number type, so 1.0 is the id 1). The call without Mcp-Name is MCP-HDR-004's,
        not judged here."""
        return judge_all([ex for ex in rec.exchanges if ex.label not in unjudged], id_kept,
                         nothing=f"{rec.scenario} recorded no request")
    return fn


# each scenario's steps MCP-METH-005 leaves out (mcp.input_forms: the falsy ids; the other classes ride on every id)
UNJUDGED_BY_IDS = {"mcp.modern": (NO_NAME,), "mcp.legacy": (), "mcp.input_forms": ()}
rule(lambda scn: ids_kept(UNJUDGED_BY_IDS[scn]), over=UNJUDGED_BY_IDS, requirements="MCP-METH-005",
     scenarios=lambda scn: [scn], name=lambda scn: f"ids_kept_{scn.split('.')[1]}")


@check("MCP-CLIENT-002", scenarios=MODERN)
def tool_matches_upstream(rec: Recording):
    """The listed tool validates as upstream `Tool`; its inputSchema is an object schema with a string `prompt` and
    accepts arguments `prompt`, `session_id` and `resume`."""
    ex, tool = the_tool(rec)
    with on(ex):
        fits_upstream(tool)


def fits_upstream(tool: dict[str, Any]) -> None:
    """The tool as the official client reads it (MCP-CLIENT-002), on a scenario's tools/list or on any other."""
    rejected = official.tool_rejection(tool)
    assert rejected is None, "the official client's model of a tool (`Tool`, 2026-07-28) rejects the listed " \
                             f"tool: {': '.join(rejected or ())}"
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    assert isinstance(schema, dict) and schema.get("type") == "object" and isinstance(props, dict), \
        f"inputSchema is not an object schema with properties: {truncate(schema)}"
    prompt = props.get("prompt")
    assert isinstance(prompt, dict) and prompt.get("type") == "string", \
        f"inputSchema declares no string `prompt`: {truncate(props)}"
    rejects = _input_schema_rejects(json.dumps(schema, sort_keys=True))
    assert rejects is None, rejects


_SAMPLE_ARGUMENTS = {"prompt": "x", "session_id": "s-1", "resume": {"name": "Ada"}}


@functools.lru_cache(maxsize=32)
def _input_schema_rejects(schema_json: str) -> str | None:
    """Why a tool's inputSchema (as canonical JSON: every listing of a run repeats it) refuses the arguments the
    suite sends, or None."""
    import jsonschema
    try:
        jsonschema.validate(_SAMPLE_ARGUMENTS, json.loads(schema_json))
    except jsonschema.ValidationError as exc:
        return f"inputSchema rejects {truncate(_SAMPLE_ARGUMENTS)}: {exc.message}"
    except jsonschema.SchemaError as exc:
        return f"inputSchema is not a valid JSON Schema: {exc.message}"
    return None
