"""What a certification cannot assess when one thing is missing on the server's side, measured.

For every item a third party sets up (a credential, a second agent, a profile
prompt, …) the embedded reference server is certified once without it; the
requirements not assessed then, and assessed with everything given, are the
item's entry. docs/certify.md and docs/agent.md show these tables between
``<!-- measured:NAME -->`` markers; ``test_docs.py`` re-measures and compares.

    python -m tests.docs.measure            # print the tables
    python -m tests.docs.measure --write    # rewrite them in the docs
"""
from __future__ import annotations

import json
import re
import selectors
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from conformance.target import AGENT_SCENARIOS, FACTS, Profile, from_server_facts
from tests.docs.figures import WORDS

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"facts": ROOT / "docs" / "certify.md", "scenarios": ROOT / "docs" / "agent.md"}

# What a third party creates on its side, the fact it becomes, and how the doc names it.
SETUP_ITEMS: dict[str, str] = {
    "access_token": "an access token bound to the agent",
    "other_agent_id": "a second deployed agent in the same organization",
    "revoked_key": "a revoked API key",
    "expired_token": "an expired access token",
    "undeployed_agent_id": "an agent that is deleted, suspended or never deployed",
    "agent_slug": "the agent's slug",
    "auth_url": "the authorization server's URL",
    "extra_data_field": "the name of invoke's extra data field",
}
ALL_OPTIONAL = "(all of the above)"
CUSTOM_AGENT = "(custom agent, no scenario mapped)"


def variations() -> dict[str, dict[str, Any]]:
    """name -> how the target differs from the complete one."""
    out: dict[str, dict[str, Any]] = {"complete": {}}
    out.update({fact: {"drop": [fact]} for fact in SETUP_ITEMS})
    out[ALL_OPTIONAL] = {"drop": list(SETUP_ITEMS)}
    out.update({f"scenario:{key}": {"unmap": key} for key in AGENT_SCENARIOS})
    out[CUSTOM_AGENT] = {"custom": True}
    return out


def _target(facts: dict[str, Any], change: dict[str, Any]):
    target = from_server_facts(facts, embedded=False)
    target = replace(target, **{fact: None for fact in change.get("drop", ())})
    if "unmap" in change:
        target = replace(target, profile=Profile(scenarios={change["unmap"]: {"prompt": ""}}))
    if change.get("custom"):
        target = replace(target, profile=Profile(agent="custom"))
    return target


def not_assessed(facts: dict[str, Any], change: dict[str, Any]) -> dict[str, str]:
    """Requirement id -> level, for every requirement not assessed in one run (child process)."""
    from conformance import api

    report = api.certify(_target(facts, change), concurrency=6)
    return {r["id"]: r["level"] for r in report["requirements"] if r["status"] == "not_assessed"}


class _Server:
    """The reference server in a child process, with a bucket no set of parallel runs empties."""

    def __enter__(self) -> dict[str, Any]:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance", "serve", "--json", "--port", "0", "--until-stdin-closes",
             "--rate-limit-burst", "1000000", "--rate-limit-per-second", "100000"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(60):
                raise RuntimeError("the reference server did not start")
        return json.loads(self.proc.stdout.readline())

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.proc.stdout.close()


def measure(workers: int = 3) -> dict[str, dict[str, str]]:
    """variation -> {requirement id: level} that it alone leaves not assessed."""
    plan = variations()
    with _Server() as facts, ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = {name: pool.submit(not_assessed, facts, change) for name, change in plan.items()}
        got = {name: f.result() for name, f in futures.items()}
    base = got.pop("complete")
    return {name: {rid: lvl for rid, lvl in sorted(ids.items()) if rid not in base} for name, ids in got.items()}


def _counts(ids: dict[str, str]) -> str:
    return " | ".join(str(sum(1 for lvl in ids.values() if lvl == level)) for level in ("MUST", "SHOULD", "MAY"))


def _musts(ids: dict[str, str]) -> str:
    musts = [rid for rid, lvl in ids.items() if lvl == "MUST"]
    return ", ".join(musts) if musts else "none"


def facts_table(measured: dict[str, dict[str, str]]) -> str:
    rows = ["| missing | option (environment variable) | MUST | SHOULD | MAY | MUSTs not assessed |",
            "|---|---|---|---|---|---|"]
    for fact, what in SETUP_ITEMS.items():
        option, env = FACTS[fact]
        rows.append(f"| {what} | `{option}` (`{env}`) | {_counts(measured[fact])} | {_musts(measured[fact])} |")
    in_words = next(word for word, n in WORDS.items() if n == len(SETUP_ITEMS))
    rows.append(f"| all {in_words} | only `--base-url`, `--agent-id`, `--api-key` | {_counts(measured[ALL_OPTIONAL])} | "
                f"{_musts(measured[ALL_OPTIONAL])} |")
    return "\n".join(rows)


def scenarios_table(measured: dict[str, dict[str, str]]) -> str:
    rows = ["| profile key with no prompt | MUST | SHOULD | MAY | MUSTs not assessed |", "|---|---|---|---|---|"]
    for key in AGENT_SCENARIOS:
        ids = measured[f"scenario:{key}"]
        rows.append(f"| `{key}` | {_counts(ids)} | {_musts(ids)} |")
    ids = measured[CUSTOM_AGENT]
    rows.append(f"| every key (`agent = \"custom\"`, nothing mapped) | {_counts(ids)} | {_musts(ids)} |")
    return "\n".join(rows)


TABLES = {"facts": facts_table, "scenarios": scenarios_table}
_MARKED = r"(<!-- measured:{name} -->\n)(.*?)(\n<!-- /measured:{name} -->)"


def table_in_doc(name: str) -> str:
    text = DOCS[name].read_text(encoding="utf-8")
    found = re.search(_MARKED.format(name=name), text, re.S)
    if not found:
        raise LookupError(f"{DOCS[name].name} has no <!-- measured:{name} --> table")
    return found.group(2)


def write_tables(measured: dict[str, dict[str, str]]) -> None:
    for name, render in TABLES.items():
        path = DOCS[name]
        text = path.read_text(encoding="utf-8")
        table = render(measured)
        new = re.sub(_MARKED.format(name=name), lambda m: m.group(1) + table + m.group(3), text, flags=re.S)
        path.write_text(new, encoding="utf-8")


def main(argv: list[str]) -> None:
    measured = measure()
    if "--write" in argv:
        write_tables(measured)
    for name, render in TABLES.items():
        print(render(measured), end="\n\n")
    if "--json" in argv:
        print(json.dumps(measured, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
