"""docs/protocol-mapping.md stays true: every marked block is compared with what the suite sent to the reference
server (or with what the suite's own code builds), so the page cannot drift from the code.

A block is marked by the HTML comment on the line before its fence:

    <!-- sent SCENARIO STEP -->      the JSON request body of that recorded exchange
    <!-- headers SCENARIO STEP -->   its request line and the headers listed (an `http` block)
    <!-- answered SCENARIO STEP -->  the reference server's JSON answer to it
    <!-- event SCENARIO STEP -->     the last AG-UI event of its stream
    <!-- events SCENARIO STEP -->    every AG-UI event of its stream
    <!-- built NAME -->              a request the suite sends only in a case the reference server never causes
    <!-- form schema|content NAME --> a requested schema, and the content the suite fills it with
    <!-- resume profile|interrupts|sent NAME --> a `[resume] agui` profile entry (or none), the interrupts a paused
                                     run listed, and the resume the suite builds from them

A string `"<…>"` is a placeholder: within one scenario the same placeholder must stand for the same value."""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance import canned, catalog
from conformance.api import certify
from conformance.vocab.forms import ACCEPT_FORMS, AGUI_FIELDS, OTHER_FIELD, unshaped, with_id_as_built
from conformance.vocab.traffic import operation_of
from conformance.scenarios.agui import RESUME_ANSWER, build_resume
from conformance.scenarios.invoke import EXTRA_INSIDE_BYTES, EXTRA_OUTSIDE_BYTES
from conformance.scenarios.mcp import PAUSE_ANSWER, form_answer
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import AGENT_SCENARIOS, Profile, from_server_facts
from conformance.vocab import protocols as p

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "protocol-mapping.md"
AGENT_PAGE = ROOT / "docs" / "agent.md"
PROFILE_PAGE = ROOT / "docs" / "profile.md"

BLOCK = re.compile(r"<!-- (\w+) (\S+)(?: (\S+))? -->\n```(\w+)\n(.*?)\n```", re.S)
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
REQUIREMENT_ID = re.compile(r"\b[A-Z]+-[A-Z]+-\d{3}\b")

# The requirements whose scenarios send every recorded exchange the page shows; each must pass on the reference server.
SHOWN = ("AGUI-INT-002", "AGUI-PASS-003", "AGUI-PROMPT-002", "GEN-SESS-001", "INV-LIM-004", "INV-PASS-002",
         "INV-PASS-003", "INV-PASS-004", "MCP-CLIENT-003", "MCP-PAUSE-002", "MCP-PAUSE-004", "MCP-VER-006")
SUFFIX = AGENT_SCENARIOS["question_and_resume"]["reply_after_resume_suffix"]
QUESTION_PROMPT = AGENT_SCENARIOS["question_and_resume"]["prompt"]

# Requests the suite sends only when a server answers otherwise than the reference server does.
BUILT = {
    "mcp-resume-with-prompt": p.mcp_call("<tool>", QUESTION_PROMPT, session="<key>", resume=PAUSE_ANSWER, id=3),
}


# -- the page ----------------------------------------------------------------------------------------
def page_blocks(path: Path = PAGE) -> list[tuple[str, str, str | None, str, str]]:
    """(kind, first name, second name, fence language, text) of every marked block."""
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def marked(*kinds: str) -> list[tuple[str, str, str, str]]:
    return [(kind, a, b, text) for kind, a, b, _, text in page_blocks() if kind in kinds]


FREE_MEMBERS = {OTHER_FIELD[0], "runId", *(k for fields in AGUI_FIELDS.values() for k in fields)}


# -- matching with placeholders ----------------------------------------------------------------------
def match_text(template: str, text: Any, bound: dict[str, Any], where: str) -> None:
    """`template` (a string holding placeholders) equals `text`, each placeholder standing for its bound value."""
    assert isinstance(text, str), f"{where}: expected a string like {template!r}, got {text!r}"
    names = PLACEHOLDER.findall(template)
    pattern = "".join(re.escape(part) + ("(.+?)" if i < len(names) else "")
                      for i, part in enumerate(PLACEHOLDER.split(template)))
    found = re.fullmatch(pattern, text, re.S)
    assert found, f"{where}: {text!r} does not read as {template!r}"
    for name, value in zip(names, found.groups()):
        bind(name, value, bound, where)


def bind(name: str, value: Any, bound: dict[str, Any], where: str) -> None:
    if name in bound:
        assert bound[name] == value, f"{where}: {name} stands for {bound[name]!r} above and for {value!r} here"
    bound[name] = value


def match(shown: Any, got: Any, bound: dict[str, Any], where: str = "$") -> None:
    """The JSON value the page shows equals the one the suite sent or got, placeholders aside."""
    if isinstance(shown, str) and PLACEHOLDER.fullmatch(shown):
        bind(shown, got, bound, where)
    elif isinstance(shown, str) and PLACEHOLDER.search(shown):
        match_text(shown, got, bound, where)
    elif isinstance(shown, dict):
        assert isinstance(got, dict), f"{where}: the page shows an object, the suite has {got!r}"
        named = [k for k in shown if not PLACEHOLDER.fullmatch(k)]
        # the members a placeholder name stands for, in order (not a member the run's free form adds: `forms.shape`)
        unnamed = [k for k in got if k not in named and k not in FREE_MEMBERS]
        assert set(named) <= set(got) and len(unnamed) == len(shown) - len(named), \
            f"{where}: the page shows members {list(shown)}, the suite has {list(got)}"
        for key in named:
            match(shown[key], got[key], bound, f"{where}.{key}")
        for key, actual in zip([k for k in shown if k not in named], unnamed):
            bind(key, actual, bound, where)
            match(shown[key], got[actual], bound, f"{where}.{key}")
    elif isinstance(shown, list):
        assert isinstance(got, list) and len(shown) == len(got), \
            f"{where}: the page shows {len(shown)} items, the suite has {got!r}"
        for i, (s, g) in enumerate(zip(shown, got)):
            match(s, g, bound, f"{where}[{i}]")
    else:
        assert type(shown) is type(got) and shown == got, f"{where}: the page shows {shown!r}, the suite has {got!r}"


def test_the_matcher_binds_placeholders_and_refuses_what_differs():
    bound: dict[str, Any] = {}
    match({"a": "<k>", "b": ["x-<k>"]}, {"a": "1", "b": ["x-1"]}, bound)
    assert bound == {"<k>": "1"}
    for shown, got in (({"a": "<k>"}, {"a": "2"}), ({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1, "b": 2}),
                       (["<k>"], []), ("x-<k>", "y-1")):
        with pytest.raises(AssertionError):
            match(shown, got, dict(bound))


# -- the recording ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    with ReferenceServer(ServerConfig()) as srv:
        report = certify(from_server_facts(srv.facts), requirements=list(SHOWN), keep_recording=True)
    statuses = {row["id"]: row["status"] for row in report["requirements"] if row["id"] in SHOWN}
    assert statuses == dict.fromkeys(SHOWN, "passed"), statuses
    return {s["scenario"]: s for s in report["recording"]["document"]["scenarios"]}


def exchange(recorded: dict[str, Any], scenario: str, step: str) -> dict[str, Any]:
    assert scenario in recorded, f"the page shows scenario {scenario!r}, which the run did not record"
    found = [ex for ex in recorded[scenario]["exchanges"] if ex["label"] == step]
    assert found, f"the page shows step {step!r} of {scenario}, which was not sent"
    return found[0]


def sse_events(body: str) -> list[Any]:
    """The JSON data of every frame of an event stream (comment lines are no data)."""
    events = []
    for block in re.split(r"\r?\n\r?\n", body):
        data = [line[5:].removeprefix(" ") for line in block.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def recorded_value(kind: str, ex: dict[str, Any]) -> Any:
    if kind == "sent":     # the request as the scenario built it, not the form the run sent it in
        return unshaped(operation_of(ex["url"]), json.loads(ex["request_body"]), ex.get("form") or {})
    if kind == "answered":     # an id the run wrote in another class's form, as the page shows it
        return with_id_as_built(json.loads(ex["body"]), ex.get("form") or {})
    events = sse_events(ex["body"])
    return events[-1] if kind == "event" else events


def test_every_block_the_page_marks_is_what_the_suite_sent_or_got(recorded):
    blocks = marked("sent", "answered", "event", "events")
    assert {kind for kind, *_ in blocks} == {"sent", "answered", "event", "events"}
    bound: dict[str, dict[str, Any]] = {}
    for kind, scenario, step, text in blocks:
        shown = json.loads(text)
        match(shown, recorded_value(kind, exchange(recorded, scenario, step)), bound.setdefault(scenario, {}),
              f"{kind} {scenario} {step}")


def test_the_headers_the_page_lists_are_the_ones_sent(recorded):
    blocks = marked("headers")
    assert blocks
    for _, scenario, step, text in blocks:
        ex = exchange(recorded, scenario, step)
        sent = as_built({name.lower(): value for name, value in ex["request_headers"].items()}, ex.get("form") or {})
        request_line, *headers = text.splitlines()
        method, path = request_line.split(" ", 1)
        assert method == ex["method"]
        params = json.loads(ex["request_body"]).get("params") or {}
        bound: dict[str, Any] = {"<tool>": params["name"]} if "name" in params else {}
        match_text(path, "/v1/" + ex["url"].split("/v1/", 1)[1], bound, f"{scenario} {step}: request line")
        for line in headers:
            name, value = line.split(": ", 1)
            assert name.lower() in sent, f"{scenario} {step}: the page lists {name}, which was not sent"
            match_text(value, sent[name.lower()], bound, f"{scenario} {step}: {name}")


def as_built(sent: dict[str, str], form: dict[str, str]) -> dict[str, str]:
    """The headers as the scenario built them, before the run wrote them in the free forms it drew for the request
    (`vocab.forms`): the page shows the request, not the form it went in."""
    out = dict(sent)
    if "content-type" in out and form.get("content-type-form"):
        out["content-type"] = "application/json"
    if "authorization" in out and form.get("auth-scheme-case"):
        out["authorization"] = "Bearer" + out["authorization"][len(form["auth-scheme-case"]):]
    if "accept" in out and form.get("accept-form", "as-built") != "as-built":
        out["accept"] = next(base for base, forms in ACCEPT_FORMS.items() if out["accept"] in forms.values())
    return out


def test_the_requests_sent_only_in_other_cases_are_what_the_code_builds():
    blocks = marked("built")
    assert {name for _, name, _, _ in blocks} == set(BUILT)
    for _, name, _, text in blocks:
        match(json.loads(text), BUILT[name], {}, f"built {name}")


# -- the rules shown by example ----------------------------------------------------------------------
def pairs(kind: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for _, part, name, text in marked(kind):
        out.setdefault(name, {})[part] = text
    return out


def test_the_form_examples_are_filled_as_the_suite_fills_them():
    examples = pairs("form")
    assert examples and all(set(parts) == {"schema", "content"} for parts in examples.values()), examples
    for name, parts in examples.items():
        assert form_answer(json.loads(parts["schema"])) == json.loads(parts["content"]), name


def test_the_resume_examples_are_built_as_the_suite_builds_them(tmp_path):
    examples = pairs("resume")
    assert examples and all({"interrupts", "sent"} <= set(parts) for parts in examples.values()), examples
    for name, parts in examples.items():
        profile = Profile()
        if "profile" in parts:
            path = tmp_path / f"{name}.toml"
            path.write_text(parts["profile"], encoding="utf-8")
            profile = Profile.load(str(path))
        ctx = SimpleNamespace(target=canned.DEFAULT_TARGET.with_facts(profile=profile))
        resume, how = build_resume(ctx, json.loads(parts["interrupts"]), RESUME_ANSWER)
        assert resume == json.loads(parts["sent"]), (name, how)


# -- the replies and figures the text states ---------------------------------------------------------
def reply_after(answer: Any) -> str:
    return "answer: " + p.canonical(answer) + SUFFIX


def test_the_replies_after_a_resume_are_stated_as_the_suite_expects_them(recorded):
    assert RESUME_ANSWER == PAUSE_ANSWER, "the page says AG-UI and MCP answer with the same value"
    form = json.loads(exchange(recorded, "mcp.pause_elicit", "ask")["body"])["result"]["inputRequests"]
    (request,) = form.values()
    elicited = reply_after(form_answer(request["params"]["requestedSchema"]))
    plain = reply_after(RESUME_ANSWER)
    assert sse_events(exchange(recorded, "agui.interrupt", "resume")["body"])[-1]["result"] == plain
    assert p.mcp_text(json.loads(exchange(recorded, "mcp.pause_text", "resume")["body"])["result"]) == plain
    assert p.mcp_text(json.loads(exchange(recorded, "mcp.pause_elicit", "retry")["body"])["result"]) == elicited
    for page in (PAGE, AGENT_PAGE):
        text = page.read_text(encoding="utf-8")
        for reply in (plain, elicited):
            assert f"`{reply}`" in text, f"{page.name} does not state the reply {reply!r}"


def test_the_extra_data_sizes_are_the_scenario_figures(recorded):
    text = PAGE.read_text(encoding="utf-8")
    for step, size in (("extra-2kb", EXTRA_INSIDE_BYTES), ("extra-8kb", EXTRA_OUTSIDE_BYTES)):
        value = json.loads(exchange(recorded, "invoke.extra_data", step)["request_body"])["data"]
        assert len(p.canonical(value).encode()) == size
        assert f"{size:,} bytes" in text, f"the page does not state {size:,} bytes"


def test_every_requirement_the_page_names_is_in_the_catalog():
    known = set(catalog.load())
    named = set(REQUIREMENT_ID.findall(PAGE.read_text(encoding="utf-8")))
    assert named and not named - known, sorted(named - known)


# -- profile.md's [resume] section ---------------------------------------------------------------------
def test_the_profile_page_documents_the_resume_keys_the_loader_accepts(tmp_path):
    page = PROFILE_PAGE.read_text(encoding="utf-8")
    section = page.split("## `[resume]`", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    path = tmp_path / "unknown.toml"
    path.write_text("[resume]\nsomething_else = '{}'\n", encoding="utf-8")
    with pytest.raises(ValueError, match="known: ") as refused:
        Profile.load(str(path))
    assert documented == set(str(refused.value).rsplit("known: ", 1)[1].split(", ")), documented
    example = re.search(r"```toml\n(.*?)\n```", section, re.S).group(1)
    path.write_text(example, encoding="utf-8")
    ctx = SimpleNamespace(target=canned.DEFAULT_TARGET.with_facts(profile=Profile.load(str(path))))
    assert build_resume(ctx, [], RESUME_ANSWER)[0] == {"answer": RESUME_ANSWER}
