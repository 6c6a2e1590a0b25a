"""The embedded default target: the reference server in a child process.

A child process, not a thread: the server gets its own interpreter (and core),
so the suite's own work cannot skew the timing it measures (the 15 s ping),
and it is reached over a real socket like any other target. It stops when the
runner closes its stdin, so it never outlives a runner that dies.

`launch()` returns at once, so the server boots while the suite loads its checks; `facts()` waits for its line.
`stop()` closes its stdin and does not wait: the server shuts down while the reports are written, and
`wait_stopped()` (the `conformance` command, just before it exits) reaps it, so no server outlives the command.
"""
from __future__ import annotations

import json
import selectors
import subprocess
import sys
import threading
import time
from typing import Any

START_TIMEOUT = 20.0
STOP_GRACE = 5.0     # after stdin closed: then the child is killed (by a daemon thread nobody waits for)


class EmbeddedServer:
    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self._facts: dict[str, Any] | None = None

    def launch(self) -> None:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "conformance", "serve", "--json", "--port", "0", "--until-stdin-closes"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def facts(self) -> dict[str, Any]:
        """The server's facts (its `serve --json` line), once it is ready."""
        if self._facts is not None:
            return self._facts
        self.launch()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(START_TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            err = self.proc.stderr.read1(4000).decode(errors="replace") if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"the embedded reference server did not start within {START_TIMEOUT:g} s {err}".strip())
        self._facts = json.loads(line)
        return self._facts

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        reaper = threading.Thread(target=_reap, args=(proc,), name="conformance-embedded-stop", daemon=True)
        reaper.start()
        _REAPERS.append(reaper)


_REAPERS: list[threading.Thread] = []


def wait_stopped(timeout: float = STOP_GRACE) -> None:
    """Waits (at most `timeout` seconds in all) for every embedded server stopped so far to have ended."""
    end = time.monotonic() + timeout
    for reaper in _REAPERS:
        reaper.join(max(0.0, end - time.monotonic()))


def _reap(proc: subprocess.Popen) -> None:
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(STOP_GRACE)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
