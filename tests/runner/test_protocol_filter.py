"""--protocols: a run restricted to some protocols sends nothing to the others."""
import pytest

from conformance import api
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts

OPERATIONS = {"invoke": "/invoke", "agui": "/agui", "mcp": "/mcp"}


def _operation(path: str) -> str:
    if path.startswith("/.well-known/"):
        return "metadata"
    return next((op for op, end in OPERATIONS.items() if path.endswith(end)), "other")


@pytest.mark.parametrize("selected", [{"metadata"}, {"agui"}, {"invoke", "mcp"}])
def test_only_selected_protocols_are_contacted(selected):
    seen: set[str] = set()

    def spy(app, facts):
        async def wrapped(scope, receive, send):
            if scope["type"] == "http":
                seen.add(_operation(scope["path"]))
            return await app(scope, receive, send)
        return wrapped

    with ReferenceServer(ServerConfig(wrap_app=spy)) as srv:
        rep = api.certify(from_server_facts(srv.facts), protocols=selected)
    seen.discard("metadata")        # the preflight reads the metadata document of the agent: no run, no credential
    assert seen <= selected, f"--protocols {sorted(selected)} also contacted {sorted(seen - selected)}"
    assert rep["verdict"] in ("conformant", "conformant-partial"), rep["verdict_reason"]
