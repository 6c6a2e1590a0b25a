from __future__ import annotations

import json
import ssl
import subprocess
import sys
import threading
import time

import httpx
import pytest

from conformance.server import ReferenceServer, ServerConfig
from conformance.server.testing import error_body_ok

SERVE_KEYS = {"base_url", "agent_id", "agent_slug", "api_key", "access_token", "other_agent_id", "revoked_key",
              "expired_token", "undeployed_agent_id", "auth_url", "extra_data_field", "ca_bundle"}


def test_facts(facts):
    assert SERVE_KEYS <= set(facts)
    assert facts["agent_id"].startswith("agt_") and "-" in facts["agent_slug"]
    assert facts["api_key"].startswith("ais_live_") and facts["revoked_key"].startswith("ais_live_")
    assert facts["access_token"].startswith("ais_oat_") and facts["expired_token"].startswith("ais_oat_")
    assert facts["base_url"].startswith("https://127.0.0.1:")


def test_metadata(http, urls, facts):
    r = http.get(urls["metadata"])
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert "max-age=30" in r.headers["cache-control"]
    assert r.json() == {
        "resource": f"{facts['base_url']}/v1/agents/{facts['agent_id']}/mcp",
        "authorization_servers": [facts["auth_url"]],
        "scopes_supported": ["agent:invoke"],
        "bearer_methods_supported": ["header"],
    }
    for agent in (facts["undeployed_agent_id"], "agt_unknown"):
        error_body_ok(http.get(urls["metadata"].replace(facts["agent_id"], agent)), 404, "not_found")
    error_body_ok(http.post(urls["metadata"]), 405)


@pytest.mark.parametrize("op", ["invoke", "agui"])
def test_credentials(http, urls, facts, op):
    body = {"prompt": "say x"} if op == "invoke" else {"messages": [{"id": "1", "role": "user", "content": "say x"}]}
    url = urls[op]
    for header in ({}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"},
                   {"Authorization": "Bearer ais_live_nope"}, {"Authorization": f"Bearer {facts['revoked_key']}"},
                   {"Authorization": f"Bearer {facts['expired_token']}"}, {"Authorization": facts["api_key"]}):
        r = http.post(url, json=body, headers=header)
        error_body_ok(r, 401, "unauthenticated")
        assert r.headers["x-ratelimit-remaining"].isdigit()
    # credentials are accepted in the header only
    error_body_ok(http.post(url + f"?api_key={facts['api_key']}", json={**body, "api_key": facts["api_key"]}),
                  401, "unauthenticated")
    ok = {"Authorization": f"Bearer {facts['api_key']}"}
    assert http.post(url, json=body, headers=ok).status_code == 200
    assert http.post(url, json=body, headers={"Authorization": f"bearer {facts['api_key']}"}).status_code == 200
    token = {"Authorization": f"Bearer {facts['access_token']}"}
    assert http.post(url, json=body, headers=token).status_code == 200
    other = url.replace(facts["agent_id"], facts["other_agent_id"])
    assert http.post(other, json=body, headers=ok).status_code == 200
    error_body_ok(http.post(other, json=body, headers=token), 404, "not_found")
    for agent in (facts["undeployed_agent_id"], "agt_nope"):
        error_body_ok(http.post(url.replace(facts["agent_id"], agent), json=body, headers=ok), 404, "not_found")


def test_rate_limit_and_options():
    cfg = ServerConfig(rate_limit_burst=3, rate_limit_per_second=0.5, validation_status=422, seed=7,
                       extra_data_field="extra", auth_url="https://auth.example/")
    with ReferenceServer(cfg) as srv:
        f = srv.facts
        assert f["extra_data_field"] == "extra" and f["auth_url"] == "https://auth.example/"
        with httpx.Client(verify=ssl.create_default_context(cafile=f["ca_bundle"])) as c:
            url = f"{f['base_url']}/v1/agents/{f['agent_id']}/invoke"
            h = {"Authorization": f"Bearer {f['api_key']}"}
            r = c.post(url, json={"prompt": 1}, headers=h)
            error_body_ok(r, 422, "validation_failed")
            remaining = [int(c.post(url, json={"prompt": "say x"}, headers=h).headers["x-ratelimit-remaining"])
                         for _ in range(2)]
            assert remaining == [1, 0]
            r = c.post(url, json={"prompt": "say x"}, headers=h)
            error_body_ok(r, 429, "rate_limited")
            assert int(r.headers["retry-after"]) >= 1 and r.headers["x-ratelimit-remaining"] == "0"
            mcp = url.replace("/invoke", "/mcp")
            r = c.post(mcp, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=h)
            assert r.status_code == 429 and isinstance(r.json()["error"]["code"], int)
            assert int(r.headers["retry-after"]) >= 1
    with ReferenceServer(ServerConfig(seed=7)) as again:
        assert again.facts["api_key"] == f["api_key"] and again.facts["agent_id"] == f["agent_id"]


def test_wrap_app_hook_and_idempotent_stop():
    seen = {}

    def wrap(app, facts):
        seen.update(facts)

        async def wrapped(scope, receive, send):
            async def send2(message):
                if message["type"] == "http.response.start":
                    message = {**message, "headers": list(message["headers"]) + [(b"x-wrapped", b"1")]}
                await send(message)
            await app(scope, receive, send2)
        return wrapped

    threads = threading.active_count()
    t0 = time.monotonic()
    srv = ReferenceServer(ServerConfig(wrap_app=wrap)).start()
    assert time.monotonic() - t0 < 30          # started, not hung (no speed asserted: CI machines are busy)
    try:
        assert seen["base_url"] == srv.base_url
        with httpx.Client(verify=ssl.create_default_context(cafile=srv.facts["ca_bundle"])) as c:
            r = c.get(f"{srv.base_url}/.well-known/oauth-protected-resource/v1/agents/{srv.facts['agent_id']}/mcp")
            assert r.headers["x-wrapped"] == "1"
            # an open stream and an idle keep-alive connection do not hold up stop()
            url = f"{srv.base_url}/v1/agents/{srv.facts['agent_id']}/agui"
            with c.stream("POST", url, json={"messages": [{"id": "1", "role": "user", "content": "sleep 60"}]},
                          headers={"Authorization": f"Bearer {srv.facts['api_key']}"}) as r:
                next(r.iter_lines())
                t0 = time.monotonic()
                srv.stop()
                assert time.monotonic() - t0 < 30   # did not wait for the 60 s stream (no speed asserted)
    finally:
        srv.stop()
        srv.stop()
    assert threading.active_count() <= threads


def test_serve_json_command(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from conformance.server import serve_main; "
                             "sys.exit(serve_main(sys.argv[1:]))", "--json", "--cert-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        facts = json.loads(line)
        assert SERVE_KEYS <= set(facts)
        assert facts["ca_bundle"].startswith(str(tmp_path))
        with httpx.Client(verify=ssl.create_default_context(cafile=facts["ca_bundle"])) as c:
            r = c.post(f"{facts['base_url']}/v1/agents/{facts['agent_id']}/invoke", json={"prompt": "say up"},
                       headers={"Authorization": f"Bearer {facts['api_key']}"})
            assert r.json()["result"] == "up"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
