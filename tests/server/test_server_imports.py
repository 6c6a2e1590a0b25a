"""The reference server starts in a child process of every default run: what it imports is paid on each run."""
import subprocess
import sys


def test_the_server_loads_no_http_client():
    """It reads only the wire layer's pacing: importing it must not load httpx, httpcore or h11."""
    code = ("import sys, conformance.server, conformance.cli; "
            "print([m for m in ('httpx', 'httpcore', 'h11', 'conformance.wire.http') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_wire_layer_still_names_its_parts():
    code = "from conformance.wire import Client, Exchange, parse_sse, MASK; print(Exchange.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "conformance.wire.exchange"
