"""The GitHub Action (action.yml), run as Actions runs a composite action: each `run` step in bash with its inputs
and expressions substituted, its own GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, the steps' outputs feeding the
next ones; `uses` steps are evaluated (condition and `with`), not executed. Against the embedded server and a
broken one."""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance import options
from conformance.server import ReferenceServer
from tests.reports.support import FAILING_MUST, server_env
from tests.selftest.zoo import load_zoo

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
ACTION_OWN = {"args", "python", "install", "artifact-name"}
SECRETS = ("api_key", "access_token", "revoked_key", "expired_token")
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Ran:
    """What a run of the action left: each step's outputs, exit status and summary, the `uses` steps it reached."""
    inputs: dict[str, str]
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    summary: str = ""
    uses: list[dict[str, Any]] = field(default_factory=list)
    failed: bool = False
    log: str = ""

    def output(self, name: str) -> str:
        """One of the action's own outputs, as a workflow reads it."""
        return evaluate(ACTION["outputs"][name]["value"], self)


def evaluate(text: str, ran: Ran) -> str:
    return EXPRESSION.sub(lambda m: _value(m.group(1), ran), str(text))


def _value(expr: str, ran: Ran) -> Any:
    """The few expression forms action.yml uses; anything else fails the test rather than guessing."""
    if "||" in expr:
        return next((v for v in (_value(p.strip(), ran) for p in expr.split("||")) if v), "")
    if "&&" in expr:
        values = [_value(p.strip(), ran) for p in expr.split("&&")]
        return next((v for v in values if not v), values[-1])
    if "!=" in expr:
        left, right = (_value(p.strip(), ran) for p in expr.split("!="))
        return left != right
    if expr == "always()":
        return True
    if expr == "toJSON(inputs)":
        return json.dumps(ran.inputs)
    if m := re.fullmatch(r"'([^']*)'", expr):
        return m.group(1)
    if m := re.fullmatch(r"inputs\.([\w-]+)", expr):
        return ran.inputs[m.group(1)]
    if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
        return ran.outputs.get(m.group(1), {}).get(m.group(2), "")
    raise AssertionError(f"action.yml uses an expression this harness does not know: {expr}")


def condition(step: dict[str, Any], ran: Ran) -> bool:
    when = step.get("if")
    if when is None:
        return not ran.failed                    # success(): the default
    return bool(_value(str(when).removeprefix("${{").removesuffix("}}").strip(), ran))


def run_action(given: dict[str, str], *, workspace: Path, env: dict[str, str] | None = None,
               steps: slice = slice(None)) -> Ran:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of the action: {unknown}"
    ran = Ran({**inputs, **given})
    temp = workspace / "runner-temp"
    temp.mkdir(parents=True, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "GITHUB_"))}
    base.update(env or {}, GITHUB_ACTION_PATH=str(ROOT), RUNNER_TEMP=str(temp), GITHUB_WORKSPACE=str(workspace))
    for n, step in enumerate(ACTION["runs"]["steps"][steps]):
        step_id = step.get("id", f"step{n}")
        if not condition(step, ran):
            continue
        if "uses" in step:
            ran.uses.append({"uses": step["uses"], **{k: evaluate(v, ran) for k, v in step.get("with", {}).items()}})
            continue
        assert step.get("shell") == "bash", step
        out_file, summary_file = temp / f"{step_id}.output", temp / f"{step_id}.summary"
        out_file.write_text("")
        summary_file.write_text("")
        step_env = {k: evaluate(v, ran) for k, v in step.get("env", {}).items()}
        script = temp / f"{step_id}.sh"
        script.write_text(evaluate(step["run"], ran))
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env={**base, **step_env, "GITHUB_OUTPUT": str(out_file),
                                   "GITHUB_STEP_SUMMARY": str(summary_file)},
                              capture_output=True, text=True, timeout=300)
        ran.log += proc.stdout + proc.stderr
        ran.status[step_id] = proc.returncode
        ran.outputs[step_id] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if line)
        ran.summary += summary_file.read_text()
        ran.failed = ran.failed or proc.returncode != 0
    return ran


def this_python(**more: str) -> dict[str, str]:
    """Inputs that run the suite of this checkout with the Python running these tests (no install: no network)."""
    return {"python": sys.executable, "install": "false", **more}


# -- the action's shape ---------------------------------------------------------------------------------
def test_every_option_but_the_credentials_is_an_input():
    assert set(ACTION["inputs"]) == set(options.ACTION_INPUTS) | ACTION_OWN
    secret_inputs = {options.action_input(o) for o in options.OPTIONS if o.secret}
    assert not secret_inputs & set(ACTION["inputs"]) and not any("key" in i or "token" in i for i in ACTION["inputs"])
    assert set(ACTION["outputs"]) >= {"verdict", "report-dir"}


def test_docs_ci_md_uses_the_action_and_names_every_input():
    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "uses: your-org/conformance@" in doc
    assert not [name for name in ACTION["inputs"] if f"`{name}`" not in doc]
    assert not [name for name in ACTION["outputs"] if f"`{name}`" not in doc]


def test_the_reports_are_uploaded_even_when_the_run_fails():
    upload = next(s for s in ACTION["runs"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["uses"].startswith("actions/upload-artifact@") and "always()" in upload["if"]
    steps = ACTION["runs"]["steps"]
    assert steps.index(upload) < len(steps) - 1 and "exit" in steps[-1]["run"]   # the run's status comes last


def test_inputs_become_the_options_of_conformance_run():
    argv = options.action_arguments({"base-url": "https://x", "thorough": "true", "insecure": "false", "seed": " ",
                                     "api-key": "ignored: credentials are never inputs", "args": "-- -x 'a b'"})
    assert argv == ["--base-url", "https://x", "--thorough", "--", "-x", "a b"]
    with pytest.raises(ValueError, match="input thorough: expected true or false"):
        options.action_arguments({"thorough": "yes"})


# -- the action, run -------------------------------------------------------------------------------------
def test_a_passing_run_fills_the_summary_and_the_outputs(tmp_path):
    ran = run_action(this_python(requirements="META-DOC-001,META-DOC-002"), workspace=tmp_path)
    assert not ran.failed and "No such file" not in ran.log, ran.log[-3000:]
    report_dir = tmp_path / "conformance-reports"
    assert ran.output("verdict") == "conformant" and ran.output("report-dir") == str(report_dir)
    assert ran.output("exit-code") == "0"
    assert ran.summary == (report_dir / "report.md").read_text(encoding="utf-8")
    assert ran.summary.startswith("## ✅ CONFORMANT")
    assert ran.uses == [{"uses": "actions/upload-artifact@v4", "name": "conformance-reports", "path": str(report_dir),
                         "if-no-files-found": "warn"}]
    assert {"report.json", "report.html", "report.md", "junit.xml"} <= {p.name for p in report_dir.iterdir()}


def test_a_failing_run_publishes_its_failure_uploads_the_reports_and_fails_last(tmp_path):
    with ReferenceServer(load_zoo()["INV-RES-005-events-missing"].server_config()) as srv:
        facts = srv.facts
        given = this_python(**{"base-url": facts["base_url"], "agent-id": facts["agent_id"],
                               "ca-bundle": facts["ca_bundle"], "requirements": FAILING_MUST,
                               "report-dir": "out/reports", "artifact-name": "certification"})
        ran = run_action(given, workspace=tmp_path, env=server_env(facts))
    assert ran.output("verdict") == "non-conformant" and ran.output("exit-code") == "1", ran.log[-3000:]
    assert ran.status == {"install": 0, "run": 0, "step3": 1}          # the Verdict step ends with the run's status
    assert f"#### ❌ {FAILING_MUST} · MUST · failed" in ran.summary and "```sh\ncurl " in ran.summary
    assert ran.uses[0]["name"] == "certification" and ran.uses[0]["path"] == str(tmp_path / "out" / "reports")
    for key in SECRETS:
        assert facts[key] not in ran.summary + ran.log + json.dumps(ran.outputs)


def test_a_refused_input_is_an_error_never_an_older_reports_verdict(tmp_path):
    old = tmp_path / "conformance-reports"
    old.mkdir()
    (old / "report.json").write_text(json.dumps({"verdict": "conformant"}))
    ran = run_action(this_python(thorough="yes"), workspace=tmp_path)
    assert ran.output("verdict") == "error" and ran.output("exit-code") == "2"
    assert "input thorough: expected true or false" in ran.log and "before any report was written" in ran.summary
    assert ran.failed and len(ran.uses) == 1


def fake_python(tmp_path: Path, *, version_ok: bool = True) -> Path:
    """A `python` that logs how it is called, makes a venv (with itself inside) and passes the version check."""
    exe = tmp_path / "fake-python"
    exe.write_text("#!/bin/bash\n"
                   f'echo "$0 $*" >> "{tmp_path / "calls.log"}"\n'
                   f'if [ "$1" = "-c" ]; then exit {0 if version_ok else 1}; fi\n'
                   'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def run_install_step(tmp_path: Path, python: Path) -> Ran:
    return run_action({"python": str(python)}, workspace=tmp_path, steps=slice(0, 1))


def test_install_puts_the_actions_own_checkout_in_a_fresh_venv(tmp_path):
    ran = run_install_step(tmp_path, fake_python(tmp_path))
    venv = tmp_path / "runner-temp" / "conformance-venv"
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert f"{tmp_path / 'fake-python'} -m venv {venv}" in calls
    assert f"{venv / 'bin' / 'python'} -m pip install --quiet --disable-pip-version-check {ROOT}" in calls
    assert ran.outputs["install"] == {"python": str(venv / "bin" / "python")}


def test_install_refuses_a_python_older_than_3_11(tmp_path):
    ran = run_install_step(tmp_path, fake_python(tmp_path, version_ok=False))
    assert ran.status["install"] == 2 and "needs Python 3.11 or later" in ran.log
