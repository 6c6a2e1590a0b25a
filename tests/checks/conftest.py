"""Tests of the checks against the reference server and its broken variants."""
import pytest

from conformance.server import ReferenceServer, ServerConfig


@pytest.fixture(scope="module")
def server():
    """One reference server per test module (the modules run in parallel under xdist)."""
    with ReferenceServer(ServerConfig()) as srv:
        yield srv
