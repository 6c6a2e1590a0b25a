"""The embedded default target: the reference server in a child process.

A child process, not a thread: the server gets its own interpreter (and core),
so the suite's own work cannot skew the timing it measures (the 15 s ping),
and it is reached over a real socket like any other target. It stops when the
runner closes its stdin, so it never outlives a runner that dies.
"""
from __future__ import annotations

import json
import selectors
import subprocess
import sys
from typing import Any

START_TIMEOUT = 20.0


class EmbeddedServer:
    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.facts: dict[str, Any] = {}

    def start(self) -> dict[str, Any]:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance", "serve", "--json", "--port", "0", "--until-stdin-closes"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(START_TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            err = self.proc.stderr.read1(4000).decode(errors="replace") if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"the embedded reference server did not start within {START_TIMEOUT:g} s {err}".strip())
        self.facts = json.loads(line)
        return self.facts

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        self.proc = None
