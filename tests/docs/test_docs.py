"""The documentation is the repository's own: no path outside it, no dead link, no table that drifted from the code."""
from __future__ import annotations

import os
import sys
import re
import runpy
import subprocess
import tomllib
from pathlib import Path

import pytest

from conformance.agent import DIRECTIVES
from conformance.target import AGENT_SCENARIOS, FACTS, Profile
from tests.docs import measure

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# Paths users of the repository or the installed package do not have.
OUTSIDE = re.compile(r"\.\./shared|shared/spec|shared/design|(?<![\w.])/work/"
                     r"|design/(?:conformance-agent|runner-contract)\.md|spec/agent-invocation-service\.md")

# Files owned by other helpers that still name outside paths; the coordinator fixes them
# (exact edits in the docs helper's report) and then empties this set.

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def repository_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name]


def text_of(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def test_no_file_names_a_path_outside_the_repository():
    offenders = []
    for path in repository_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("tests/docs/"):
            continue
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{rel}:{number}: {line.strip()[:120]}")
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_the_outside_path_pattern_catches_what_it_must():
    for bad in ("see ../shared/spec/x.md", "(`shared/design/conformance-agent.md`)", "/work/shared/spec/a.md",
                "`design/runner-contract.md`", "`spec/agent-invocation-service.md`"):
        assert OUTSIDE.search(bad), bad
    for fine in ("docs/agent.md", "the shared connection pool", "a shared/other path", "network/work/x"):
        assert not OUTSIDE.search(fine), fine


def markdown_pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "conformance" / "server" / "README.md", *sorted(DOCS.rglob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def test_every_relative_link_in_the_docs_resolves():
    dead = []
    for page in markdown_pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, fragment = target.partition("#")
            resolved = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(ROOT)} -> {target}"
            if not resolved.is_relative_to(ROOT):
                dead.append(f"{where}: outside the repository")
            elif not resolved.exists():
                dead.append(f"{where}: no such file")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                dead.append(f"{where}: no heading #{fragment}")
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_every_directive_is_documented():
    agent_doc = (DOCS / "agent.md").read_text(encoding="utf-8")
    missing = [w for w in sorted(DIRECTIVES) if not re.search(rf"^\| `{re.escape(w)}[ `]", agent_doc, re.M)]
    assert not missing, f"directives without a row in docs/agent.md: {missing}"


def test_every_scenario_key_is_documented_with_its_default_prompt():
    agent_doc = (DOCS / "agent.md").read_text(encoding="utf-8")
    problems = []
    for key, entry in AGENT_SCENARIOS.items():
        row = re.search(rf"^\| `{key}` \|(.*)$", agent_doc, re.M)
        if not row:
            problems.append(f"{key}: no row")
            continue
        for line in entry.get("prompt", "").splitlines():
            if f"`{line}`" not in row.group(1):
                problems.append(f"{key}: default prompt line {line!r} not shown")
    assert not problems, problems


def test_certify_names_every_option_and_its_variable():
    certify = (DOCS / "certify.md").read_text(encoding="utf-8")
    missing = [f"{opt} / {env}" for fact, (opt, env) in FACTS.items() if fact != "profile"
               and (opt not in certify or env not in certify)]
    assert not missing, missing


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, re.S)


def test_the_profile_example_in_the_doc_is_the_fixture():
    fixture = ROOT / "fixtures" / "profile.example.toml"
    with fixture.open("rb") as fh:
        expected = tomllib.load(fh)
    shown = [tomllib.loads(b) for b in _toml_blocks((DOCS / "profile.md").read_text(encoding="utf-8"))]
    assert expected in shown, "docs/profile.md does not show fixtures/profile.example.toml"
    profile = Profile.load(str(fixture))
    assert profile.agent == "custom" and set(profile.scenarios) <= set(AGENT_SCENARIOS)


def test_the_adapter_example_runs_and_maps_each_protocol():
    demo = runpy.run_path(str(DOCS / "examples" / "adapter.py"))["demo"]()
    assert demo["invoke_json"]["status"] == "failed" and demo["invoke_json"]["result"] == "partial"
    assert demo["invoke_sse"][-1].startswith("event: done\n")
    assert sum(f.startswith("event: text\n") for f in demo["invoke_sse"]) == 3
    paused, resumed = demo["agui"][-1], demo["agui_resumed"][-1]
    assert paused["type"] == "RUN_FINISHED" and paused["outcome"]["type"] == "interrupt"
    assert resumed["outcome"] == {"type": "success"} and resumed["result"] == 'answer: {"name":"Ada"}thanks'
    assert demo["mcp"][-1]["result"]["content"] == [{"type": "text", "text": "1"}]


@pytest.mark.parametrize("name", sorted(measure.TABLES))
def test_measured_tables_are_filled_in(name):
    assert "|---|" in measure.table_in_doc(name), f"run `python -m tests.docs.measure --write` ({name})"


@pytest.mark.xdist_group("docs-measure")
@pytest.mark.skipif(not os.environ.get("CONFORMANCE_MEASURE_DOCS"),
                    reason="21 certification runs (~3 min of CPU): set CONFORMANCE_MEASURE_DOCS=1, or regenerate the "
                           "tables with `python -m tests.docs.measure --write`")
def test_measured_tables_match_a_fresh_measurement():
    """Certifies the reference server once per missing item (about two minutes) and compares with the docs."""
    measured = measure.measure(workers=2)
    for name, render in measure.TABLES.items():
        assert measure.table_in_doc(name) == render(measured), \
            f"docs table {name!r} drifted from the code: run `python -m tests.docs.measure --write`"


def test_the_canned_recording_example_of_writing_checks_runs():
    """docs/writing-checks.md shows how to build a recording by hand; the example must stay runnable."""
    from conformance import registry

    registry.load_all()
    text = (DOCS / "writing-checks.md").read_text()
    example = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "canned.recording" in b)
    scope: dict = {}
    exec(compile(example, "writing-checks.md", "exec"), scope)
    assert scope["rec"].exchanges



# An agent that leaves `sleep` out: a script line starting with it is a bad line (the message is its own).
PARTIAL_AGENT = """
import json, runpy, sys
from conformance.agent import ConformanceAgent, parse
from conformance.agent.script import split_lines
example, agent = runpy.run_path(sys.argv[1]), ConformanceAgent()
for line in sys.stdin:
    message = json.loads(line)
    lines = split_lines(message.get("prompt", ""))
    bad = next((n for n, text in enumerate(lines, 1) if text.split(" ")[0] == "sleep"), None)
    if bad and parse(message["prompt"]).echo is None:
        got = {"events": [{"type": "fail", "message": f"bad script line {bad}: sleep is not implemented here"}],
               "outcome": "failed", "reply": "", "whole_reply": ""}
    else:
        got = example["answer"](agent, message)
    print(json.dumps(got), flush=True)
"""


def test_an_agent_in_another_process_is_played_the_vectors():
    """docs/agent.md's path for another language: the agent as a command (docs/examples/agent_command.py shows
    the protocol) passes the vectors; one that leaves `sleep` out passes those --without sleep leaves it, and is
    caught on the others; one that answers wrongly is caught."""
    from conformance.agent import vectors

    every = vectors.load()
    sleeping = [c for c in every["agent"] if vectors.uses(c, {"sleep"})]
    few = {**every, "agent": sleeping[:2] + [c for c in every["agent"] if not vectors.uses(c, {"sleep"})][:2],
           "canonical_json": {**every["canonical_json"], "cases": every["canonical_json"]["cases"][:2]}}
    example = str(DOCS / "examples" / "agent_command.py")
    assert vectors.check(few, command=[sys.executable, example]) == []
    partial = [sys.executable, "-c", PARTIAL_AGENT, example]
    assert vectors.check(few, command=partial, without={"sleep"}) == []
    assert {p.split(",")[0] for p in vectors.check(few, command=partial)} == {c["name"] for c in sleeping[:2]}
    wrong = [sys.executable, "-c", "import sys\nfor _ in sys.stdin: print('{\"reply\": \"x\", \"output\": \"x\"}', "
                                   "flush=True)"]
    assert len(vectors.check(few, command=wrong)) >= 4 * len(vectors.EXPECTED)
