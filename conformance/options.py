"""Every option of a certification run, declared once.

Both front ends read this table: `conformance run`'s own parser (cli.py) and the
pytest plugin's `pytest_addoption` (plugin.py), and `problem()` checks the values
either of them parsed. A fact of the target (base URL, agent id, credentials …)
also comes from its environment variable; `target.FACTS` is derived from here.
The GitHub Action (action.yml) has an input per option but the credentials, turned
into `conformance run`'s arguments by `action_arguments()`. `ExitStatus` names how a run ends.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import ssl
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Callable, Mapping

from conformance import catalog
from conformance.baseline import Baseline
from conformance.profile import Profile

LEVELS = ("must", "should", "may")
RANDOM_SEED = "random"
RATE_LIMIT = re.compile(r"^\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*$")
DEFAULT_REPORT_DIR = "reports"
RATE_PROBE_MAX = 1000     # requests the 429 probe may send by default
# the longest a run may last, waiting for the server's rate limit included: a default run needs about 5 minutes of a
# bucket of 60 requests a minute, about 15 of one of 20 a minute
DEFAULT_MAX_RUN_TIME = "30m"
FORMATS = ("text", "json")


class ExitStatus(IntEnum):
    """How a run ends (`conformance run`, or pytest running the suite); docs/cli.md#exit-status tells them and
    tests/docs/test_one_truth.py holds every page that does to these values."""
    OK = 0               # conformant or conformant-partial; non-conformant when the baseline waives every failed MUST
    NON_CONFORMANT = 1
    ERROR = 2            # the run could not judge, or a bad option or file
    INCOMPLETE = 3       # conformant-partial with --require-complete
    SIGINT = 130         # interrupted: 128 + the signal's number, as a shell reports it
    SIGTERM = 143


GROUP_TITLES = {
    "target": "target (the server under test and the facts the spec does not show)",
    "credentials": "credentials (read from the environment in preference to the command line; never printed)",
    "selection": "selection",
    "generation": "generation",
    "cost": "cost",
    "reports": "reports and exit status",
}

# what is wrong with a given value, as the one line the user reads (`where` is the option or the variable it
# came from); None when the value is fine
Check = Callable[[Any, str], "str | None"]


@dataclass(frozen=True)
class Option:
    name: str                          # the fact or setting it gives; pytest keeps it as `conf_<name>`
    flag: str
    group: str
    help: str
    metavar: str | None = None         # None: a switch, on when given
    env: str | None = None             # a fact's environment variable
    secret: bool = False               # a credential: the environment wins over the command line, never printed
    type: Callable[[str], Any] = str
    default: Any = None
    choices: tuple[str, ...] | None = None
    check: Check | None = None
    pytest: bool = True                # False: pytest already has an option of that name (--last-failed)

    @property
    def is_switch(self) -> bool:
        return self.metavar is None

    @property
    def unset(self) -> Any:
        """The value when the option is not given."""
        return False if self.is_switch else self.default

    @property
    def pytest_dest(self) -> str:
        return f"conf_{self.name}"

    @property
    def help_text(self) -> str:
        return self.help + (f" [env {self.env}]" if self.env else "")

    def argparse_kwargs(self) -> dict[str, Any]:
        """What argparse's (and pytest's) add_argument takes for this option, without dest."""
        if self.is_switch:
            return {"action": "store_true", "default": self.unset, "help": self.help_text}
        kwargs = {"metavar": self.metavar, "type": self.type, "default": self.unset, "help": self.help_text}
        return kwargs | ({"choices": self.choices} if self.choices else {})


# -- parsing and checking values ----------------------------------------------------------------
def seed_value(text: str) -> int | str:
    """--seed: an integer, or `random` for a fresh seed."""
    if text.strip().lower() == RANDOM_SEED:
        return RANDOM_SEED
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or {RANDOM_SEED!r}, got {text!r}") from None


def _base_url(value: Any, where: str) -> str | None:
    if not str(value).strip():
        return (f"{where} is empty: give the server's URL (https://…), or leave it out entirely "
                "to certify the embedded reference server")
    if not re.match(r"^https?://[^/\s]+", str(value)):
        return f"{where} {value!r}: not an http(s) URL; expected https://host[:port]"
    return None


def _protocols(value: Any, where: str) -> str | None:
    names = [p.strip() for p in str(value).split(",") if p.strip()]
    unknown = [p for p in names if p not in catalog.ENDPOINT_PROTOCOLS]
    if unknown or not names:
        return (f"{where}: unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                f"choose from {','.join(catalog.ENDPOINT_PROTOCOLS)} (comma-separated)")
    return None


def _level(value: Any, where: str) -> str | None:
    return None if value in LEVELS else f"{where} {value!r}: choose from {', '.join(LEVELS)}"


def requirements_problem(ids: Any, where: str = "--requirements") -> str | None:
    wanted = [i.strip() for i in str(ids).split(",") if i.strip()]
    reqs = catalog.load()
    unknown = [i for i in wanted if i not in reqs]
    if unknown or not wanted:
        return (f"{where}: unknown requirement id {', '.join(unknown) or '(empty list)'}; "
                "`conformance list` shows every id")
    # every testable requirement has a check (`conformance list --uncovered`, tests/runner/test_cli.py), so the
    # catalog alone says which have none
    untestable = [i for i in wanted if not reqs[i].testable]
    if untestable:
        return (f"{where}: no check covers {', '.join(untestable)} "
                "(UNSPECIFIED or uncovered; `conformance explain ID` says why)")
    return None


def _rate_limit(value: Any, where: str) -> str | None:
    m = RATE_LIMIT.match(str(value))
    if not m or int(m.group(1)) < 1 or float(m.group(2)) <= 0:
        return f"{where} {value!r}: expected N/SECONDS with N ≥ 1 and SECONDS > 0, e.g. 10/1 or 600/60"
    return None


def _duration(value: Any, where: str) -> str | None:
    from conformance.wire.pace import parse_duration
    try:
        parse_duration(str(value))
    except ValueError:
        return f"{where} {value!r}: expected a duration such as 30m, 1h or 900 (seconds)"
    return None


def _at_least_1(value: Any, where: str) -> str | None:
    return None if value >= 1 else f"{where} {value}: must be at least 1"


def _report_dir(value: Any, where: str) -> str | None:
    try:
        path = Path(value)
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return f"{where} {value}: cannot write there ({exc.strerror or exc})"
    return None


def _readable_file(reader: Callable[[str], Any]) -> Check:
    def check(value: Any, where: str) -> str | None:
        path = Path(value)
        if not path.exists():
            problem = "no such file"
        elif path.is_dir():
            problem = "is a directory, expected a file"
        elif not os.access(path, os.R_OK):
            problem = "not readable (permission denied)"
        else:
            problem = _read_problem(reader, str(path))
        return f"{where} {value}: {problem}" if problem else None
    return check


def _read_problem(reader: Callable[[str], Any], path: str) -> str | None:
    try:
        reader(path)
    except ssl.SSLError as exc:
        return f"not a PEM file of CA certificates ({exc.reason or exc})"
    except Exception as exc:
        return f"cannot be read: {type(exc).__name__}: {exc}".replace("\n", " ")
    return None


def _ca_bundle(path: str) -> None:
    ssl.create_default_context(cafile=path)


def _profile(path: str) -> None:
    Profile.load(path)


def _baseline(path: str) -> None:
    Baseline.load(path)


# -- the table ------------------------------------------------------------------------------------
def _fact(name: str, flag: str, metavar: str, help: str, **more: Any) -> Option:
    group = "credentials" if more.get("secret") else "target"
    return Option(name, flag, group, help, metavar, env=f"CONFORMANCE_{name.upper()}", **more)


OPTIONS: tuple[Option, ...] = (
    _fact("base_url", "--base-url", "URL", "the server under test; leave it out entirely to certify the embedded "
                                           "reference server (an empty value is an error)", check=_base_url),
    _fact("agent_id", "--agent-id", "ID", "the agent that runs the conformance agent (agt_…)"),
    _fact("other_agent_id", "--other-agent-id", "ID", "another deployed agent of the same organization"),
    _fact("undeployed_agent_id", "--undeployed-agent-id", "ID", "an agent that is deleted, suspended or never deployed"),
    _fact("agent_slug", "--agent-slug", "SLUG", "the agent's slug, to check the MCP tool name exactly"),
    _fact("auth_url", "--auth-url", "URL", "the authorization server the metadata must name"),
    _fact("extra_data_field", "--extra-data-field", "NAME",
          "the name of invoke's extra data field (the spec does not name it)"),
    _fact("ca_bundle", "--ca-bundle", "PATH", "CA certificates (PEM) to trust for the target",
          check=_readable_file(_ca_bundle)),
    Option("insecure", "--insecure", "target", "do not verify TLS certificates"),
    _fact("profile", "--profile", "FILE", "scenario prompts and options for an agent that is not the conformance agent",
          check=_readable_file(_profile)),
    _fact("api_key", "--api-key", "KEY", "a valid API key of the agent's organization", secret=True),
    _fact("access_token", "--access-token", "TOKEN", "an access token bound to --agent-id", secret=True),
    _fact("revoked_key", "--revoked-key", "KEY", "an API key that was revoked", secret=True),
    _fact("expired_token", "--expired-token", "TOKEN", "an access token that has expired", secret=True),
    Option("protocols", "--protocols", "selection", "any of invoke,agui,mcp,metadata (default all)", "LIST",
           check=_protocols),
    Option("level", "--level", "selection", "must, should or may: the lowest level that is checked (default may)",
           "LEVEL", default="may", choices=LEVELS, check=_level),
    Option("requirements", "--requirements", "selection",
           "run only the scenarios and checks these requirements need; the report is about them alone", "ID,…",
           check=requirements_problem),
    Option("last_failed", "--last-failed", "selection",
           "re-run the requirements that failed, warned or erred in the last report.json in --report-dir",
           pytest=False),
    Option("thorough", "--thorough", "selection",
           "also run the slow checks: the AG-UI ping repeating over a long silence, and the 429 probe (more time "
           "and requests; docs/cli.md measures them)"),
    Option("no_http2", "--no-http2", "selection",
           "speak HTTP/1.1 only, even to a target that offers HTTP/2 by ALPN (e.g. a proxy on the way breaks it); "
           "by default the core scenarios run over HTTP/2 as well when the target offers it"),
    Option("seed", "--seed", "generation",
           "seed of the generated inputs: by default one fixed by the suite version, so every run sends the same "
           "inputs; N repeats the inputs of a run that used N; 'random' explores with a fresh one (printed)",
           "N|random", type=seed_value),
    Option("depth", "--depth", "generation", "multiplies the examples of generated-input checks (default 1)", "N",
           type=int, default=1, check=_at_least_1),
    Option("concurrency", "--concurrency", "cost", "scenarios recorded at once (default 12)", "N", type=int,
           default=12, check=_at_least_1),
    Option("rate_limit", "--rate-limit", "cost", "send at most N requests per SECONDS seconds (e.g. 10/1)",
           "N/SECONDS", check=_rate_limit),
    Option("max_run_time", "--max-run-time", "cost",
           f"the longest the run may last, waiting for the server's rate limit included (default "
           f"{DEFAULT_MAX_RUN_TIME}); the run's deadline follows the server's pace up to this cap", "DURATION",
           env="CONFORMANCE_MAX_RUN_TIME", check=_duration),
    Option("rate_probe_max", "--rate-probe-max", "cost",
           f"requests the 429 probe (--thorough) may send to reach the server's rate limit (default {RATE_PROBE_MAX}); "
           "raise it for a larger bucket if you accept the load", "N", type=int, default=RATE_PROBE_MAX,
           check=_at_least_1),
    Option("report_dir", "--report-dir", "reports",
           "where report.json, report.html, report.md, junit.xml and recording.json.gz go (default reports/)", "DIR",
           check=_report_dir),
    Option("baseline", "--baseline", "reports",
           "known failing requirement ids (one a line, or JSON): they do not fail the run", "FILE",
           check=_readable_file(_baseline)),
    Option("format", "--format", "reports",
           "text (default): the report for people; json: one JSON event a line on stdout (start, plan, progress, "
           "verdict) instead", "FORMAT", default="text", choices=FORMATS),
    Option("require_complete", "--require-complete", "reports",
           f"exit {int(ExitStatus.INCOMPLETE)} when the verdict is conformant-partial (some MUST not assessed)"),
)
BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
PYTEST_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if o.pytest)


def facts() -> dict[str, tuple[str, str]]:
    """name -> (option, environment variable) of every fact of the target."""
    return {o.name: (o.flag, o.env) for o in OPTIONS if o.env}


# -- the problem with a set of values ---------------------------------------------------------------
def problem(get: Callable[[str], Any], environ: Mapping[str, str] | None = None) -> str | None:
    """The first thing wrong with the options, as one line naming the option; None when all is well.

    `get(name)` is an option's value by its name (None when not given); a fact not given falls back to its
    environment variable, as the run does."""
    env = os.environ if environ is None else environ

    def given(option: Option) -> tuple[Any, str]:
        value = get(option.name)
        if value is None and option.env and option.env in env:
            return env[option.env], option.env
        return value, option.flag

    for option in OPTIONS:
        value, where = given(option)
        if option.check is not None and value is not None and (value != "" or option.name == "base_url"):
            found = option.check(value, where)
            if found:
                return found
    if given(BY_NAME["base_url"])[0] is not None and not given(BY_NAME["agent_id"])[0]:
        return ("--agent-id (or CONFORMANCE_AGENT_ID) is required with --base-url: "
                "the agent that runs the conformance agent")
    return None



# -- the GitHub Action (action.yml) --------------------------------------------------------------------
def action_input(option: Option) -> str:
    """The Action's input for an option: its flag without the dashes ('base-url')."""
    return option.flag.removeprefix("--")


ACTION_INPUTS: tuple[str, ...] = tuple(action_input(o) for o in OPTIONS if not o.secret)   # credentials: env only


def action_arguments(inputs: Mapping[str, Any]) -> list[str]:
    """`conformance run`'s arguments for the Action's inputs: an empty input is not given, a switch is 'true' or
    'false', and the input `args` adds more arguments (shell words)."""
    argv: list[str] = []
    for option in OPTIONS:
        name = action_input(option)
        value = str(inputs.get(name) or "").strip() if name in ACTION_INPUTS else ""
        if not value:
            continue
        if not option.is_switch:
            argv += [option.flag, value]
        elif value.lower() in ("true", "false"):
            argv += [option.flag] if value.lower() == "true" else []
        else:
            raise ValueError(f"input {name}: expected true or false, got {value!r}")
    try:
        return argv + shlex.split(str(inputs.get("args") or ""))
    except ValueError as exc:
        raise ValueError(f"input args: {exc}") from None
