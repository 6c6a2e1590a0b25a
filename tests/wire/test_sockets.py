"""The recorder pool's network streams answer 'readable' as httpcore's own do: not while an idle connection is open,
yes once the server closed it (so httpcore drops it rather than sending on it)."""

from __future__ import annotations

import asyncio

import httpcore

from conformance.wire import sockets


def test_an_idle_connection_is_readable_once_the_server_closes_it():
    async def scenario():
        closed = asyncio.Event()
        close_now = asyncio.Event()

        async def handler(reader, writer):
            await close_now.wait()
            writer.close()
            closed.set()

        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            stream = await sockets.Backend().connect_tcp("127.0.0.1", port, timeout=5)
            before = stream.get_extra_info("is_readable")
            close_now.set()
            await closed.wait()
            for _ in range(100):
                if stream.get_extra_info("is_readable"):
                    break
                await asyncio.sleep(0.01)
            after = stream.get_extra_info("is_readable")
            assert stream.get_extra_info("socket") is not None
            await stream.aclose()
            return before, after, stream.get_extra_info("is_readable")

    before, after, gone = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert (before, after, gone) == (False, True, True)


def test_the_transport_builds_its_connections_on_the_backend():
    made = sockets.transport(http2=False)
    assert isinstance(made._pool, httpcore.AsyncConnectionPool)
    assert isinstance(made._pool._network_backend, sockets.Backend)
