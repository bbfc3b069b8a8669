"""The browser display in headless Chromium against the real broker, with screenshots.

``referee display --web`` runs as a separate process, the MQTT client over TCP; the page follows
the server-sent events it streams. Chromium is driven over the DevTools protocol on
``--remote-debugging-pipe`` (:mod:`tests.web_pages`; the fixture ``chromium`` is in
``conftest.py``), so no extra Python package is needed, and the test can wait for what the page
shows (``--virtual-time-budget`` does not wait for a stream).

Without Chromium (Debian package ``chromium``) the test is skipped, unless ``CI`` is set: then it
fails. Set ``REFEREE_SCREENSHOTS=DIR`` to keep the screenshots.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardtable.feed import FeedThread, TableFeed
from tests.broker import Broker
from tests.web_pages import Chromium, png_size, served_page

NAMES = ["Anna", "Bo", "Cia", "Dag"]


def wait_flushed(feed: TableFeed) -> None:
    deadline = time.monotonic() + 5
    while feed._state_dirty or feed._events:
        assert time.monotonic() < deadline, "the feed did not publish"
        time.sleep(0.01)
    time.sleep(0.05)


def web_display(broker_url: str, table: str) -> contextlib.AbstractContextManager[str]:
    """``referee display --web --port 0`` as its own process; yields the page's address."""
    return served_page("display", "--web", "--port", "0", "--table", table,
                       "--broker", broker_url)


@contextlib.contextmanager
def feed_thread(broker: Broker, table: str, seats: list[str]) -> Iterator[TableFeed]:
    feed = TableFeed(broker.url(), table, seats=seats)
    thread = FeedThread(feed)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while not feed.connected:
            assert time.monotonic() < deadline, "feed did not connect"
            time.sleep(0.01)
        yield feed
    finally:
        thread.close()


def served_text(base: str) -> str:
    """Everything the page loads from the display (its files and what they fetch)."""
    out = []
    for name in ("", "index.html", "display.js", "style.css", "scene.json"):
        with urllib.request.urlopen(base + name) as r:
            out.append(r.read().decode())
    return "\n".join(out)


STATE = {
    "game": "banka-bever", "counts": [17, 15, 12, 6], "pile": ["2C", "5S", "9D", "QH"],
    "bottom": "7S", "turn": 1, "challenge": {"by": 2, "seat": 1, "owes": 2}, "claim": None,
    "out": [], "over": False, "winners": None, "cards_played": 12, "tricks": 1,
}


@pytest.mark.slow
def test_browser_display_follows_the_table(mosquitto: Broker, chromium: Chromium,
                                           tmp_path: Path) -> None:
    with feed_thread(mosquitto, "t1", NAMES) as feed, \
            web_display(mosquitto.url("display"), "t1") as page:
        feed.publish(dict(STATE, challenge=None, pile=["2C", "5S", "9D"], turn=2),
                     [{"t": 1, "verdict": "false_slap", "seat": 3}])
        feed.publish(STATE, [{"t": 2, "verdict": "challenge", "by": 2, "seat": 1, "owes": 2}])
        wait_flushed(feed)

        # The page joins mid-game and shows the whole table at once.
        chromium.goto(page)
        took = chromium.wait("document.body.dataset.seq === '2'")
        print(f"page showed the table {took * 1000:.0f} ms after opening")
        text = chromium.js("document.body.innerText")
        assert "Banka bäver" in text and "table t1" in text
        assert "Bo to play" in text
        assert "Bo owes 2 more cards to Cia" in text
        assert "Bottom card: 7♠" in text and "Pile (4 cards)" in text
        assert "Cia challenges: Bo owes 2 cards" in text  # the last verdict
        assert "Dag slapped falsely" in text  # the one before
        assert chromium.js("[...document.querySelectorAll('.card')].map(c => c.innerText"
                           ".replace(/\\s+/g, ''))") == ["5♠", "9♦", "Q♥"]
        assert chromium.js("[...document.querySelectorAll('.seat .count')].map(e => "
                           "e.textContent)") == ["17", "15", "12", "6"]
        assert chromium.js("document.querySelector('.seat.turn .name').textContent") == "Bo"
        assert chromium.js("document.getElementById('banners').children.length") == 0
        # Readable from across a table: the turn line is large.
        assert chromium.js("parseFloat(getComputedStyle(document.getElementById('turn'))"
                           ".fontSize)") >= 48
        shot = chromium.screenshot(tmp_path / "display-challenge.png")
        assert png_size(shot) == (1280, 720) and len(shot) > 10_000

        # It follows the game live.
        t0 = time.monotonic()
        feed.publish(dict(STATE, challenge=None, pile=[], counts=[17, 15, 18, 6], turn=2),
                     [{"t": 3, "verdict": "pile_won", "seat": 2, "reason": "double",
                       "cards": 6}])
        chromium.wait("document.body.dataset.seq === '3'")
        print(f"a change reached the page {(time.monotonic() - t0) * 1000:.0f} ms after "
              "publish() (broker, display, stream, polled every 20 ms)")
        text = chromium.js("document.body.innerText")
        assert "Cia slapped a double and takes the pile (6 cards)" in text
        assert "owes" not in text.split("Cia slapped")[0]

        # The broker goes away: the page says so, and that what it shows may be out of date.
        mosquitto.stop()
        chromium.wait("document.body.dataset.connected === 'false'")
        banner = chromium.js("document.getElementById('banners').textContent")
        assert "No connection to the broker" in banner and "may be out of date" in banner
        assert chromium.js("document.body.classList.contains('stale')") is True
        assert "Cia to play" in chromium.js("document.body.innerText")  # the last known table
        shot = chromium.screenshot(tmp_path / "display-broker-down.png")
        ready = mosquitto.start()
        chromium.wait("document.body.dataset.connected === 'true' && "
                      "document.body.dataset.status === 'online' && "
                      "document.getElementById('seats').children.length === 4")
        print(f"page whole again {(time.monotonic() - ready) * 1000:.0f} ms after the "
              "broker's return")
        assert chromium.js("document.body.classList.contains('stale')") is False
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"]), [])
        chromium.wait("document.body.dataset.seq === '4'")

        # Table alerts from the state: the board offline, a stuck button.
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"],
                          alerts={"board": "offline", "stuck": []}), [])
        chromium.wait("document.body.dataset.seq === '5'")
        assert chromium.js("document.getElementById('banners').textContent") == (
            "TABLE BOARD OFFLINE: the game waits for it")
        feed.publish(dict(STATE, turn=3, challenge=None, pile=["AH"],
                          alerts={"board": "online", "stuck": [{"seat": 1, "button": "slap"}]}),
                     [])
        chromium.wait("document.body.dataset.seq === '6'")
        assert chromium.js("document.getElementById('banners').textContent") == (
            "Bo's slap button is stuck: ignored until released")

    # The referee has exited (its feed published offline) and so has the display: the page
    # says both and keeps the last state.
    chromium.wait("document.body.dataset.link === 'lost'")
    text = chromium.js("document.getElementById('banners').textContent")
    assert "No connection to the display" in text
    assert "Dag to play" in chromium.js("document.body.innerText")


@pytest.mark.slow
def test_browser_display_needs_no_websockets_listener(mosquitto_factory: Any,
                                                      chromium: Chromium,
                                                      tmp_path: Path) -> None:
    """Issue 10.11: against a Mosquitto with only its plain MQTT listener the page shows the
    table; nothing the page loads holds a broker password."""
    broker = mosquitto_factory()
    assert broker.config is not None
    conf = broker.config.read_text()
    conf = conf.replace(f"listener {broker.ws_port} 127.0.0.1\nprotocol websockets\n", "")
    assert "websockets" not in conf
    broker.config.write_text(conf)
    broker = dataclasses.replace(broker, ws_port=broker.port)  # nothing else to wait for
    broker.start()
    try:
        with feed_thread(broker, "plain", NAMES) as feed, \
                web_display(broker.url("display"), "plain") as page:
            feed.publish(STATE, [{"t": 2, "verdict": "challenge", "by": 2, "seat": 1,
                                  "owes": 2}])
            wait_flushed(feed)
            chromium.goto(page)
            chromium.wait("document.body.dataset.seq === '1'")
            assert "Bo to play" in chromium.js("document.body.innerText")
            served = served_text(page)
            for password in broker.passwords.values():
                assert password not in served
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(page + "mqtt-lite.js")
            chromium.screenshot(tmp_path / "display-plain-broker.png")
    finally:
        broker.stop()


@pytest.mark.slow
def test_browser_display_with_wrong_password_says_so(mosquitto: Broker, chromium: Chromium
                                                     ) -> None:
    url = f"mqtt://display:wrong@127.0.0.1:{mosquitto.port}"
    with web_display(url, "t1") as page:
        chromium.goto(page)
        chromium.wait("document.getElementById('banners').textContent"
                      ".includes('refused by the broker: not authorized')")
        assert chromium.js("document.body.dataset.connected") == "false"
        assert chromium.js("document.body.dataset.link") == "open"


# ------------------------------------------------------------------ layout (issue 10.14)

SEAT_NAMES = ["Anna", "Bo", "Cia", "Dag", "Eva", "Fredrik", "Gun", "Hanna"]
VIEWPORTS = [(1280, 800), (1920, 1080), (768, 1024)]


def banka_scene(n: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Changes of an n-seat Banka bäver game: Gun (or the last seat) to play, a challenge,
    the pile won, and a late slap judged in a change of its own, as the referee does."""
    turn = min(6, n - 1)
    counts = [9, 8, 7, 6, 5, 4, 3, 2][:n]
    state = {"game": "banka-bever", "counts": counts, "pile": ["2C", "5S", "7D", "QH"],
             "bottom": "9H", "turn": turn, "challenge": None, "claim": None, "out": [],
             "over": False, "winners": None, "cards_played": 30, "tricks": 2}
    return [
        (dict(state, turn=0), [{"t": 1, "verdict": "false_slap", "seat": 1}]),
        (dict(state, turn=0), [{"t": 2, "verdict": "illegal", "seat": 1,
                                "code": "not_your_turn", "reason": "it is Anna's turn"}]),
        (dict(state, challenge={"by": 0, "seat": turn, "owes": 3}),
         [{"t": 3, "verdict": "challenge", "by": 0, "seat": turn, "owes": 3}]),
        (dict(state, pile=[], counts=[c + (10 if i == turn else 0)
                                      for i, c in enumerate(counts)]),
         [{"t": 4, "verdict": "pile_won", "seat": turn, "reason": "double", "cards": 10}]),
        (dict(state, pile=[], counts=[c + (10 if i == turn else 0)
                                      for i, c in enumerate(counts)]),
         [{"t": 5, "verdict": "slap_lost", "seat": 0, "to": turn}]),
    ]


def vandatta_scene(n: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Changes of an n-seat Vändåtta points game: a round result, a lappen call, and Anna
    laying 9♥ 8♣ (asking for hearts) with Gun (or the last seat) to play next."""
    turn = min(6, n - 1)
    state = {"game": "vandatta", "counts": [4, 5, 6, 4, 3, 7, 5][:n],
             "pile": ["7H", "JH"], "top": "JH", "current": {"suit": "H", "rank": "J"},
             "stock": 20, "must_draw": None, "turn": 0, "round": 3,
             "totals": [40, 105, 70, 10, 0, 25, 30][:n], "called": [0], "out": [],
             "over": False, "winners": None, "cards_played": 30, "tricks": 2, "draws": 0}
    return [
        (dict(state, called=[]), [{"t": 1, "verdict": "round_over", "winner": 0,
                                   "scores": [0, 35, 15, 4, 0, 9, 3][:n],
                                   "totals": [40, 105, 70, 10, 0, 25, 30][:n]}]),
        (state, []),  # Anna calls lappen
        (dict(state, counts=[2] + state["counts"][1:], pile=["7H", "JH", "9H", "8C"],
              top="8C", current={"suit": "H", "rank": "8"}, cards_played=32, turn=turn,
              called=[0]), []),
    ]


def layout(chromium: Chromium) -> dict[str, Any]:
    """Geometry and colours of what the page shows, measured in the page."""
    return chromium.js("""(() => {
      const rect = (e) => e.getBoundingClientRect();
      const lines = (e) => Math.round(rect(e).height / parseFloat(getComputedStyle(e).lineHeight));
      const turn = document.getElementById('turn');
      const visible = [...document.querySelectorAll('#last, #older li, #scores, .seat')]
        .filter((e) => !e.closest('[hidden]'));
      return {
        text: document.body.innerText,
        seatRows: new Set([...document.querySelectorAll('.seat')].map((e) => rect(e).top)).size,
        cutNames: [...document.querySelectorAll('.seat .name')]
          .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent),
        turnLines: lines(turn),
        turnText: turn.textContent,
        lowest: Math.max(...visible.map((e) => rect(e).bottom)),
        height: innerHeight,
        overflow: document.documentElement.scrollWidth > innerWidth,
        suitColours: [...document.querySelectorAll('#bottom .card-text, #match .suit-mark, '
          + '#play .red')].map((e) => [e.textContent, getComputedStyle(e).color]),
        last: document.getElementById('last').textContent,
        older: [...document.querySelectorAll('#older li')].map((e) => e.textContent),
      };
    })()""")


def show(chromium: Chromium, width: int, height: int) -> None:
    chromium.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  page=True)
    chromium.wait(f"innerWidth === {width} && innerHeight === {height}")


RED = "rgb(255, 110, 110)"


SCENARIOS = [("banka-bever", 2), ("banka-bever", 4), ("banka-bever", 8), ("vandatta", 2),
             ("vandatta", 4), ("vandatta", 7)]


@pytest.mark.slow
def test_browser_display_layout(mosquitto: Broker, chromium: Chromium, tmp_path: Path) -> None:
    """Issue 10.14, with 2, 4 and 8 seats (7 in Vändåtta) at 1280×800, 1920×1080 and
    768×1024: the seats in one row (two in portrait), no name cut, the turn on one line, every
    verdict on the screen, red suits in words, the pile won leading the slap lost, lappen
    calls, who just played what, the round result once."""
    for game, seats in SCENARIOS:
        names = SEAT_NAMES[:seats]
        changes = banka_scene(seats) if game == "banka-bever" else vandatta_scene(seats)
        table = f"{game}-{seats}"
        with feed_thread(mosquitto, table, names) as feed, \
                web_display(mosquitto.url("display"), table) as page:
            chromium.goto(page)
            chromium.wait("document.body.dataset.connected === 'true'")
            for state, verdicts in changes:  # one at a time: the feed may skip states in a burst
                feed.publish(state, verdicts)
                wait_flushed(feed)
            chromium.wait(f"document.body.dataset.seq === '{len(changes)}'")
            to_play = names[min(6, seats - 1)]
            for width, height in VIEWPORTS:
                show(chromium, width, height)
                chromium.screenshot(tmp_path / f"layout-{table}-{width}x{height}.png")
                got = layout(chromium)
                where = f"{table} at {width}×{height}"
                portrait = height > width
                assert got["seatRows"] == (2 if portrait and seats > 4 else 1), where
                assert got["cutNames"] == [], where
                assert got["turnText"] == f"{to_play} to play" and got["turnLines"] == 1, where
                assert got["lowest"] <= got["height"] and not got["overflow"], where
                assert got["suitColours"] and all(c == RED for s, c in got["suitColours"]
                                                  if s[-1] in "♥♦"), (where, got["suitColours"])
                text = got["text"]
                if game == "banka-bever":
                    assert "Bottom card: 9♥" in text, where
                    assert got["last"] == (f"{to_play} slapped a double and takes the pile "
                                           "(10 cards)"), where
                    assert got["older"] == [f"Anna was too late: {to_play} won the slap",
                                            f"Anna challenges: {to_play} owes 3 cards",
                                            "Bo: not allowed — it is Anna's turn"], where
                else:
                    assert "Play on: 8 or ♥" in text, where
                    assert "Lappen called: Anna" in text and "lappen!" in text, where
                    assert "Last play: Anna played 9♥ 8♣ as 8♥" in text, where
                    assert text.count("Round won by Anna") == 1, where
                    assert "wins the round" not in text, where
