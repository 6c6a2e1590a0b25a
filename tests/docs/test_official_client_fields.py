"""docs/protocol-mapping.md's "What the official MCP client needs beyond the spec" stays true: its table of the
fields the official `mcp` client requires is found again from the SDK's own models, on the answers the reference
server gave the recorded client (each field of each answer left out in turn: a field is required when the client
then rejects the answer), with the requirement that reads each and the values a constrained one takes."""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from conformance.api import certify
from conformance.recording import Replay
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from conformance.vocab import official_client as official

PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocol-mapping.md"
SECTION = "## What the official MCP client needs beyond the spec"
CLIENT = ("MCP-CLIENT-001", "MCP-CLIENT-002", "MCP-CLIENT-003", "MCP-CLIENT-004", "MCP-CLIENT-005")
KEYED = {"inputRequests"}           # objects whose keys the server chooses: `<key>` on the page
NOT_A_VALUE = "not-a-value-of-any-kind"


@pytest.fixture(scope="module")
def answers() -> list[official.Answer]:
    with ReferenceServer(ServerConfig()) as srv:
        report = certify(from_server_facts(srv.facts), requirements=list(CLIENT), keep_recording=True)
    statuses = {row["id"]: row["status"] for row in report["requirements"] if row["id"] in CLIENT}
    assert statuses == dict.fromkeys(CLIENT, "passed"), statuses
    rec = Replay(report["recording"]["document"]).recording("mcp.official_client")
    return [answer for run in official.RUNS for answer in official.answers(rec, run)]


# -- what the client requires, found again -----------------------------------------------------------
def keys(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The path of every member of every object in `value` (the first item of an array stands for all)."""
    if isinstance(value, dict):
        for key, member in value.items():
            yield path + (key,)
            yield from keys(member, path + (key,))
    elif isinstance(value, list) and value:
        yield from keys(value[0], path + (0,))


def changed(value: Any, path: tuple, new: Any = None, *, drop: bool = False) -> Any:
    out = copy.deepcopy(value)
    node = out
    for part in path[:-1]:
        node = node[part]
    if drop:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return out


def spelled(path: tuple) -> str:
    """`tools[].inputSchema.type`, `inputRequests.<key>.params.message`."""
    out = ""
    for i, part in enumerate(path):
        if isinstance(part, int):
            out += "[]"
        else:
            out += ("." if out else "") + ("<key>" if i and path[i - 1] in KEYED else part)
    return out


def answer_name(answer: official.Answer) -> str:
    kind = " `input_required`" if answer.result.get("resultType") == "input_required" else ""
    return f"`{answer.method}`{kind}"


def found(answers: list[official.Answer]) -> dict[tuple[str, str, str], tuple[set[str], set[str]]]:
    """(answer, run, field) -> (the requirements that read it, the values a constrained field takes)."""
    out: dict[tuple[str, str, str], tuple[set[str], set[str]]] = {}
    for answer in answers:
        run = official.MODERN if answer.exchange.label.startswith(official.RUNS[official.MODERN][0].of("")) \
            else official.LEGACY

        def rejects(result: Any) -> tuple[str, str] | None:
            return official.rejection(answer.method, answer.version, result)

        required = [path for path in keys(answer.result) if rejects(changed(answer.result, path, drop=True))]
        leaves = [path for path in required if not any(other[:len(path)] == path and other != path
                                                       for other in required)]
        for path in leaves:
            reader = official.TOOL_SHAPE if path[0] == "tools" else official.OWNERS[run][answer.operation]
            said = rejects(changed(answer.result, path, NOT_A_VALUE)) or ("", "")
            values = set(re.findall(r'"([^"]+)"', said[1].split(", got ")[0])) if said[1].startswith(
                "expected \"") else set()
            readers, known = out.setdefault((answer_name(answer), run, spelled(path)), (set(), set()))
            readers.add(reader)
            known.update(values)
    return out


# -- the page ----------------------------------------------------------------------------------------
def page_rows() -> dict[tuple[str, str, str], tuple[str, set[str]]]:
    section = PAGE.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            answer, run, field, accepts, readers = cells
            rows[(answer, run, field.strip("`"))] = (accepts, set(re.findall(r"MCP-CLIENT-\d{3}", readers)))
    return rows


def test_the_page_lists_every_field_the_client_requires_and_no_other(answers):
    want, shown = found(answers), page_rows()
    assert shown, f"no table under {SECTION!r}"
    assert set(shown) == set(want), {"required but not on the page": sorted(set(want) - set(shown)),
                                     "on the page but not required": sorted(set(shown) - set(want))}
    for row, (readers, values) in want.items():
        accepts, named = shown[row]
        assert named == readers, f"{row}: the page says it is read by {sorted(named)}, the checks by {sorted(readers)}"
        missing = [v for v in values if f'"{v}"' not in accepts and f"`{v}`" not in accepts]
        assert not missing, f"{row}: the page does not name the values {missing} the client accepts: {accepts!r}"


def test_the_upstream_fields_a_go_team_missed_are_on_the_page(answers):
    """resultType, ttlMs and cacheScope: required on a 2026-07-28 tools/list, none of them on server/discover."""
    want = found(answers)
    for field in ("resultType", "ttlMs", "cacheScope"):
        assert ("`tools/list`", official.MODERN, field) in want
        assert ("`server/discover`", official.MODERN, field) not in want
