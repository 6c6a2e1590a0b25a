"""``conformance serve``: run the reference server alone until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from .config import SANDBOX_RATE_LIMIT, ServerConfig, rate_limit_fields
from .runner import ReferenceServer

_FACT_LABELS = [
    ("base_url", "Base URL"),
    ("agent_id", "Conformance agent id"),
    ("agent_slug", "Conformance agent slug"),
    ("tool_name", "MCP tool"),
    ("other_agent_id", "Second deployed agent id"),
    ("undeployed_agent_id", "Suspended agent id"),
    ("api_key", "API key"),
    ("access_token", "Access token (bound to the conformance agent)"),
    ("revoked_key", "Revoked API key"),
    ("expired_token", "Expired access token"),
    ("auth_url", "Authorization server"),
    ("extra_data_field", "Invoke extra data field"),
    ("ca_bundle", "CA bundle"),
]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="conformance serve", description="Run the reference server (a local sandbox).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    p.add_argument("--json", action="store_true", help="print one JSON line with the server's facts once ready")
    p.add_argument("--seed", type=int, default=None, help="deterministic ids and credentials")
    p.add_argument("--cert-dir", default=None, help="where to write the CA and server certificate")
    p.add_argument("--auth-url", default=None, help="the authorization server the metadata names")
    p.add_argument("--ping-interval", type=float, default=15.0)
    p.add_argument("--extra-data-field", default="data")
    p.add_argument("--rate-limit", default=None, metavar="N/SECONDS",
                   help="a bucket of N requests refilled over SECONDS, e.g. 20/10 or 20/10s (also N/s, N/m, N/h); "
                        f"default {SANDBOX_RATE_LIMIT}")
    p.add_argument("--rate-limit-burst", type=int, default=None, help="requests in the burst allowance")
    p.add_argument("--rate-limit-per-second", type=float, default=None, help="refill rate of the allowance")
    p.add_argument("--http2", action="store_true",
                   help="serve HTTP/2 as well as HTTP/1.1, chosen by ALPN (on Hypercorn; default: HTTP/1.1 only, "
                        "on uvicorn)")
    p.add_argument("--until-stdin-closes", action="store_true",
                   help="also stop when standard input closes (a parent process that dies takes the server along)")
    return p


def _stop_on_stdin_eof(stop: threading.Event) -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        stop.set()

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def _rate_limits(args: argparse.Namespace) -> dict[str, float]:
    """ServerConfig's bucket from --rate-limit N/SECONDS or --rate-limit-burst / --rate-limit-per-second."""
    if args.rate_limit is not None:
        if args.rate_limit_burst is not None or args.rate_limit_per_second is not None:
            raise ValueError("--rate-limit cannot be combined with --rate-limit-burst / --rate-limit-per-second")
        return rate_limit_fields(args.rate_limit)
    if args.rate_limit_burst is None and args.rate_limit_per_second is None:
        return rate_limit_fields(SANDBOX_RATE_LIMIT)
    return {k: v for k, v in (("rate_limit_burst", args.rate_limit_burst),
                              ("rate_limit_per_second", args.rate_limit_per_second)) if v is not None}


def serve_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print("conformance serve: --port must be 0..65535", file=sys.stderr)
        return 2
    try:
        limits = _rate_limits(args)
    except ValueError as exc:
        print(f"conformance serve: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(host=args.host, port=args.port, seed=args.seed, cert_dir=args.cert_dir,
                          auth_url=args.auth_url, ping_interval=args.ping_interval,
                          extra_data_field=args.extra_data_field, http2=args.http2, **limits)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = ReferenceServer(config)
    if args.until_stdin_closes:
        _stop_on_stdin_eof(stop)
    try:
        try:
            server.start()
        except OSError as exc:
            print(f"conformance serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(server.facts, separators=(",", ":")), flush=True)
        else:
            width = max(len(label) for _, label in _FACT_LABELS)
            versions = "HTTP/2 and HTTP/1.1 by ALPN" if args.http2 else "HTTP/1.1"
            print(f"Reference server ready over {versions} (a local sandbox: these credentials are for testing only).")
            for key, label in _FACT_LABELS:
                print(f"  {label:<{width}}  {server.facts[key]}")
            print("Press Ctrl+C to stop.", flush=True)
        while not stop.wait(0.5):
            if not server.running:
                print("conformance serve: the server stopped unexpectedly", file=sys.stderr)
                return 1
        return 0
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main() -> None:
    raise SystemExit(serve_main(sys.argv[1:]))
