"""Headless Chromium driven over the DevTools protocol: load a page, collect what its console and network saw,
evaluate script in it, take a screenshot. Debian's `chromium` (CI installs it, .ci/run); no playwright."""
from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--mute-audio", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0")
#: where screenshots are kept: reports/ of the checkout (gitignored; CI keeps it as an artifact)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "reports" / "screenshots"


def executable() -> str:
    """The browser, or the test skips: without root CI cannot install it (.ci/run says so)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium, as root): the browser check cannot run")
    return exe


class Browser:
    """One headless Chromium with a fresh profile, and one page of it over a DevTools WebSocket."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 1000):
        from websockets.sync.client import connect   # uvicorn[standard]'s WebSocket library

        profile.mkdir(parents=True, exist_ok=True)
        (profile / "DevToolsActivePort").unlink(missing_ok=True)    # a profile used before: not its old port
        self.width, self.height = width, height
        self.proc = subprocess.Popen([executable(), *FLAGS, f"--user-data-dir={profile}",
                                      f"--window-size={width},{height}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)   # its own process group: its helpers end with it
        try:
            port = self._port(profile / "DevToolsActivePort")
            pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
            url = next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")
            self.stack = contextlib.ExitStack()
            self.ws = self.stack.enter_context(connect(url, max_size=None, open_timeout=10))
        except BaseException:
            self.close()
            raise
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _port(self, marker: Path, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.proc.returncode}")
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """A DevTools command's result; events that arrive meanwhile are kept in `events`."""
        n = next(self.ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def load(self, url: str, timeout: float = 60) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(msg)
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")   # laid out

    def evaluate(self, expression: str) -> Any:
        got = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in got:
            raise RuntimeError(f"script failed: {got['exceptionDetails']}")
        return got["result"].get("value")

    def console_errors(self) -> list[str]:
        """Every error the page's console would show: uncaught exceptions, console.error, and the browser's own
        (a resource that failed to load, a blocked request, a CSP violation)."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params") or {}
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails"))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(json.dumps(params.get("args"))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(str(params["entry"].get("text"))[:500])
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, max_height: int = 4000) -> Path:
        """The page from its top, as wide as the window and as tall as the page (at most `max_height`)."""
        height = min(max_height, int(self.evaluate("document.documentElement.scrollHeight")))
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self) -> None:
        stack = getattr(self, "stack", None)
        if stack is not None:
            try:
                stack.close()
            except Exception:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:     # the renderer and other helpers of this browser, in the process group it was started in
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
