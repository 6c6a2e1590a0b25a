"""Report dicts as a run builds them, without a server, and the suite's CLI as a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conformance import catalog, registry, report
from conformance.judging import CheckResult
from conformance.plugin import target_first
from conformance.reporting import decorate

FAILING_MUST = "INV-RES-005"
CURL = ('curl -sS -N -i -X POST --oauth2-bearer "$CONFORMANCE_API_KEY" -H \'content-type: application/json\' '
        "--data-binary '{\"prompt\":\"say conformance\"}' https://127.0.0.1:8443/v1/agents/agt_1/invoke")
TRANSCRIPT = "POST https://127.0.0.1:8443/v1/agents/agt_1/invoke\n< HTTP 200\n<\n{\"status\":\"completed\"}"


def should_requirement() -> str:
    cov = registry.coverage()
    return next(r.id for r in catalog.load().values() if r.level == "SHOULD" and cov.get(r.id))


def make_report(*, fail: tuple[str, ...] = (), skip: tuple[str, ...] = (), seed: int | None = 7,
                embedded: bool = True, error: str | None = None) -> dict[str, Any]:
    """Every check passed, except the checks of `fail` (failed, with evidence) and of `skip` (not assessed)."""
    results = []
    for check in registry.load_all().values():
        if set(check.requirements) & set(fail):
            results.append(CheckResult(check.id, check.requirements, "failed", "`events` is missing from the result",
                                       [{"scenario": "invoke.plain_json", "label": "main", "transcript": TRANSCRIPT,
                                         "curl": CURL}]))
        elif set(check.requirements) & set(skip):
            results.append(CheckResult(check.id, check.requirements, "not_assessed",
                                       "needs --access-token, which was not given"))
        else:
            results.append(CheckResult(check.id, check.requirements, "passed"))
    rep = report.build(target={"base_url": "https://127.0.0.1:8443", "agent_id": "agt_1", "embedded": embedded},
                       results=results, coverage=registry.coverage(), not_run={}, baseline=report.Baseline(),
                       stats={"wall_seconds": 12.5, "requests": 240, "agent_runs": 110, "bytes_received": 1600000},
                       error=error, options={"level": "may", "seed": seed})
    rep["reports"] = {"report.json": "reports/report.json", "report.html": "reports/report.html",
                      "junit.xml": "reports/junit.xml"}
    return target_first(decorate(rep))


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 240, cwd: Path | None = None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=cwd)


def server_env(facts: dict[str, Any]) -> dict[str, str]:
    return {"CONFORMANCE_API_KEY": facts["api_key"], "CONFORMANCE_ACCESS_TOKEN": facts["access_token"],
            "CONFORMANCE_REVOKED_KEY": facts["revoked_key"], "CONFORMANCE_EXPIRED_TOKEN": facts["expired_token"]}


def server_args(facts: dict[str, Any]) -> list[str]:
    return ["--base-url", facts["base_url"], "--agent-id", facts["agent_id"], "--agent-slug", facts["agent_slug"],
            "--other-agent-id", facts["other_agent_id"], "--undeployed-agent-id", facts["undeployed_agent_id"],
            "--auth-url", facts["auth_url"], "--extra-data-field", facts["extra_data_field"],
            "--ca-bundle", facts["ca_bundle"]]


def load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())
