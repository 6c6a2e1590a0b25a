"""The code's values the docs' figures are compared with: constants read where the code keeps them, and the few
facts no constant holds, measured here without a server (which scenarios only `--thorough` records, what a
default run's 429 probe waits for, which HTTP versions the client speaks)."""
from __future__ import annotations

import asyncio
import json
import re
import tomllib
from functools import cache
from types import SimpleNamespace
from typing import Any

import httpx

from conformance import canned, catalog, registry
from conformance.engine import Context
from conformance.outcomes import NotAssessed
from conformance.server.config import SANDBOX_RATE_LIMIT
from conformance.agent import Ask, ConformanceAgent
from conformance.target import Profile, Target
from conformance.wire.http import Client
from tests.docs.pages import ROOT

MiB = 2 ** 20


# -- the catalog ----------------------------------------------------------------------------------------------
@cache
def counts() -> dict[str, int]:
    reqs = catalog.load().values()
    testable = [r for r in reqs if r.testable]
    return {"all": len(reqs), "testable": len(testable),
            **{lvl: sum(r.level == lvl for r in testable) for lvl in ("MUST", "SHOULD", "MAY")},
            "unspecified": sum(not r.testable for r in reqs)}


def quoted(pattern: str) -> float:
    """A figure of the spec, as the catalog quotes it: the number (in digits or words) `pattern`'s group finds in
    a requirement's sentence (the spec itself is not part of the repository)."""
    from tests.docs.figures import value
    for r in catalog.load().values():
        if m := re.search(pattern, r.quote):
            return value(m.group(1))
    raise LookupError(f"no catalog quote says {pattern!r}")


def invoke_events_named() -> int:
    """The invoke stream events the spec names with their shapes (`text`, `tool_call_start`, `done`, `error`)."""
    for r in catalog.load().values():
        if m := re.search(r"Stream event names and data shapes: (.*)", r.quote):
            return len(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", m.group(1))))
    raise LookupError("no catalog quote names the stream events")


def kilobytes_around(*sizes: int) -> tuple[int, int]:
    """The whole kilobytes (of 1000 bytes) these byte sizes lie between."""
    return min(sizes) // 1000, -(-max(sizes) // 1000)


def needs_agent_musts(*needs: str) -> int:
    """The MUSTs marked with any of these needs (all marks when none is given)."""
    return sum(r.level == "MUST" and bool(set(r.agent_needs) & set(needs or catalog.AGENT_NEEDS))
               for r in catalog.load().values())


@cache
def check_count() -> int:
    return len(registry.load_all())


# -- what only --thorough records -------------------------------------------------------------------------------
class _Stop(Exception):
    """The scenario got past its gate and sent a second request: far enough."""


class _OneAnswer:
    """A client that answers the first request with `X-RateLimit-Remaining: remaining` and stops the scenario at
    the second."""

    def __init__(self, remaining: int):
        self.remaining, self.sent = remaining, 0

    async def send(self, method: str, path: str, **kw: Any):
        self.sent += 1
        if self.sent > 1:
            raise _Stop
        return canned.exchange(200, {"x-ratelimit-remaining": str(self.remaining)})


def gated(name: str, *, thorough: bool, remaining: int = 10 ** 6) -> bool:
    """Whether the scenario stops as not assessed before its second request (its first answered 200 with
    `remaining` requests left in the bucket)."""
    target = Target(base_url="https://127.0.0.1:9", agent_id="agt_docs", api_key="k", thorough=thorough)
    session = SimpleNamespace(target=target, recorded=list, checks=())     # nothing recorded before, no check run
    ctx = Context(session, registry.SCENARIOS[name], _OneAnswer(remaining))
    try:
        _loop().run(registry.SCENARIOS[name].fn(ctx))
    except NotAssessed:
        return True
    except _Stop:
        return False
    return False


@cache
def _loop() -> asyncio.Runner:
    return asyncio.Runner()


@cache
def thorough_scenarios() -> frozenset[str]:
    """The scenarios a default run leaves unrecorded and `--thorough` records: among those whose code reads the
    option, the ones that stop without it and go on with it."""
    registry.load_all()
    reading = [n for n, s in registry.SCENARIOS.items() if "thorough" in s.fn.__code__.co_names]
    return frozenset(n for n in reading if gated(n, thorough=False) and not gated(n, thorough=True))


@cache
def thorough_only() -> frozenset[str]:
    """The requirements only `--thorough` assesses: every check that can assess them needs a scenario only
    `--thorough` records."""
    needs = thorough_scenarios()
    return frozenset(rid for rid, ids in registry.coverage().items() if ids and all(
        set(registry.CHECKS[c].scenarios) & needs for c in ids if not registry.CHECKS[c].supplementary))


def thorough_musts() -> int:
    levels = {r.id: r.level for r in catalog.load().values()}
    return sum(levels[rid] == "MUST" for rid in thorough_only())


@cache
# -- the wire ---------------------------------------------------------------------------------------------------
def http_versions() -> str:
    """The HTTP versions the suite's clients offer, as the docs name them ("HTTP/1.1 only", "HTTP/1.1 and
    HTTP/2"): read from every connection pool of the clients a run makes (HTTP/2's for the core scenarios it runs
    again over HTTP/2, when there are any)."""
    from conformance import versions
    clients = [Client("https://127.0.0.1:9")] + ([Client("https://127.0.0.1:9", http2=True)]
                                                 if versions.HTTP2_SCENARIOS else [])
    pools = [v._transport._pool for client in clients for v in vars(client).values()
             if isinstance(v, httpx.AsyncClient)]
    spoken = [name for name, on in (("HTTP/1.1", any(p._http1 for p in pools)), ("HTTP/2", any(p._http2 for p in pools)))
              if on]
    return " and ".join(spoken) if len(spoken) > 1 else f"{spoken[0]} only"


# -- the embedded server ------------------------------------------------------------------------------------
def sandbox_bucket() -> tuple[float, float]:
    n, seconds = SANDBOX_RATE_LIMIT.rstrip("s").split("/")
    return float(n), float(seconds)


def serve_takes_rate_limit(text: str) -> bool:
    from conformance.server.serve import _parser, _rate_limits
    try:
        return bool(_rate_limits(_parser().parse_args(["--rate-limit", text])))
    except (ValueError, SystemExit):
        return False


def serve_default(flag: str) -> Any:
    from conformance.server.serve import _parser
    action = next(a for a in _parser()._actions if flag in a.option_strings)
    return action.default


# -- what the project builds on ---------------------------------------------------------------------------------
@cache
def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def python_floor() -> str:
    return re.fullmatch(r">=\s*([\d.]+)", pyproject()["project"]["requires-python"]).group(1)


def dependency_floor(name: str) -> str:
    for spec in pyproject()["project"]["dependencies"]:
        if m := re.fullmatch(rf"{re.escape(name)}(?:\[[^\]]*\])?\s*(?:>=|==)\s*([\d.]+)(?:,.*)?", spec):
            return m.group(1)
    raise LookupError(name)


@cache
def agui_client_package() -> dict[str, Any]:
    return json.loads((ROOT / "tests" / "clients" / "agui" / "package.json").read_text(encoding="utf-8"))


def node_floor() -> str:
    return re.fullmatch(r">=\s*(\d+)", agui_client_package()["engines"]["node"]).group(1)


def agui_version() -> str:
    """The AG-UI release the suite's models and the official client test follow (major.minor)."""
    client = agui_client_package()["dependencies"]["@ag-ui/client"]
    assert client.startswith(dependency_floor("ag-ui-protocol")), "the Python and JavaScript AG-UI packages differ"
    return ".".join(client.split(".")[:2])


def openapi_version() -> str:
    text = (ROOT / "conformance" / "_schemas" / "openapi.yaml").read_text(encoding="utf-8")
    return ".".join(re.search(r"^openapi:\s*([\d.]+)", text, re.M).group(1).split(".")[:2])


def json_schema_draft() -> str:
    schema = json.loads((ROOT / "conformance" / "_schemas" / "invoke-request.json").read_text(encoding="utf-8"))
    return re.search(r"draft/(\d{4}-\d\d)/", schema["$schema"]).group(1)


# -- the agent --------------------------------------------------------------------------------------------------
@cache
def vectors() -> dict[str, Any]:
    from conformance.agent import vectors as v
    return v.load()


def vector_counts() -> tuple[int, int, int]:
    """(agent cases, their runs, canonical JSON cases)."""
    v = vectors()
    return len(v["agent"]), sum(len(c["runs"]) for c in v["agent"]), len(v["canonical_json"]["cases"])


def count_replies(*keys: str) -> tuple[int, ...]:
    """What `count` replies on a fresh agent, run after run, on these session keys."""
    agent = ConformanceAgent()
    return tuple(int("".join(e.text for e in agent.run("count", session=key))) for key in keys)


def runs_of_a_new_session() -> int:
    return ConformanceAgent().session("new").to_state()["runs"]


def resume_at_of_the_first_line() -> int:
    return next(e for e in ConformanceAgent().run("ask Q") if isinstance(e, Ask)).resume_at


def mappable_keys() -> int:
    """The profile keys any agent can map: those fixtures/profile.example.toml maps."""
    return len(Profile.load(str(ROOT / "fixtures" / "profile.example.toml")).scenarios)


def only_conformance_agent_needs() -> int:
    """The needs no profile key stands in for (`say-json`, echo mode, `sleep`)."""
    return sum("no profile key" in what for what in catalog.AGENT_NEEDS.values())


def own_agent_musts(*, thorough: bool) -> tuple[int, int, int]:
    """(MUSTs passed, not assessed, failed) of certify.md's agent that answers only the mappable prompts: the
    marked MUSTs stay out of its reach, and without --thorough what only --thorough assesses too
    (tests/selftest/test_custom_agent.py certifies such an agent and finds exactly that)."""
    out = {r.id for r in catalog.load().values() if r.level == "MUST" and r.agent_needs}
    if not thorough:
        out |= {r.id for r in catalog.load().values() if r.level == "MUST" and r.id in thorough_only()}
    return counts()["MUST"] - len(out), len(out), 0


# -- the MCP form the suite fills ---------------------------------------------------------------------------------
def form_numbers() -> tuple[int, float, int]:
    """How far past an exclusive bound the suite fills a form's integer and number, and the number it starts
    from."""
    from conformance.scenarios.mcp import form_value
    integer = form_value({"type": "integer", "exclusiveMinimum": 10})
    number = form_value({"type": "number", "exclusiveMinimum": 10})
    return integer - 10, number - 10, form_value({"type": "number"})


# -- the zoo ----------------------------------------------------------------------------------------------------
def huge_frame_mib() -> int:
    """What the hostile server's huge frame sends, measured on a writer that only counts."""
    from tests.selftest import hostile

    class Counting:
        size = 0

        def write(self, data: bytes) -> None:
            Counting.size += len(data)

        async def drain(self) -> None:
            pass

        def is_closing(self) -> bool:
            return False

    asyncio.run(hostile.huge_frame(None, Counting(), None))
    return round(Counting.size / MiB)
