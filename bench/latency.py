"""A round trip on loopback for the benches: a delay line between the suite and a reference server.

The suite must reach the server at the very address the server names in its answers (its metadata's `resource`, the
challenge's `resource_metadata`), so the delay cannot sit on another port. It runs in a network namespace of its own
(root only; nothing outside it is touched): there the proxy listens on the server's address and port and forwards,
each chunk `delay` seconds late in each direction, over a Unix socket to a forwarder in the bench's own namespace that
connects to the server. `ip netns exec` runs the suite inside that namespace.

    python bench/latency.py proxy --listen 127.0.0.1:8443 --unix /tmp/x.sock --delay-ms 150
"""
from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CHUNK = 65536


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copies bytes in order, each chunk leaving `delay` seconds after it arrived (a delay line, not a stop-and-wait:
    a stream's chunks keep their spacing)."""
    line: asyncio.Queue = asyncio.Queue()

    async def out() -> None:
        while True:
            due, data = await line.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(out())
    try:
        while data := await reader.read(CHUNK):
            line.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    line.put_nowait((0.0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def _bridge(a: tuple, b: tuple, delay: float) -> None:
    await asyncio.gather(_pump(a[0], b[1], delay), _pump(b[0], a[1], delay), return_exceptions=True)


async def proxy(listen: str, unix: str, delay: float) -> None:
    host, port = listen.rsplit(":", 1)

    async def accept(reader, writer) -> None:
        try:
            upstream = await asyncio.open_unix_connection(unix)
        except OSError:
            writer.close()
            return
        await _bridge((reader, writer), upstream, delay)

    server = await asyncio.start_server(accept, host, int(port))
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


class Forwarder:
    """A Unix socket that forwards to host:port, in a thread of the bench (the server's namespace)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.path = os.path.join(tempfile.mkdtemp(prefix="conformance-latency-"), "s.sock")
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def accept(reader, writer) -> None:
            try:
                upstream = await asyncio.open_connection(self.host, self.port)
            except OSError:
                writer.close()
                return
            await _bridge((reader, writer), upstream, 0.0)

        async def main() -> None:
            server = await asyncio.start_unix_server(accept, self.path)
            self._ready.set()
            async with server:
                await server.serve_forever()

        self._loop.run_until_complete(main())


class Namespace:
    """A network namespace with loopback up, the delay proxy listening in it on `listen`, `rtt_ms` round trip."""

    def __init__(self, name: str, listen: str, unix: str, rtt_ms: float) -> None:
        self.name, self.listen, self.unix, self.rtt_ms = name, listen, unix, rtt_ms
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Namespace":
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        subprocess.run(["ip", "-n", self.name, "link", "set", "lo", "up"], check=True)
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.name, sys.executable, str(Path(__file__).resolve()), "proxy", "--listen",
             self.listen, "--unix", self.unix, "--delay-ms", str(self.rtt_ms / 2)], stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the latency proxy did not start")
        return self

    def command(self, cmd: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *cmd]

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
        subprocess.run(["ip", "netns", "del", self.name], check=False)


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    px = sub.add_parser("proxy")
    px.add_argument("--listen", required=True)
    px.add_argument("--unix", required=True)
    px.add_argument("--delay-ms", type=float, required=True, help="each direction")
    opts = p.parse_args()
    asyncio.run(proxy(opts.listen, opts.unix, opts.delay_ms / 1000))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
