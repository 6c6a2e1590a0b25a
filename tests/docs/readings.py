"""How every number of the pages is read: the figures (each tied to the code's value by the words around it), the
examples the code itself checks, the parts another test compares as a whole, and the numbers that are no figure
of the suite, each with the reason. `tests/docs/figures.py` says how a reading accounts for a number."""
from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from dataclasses import fields
from functools import cache
from typing import Callable, Iterable, Iterator

from conformance import __version__, catalog, draw_cache, registry, versions
from conformance.engine import KEY_COMPANIONS
from conformance.vocab.forms import CONNECTION_ENDS, LARGE_ID_BITS
from conformance.agent import DIRECTIVES, canonical_json, parse
from conformance.agent import vectors as agent_vectors
from conformance.checks.agui._common import PING_INTERVAL
from conformance.options import DEFAULT_MAX_RUN_TIME, OPTIONS, RATE_PROBE_MAX
from conformance.reporting import progress
from conformance.wire.pace import DEFAULT_RATE, parse_duration
from conformance.certification import REPORT_FILES
from conformance.recording import FORMAT as RECORDING_FORMAT
from conformance.reporting.markdown import SUMMARY_LIMIT
from conformance.vocab import forms
from conformance.scenarios import agui as agui_scenarios, invoke as invoke_scenarios
from conformance.scenarios.fuzz import EXTRA_BYTES as FUZZ_EXTRA_BYTES
from conformance.report import suite_identity
from conformance.scenarios.mcp import FORMATTED, RATE_PROBE_BATCH, form_value
from conformance.server.config import ServerConfig
from conformance.target import AGENT_SCENARIOS, Timeouts
from conformance.vocab.protocols import MCP_LEGACY_VERSION, MCP_VERSION
from conformance.wire.http import RecordingBudget
from tests.docs import truths as t
from tests.docs.figures import Checked, Figure, NotFigure, Region, value
from tests.docs.pages import ROOT, Page

MiB = 2 ** 20
SILENCE = AGENT_SCENARIOS["silence"]["silent_seconds"]
LONG_SILENCE = agui_scenarios.SILENCE_LONG_SECONDS


# -- figures --------------------------------------------------------------------------------------------------
TIMEOUTS = tuple(Figure(f"the profile's [timeouts] {f.name}", (f"| `{f.name}` | {{}} |",),
                        lambda f=f: getattr(Timeouts(), f.name), ("docs/profile.md",)) for f in fields(Timeouts))

FIGURES: tuple[Figure, ...] = (
    # what rides on the requests a run sends
    Figure("the string kinds a key carries beside its own", ("carries the characters of {} more",),
           lambda: KEY_COMPANIONS, ("docs/cli.md",)),
    Figure("the requests that end their connection", ("over HTTP/1.1 one request in {} says `Connection: close`",),
           lambda: len(CONNECTION_ENDS) // CONNECTION_ENDS.count("close"), ("docs/cli.md",)),
    Figure("how large a large id the run chooses is", ("negative, beyond {} bits",),
           lambda: LARGE_ID_BITS, ("docs/cli.md",)),
    # the 429 probe and the slow checks of --thorough
    Figure("the 429 probe's cap", ("never more than `--rate-probe-max`, default {}",
                                   "never more than `--rate-probe-max` (default {})"), lambda: RATE_PROBE_MAX,
           ("README.md", "docs/cli.md", "docs/ci.md", "docs/certify.md")),
    Figure("what the 429 probe sends past the bucket", ("`X-RateLimit-Remaining` + {}", "says is left plus {}"),
           lambda: RATE_PROBE_BATCH, ("README.md", "docs/cli.md", "docs/certify.md")),
    # the run's pace (plan, progress, the deadline's cap)
    Figure("the run's cap by default", ("`--max-run-time` (default `{}m`", "(default `{}m`; `CONFORMANCE_MAX_RUN",
                                        "waiting for the server's rate limit included (default {}m)"),
           lambda: parse_duration(DEFAULT_MAX_RUN_TIME) / 60,
           ("README.md", "docs/cli.md", "`conformance run --help`", "action.yml")),
    Figure("the refill rate assumed until one is learnt", ("until\nthe refill rate shows, {} request a second",
                                                           "until the refill rate shows, {} request a second"),
           lambda: DEFAULT_RATE, ("docs/cli.md",)),
    Figure("how often a log without a terminal gets progress", ("a progress line comes at most every {} s",
                                                                "at most every {} s in CI"),
           lambda: progress.QUIET_EVERY, ("docs/cli.md",)),
    Figure("how often progress events go elsewhere", ("every {} s while\nthe rate limit", "every {} s while the rate limit"),
           lambda: progress.EVENTS_EVERY, ("docs/cli.md",)),
    Figure("the MUSTs only --thorough assesses", ("{} MUSTs need `--thorough`", "without it {} MUSTs are never",
                                                  "assesses the {} MUSTs a default run leaves out"),
           t.thorough_musts, ("README.md", "docs/ci.md")),
    Figure("the spec's ping interval", ("{} s ping interval", "every {} s of silence", "within {} s of the previous"),
           lambda: PING_INTERVAL, ("docs/cli.md", "docs/profile.md")),
    Figure("the ping intervals of the --thorough silence", ("over {} {} s intervals",), lambda: (
        int(LONG_SILENCE // PING_INTERVAL), PING_INTERVAL), ("README.md",)),
    Figure("the --thorough silence", ("over a {} s silence ({} {} s ping intervals)",),
           lambda: (LONG_SILENCE, int(LONG_SILENCE // PING_INTERVAL), PING_INTERVAL), ("docs/cli.md",)),
    Figure("the silence scenario", ("the {} s silence of the ping check", "a {} s silence on AG-UI",
                                    "ping interval (default {})", "{} s with no event", "the {} s AG-UI silence",
                                    "the {} s ping silence", "inside the same {} s"), lambda: SILENCE,
           ("README.md", "docs/certify.md", "docs/cli.md", "docs/writing-checks.md")),
    Figure("the --thorough silence", ("the {} s silence with `--thorough`", "at the cost of a {} s silence"),
           lambda: LONG_SILENCE, ("docs/cli.md", "docs/ci.md")),
    Figure("the strength of --thorough's covering arrays", ("every {} values of distinct free",),
           lambda: forms.COVERING_STRENGTH, ("docs/cli.md", "docs/reports.md")),
    # the embedded server
    Figure("conformance serve's bucket", ("bucket ({} requests refilled over {} s)", "by default {} requests refilled over {} s",
                                          "a bucket of {} requests refilled over {} s", "default {}/{}s",
                                          "starts with {} requests refilled over {} s"),
           t.sandbox_bucket, ("docs/cli.md", "`conformance serve --help`", "conformance/server/README.md")),
    Figure("conformance serve's host", ("`--host` (default `{}`",), lambda: t.serve_default("--host"), ("docs/cli.md",)),
    Figure("conformance serve's port", ("`--port` (default {}:", "{} (default): any free port"),
           lambda: t.serve_default("--port"), ("docs/cli.md", "`conformance serve --help`")),
    Figure("conformance serve's ping interval", ("`--ping-interval SECONDS` (default {})",),
           lambda: t.serve_default("--ping-interval"), ("docs/cli.md",)),
    Figure("the reference server's extra data bound", ("`max_extra_bytes` ({})",),
           lambda: ServerConfig().max_extra_bytes, ("conformance/server/README.md",)),
    # time limits
    Figure("the recording phase's time limit", ("`[timeouts] run` ({} s)",), lambda: Timeouts().run,
           ("docs/writing-checks.md",)),
    Figure("the ping tolerance", ("`[timeouts] ping_tolerance` ({} s",), lambda: Timeouts().ping_tolerance,
           ("conformance/catalog/README.md",)),
    *TIMEOUTS,
    # reports
    Figure("report.md's size cap", ("never exceeds {} MiB", "at most {} MiB"), lambda: SUMMARY_LIMIT / MiB,
           ("README.md", "docs/reports.md")),
    Figure("the recording's body budget", ("`body_bytes` ({} MiB)", "twice the {} MiB body budget"),
           lambda: RecordingBudget().body_bytes / MiB, ("docs/reports.md",)),
    Figure("the recording's frame budget", ("`frames` ({})",), lambda: RecordingBudget().frames, ("docs/reports.md",)),
    Figure("the recording's format", ("`conformance-recording/{}`",), lambda: RECORDING_FORMAT.rsplit("/", 1)[1],
           ("docs/reports.md",)),
    # the catalog
    Figure("the catalog's size", ("holds {} requirements",), lambda: t.counts()["all"], ("docs/cli.md",)),
    Figure("the testable requirements", ("{} testable", "the same {} requirement statuses"),
           lambda: t.counts()["testable"], ("docs/cli.md",)),
    Figure("the testable requirements by level", ("({} MUST, {} SHOULD, {} MAY)",),
           lambda: (t.counts()["MUST"], t.counts()["SHOULD"], t.counts()["MAY"]), ("docs/cli.md",)),
    Figure("the MUSTs", ("certified with that profile ({} MUSTs)",), lambda: t.counts()["MUST"], ("docs/certify.md",)),
    Figure("the unspecified requirements", ("and {} where the spec leaves",), lambda: t.counts()["unspecified"],
           ("docs/cli.md",)),
    Figure("the checks a run judges", ("rejudged reports from its recording: {} checks", "{} check statuses",
                                             "· {} checks · seed"),
           t.check_count, ("docs/cli.md",)),
    Figure("the scenarios a run of a server offering HTTP/1.1 only records (every one but the HTTP/2 twins)",
           ("exchanges of {} scenarios",), lambda: sum(1 for s in registry.SCENARIOS if not versions.is_twin(s)),
           ("docs/cli.md",)),
    Figure("the suite's identity", ("conformance {} (", "conformance {} ·", "conformance-{}-py3", "(`conformance {}`)"),
           lambda: __version__, ("docs/cli.md", "docs/certify.md", "docs/reports.md")),
    Figure("the spec revision", ("spec revision {},", "spec {} ·"), lambda: catalog.SPEC_REVISION, ("docs/cli.md",)),
    Figure("the catalog digest", ("catalog sha256:{}", "catalog: sha256:{}"), lambda: catalog.digest(),
           ("docs/cli.md",)),
    # an agent of your own
    Figure("the profile keys any agent can map", (
        "the {} prompts a profile maps", "the {} prompts any agent can map", "map {} profile keys", "the {} prompts of",
        "the {} other keys", "maps {} scenarios", "with the {} keys", "your {} prompts", "the {} mappable keys",
        "the {} keys any agent can map"), t.mappable_keys, ("docs/cli.md", "docs/certify.md", "docs/profile.md")),
    Figure("the MUSTs an agent of your own cannot reach", ("The {} MUSTs your own agent leaves",),
           t.needs_agent_musts, ("docs/certify.md",)),
    Figure("the needs a profile key can stand in for", ("The first {} are out of reach", "with those {} keys"),
           lambda: len(catalog.AGENT_NEEDS) - t.only_conformance_agent_needs(), ("docs/certify.md",)),
    Figure("the MUSTs only the conformance agent reaches", ("leaves {} MUSTs out of reach (the last {} rows)",),
           lambda: (t.needs_agent_musts("say-json", "echo mode", "sleep"), t.only_conformance_agent_needs()),
           ("docs/certify.md",)),
    *(Figure(f"certify.md's row: {row}", (f"| {row} | {{}} | {{}} | {{}} |",), truth, ("docs/certify.md",))
      for row, truth in (
          ("the conformance agent | default", lambda: (t.counts()["MUST"] - t.thorough_musts(), t.thorough_musts(), 0)),
          ("the conformance agent | `--thorough`", lambda: (t.counts()["MUST"], 0, 0)),
          ("own agent, every mappable key mapped | default", lambda: t.own_agent_musts(thorough=False)),
          ("own agent, every mappable key mapped | `--thorough`", lambda: t.own_agent_musts(thorough=True)))),
    Figure("the secrets", ("the {} credentials", "The {} secrets", "the {} secrets", "the {} # secrets"),
           lambda: sum(o.secret for o in OPTIONS), ("docs/cli.md", "docs/certify.md", "docs/ci.md")),
    Figure("the report files beside the recording", ("the {} reports and `recording.json.gz`",),
           lambda: len(REPORT_FILES), ("docs/ci.md",)),
    Figure("the values that name the suite", ("the same {} values everywhere",), lambda: len(suite_identity()),
           ("docs/reports.md",)),
    # the agent
    Figure("the test vectors", ("`ok: {} agent cases ({} runs), {} canonical JSON cases`",), t.vector_counts,
           ("docs/agent.md",)),
    Figure("the canonical JSON vectors", ("hold {} cases, input JSON text",), lambda: t.vector_counts()[2],
           ("docs/agent.md",)),
    Figure("the vectors' format", ('`"conformance-agent-vectors/{}"`',), lambda: agent_vectors.FORMAT.rsplit("/", 1)[1],
           ("docs/agent.md",)),
    Figure("the directives", ("the {} directives",), lambda: len(DIRECTIVES), ("docs/agent.md",)),
    Figure("count on one key, run after run", ("must reply `{}`, `{}`, `{}`",), lambda: t.count_replies("k", "k", "k"),
           ("docs/protocol-mapping.md",)),
    Figure("count on a key no run has used", ("which must reply `{}`",), lambda: t.count_replies("k")[0],
           ("docs/protocol-mapping.md",)),
    Figure("count on a key one run has used", ("expects `count` to reply `{}`",), lambda: t.count_replies("k", "k")[1],
           ("docs/protocol-mapping.md",)),
    Figure("count on one key and on a new one", ("`{}`, `{}`, … on one session key; `{}` on a new key",),
           lambda: t.count_replies("a", "a", "b"), ("docs/agent.md",)),
    Figure("a new instance's count", ("starts a new instance at {}, so its first run says `{}`",),
           lambda: (t.runs_of_a_new_session(), t.count_replies("k")[0]), ("docs/agent.md",)),
    Figure("the runs of a new session", ("a new instance with {} runs", "| `runs` | integer ≥ {} |"),
           t.runs_of_a_new_session, ("docs/agent.md",)),
    Figure("what starting a run adds to `runs`", ("`runs` + {}",), lambda: t.count_replies("k", "k")[1] - 1,
           ("docs/agent.md",)),
    Figure("a run's first number", ("| `run_number` | integer ≥ {} |",), lambda: t.count_replies("k")[0],
           ("docs/agent.md",)),
    Figure("the position of an ask on the first line", ("among the script's lines, {} the first",
                                                          "| `resume_at` | integer ≥ {} |", "non-empty lines ({} is the first)"),
           t.resume_at_of_the_first_line, ("docs/agent.md",)),
    Figure("an invoke event's version", ("`{v:{}, type:", "all carry `v: {}`"),
           lambda: t.quoted(r"always `(\d+)`"), ("docs/agent.md", "conformance/server/README.md")),
    Figure("the example idle interval: AG-UI's ping interval", ("idle_interval={})` uses your hook and yields `Idle` every {} s",),
           lambda: (PING_INTERVAL, PING_INTERVAL), ("docs/agent.md",)),
    # limits the spec sets and how the suite probes them
    Figure("the core scenarios recorded over HTTP/2 too", ("That is {} scenarios more",),
           lambda: len(versions.HTTP2_SCENARIOS), ("docs/cli.md",)),
    Figure("the spec's body bound, which the HTTP/2 twins leave out", ("The refusals of a body over {} MB",
                                                                        "such as a body over {} MB",
                                                                        "for the suite (a body over {} MB)"),
           lambda: t.quoted(r"at most (\d+) MB"), ("docs/cli.md", "docs/reports.md", "docs/writing-checks.md")),
    Figure("the spec's extra data bound", ("the {} KB extra-data limit", "well inside {} KB"),
           lambda: t.quoted(r"at most (\d+) KB"), ("docs/certify.md",)),
    Figure("the large prompt only the conformance agent replies", ("a {} MB prompt",),
           lambda: invoke_scenarios.BIG_BODY_BYTES / 1e6, ("docs/certify.md",)),
    Figure("the extra data well inside the bound", ("about {} bytes of structured JSON",),
           lambda: invoke_scenarios.EXTRA_INSIDE_BYTES, ("docs/protocol-mapping.md",)),
    Figure("the extra data well outside the bound", ("Then {} bytes, nearly all",),
           lambda: invoke_scenarios.EXTRA_OUTSIDE_BYTES, ("docs/protocol-mapping.md",)),
    Figure("the extra data of the protocol-mapping blocks", ("y repeated to {} bytes", "then y to {} bytes"),
           lambda: frozenset({invoke_scenarios.EXTRA_INSIDE_BYTES, invoke_scenarios.EXTRA_OUTSIDE_BYTES}),
           ("docs/protocol-mapping.md",)),
    Figure("the multibyte characters of the extra data well outside the bound",
           ("of them in {} three-byte characters", "a three-byte character repeated {} times"),
           lambda: invoke_scenarios.MULTIBYTE_OUTSIDE_CHARS, ("docs/protocol-mapping.md",)),
    Figure("the characters beyond ASCII of the extra data well inside the bound", ("<{} characters beyond ASCII",
                                                                                   "(150 of its characters",),
           lambda: frozenset(len(v) * invoke_scenarios.MULTIBYTE_INSIDE_REPEAT
                             for v in invoke_scenarios.inputs.CLASSES["extra-data:multibyte-inside"].values),
           ("docs/protocol-mapping.md",)),
    Figure("the spec's extra data bound, in the input classes", ("inside {} KB however it is counted",
                                                                 "outside\n{} KB as UTF-8", "outside {} KB as UTF-8"),
           lambda: t.quoted(r"at most (\d+) KB"), ("docs/protocol-mapping.md",)),
    Figure("the draw cache's size", ("at most {} MB, the",), lambda: draw_cache.MAX_BYTES // 2**20, ("docs/cli.md",)),
    Figure("the keys of the protocol-mapping blocks, by the extra data they carry", ("<key {} KB>",), lambda: frozenset(
        {invoke_scenarios.EXTRA_INSIDE_BYTES // 1000, invoke_scenarios.EXTRA_OUTSIDE_BYTES // 1000}),
           ("docs/protocol-mapping.md",)),
    Figure("loose bounds and their probes", ("bounds ({} MB, {} KB) are probed well inside ({} MB, {}–{} KB) and well "
                                             "outside ({} MB, {} KB)",), lambda: (
        t.quoted(r"at most (\d+) MB"), t.quoted(r"at most (\d+) KB"),
        max(invoke_scenarios.BIG_BODY_BYTES, agui_scenarios.INSIDE_LIMIT_BYTES) / 1e6,
        *t.kilobytes_around(FUZZ_EXTRA_BYTES, invoke_scenarios.EXTRA_INSIDE_BYTES),
        max(invoke_scenarios.HUGE_BODY_BYTES, agui_scenarios.OUTSIDE_LIMIT_BYTES) / 1e6,
        invoke_scenarios.EXTRA_OUTSIDE_BYTES / 1000), ("conformance/catalog/README.md",)),
    Figure("the session key's length", ("(session key {}–{})",), lambda: (
        t.quoted(r"length (\d+) to \d+"), t.quoted(r"length \d+ to (\d+)")), ("conformance/catalog/README.md",)),
    Figure("the spec's metadata cache lifetime", ("max-age={}",), lambda: t.quoted(r"cached for (\d+) seconds"),
           ("conformance/server/README.md", "conformance/catalog/README.md")),
    # the MCP form the suite fills
    Figure("the number a form gets", ("| `{}`, moved inside",), lambda: t.form_numbers()[2], ("docs/protocol-mapping.md",)),
    Figure("how far past an exclusive bound", ("{} past the bound for an integer, {} for a number) when `{}` is outside",),
           t.form_numbers, ("docs/protocol-mapping.md",)),
    Figure("the items a form's array gets at least", ("(at least {}, at most `maxItems`)",),
           lambda: len(form_value({"type": "array", "items": {"type": "string"}})), ("docs/protocol-mapping.md",)),
    Figure("a form's date and date-time", ("`https://example.com/ada`, `{}`, `{}`",),
           lambda: (FORMATTED["date"], FORMATTED["date-time"]), ("docs/protocol-mapping.md",)),
    # what the suite speaks and builds on
    Figure("the protocols that carry a run", ("over {} protocols", "over all {} protocols", "onto the {} protocols",
                                              "under {} names"), lambda: len(registry.ENDPOINT_PROTOCOLS) - 1,
           ("README.md", "docs/agent.md", "docs/protocol-mapping.md")),
    Figure("the surfaces the reference server serves", ("the {} operations",), lambda: len(registry.ENDPOINT_PROTOCOLS),
           ("conformance/server/README.md",)),
    Figure("the invoke event types", ("Invoke event types** ({})",), lambda: t.quoted(r"\((\w+) exist in all\)"),
           ("conformance/server/README.md",)),
    Figure("the invoke event types the spec does not name", ("the other {} invoke event types",),
           lambda: t.quoted(r"\((\w+) exist in all\)") - t.invoke_events_named(), ("README.md",)),
    Figure("the MCP versions the suite speaks", ("MCP {}", "speaks {} without", "`MCP-Protocol-Version: {}`",
                                                 "MCP-Protocol-Version: {}", '"protocolVersion": "{}"', "The {} handshake",
                                                 "the {} handshake", "({}) when it lists", "in mode {} its",
                                                 "a {} client", "every {} client", "the {} path"),
           lambda: frozenset({MCP_VERSION, MCP_LEGACY_VERSION}), ("docs/protocol-mapping.md",)),
    Figure("the AG-UI release", ("AG-UI {}", "`@ag-ui/client` {}"), t.agui_version,
           ("docs/agent.md", "docs/profile.md", "docs/protocol-mapping.md")),
    Figure("the oldest Python", ("Python {} and pip", "Python {} or later", "the Python ({} or later)"),
           t.python_floor, ("README.md", "docs/certify.md", "action.yml")),
    Figure("the oldest Node", ("Node {} and npm",), t.node_floor, ("README.md",)),
    Figure("the OpenAPI version", ("OpenAPI {}",), t.openapi_version, ("README.md",)),
    Figure("the JSON Schema draft", ("JSON Schemas ({})", "JSON Schema {} documents"), t.json_schema_draft,
           ("README.md",)),
    Figure("schemathesis", ("schemathesis {},",), lambda: t.dependency_floor("schemathesis"),
           ("conformance/_schemas/README.md",)),
    Figure("the hostile server's huge frame", ("{} MB frames",), t.huge_frame_mib, ("README.md",)),
)


# -- examples the code decides ------------------------------------------------------------------------------
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _takes(line: str) -> bool:
    """Whether the conformance agent takes a script line."""
    return parse(line).error is None


def _canonical(text: str) -> str:
    return canonical_json(json.loads(text))


def _written_as_itself(item: str) -> bool:
    """`X` (a number written canonically) or `X` for `Y` (Y written canonically is X)."""
    shown = CODE_SPAN.findall(item)
    return _canonical(shown[-1]) == shown[0]


def _exponent_form(exponent: int) -> bool:
    return "e" in canonical_json(10.0 ** exponent)


def _numbered_sections(text: str) -> set[str]:
    return set(re.findall(r"^#{1,6}\s+(\d+)\.\s", text, re.M))


CHECKED: tuple[Checked, ...] = (
    Checked("the bounds of chunks", r"(\d+) ≤ N ≤ (\d+)", lambda m: _takes(f"chunks {m[1]} x") and _takes(
        f"chunks {m[2]} x") and not _takes(f"chunks {int(m[1]) - 1} x") and not _takes(f"chunks {int(m[2]) + 1} x"),
            ("docs/agent.md",)),
    Checked("the bounds of sleep", r"(\d+) < SECONDS ≤ (\d+)", lambda m: not _takes(f"sleep {m[1]}") and _takes(
        f"sleep {m[2]}") and not _takes(f"sleep {m[2]}.001"), ("docs/agent.md",)),
    Checked("decimals sleep takes", r"a plain decimal \(((?:`[^`]+`(?:, )?)+)\)",
            lambda m: all(_takes(f"sleep {v}") for v in CODE_SPAN.findall(m[1])), ("docs/agent.md",)),
    Checked("lines the agent refuses", r"Malformed lines \(each fails the run before any output\):(.*?)\n\n",
            lambda m: not any(_takes(v) for v in CODE_SPAN.findall(m[1])), ("docs/agent.md",)),
    Checked("the agent's message for a bad line", r"\(`(bad script line (\d+): '([^']+)': not a directive)`\)",
            lambda m: parse("say x\n" * (int(m[2]) - 1) + m[3]).error == m[1], ("docs/agent.md",)),
    Checked("canonical JSON's plain decimals", r"after the point \(((?:`[^`]+`(?: for `[^`]+`)?(?:, )?)+)\)",
            lambda m: all(_written_as_itself(i) for i in re.findall(r"`[^`]+`(?: for `[^`]+`)?", m[1])),
            ("docs/agent.md",)),
    Checked("canonical JSON's exponents", r"at least (two) digits \(((?:`[^`]+`(?:, )?)+)\)",
            lambda m: all(_canonical(v) == v for v in CODE_SPAN.findall(m[2])) and min(
                len(v.rsplit("e", 1)[1].lstrip("+-")) for v in CODE_SPAN.findall(m[2])) == value(m[1]),
            ("docs/agent.md",)),
    Checked("canonical JSON: `Y` is written `X`", r"`(-?[\d.]+)` is\s+written `(-?[\d.]+)`",
            lambda m: _canonical(m[1]) == m[2], ("docs/agent.md",)),
    Checked("canonical JSON: a long integer stays exact", r"`(\d+)`\s+stays exact", lambda m: _canonical(m[1]) == m[1],
            ("docs/agent.md",)),
    Checked("canonical JSON's exponent range", r"(10)\^e: when −(\d+) ≤ e < (\d+)",
            lambda m: not _exponent_form(-int(m[2])) and _exponent_form(-int(m[2]) - 1)
            and not _exponent_form(int(m[3]) - 1) and _exponent_form(int(m[3])), ("docs/agent.md",)),
    Checked("canonical JSON's control characters", r"as `\\u` and (four) lowercase hex digits \(`(\\u[0-9a-f]+)`\)",
            lambda m: _canonical(f'"{m[2]}"') == f'"{m[2]}"' and len(m[2]) - 2 == value(m[1]), ("docs/agent.md",)),
    Checked("the id forms of the vectors", r"\(`tool_call`: `([^`]+)`, `ask`:\s*`([^`]+)`\)",
            lambda m: [m[1], m[2]] == [t.vectors()["id_forms"][k] for k in ("tool_call", "ask")], ("docs/agent.md",)),
    Checked("a numbered section of the same page", r"\b[Ss]ections? (\d+)(?: to (\d+))?\b",
            lambda m: {n for n in (m[1], m[2]) if n} <= _numbered_sections(m.string), ("docs/certify.md",)),
    Checked("durations --max-run-time takes", r"or with a unit \(`(\d+s)`, `(\d+m)`, `(\d+h)`\)",
            lambda m: all(parse_duration(v) > 0 for v in m.groups()), ("docs/cli.md",)),
    Checked("an example of the live line (the requests sent of those planned, the time left)",
            r"`requests (\d+)/(\d+) · (\d+) min (\d+) s left · checks: …`",
            lambda m: int(m[1]) <= int(m[2]) and int(m[4]) < 60, ("docs/cli.md",)),
    Checked("an example of the live progress line (checks judged of each protocol's, as the terminal writes it)",
            r"`invoke (\d+)/(\d+) · agui (\d+)/(\d+) …`",
            lambda m: int(m[1]) <= int(m[2]) and int(m[3]) <= int(m[4]),
            ("docs/cli.md",)),
    Checked("the HTTP versions the suite speaks", r"speaks (HTTP/[\d.]+(?: and HTTP/[\d.]+)*(?: only)?)",
            lambda m: m[1] == t.http_versions(), ("README.md", "docs/cli.md", "docs/certify.md")),
    Checked("examples of conformance serve's bucket", r"e\.g\.\s+(\d+/\d+s?)\s+or\s+(\d+/\d+s?)",
            lambda m: all(t.serve_takes_rate_limit(v) for v in (m[1], m[2])), ("`conformance serve --help`",)),
    Checked("the first number of an id's group", r"`NNN` counts from\s+(\d{3}) per group",
            lambda m: min(int(rid[-3:]) for rid in catalog.load()) == int(m[1]), ("conformance/catalog/README.md",)),
    Checked("compare's example (the regressions, and the rest unchanged)",
            r"newly failed \(regressions\): (\d+).*?unchanged: (\d+) requirement.*?REGRESSED: (\d+) MUST",
            lambda m: m[1] == m[3] and int(m[1]) + int(m[2]) == t.counts()["testable"], ("docs/cli.md",)),
    Checked("the catalog format's example section", r'id = "([A-Z]+-[A-Z]+-\d{3})".*?section = "([^"]+)"',
            lambda m: catalog.load()[m[1]].section == m[2], ("conformance/catalog/README.md",)),
    Checked("a custom prompt a requirement's expect names", r"named in its `expect` \(e\.g\. `([^`]+)`\)",
            lambda m: any(f"`{m[1]}`" in r.expect for r in catalog.load().values()), ("conformance/catalog/README.md",)),
    Checked("a CI example's Python, one the suite runs on", r'python-version: "([\d.]+)"|image: python:([\d.]+)',
            lambda m: [int(x) for x in (m[1] or m[2]).split(".")] >= [int(x) for x in t.python_floor().split(".")],
            ("docs/ci.md",)),
    Checked("the UTF-8 size of each character of the extra data well outside the bound", r"\b(three)-byte character",
            lambda m: all(len(v.encode()) == 3 for v in invoke_scenarios.inputs.CLASSES[
                "extra-data:multibyte-outside"].values), ("docs/protocol-mapping.md",)),
    Checked("the official MCP client's version, the one pyproject.toml pins",
            r"the official `mcp` Python client\s+\(([\d.]+),", lambda m: m[1] == metadata.version("mcp"),
            ("docs/protocol-mapping.md",)),
    Checked("an MCP version the official client runs on, one the spec names",
            r"(?:mode `auto` \(`server/discover`, then|on the|labelled `official-|or\s+`official-|falls back to the|"
            r"required on a|and `resultType` on a|on a|On) (20\d\d-\d\d-\d\d)",
            lambda m: m[1] in (MCP_VERSION, MCP_LEGACY_VERSION), ("docs/protocol-mapping.md",)),
)


# -- parts another test compares as a whole -----------------------------------------------------------------------
Spans = dict[str, list[tuple[int, int]]]


def _by_page(found: Iterable[tuple[str, tuple[int, int]]]) -> Spans:
    out: Spans = {}
    for name, span in found:
        out.setdefault(name, []).append(span)
    return out


@cache
def _checked_by_test_one_truth() -> dict[str, Spans]:
    """What test_one_truth compares with the code, by kind: page -> the spans it reads."""
    from tests.docs import test_one_truth as one
    return {
        "exit tables": _by_page((doc.name, (row.start, row.start + len(row.text)))
                                for doc, table in one.exit_tables() for row in table),
        "exit sentences": _by_page((name, m.span(1)) for name, m in one.exit_sentences().items() if m),
        "exits in prose": _by_page((line.page, m.span(1)) for line, m, _ in one.exits_in_prose()),
        "defaults": _by_page((doc.name, m.span()) for doc, m, _ in one.stated_defaults()),
        "examples": _by_page((doc.name, m.span(1)) for doc, m, _ in one.example_values()),
    }


def _one_truth(kind: str) -> Callable[[Page], list[tuple[int, int]]]:
    return lambda page: _checked_by_test_one_truth()[kind].get(page.name, [])


def _measured_tables(page: Page) -> Iterator[tuple[int, int]]:
    return (m.span(2) for m in re.finditer(r"<!-- measured:(\w+) -->\n(.*?)\n<!-- /measured:\1 -->", page.text, re.S))


def _model_tables(page: Page) -> Iterator[tuple[int, int]]:
    return (m.span(2) for m in re.finditer(r"<!-- model:(\w+) -->\n(.*?)\n<!-- /model:\1 -->", page.text, re.S))


def _needs_agent_counts(page: Page) -> Iterator[tuple[int, int]]:
    row = re.compile(r"^\| `[^`]+` \|[^|\n]*\| (\d+) \|", re.M)
    for block in re.finditer(r"<!-- needs-agent -->\n(.*?)\n<!-- /needs-agent -->", page.text, re.S):
        yield from (m.span(1) for m in row.finditer(page.text, block.start(1), block.end(1)))


def _marked_blocks(page: Page) -> Iterator[tuple[int, int]]:
    """The blocks test_protocol_mapping compares with the traffic, less their placeholders (free by design)."""
    from tests.docs.test_protocol_mapping import BLOCK, PLACEHOLDER
    for block in BLOCK.finditer(page.text):
        start = block.start(5)
        for placeholder in PLACEHOLDER.finditer(page.text, block.start(5), block.end(5)):
            yield start, placeholder.start()
            start = placeholder.end()
        yield start, block.end(5)


def _official_client_table(page: Page) -> Iterator[tuple[int, int]]:
    from tests.docs.test_official_client_fields import SECTION
    if page.name != "docs/protocol-mapping.md" or SECTION not in page.text:
        return
    start = page.text.index(SECTION)
    end = page.text.find("\n## ", start + len(SECTION))
    for row in re.finditer(r"^\| `.*\|$", page.text[start:end if end >= 0 else None], re.M):
        yield start + row.start(), start + row.end()


def _profile_fixture(page: Page) -> Iterator[tuple[int, int]]:
    fixture = tomllib.loads((ROOT / "fixtures" / "profile.example.toml").read_text(encoding="utf-8"))
    return (m.span(1) for m in re.finditer(r"```toml\n(.*?)```", page.text, re.S) if tomllib.loads(m.group(1)) == fixture)


def _default_prompts(page: Page) -> Iterator[tuple[int, int]]:
    prompts = {line for entry in AGENT_SCENARIOS.values() for line in entry.get("prompt", "").splitlines()}
    return (m.span(1) for m in CODE_SPAN.finditer(page.text) if m.group(1) in prompts)


def _canned_example(page: Page) -> Iterator[tuple[int, int]]:
    return (m.span(1) for m in re.finditer(r"```python\n(.*?)```", page.text, re.S) if "canned.recording" in m.group(1))


def _measured_section(page: Page) -> Iterator[tuple[int, int]]:
    return ((line.start, line.start + len(line.text)) for line in page.lines()
            if (line.page, line.heading) == MEASURED)


MEASURED = ("docs/cli.md", "What a run costs")   # the one place measurements of a run are stated

REGIONS: tuple[Region, ...] = (
    Region("an exit status table: test_every_exit_status_table_is_the_codes compares it with the code",
           _one_truth("exit tables")),
    Region("an exit status sentence: test_every_exit_status_sentence_is_the_codes compares it",
           _one_truth("exit sentences")),
    Region("an exit status in prose: test_exit_written_in_prose_is_a_status_the_code_has checks it",
           _one_truth("exits in prose")),
    Region("an option's default: test_every_stated_default_is_the_options_default compares it", _one_truth("defaults")),
    Region("an option's example value: test_every_example_value_of_a_run_option_is_accepted parses it",
           _one_truth("examples")),
    Region("a measured table: test_measured_tables_match_a_fresh_measurement measures it again", _measured_tables),
    Region("a table of a model: test_the_silence_table_of_writing_checks_is_the_model renders it from the code",
           _model_tables),
    Region("a needs-agent count: test_certify_md_lists_exactly_the_marked_musts_by_reason counts the catalog's marks",
           _needs_agent_counts),
    Region("a JSON block test_protocol_mapping compares with what the suite sent", _marked_blocks),
    Region("the official MCP client's field table, which test_official_client_fields finds again from the SDK",
           _official_client_table),
    Region("the profile example, which test_the_profile_example_in_the_doc_is_the_fixture compares with the fixture",
           _profile_fixture),
    Region("a default prompt, which test_every_scenario_key_is_documented_with_its_default_prompt reads from the code",
           _default_prompts),
    Region("the canned recording example, which test_the_canned_recording_example_of_writing_checks_runs runs",
           _canned_example),
    Region("a measurement of a run, stated once (test_measurements_are_stated_once_and_linked) and measured again "
           "by test_run_costs_match_a_fresh_measurement", _measured_section),
)


# -- numbers that are no figure of the suite --------------------------------------------------------------------
QUANTITY = (r"requests|s|ms|seconds|minutes|bytes|[kKM]i?B|checks|runs|agent runs|MUSTs|requirements|exchanges|"
            r"scenarios|frames|lines|cases|items|keys|prompts|times")
HTTP_STATUS = rf"(?<![\w.])([1-5]\d\d(?:(?:, | or |/)[1-5]\d\d)*)(?=[ ,;:)`/.'s]|$)(?!\s+(?:{QUANTITY})\b)"
NOT_FIGURES: tuple[NotFigure, ...] = (
    NotFigure("a standard's number (RFC 9728, IEEE 754, ISO 8601, JSON-RPC 2.0)",
              r"\b(?:RFC|IEEE|ISO) (\d+)((?:/\d+)*)|JSON-RPC (2\.0)|\"jsonrpc\": \"(2\.0)\"|\bHAR (1\.2)"),
    NotFigure("an HTTP version's name (which ones the suite speaks is a Checked example: `speaks HTTP/1.1 only`)",
              r"\bHTTP/(\d(?:\.\d)?)\b"),
    NotFigure("an HTTP status code or class: the protocols' vocabulary, and the reference server's choices its own "
              "tests prove (tests/server)", HTTP_STATUS + r"|\b(\d)xx\b"),
    NotFigure("the number of a list item or of a numbered heading", r"^[ \t]*(?:#+[ \t]+)?(\d+)\.[ \t]"),
    NotFigure("a link's anchor, which test_every_relative_link_in_the_docs_resolves resolves", r"\]\([^)\s]*#(\d+)"),
    NotFigure("requirement ids written short (AGUI-INT-002/003/004)", r"\b[A-Z]+-[A-Z]+-\d{3}((?:/\d{3})+)"),
    NotFigure("rejudge's and compare's exit statuses, which tests/runner/test_rejudge.py and test_compare.py assert",
              r"^\| (\d) \| (?:verified|differences|bad input)|\b(\d): (?:differences|bad input)"
              r"|\b(\d) otherwise|\b(\d) on bad input"),
    NotFigure("a timestamp of a sample output", r"\b(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\b"),
    NotFigure("what one recorded run of a sample output holds and took (the exchanges, the seconds)",
              r"checks over (\d+) exchanges of \d+ scenarios in ([\d.]+) s"),
    NotFigure("the loopback address", r"\b(127\.0\.0\.1)\b|::(1)\b"),
    NotFigure("an example's own values: a ticket, a port, pytest's workers, git's history depth",
              r"\(ticket (\d+)\)|--port (\d+)|\s-n (\d+) |git clone --depth (\d+)"),
    NotFigure("JSON literals in a sentence about JSON's number forms", r"`(1)` (?:against|and) `(1\.0)`|is not\s+`(1)`"),
    NotFigure("the integers an IEEE 754 double holds exactly, a property of the format", r"beyond (2)⁵³"),
    NotFigure("a term of the canonical number formula (the digits after the first)", r"only when n > (1)\b"),
    NotFigure("an index in a Python example", r"\[(\d)\]"),
    NotFigure("a name that counts: the steps of an example, the second run of a resume, the forms of the list above",
              r"\bstep (\d+)\b|<run id (\d)>|<message id (\d)>|\bform (\d)\b"),
    NotFigure("a count of what the sentence itself names right there", r"|".join((
        r"You have (two) ways", r"needs none of them; (two)", r"whole state is (two) values", r"keeps the same (two) values",
        r"on (two) agents sharing", r"if (two) requests on one session key", r"moment on (two) workers",
        r"Only the first (three) are required", r"(Two) reports", r"compare +(two) reports", r"whether the (two) are",
        r"set the (two) apart", r"as a (two)-column table", r"a helper (two) check", r"(Two) cases are decided",
        r"the (three) requirements are not assessed", r"the same (two) interrupts", r"and the other\s+(two) nowhere",
        r"requires none of the (three)", r"when (two)\s+calls on one key arrive together"))),
    NotFigure("what a `count` reply is and how many keys share an instance, in agent.md's table of the agent's readings",
              r"\| (0) on any run|counts from (0)\b|started: (two) keys reached one instance", ("docs/agent.md",)),
    NotFigure("an ALPN protocol name", r"`http/(1\.1)`"),
    NotFigure("a JSON-RPC id of an example (a string and an integer the client reads alike)", r'\(`"(7)"` and `(7)` are'),
)

READINGS = (*FIGURES, *CHECKED, *REGIONS, *NOT_FIGURES)
