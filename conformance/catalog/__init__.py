"""The requirement catalog: every testable statement of the spec, kept as data.

The TOML files beside this module hold one `[[requirement]]` table per
statement (format in README.md). They are validated when loaded, so a typo in
the catalog is an error at collection, not a silently missing requirement.
"""
from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LEVELS = ("MUST", "SHOULD", "MAY", "UNSPECIFIED")
REQUIREMENT_PROTOCOLS = ("invoke", "agui", "mcp", "metadata", "auth", "general")  # a requirement's `protocol` field
# The protocols with endpoints a scenario sends to (what --protocols filters); the requirement areas "auth" and
# "general" have none of their own.
ENDPOINT_PROTOCOLS = ("invoke", "agui", "mcp", "metadata")
_REQUIRED = ("id", "level", "section", "quote", "expect", "protocol")
CATALOG_DIR = Path(__file__).resolve().parent
#: the date this catalog was last reconciled with the spec (which carries no version of its own): bump it whenever
#: a requirement's id, level or quote is changed to follow the spec
SPEC_REVISION = "2026-11-27"


# What a requirement's checks need the agent under test to do beyond the prompts any agent can map (the eight profile
# keys plain_reply … question_and_resume): the `needs_agent` field names these, comma-separated. The conformance
# agent does all of them; an agent of your own does the first three only through a profile key mapped to a prompt
# that reports the same thing in the same form, and never the last three.
AGENT_NEEDS: dict[str, str] = {
    "count": "an agent that replies how many runs its session has started (`count`; profile key session_affinity)",
    "echo params": "an agent that replies the canonical JSON of the params it received (`echo params`; profile key "
                   "params_passthrough)",
    "echo messages": "an agent that replies the canonical JSON of the messages it received (`echo messages`; "
                     "profile key messages_passthrough)",
    "say-json": "the conformance agent: generated texts it must reply exactly (`say-json`; no profile key)",
    "echo mode": "the conformance agent: a 0.5 MB prompt it replies unchanged (echo mode; no profile key)",
    "sleep": "the conformance agent: a pause of known length inside a run (`sleep`; no profile key)",
}


# The documents a SHOULD or MAY may rest on (`source`): the spec itself and the protocols and standards it names or
# builds on. A citation is `<document> › <where>: "<its words>"`; where the spec's words alone carry the level, the
# spec is the one document cited.
SOURCE_DOCUMENTS = ("spec", "MCP 2025-11-25", "MCP 2026-07-28", "AG-UI 1.0", "JSON-RPC 2.0", "RFC 9110",
                    "RFC 9111", "RFC 9728", "RFC 8414", "RFC 6750")
CITATION = re.compile(r'(?P<document>[^›]+?) › (?P<where>[^:]+): "(?P<words>.+)"', re.S)
SOURCED_LEVELS = ("SHOULD", "MAY")   # a check that only warns or informs says which words make it do so


class CatalogError(ValueError):
    pass


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    section: str
    quote: str
    expect: str
    protocol: str
    scenario: str = ""
    supply: str = ""
    note: str = ""
    needs_agent: str = ""   # AGENT_NEEDS keys, comma-separated: what the checks need the agent to do
    source: tuple[str, ...] = ()   # citations `<document> › <where>: "<words>"` that carry a SHOULD or MAY

    @property
    def testable(self) -> bool:
        return self.level != "UNSPECIFIED"

    @property
    def agent_needs(self) -> tuple[str, ...]:
        return tuple(n.strip() for n in self.needs_agent.split(",") if n.strip())

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items() if v not in ("", ())}


def citation_problem(citation: object) -> str | None:
    """Why `citation` is not `<document> › <where>: "<words>"` with a known document (None when it is)."""
    found = CITATION.fullmatch(citation) if isinstance(citation, str) else None
    if found is None:
        return f"{citation!r} is not `<document> › <where>: \"<its words>\"`"
    if found["document"] not in SOURCE_DOCUMENTS:
        return f"{found['document']!r} is not among {list(SOURCE_DOCUMENTS)}"
    return None


def _parse(path: Path) -> list[Requirement]:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    out = []
    for n, row in enumerate(data.get("requirement", []), 1):
        where = f"{path.name} requirement #{n} ({row.get('id', '?')})"
        missing = [k for k in _REQUIRED if not isinstance(row.get(k), str) or not row.get(k)]
        if missing:
            raise CatalogError(f"{where}: missing or empty {', '.join(missing)}")
        unknown = set(row) - set(Requirement.__dataclass_fields__)
        if unknown:
            raise CatalogError(f"{where}: unknown keys {sorted(unknown)}")
        if row["level"] not in LEVELS:
            raise CatalogError(f"{where}: level {row['level']!r} not one of {LEVELS}")
        if row["protocol"] not in REQUIREMENT_PROTOCOLS:
            raise CatalogError(f"{where}: protocol {row['protocol']!r} not one of {REQUIREMENT_PROTOCOLS}")
        if row["level"] == "UNSPECIFIED" and not row.get("supply"):
            raise CatalogError(f"{where}: an UNSPECIFIED entry must say how the fact is supplied (`supply`)")
        source = row.get("source", [])
        if row["level"] in SOURCED_LEVELS and not source:
            raise CatalogError(f"{where}: a {row['level']} must cite the words it rests on (`source`)")
        if not isinstance(source, list) or any(citation_problem(c) for c in source):
            problems = [citation_problem(c) for c in source] if isinstance(source, list) else ["not a list"]
            raise CatalogError(f"{where}: source: {'; '.join(p for p in problems if p)}")
        row = {**row, "source": tuple(source)}
        unknown_needs = set(Requirement(**row).agent_needs) - set(AGENT_NEEDS) if "needs_agent" in row else set()
        if unknown_needs:
            raise CatalogError(f"{where}: needs_agent {sorted(unknown_needs)} not among {list(AGENT_NEEDS)}")
        out.append(Requirement(**row))
    return out


@cache
def load(directory: Path = CATALOG_DIR) -> dict[str, Requirement]:
    """All requirements by id, in file order; raises CatalogError on any defect."""
    catalog: dict[str, Requirement] = {}
    for path in sorted(directory.glob("*.toml")):
        for req in _parse(path):
            if req.id in catalog:
                raise CatalogError(f"duplicate requirement id {req.id} in {path.name}")
            catalog[req.id] = req
    return catalog


@cache
def digest(directory: Path = CATALOG_DIR) -> str:
    """`sha256:<hex>` over what judges a server: every requirement's id, level and quote, as canonical JSON (a list
    of {"id", "level", "quote"} objects sorted by id; keys sorted, no whitespace, UTF-8). Two reports with the
    same digest were judged against the same requirements; moving a requirement between files changes nothing."""
    entries = sorted(({"id": r.id, "level": r.level, "quote": r.quote} for r in load(directory).values()),
                     key=lambda e: e["id"])
    canonical = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "sha256:" + hashlib.sha256(canonical).hexdigest()
