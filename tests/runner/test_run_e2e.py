"""`conformance run` end to end: reports, verdict, exit status, and no secret anywhere."""
import gzip
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conformance.server import ReferenceServer, ServerConfig

SECRET_KEYS = ("api_key", "access_token", "revoked_key", "expired_token")


def echo_credentials(app, facts):
    """Puts every credential into every JSON body and an SSE comment, as a careless server might."""
    leak = " ".join(facts[k] for k in SECRET_KEYS)

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)

        async def leaky_send(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [(k, v) for k, v in message["headers"] if k.lower() != b"content-length"]
                           + [(b"x-echo", leak.encode())]}
            elif message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": message["body"] + (f"\n: {leak}\n\n".encode()
                                                                 if b"data:" in message["body"] else b"")}
            await send(message)

        return await app(scope, receive, leaky_send)

    return wrapped


def run_cli(args, env_extra, timeout=240):
    env = {**os.environ, **env_extra}
    return subprocess.run([sys.executable, "-m", "conformance", "run", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def server_env(facts):
    return {"CONFORMANCE_API_KEY": facts["api_key"], "CONFORMANCE_ACCESS_TOKEN": facts["access_token"],
            "CONFORMANCE_REVOKED_KEY": facts["revoked_key"], "CONFORMANCE_EXPIRED_TOKEN": facts["expired_token"]}


def server_args(facts, report_dir):
    return ["--base-url", facts["base_url"], "--agent-id", facts["agent_id"], "--agent-slug", facts["agent_slug"],
            "--other-agent-id", facts["other_agent_id"], "--undeployed-agent-id", facts["undeployed_agent_id"],
            "--auth-url", facts["auth_url"], "--extra-data-field", facts["extra_data_field"],
            "--ca-bundle", facts["ca_bundle"], "--report-dir", str(report_dir)]


@pytest.mark.xdist_group("e2e-embedded")
def test_run_certifies_the_embedded_server(tmp_path):
    proc = run_cli(["--report-dir", str(tmp_path)], {})
    assert "Traceback" not in proc.stdout + proc.stderr
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["verdict"] in ("conformant", "conformant-partial"), (rep["verdict_reason"], proc.stdout[-3000:])
    assert proc.returncode == 0
    assert not [r for r in rep["requirements"] if r["status"] in ("failed", "warning")]
    for key in ("verdict", "target", "suite", "requirements"):
        assert key in rep
    assert rep["cost"]["requests"] > 0 and rep["cost"]["agent_runs"] > 0
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    props = {p.get("name") for p in junit.iter("property")}
    assert {"id", "level", "status", "checks", "verdict", "base_url"} <= props
    assert len(list(junit.iter("testcase"))) == len(rep["requirements"])
    html = (tmp_path / "report.html").read_text()
    assert "data-verdict=" in html and "Requirements by protocol and section" in html


@pytest.mark.xdist_group("e2e-secrets")
def test_no_secret_reaches_any_report_even_when_the_server_echoes_it(tmp_path):
    with ReferenceServer(ServerConfig(wrap_app=echo_credentials)) as srv:
        facts = srv.facts
        proc = run_cli(server_args(facts, tmp_path) + ["--protocols", "invoke,agui,metadata"], server_env(facts))
    out = proc.stdout + proc.stderr
    texts = {p.name: p.read_text(errors="replace") for p in tmp_path.iterdir() if p.is_file()}
    assert {"report.json", "report.html", "junit.xml", "recording.json.gz"} <= set(texts)
    texts["recording.json"] = gzip.decompress((tmp_path / "recording.json.gz").read_bytes()).decode()
    for name, text in {**texts, "output": out}.items():
        for key in SECRET_KEYS:
            assert facts[key] not in text, f"{key} leaked into {name}"
    # the redacted recording still judges as the run did
    rejudged = subprocess.run([sys.executable, "-m", "conformance", "rejudge", str(tmp_path)], capture_output=True,
                              text=True, timeout=120)
    assert rejudged.returncode == 0, rejudged.stdout + rejudged.stderr


def test_a_run_with_an_unreachable_target_is_an_error(tmp_path):
    proc = run_cli(["--base-url", "https://127.0.0.1:9", "--agent-id", "agt_x", "--report-dir", str(tmp_path)],
                   {"CONFORMANCE_API_KEY": "ais_live_x"}, timeout=120)
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["verdict"] == "error" and proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr


def test_plain_http_to_a_remote_host_is_refused(tmp_path):
    proc = run_cli(["--base-url", "http://example.invalid", "--agent-id", "agt_x", "--report-dir", str(tmp_path)],
                   {"CONFORMANCE_API_KEY": "ais_live_x"}, timeout=120)
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["verdict"] == "error" and proc.returncode == 2
    assert "http" in rep["verdict_reason"].lower()


def test_list_shows_the_catalog_with_coverage():
    proc = subprocess.run([sys.executable, "-m", "conformance", "list", "--format", "json"], capture_output=True,
                          text=True, timeout=60)
    listed = json.loads(proc.stdout)
    rows = listed["requirements"]
    assert proc.returncode == 0 and len(rows) >= 100
    assert listed["suite"]["catalog_digest"].startswith("sha256:")
    assert {"covered", "unspecified"} <= {r["coverage"] for r in rows}
