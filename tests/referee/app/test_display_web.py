"""The browser display in headless Chromium against the real broker, with screenshots.

Chromium is driven over the DevTools protocol on ``--remote-debugging-pipe`` (file descriptors
3 and 4, NUL-separated JSON), so no extra Python package is needed, and the test can wait for the
page's websocket traffic (``--virtual-time-budget`` does not wait for websockets).

Without Chromium (Debian package ``chromium``) the test is skipped, unless ``CI`` is set: then it
fails. Set ``REFEREE_SCREENSHOTS=DIR`` to keep the screenshots.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.app.display.web import start_web_server, web_config
from referee.app.feed import FeedThread, TableFeed, parse_broker_url
from tests.broker import Broker

NAMES = ["Anna", "Bo", "Cia", "Dag"]


def chromium_binary() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium"
                                        if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        reason = "chromium is not installed (Debian package 'chromium')"
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

    def wait(self, expression: str, timeout: float = 10.0) -> float:
        """Wait until the expression is truthy in the page; the seconds it took."""
        t0 = time.monotonic()
        while not self.js(expression):
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


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Chromium]:
    browser = Chromium(chromium_binary(), tmp_path / "profile")
    try:
        yield browser
    finally:
        browser.close()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def wait_flushed(feed: TableFeed) -> None:
    deadline = time.monotonic() + 5
    while feed._state_dirty or feed._events:
        assert time.monotonic() < deadline, "the feed did not publish"
        time.sleep(0.01)
    time.sleep(0.05)


STATE = {
    "game": "banka-bever", "counts": [17, 15, 12, 6], "pile": ["2C", "5S", "9D", "QH"],
    "bottom": "7S", "turn": 1, "challenge": {"by": 2, "seat": 1, "owes": 2}, "claim": None,
    "out": [], "over": False, "winners": None, "cards_played": 12, "tricks": 1,
}


def test_browser_display_follows_the_table(mosquitto: Broker, chromium: Chromium,
                                           tmp_path: Path) -> None:
    feed = TableFeed(mosquitto.url(), "t1", seats=NAMES)
    thread = FeedThread(feed)
    thread.start()
    server, web = start_web_server(
        "127.0.0.1", 0, web_config("t1", parse_broker_url(mosquitto.url("display", ws=True))))
    try:
        deadline = time.monotonic() + 5
        while not feed.connected:
            assert time.monotonic() < deadline, "feed did not connect"
            time.sleep(0.01)
        feed.publish(dict(STATE, challenge=None, pile=["2C", "5S", "9D"], turn=2),
                     [{"t": 1, "verdict": "false_slap", "seat": 3}])
        feed.publish(STATE, [{"t": 2, "verdict": "challenge", "by": 2, "seat": 1, "owes": 2}])
        wait_flushed(feed)

        # The page joins mid-game and shows the whole table at once.
        chromium.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        took = chromium.wait("document.body.dataset.seq === '2'")
        print(f"page showed the table {took * 1000:.0f} ms after opening")
        text = chromium.js("document.body.innerText")
        assert "Banka bäver" in text and "table t1" in text
        assert "Bo to play" in text
        assert "Bo owes 2 cards to Cia" in text
        assert "Bottom card: 7♠" in text and "Pile (4 cards)" in text
        assert "Cia challenges: Bo owes 2 cards" in text  # the last verdict
        assert "Dag slapped falsely" in text  # the one before
        assert chromium.js("[...document.querySelectorAll('.card')].map(c => c.innerText"
                           ".replace(/\\s+/g, ''))") == ["5♠", "9♦", "Q♥"]
        assert chromium.js("[...document.querySelectorAll('.seat .count')].map(e => "
                           "e.textContent)") == ["17", "15", "12", "6"]
        assert chromium.js("document.querySelector('.seat.turn .name').textContent") == "Bo"
        assert chromium.js("document.getElementById('banner').hidden") is True
        # Readable from across a table: the turn line is large.
        assert chromium.js("parseFloat(getComputedStyle(document.getElementById('turn'))"
                           ".fontSize)") >= 48
        shot = chromium.screenshot(tmp_path / "display-challenge.png")
        assert png_size(shot) == (1280, 720) and len(shot) > 10_000

        # It follows the game live.
        feed.publish(dict(STATE, challenge=None, pile=[], counts=[17, 15, 18, 6], turn=2),
                     [{"t": 3, "verdict": "pile_won", "seat": 2, "reason": "double",
                       "cards": 6}])
        chromium.wait("document.body.dataset.seq === '3'")
        text = chromium.js("document.body.innerText")
        assert "Cia slapped a double and takes the pile (6 cards)" in text
        assert "owes" not in text.split("Cia slapped")[0]

        # The broker restarts: the page shows it lost the connection, then is whole again.
        mosquitto.stop()
        chromium.wait("document.body.dataset.connected === 'false'")
        assert "Connecting" in chromium.js("document.getElementById('banner').textContent")
        ready = mosquitto.start()
        chromium.wait("document.body.dataset.connected === 'true' && "
                      "document.body.dataset.status === 'online' && "
                      "document.getElementById('seats').children.length === 4")
        print(f"page whole again {(time.monotonic() - ready) * 1000:.0f} ms after the "
              "broker's return")
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"]), [])
        chromium.wait("document.body.dataset.seq === '4'")

        # Table alerts from the state: the board offline, a stuck button.
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"],
                          alerts={"board": "offline", "stuck": []}), [])
        chromium.wait("document.body.dataset.seq === '5'")
        assert chromium.js("document.getElementById('banner').textContent") == (
            "TABLE BOARD OFFLINE")
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"],
                          alerts={"board": "online", "stuck": [{"seat": 1, "button": "slap"}]}),
                     [])
        chromium.wait("document.body.dataset.seq === '6'")
        assert chromium.js("document.getElementById('banner').textContent") == (
            "Bo: slap button stuck")

        # The referee exits: the page says so in a banner and keeps the last state.
        thread.close()
        chromium.wait("document.body.dataset.status === 'offline'")
        assert chromium.js("document.getElementById('banner').textContent") == "REFEREE OFFLINE"
        assert "Dag to play" in chromium.js("document.body.innerText")
        shot = chromium.screenshot(tmp_path / "display-offline.png")
        assert png_size(shot) == (1280, 720)
    finally:
        thread.close()
        server.shutdown()
        server.server_close()
        web.join(5)


def test_browser_display_with_wrong_password_says_so(mosquitto: Broker, chromium: Chromium
                                                     ) -> None:
    ws = parse_broker_url(f"ws://display:wrong@127.0.0.1:{mosquitto.ws_port}/mqtt")
    server, web = start_web_server("127.0.0.1", 0, web_config("t1", ws))
    try:
        chromium.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        chromium.wait("document.getElementById('banner').textContent"
                      ".includes('refused the connection')")
        assert chromium.js("document.body.dataset.connected") == "false"
    finally:
        server.shutdown()
        server.server_close()
        web.join(5)
