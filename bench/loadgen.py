"""A small HTTPS keep-alive load generator (a separate process from the server under test).

    python bench/loadgen.py URL --header 'Authorization: Bearer …' --body '{"prompt":"say hi"}'
        [--concurrency 16] [--duration 10] [--first-byte MARKER] [--cafile PEM]

Each connection sends one request at a time (no pipelining) and reads the whole
response (Content-Length or chunked). Prints one JSON line: requests, errors,
rps, p50_ms, p90_ms, p99_ms. With ``--first-byte MARKER`` the latency is the
time until MARKER first appears in the response (e.g. the first ``data:`` of an
event stream), not until the response ends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import time
from urllib.parse import urlsplit


def build_request(url: str, headers: list[str], body: bytes) -> tuple[str, int, bytes]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 443
    lines = [f"POST {parts.path or '/'} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *headers]
    return host, port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_response(reader: asyncio.StreamReader, marker: bytes | None, t0: float) -> tuple[int, float | None]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    first: float | None = None
    lower = head.lower()
    if b"content-length:" in lower:
        length = int(lower.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        body = await reader.readexactly(length)
        if marker is not None and marker in body:
            first = time.perf_counter() - t0
        return status, first
    # chunked
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        chunk = await reader.readexactly(size + 2)
        if first is None and marker is not None and marker in chunk:
            first = time.perf_counter() - t0
        if size == 0:
            return status, first


async def worker(host, port, request, ctx, deadline, lat, errs, marker, max_requests):
    reader, writer = await asyncio.open_connection(host, port, ssl=ctx, server_hostname=host)
    try:
        while time.perf_counter() < deadline and (max_requests is None or len(lat) < max_requests):
            t0 = time.perf_counter()
            writer.write(request)
            status, first = await read_response(reader, marker, t0)
            elapsed = time.perf_counter() - t0
            if status != 200:
                errs.append(status)
            lat.append(first if marker is not None and first is not None else elapsed)
    finally:
        writer.close()


def pct(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))] * 1000


async def main_async(args) -> dict:
    ctx = ssl.create_default_context(cafile=args.cafile) if args.cafile else ssl._create_unverified_context()
    host, port, request = build_request(args.url, args.header, args.body.encode())
    marker = args.first_byte.encode() if args.first_byte else None
    lat: list[float] = []
    errs: list[int] = []
    # warm-up: connect and send one request per connection
    deadline = time.perf_counter() + args.duration
    t0 = time.perf_counter()
    await asyncio.gather(*[worker(host, port, request, ctx, deadline, lat, errs, marker, args.max_requests)
                           for _ in range(args.concurrency)])
    wall = time.perf_counter() - t0
    lat.sort()
    return {"requests": len(lat), "errors": len(errs), "seconds": round(wall, 2), "rps": round(len(lat) / wall, 1),
            "p50_ms": round(pct(lat, 50), 2), "p90_ms": round(pct(lat, 90), 2), "p99_ms": round(pct(lat, 99), 2)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--body", default="{}")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--max-requests", type=int, default=None)
    p.add_argument("--first-byte", default=None)
    p.add_argument("--cafile", default=None)
    args = p.parse_args()
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    print(json.dumps(asyncio.run(main_async(args))), flush=True)


if __name__ == "__main__":
    sys.exit(main())
