"""The reference Agent Invocation Service, with the conformance agent built in.

In process::

    from conformance.server import ServerConfig, ReferenceServer
    with ReferenceServer(ServerConfig()) as srv:
        srv.facts, srv.base_url

From the command line: ``conformance serve [--host H] [--port N] [--json]``
(``serve_main``).
"""

from .config import ServerConfig
from .runner import ReferenceServer
from .serve import serve_main

__all__ = ["ReferenceServer", "ServerConfig", "serve_main"]
