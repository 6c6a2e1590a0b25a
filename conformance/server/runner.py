"""Start and stop the reference server: uvicorn over HTTPS in a background thread, or Hypercorn when it serves HTTP/2
as well (`ServerConfig.http2`: ALPN offers h2 and http/1.1; uvicorn speaks HTTP/1.1 only)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import shutil
import socket
import ssl
import tempfile
import threading
import time
from typing import Any

import uvicorn

from .app import build_app
from .config import ServerConfig
from .org import seed_organization
from .tls import make_certs

START_TIMEOUT = 15.0
_DRAIN_SECONDS = 10.0     # what the rest of an HTTP/1.1 request body answered early may take to arrive


class _Server(uvicorn.Server):
    """uvicorn with a quick shutdown: in-flight requests get ``grace`` seconds, then every connection is aborted.

    (uvicorn's own shutdown waits on idle TLS keep-alive connections until its timeout.)
    """

    grace: float = 1.0

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace
        while state.tasks and loop.time() < deadline:
            await asyncio.sleep(0.01)
        tasks = list(state.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        for connection in list(state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        await asyncio.sleep(0)

    @property
    def inflight(self) -> int:
        return len(self.server_state.tasks)


def _tolerate_data_after_answer() -> None:
    """Hypercorn 0.18 tears a whole HTTP/2 connection down (a KeyError, every other stream on it lost) when request
    DATA arrives for a stream it has already answered and closed: a refusal sent before the body was read, which
    RFC 9113 §8.1 allows. Such DATA is acknowledged and dropped instead, and the stream reset with NO_ERROR, which
    asks the client to stop sending (the same section). Nothing else changes for any user of Hypercorn."""
    import h2.errors
    import h2.events
    import h2.exceptions
    from hypercorn.protocol.h2 import H2Protocol

    if getattr(H2Protocol, "_tolerates_data_after_answer", False):
        return
    handle = H2Protocol._handle_events

    async def handle_events(self: H2Protocol, events: list[h2.events.Event]) -> None:
        for event in events:      # one at a time: a stream opened earlier in the same batch is known by then
            if isinstance(event, h2.events.DataReceived) and event.stream_id not in self.streams:
                self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.connection.reset_stream(event.stream_id, h2.errors.ErrorCodes.NO_ERROR)
                await self._flush()
            else:
                await handle(self, [event])

    H2Protocol._handle_events = handle_events
    H2Protocol._tolerates_data_after_answer = True


async def _send_quietly(send: Any, message: dict) -> None:
    """As uvicorn's: a send to a client that has gone (its TLS connection closing) is dropped, not raised."""
    with contextlib.suppress(ssl.SSLError, ConnectionError):
        await send(message)


class _Hypercorn:
    """Hypercorn on a socket bound already, with the interface the runner uses of uvicorn's server (`run`,
    `started`, `should_exit`, `inflight`): on stop, in-flight requests get `grace` seconds, then are cancelled."""

    def __init__(self, app: Any, certs: Any, grace: float, access_log: bool) -> None:
        from hypercorn.config import Config as HypercornConfig     # here: only a server of HTTP/2 loads Hypercorn

        self.app = app
        self.config = HypercornConfig()
        self.config.certfile, self.config.keyfile = certs.cert_path, certs.key_path
        self.config.alpn_protocols = ["h2", "http/1.1"]
        self.config.graceful_timeout = grace
        self.config.keep_alive_timeout = 30
        self.config.include_server_header = False
        self.config.accesslog = "-" if access_log else None
        self.config.errorlog = None
        self.started = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._requests: set[int] = set()
        _tolerate_data_after_answer()

    @property
    def inflight(self) -> int:
        return len(self._requests)

    @property
    def should_exit(self) -> bool:
        return self._stop is not None and self._stop.is_set()

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        if value and self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)

    async def _counted(self, scope: dict, receive: Any, send: Any) -> None:
        whole = scope.get("type") != "http"     # the request's body has been read to its end

        async def reading() -> dict:
            nonlocal whole
            message = await receive()
            whole = whole or message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def answering(message: dict) -> None:
            if (not whole and scope.get("http_version") != "2" and message["type"] == "http.response.body"
                    and not message.get("more_body", False)):
                # An HTTP/1.1 answer given before the body was read (a refusal of a body over 1 MB): Hypercorn closes
                # the connection as soon as the answer ends, and the body still arriving makes that close a reset that
                # destroys the answer before the client (which reads only once it has sent everything) sees it.
                # uvicorn reads on. So the answer's bytes go out now (its Content-Length tells the client it is
                # whole) and its end only once the rest of the body has been read (bounded): then the connection
                # is reused, as uvicorn's
                await _send_quietly(send, {**message, "more_body": True})
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._drain(reading), _DRAIN_SECONDS)
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await _send_quietly(send, message)

        self._requests.add(id(scope))
        try:
            await self.app(scope, reading, answering)
        finally:
            self._requests.discard(id(scope))

    @staticmethod
    async def _drain(reading: Any) -> None:
        while (message := await reading())["type"] == "http.request" and message.get("more_body", False):
            pass

    @staticmethod
    def _quiet(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """A connection a client closed while TLS was shutting down (or whose shutdown timed out) is not worth a
        traceback."""
        if not isinstance(context.get("exception"), (ssl.SSLError, ConnectionError, TimeoutError)):
            loop.default_exception_handler(context)

    def run(self, sockets: list[socket.socket]) -> None:
        from hypercorn.asyncio.run import worker_serve
        from hypercorn.config import Sockets
        from hypercorn.utils import wrap_app

        sock = sockets[0]
        sock.listen(self.config.backlog)     # connections wait in the backlog until the loop accepts them
        sock.setblocking(False)
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(self._quiet)
        self._stop = asyncio.Event()
        self.started = True
        app = wrap_app(self._counted, self.config.wsgi_max_body_size, "asgi")
        try:
            self._loop.run_until_complete(worker_serve(app, self.config, sockets=Sockets([sock], [], []),
                                                       shutdown_trigger=self._stop.wait))
        finally:
            self._loop.close()


def _url_host(host: str) -> str:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if ip.is_unspecified:
        return "127.0.0.1" if ip.version == 4 else "[::1]"
    return f"[{host}]" if ip.version == 6 else host


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET
    try:
        if ipaddress.ip_address(host).version == 6:
            family = socket.AF_INET6
    except ValueError:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family = infos[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


class ReferenceServer:
    """The reference server with the conformance agent built in.

    ``with ReferenceServer(cfg) as srv: srv.facts, srv.base_url`` — or ``start()``
    / ``stop()``; ``stop()`` is idempotent.
    """

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config or ServerConfig()
        self.facts: dict[str, Any] = {}
        self.base_url: str = ""
        self.port: int = 0
        self.app: Any = None
        self.organization: Any = None
        self._server: _Server | _Hypercorn | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._tempdir: str | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ReferenceServer:
        with self._lock:
            if self._thread is not None:
                return self
            try:
                self._start()
            except BaseException:
                self._cleanup()
                raise
            return self

    def _start(self) -> None:
        cfg = self.config
        self._sock = _bind(cfg.host, cfg.port)
        self.port = self._sock.getsockname()[1]
        self.base_url = f"https://{_url_host(cfg.host)}:{self.port}"
        cert_dir = cfg.cert_dir
        if cert_dir is None:
            cert_dir = self._tempdir = tempfile.mkdtemp(prefix="conformance-server-")
        certs = make_certs(cert_dir, cfg.host, cfg.ca_path)

        org = seed_organization(seed=cfg.seed, rate_limit_burst=cfg.rate_limit_burst,
                                rate_limit_per_second=cfg.rate_limit_per_second)
        for agent in org.agents.values():
            agent.version_number = cfg.version_number
        self.organization = org
        main_agent = org.agents[org.facts["agent_id"]]
        self.facts = {
            "base_url": self.base_url,
            **org.facts,
            "auth_url": cfg.auth_url or f"{self.base_url}/oauth",
            "extra_data_field": cfg.extra_data_field,
            "ca_bundle": certs.ca_path,
            "tool_name": main_agent.tool_name,
            "mcp_protocol_versions": ["2026-07-28", "2025-11-25"],
            "ping_interval": cfg.ping_interval,
            "max_body_bytes": cfg.max_body_bytes,
            "max_extra_bytes": cfg.max_extra_bytes,
            "validation_status": cfg.validation_status,
        }
        app = build_app(cfg, org, self.facts)
        self.app = cfg.wrap_app(app, self.facts) if cfg.wrap_app is not None else app

        if cfg.http2:
            self._server = _Hypercorn(self.app, certs, cfg.shutdown_grace, cfg.access_log)
        else:
            self._server = self._uvicorn(certs)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="conformance-reference-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the reference server failed to start")
            if time.monotonic() > deadline:
                raise RuntimeError("the reference server did not start in time")
            time.sleep(0.005)

    def _uvicorn(self, certs: Any) -> _Server:
        cfg = self.config
        uv_config = uvicorn.Config(
            self.app,
            ssl_certfile=certs.cert_path,
            ssl_keyfile=certs.key_path,
            loop="uvloop",
            http="httptools",
            ws="none",
            lifespan="off",
            log_config=None,
            log_level="error",
            access_log=cfg.access_log,
            timeout_graceful_shutdown=cfg.shutdown_grace,
            timeout_keep_alive=30,
            server_header=False,
        )
        server = _Server(uv_config)
        server.grace = cfg.shutdown_grace
        return server

    def stop(self) -> None:
        with self._lock:
            self._cleanup()

    def _cleanup(self) -> None:
        server, thread = self._server, self._thread
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=self.config.shutdown_grace + 10)
        self._server = None
        self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    @property
    def inflight(self) -> int:
        """Requests the server is working on now (each is one task)."""
        server = self._server
        return server.inflight if server is not None else 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
