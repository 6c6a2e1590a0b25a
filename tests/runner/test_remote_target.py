"""A remote target reaches `conformant`, and no secret crosses the network in cleartext.

The reference server is bound to 198.18.0.2 (a benchmarking address, RFC 2544) on the loopback interface of a
network namespace this test makes; the suite runs inside the same namespace, so its traffic goes nowhere else.
A raw packet capture on that interface sees every byte both ways: the API key must appear in none of it, while
the cleartext probe's decoy must (the capture is proven to read cleartext). Needs root and `ip`; skips otherwise.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ADDRESS = "198.18.0.2"
SECRETS = ("api_key", "access_token", "revoked_key", "expired_token")
CAPTURE = """
import socket, sys
out = open(sys.argv[1], "wb")
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
# a kernel buffer for the whole run: with the default one a busy machine drops packets (the decoy's, once)
sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 256 << 20)   # 33: Linux
sock.bind(("lo", 0))
print("capturing", flush=True)
while True:
    out.write(sock.recv(1 << 17))
    out.flush()
"""

pytestmark = pytest.mark.xdist_group("remote-target")


@pytest.fixture
def namespace():
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("a network namespace needs root and `ip`")
    name = f"conf-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f"cannot make a network namespace here: {made.stderr.strip()}")
    try:
        for cmd in (["addr", "add", f"{ADDRESS}/32", "dev", "lo"], ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", name, *cmd], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def inside(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def start_server(ns: str, cert_dir: Path) -> tuple[subprocess.Popen, dict]:
    server = subprocess.Popen(
        inside(ns, sys.executable, "-m", "conformance", "serve", "--json", "--host", ADDRESS, "--port", "0",
               "--cert-dir", str(cert_dir), "--until-stdin-closes"),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    if not line:
        server.kill()
        pytest.fail("the reference server did not start inside the namespace")
    return server, json.loads(line)


def run_arguments(facts: dict, report_dir: Path) -> tuple[list[str], dict[str, str]]:
    """`conformance run` with every fact the server states: the plain ones as options, the secrets in the
    environment (as a user's CI would pass them)."""
    plain = ("base_url", "agent_id", "other_agent_id", "undeployed_agent_id", "agent_slug", "auth_url",
             "extra_data_field", "ca_bundle")
    argv = [f"--{name.replace('_', '-')}={facts[name]}" for name in plain]
    env = {**os.environ, **{f"CONFORMANCE_{name.upper()}": facts[name] for name in SECRETS}}
    return [*argv, "--thorough", "--require-complete", f"--report-dir={report_dir}"], env


def test_a_remote_reference_server_is_conformant_and_no_secret_travels_in_cleartext(namespace, tmp_path):
    capture_file = tmp_path / "lo.raw"
    capture = subprocess.Popen(inside(namespace, sys.executable, "-c", CAPTURE, str(capture_file)),
                               stdout=subprocess.PIPE, text=True)
    server = None
    try:
        assert capture.stdout.readline().strip() == "capturing"
        server, facts = start_server(namespace, tmp_path / "certs")
        assert facts["base_url"].startswith(f"https://{ADDRESS}:")
        argv, env = run_arguments(facts, tmp_path / "report")
        run = subprocess.run(inside(namespace, sys.executable, "-m", "conformance", "run", *argv), env=env,
                             capture_output=True, text=True, timeout=400)
        time.sleep(0.5)   # the last packets reach the capture file
    finally:
        capture.kill()
        if server is not None:
            server.stdin.close()
            server.wait(timeout=20)

    report = json.loads((tmp_path / "report" / "report.json").read_text())
    not_passed = {r["id"]: (r["status"], r.get("message", "")[:200]) for r in report["requirements"]
                  if r["level"] == "MUST" and r["status"] != "passed"}
    assert (run.returncode, report["verdict"]) == (0, "conformant"), (run.stdout[-3000:], not_passed)
    cleartext = next(r for r in report["requirements"] if r["id"] == "GEN-BASE-002")
    assert cleartext["status"] == "passed" and "decoy" in cleartext["message"]

    wire = capture_file.read_bytes()
    decoy = b"conformance-decoy-"
    assert decoy in wire, "the capture saw no cleartext probe: it proves nothing"
    for name in SECRETS:
        assert facts[name].encode() not in wire, f"the {name} crossed the network in cleartext"
