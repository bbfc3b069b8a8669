"""Web pages in headless Chromium, for the tests of the displays' pages (and ``bench/``):
:class:`Chromium` drives one page over the DevTools protocol on ``--remote-debugging-pipe``
(file descriptors 3 and 4, NUL-separated JSON), so no extra Python package is needed, and a
test can wait for what the page shows (``--virtual-time-budget`` does not wait for a stream);
:func:`served_page` runs a ``referee`` command that serves a page as its own process.
The fixtures ``chromium`` and ``open_chromium`` (``tests/cardtable/conftest.py``) give a
test its browser.

Without Chromium (Debian package ``chromium``) a test that asks for it is skipped, unless ``CI``
is set: then it fails. Set ``REFEREE_SCREENSHOTS=DIR`` to keep the screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: The repository's root (where ``python -m cardtable.cli`` finds the package).
ROOT = Path(__file__).resolve().parents[1]
# What Chromium answers an evaluate sent while a page navigates.
NAVIGATING = ("Inspected target navigated or closed", "Execution context was destroyed",
              "Cannot find context with specified id")


def chromium_binary() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        reason = "chromium is not installed (Debian package 'chromium'; bash .ci/provision)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; .ci/run must install it")
        pytest.skip(reason)
    return path


class Chromium:
    """Headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, binary: str, profile: Path, width: int = 1280, height: int = 720) -> None:
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        # bash (not dash) can redirect descriptors above 9 onto 3 and 4.
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}',
             binary, *args],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  page=True)

    def call(self, method: str, params: dict[str, Any] | None = None, *, page: bool = False,
             timeout: float = 15.0) -> dict[str, Any]:
        """Send one DevTools command and return its result."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                obj = json.loads(raw)
                if obj.get("id") == self._id:
                    if "error" in obj:
                        raise RuntimeError(f"{method}: {obj['error']}")
                    return obj.get("result", {})
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"chromium did not answer {method}")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk

    def goto(self, url: str) -> None:
        """Open ``url`` in the page."""
        self.call("Page.enable", page=True)
        self.call("Page.navigate", {"url": url}, page=True)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, page=True)
        return result["result"].get("value")

    def _js_unless_navigating(self, expression: str) -> Any:
        """``js``, but falsy while the page is between documents (a click that navigates)."""
        try:
            return self.js(expression)
        except RuntimeError as e:
            # Chromium refuses an evaluate that lands while the old document goes.
            if any(m in str(e) for m in NAVIGATING):
                return None
            raise

    def wait(self, expression: str, timeout: float = 10.0) -> float:
        """Wait until the expression is truthy in the page; the seconds it took."""
        t0 = time.monotonic()
        while not self._js_unless_navigating(expression):
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"page never satisfied {expression!r}; it shows:\n"
                                     f"{self.js('document.body.innerText')}")
            time.sleep(0.02)
        return time.monotonic() - t0

    def screenshot(self, path: Path) -> bytes:
        """Save a PNG of the page to ``path`` (and to $REFEREE_SCREENSHOTS if set)."""
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"},
                                          page=True)["data"])
        path.write_bytes(data)
        keep = os.environ.get("REFEREE_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return data

    def close(self) -> None:
        """Close the browser."""
        try:
            self.call("Browser.close", timeout=3)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@contextlib.contextmanager
def served_page(*args: str) -> Iterator[str]:
    """``referee <args>`` (a command that serves a page on ``--port 0`` and prints its
    address first) as its own process; yields the page's address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, line + (proc.stderr.read() if proc.stderr else "")
        yield match.group(0)
    finally:
        proc.terminate()
        proc.wait(5)
