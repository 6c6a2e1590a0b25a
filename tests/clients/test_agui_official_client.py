"""The official AG-UI client (`@ag-ui/client` 1.0, Node) against the reference server's AG-UI endpoint.

`tests/clients/agui/run.mjs` sends a RunAgentInput with the client's HttpAgent, parses the stream with the
client's own SSE transform (which validates every event against @ag-ui/core) and applies its `verifyEvents`
ordering rules; it prints what it saw. Skipped, with the reason, when `node` or `npm` is missing.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from conformance.server import ReferenceServer, ServerConfig

CLIENT_DIR = Path(__file__).parent / "agui"
MISSING = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
pytestmark = [pytest.mark.skipif(bool(MISSING), reason=f"the official AG-UI client needs {' and '.join(MISSING)}, "
                                                       "which is not installed"),
              pytest.mark.xdist_group("agui-official-client")]
INSTALLED = CLIENT_DIR / "node_modules" / ".conformance-installed"   # written only once `npm ci` has finished


@pytest.fixture(scope="module")
def client_ready() -> Path:
    # One installer at a time, even across xdist workers: a worker must never see a half-written node_modules.
    with open(CLIENT_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not INSTALLED.exists():
            command = ["npm", "ci"] if (CLIENT_DIR / "package-lock.json").exists() else ["npm", "install"]
            done = subprocess.run(command + ["--no-audit", "--no-fund"], cwd=CLIENT_DIR, capture_output=True,
                                  text=True, timeout=300)
            assert done.returncode == 0, f"{' '.join(command)} failed: {done.stderr[-2000:]}"
            INSTALLED.write_text("npm ci finished\n")
    return CLIENT_DIR / "run.mjs"


def runner(facts: dict[str, Any], script: Path):
    env = {**os.environ, "AGUI_URL": f"{facts['base_url']}/v1/agents/{facts['agent_id']}/agui",
           "AGUI_TOKEN": facts["api_key"], "NODE_EXTRA_CA_CERTS": facts["ca_bundle"]}

    def run(prompt: str | None = None, **fields: Any) -> dict[str, Any]:
        body = {"threadId": f"official-{uuid.uuid4().hex}", "runId": f"run-{uuid.uuid4().hex[:8]}", "state": {},
                "messages": [{"id": "u1", "role": "user", "content": prompt}] if prompt is not None else [],
                "tools": [], "context": [], "forwardedProps": {}, **fields}
        done = subprocess.run(["node", str(script), json.dumps(body)], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0 and done.stdout.strip(), f"run.mjs exited {done.returncode}: {done.stderr[-1500:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])
    return run


@pytest.fixture(scope="module")
def official(client_ready):
    with ReferenceServer(ServerConfig()) as srv:
        yield runner(srv.facts, client_ready)


def test_plain_reply(official):
    seen = official("say conformance")
    assert seen["ok"], seen["error"]
    assert seen["types"] == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
                             "RUN_FINISHED"]
    assert seen["text"] == "conformance" and seen["events"][-1]["result"] == "conformance"


def test_tool_call(official):
    seen = official('tool lookup {"q":"x"}\nsay done')
    assert seen["ok"], seen["error"]
    assert {"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"} <= set(seen["types"]) and seen["text"] == "done"


def test_step(official):
    seen = official("step plan\nsay done")
    assert seen["ok"], seen["error"]
    assert ["STEP_STARTED", "STEP_FINISHED"] == [t for t in seen["types"] if t.startswith("STEP_")]


def test_interrupt_and_resume(official):
    thread = f"official-{uuid.uuid4().hex}"
    paused = official("ask What is your name?\nsay thanks", threadId=thread)
    assert paused["ok"], paused["error"]
    outcome = paused["events"][-1]["outcome"]
    assert outcome["type"] == "interrupt" and outcome["interrupts"]
    resume = [{"interruptId": i["id"], "status": "resolved", "payload": {"name": "Ada"}} for i in outcome["interrupts"]]
    resumed = official(None, threadId=thread, resume=resume)
    assert resumed["ok"], resumed["error"]
    assert resumed["text"] == 'answer: {"name":"Ada"}thanks'
    assert resumed["events"][-1]["outcome"]["type"] == "success"


def test_failure(official):
    seen = official("say partial\nfail boom")
    assert seen["ok"], seen["error"]
    assert seen["types"][-1] == "RUN_ERROR" and seen["events"][-1]["message"] and seen["text"] == "partial"


def test_the_client_really_verifies(client_ready):
    """A broken server (an event after RUN_FINISHED) makes the official client fail: verification is on."""
    from tests.selftest.zoo_agui import event_after_terminal

    with ReferenceServer(ServerConfig(wrap_app=event_after_terminal)) as srv:
        seen = runner(srv.facts, client_ready)("say conformance")
    assert not seen["ok"] and "RUN_FINISHED" in seen["error"], seen
