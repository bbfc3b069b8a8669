"""``referee display --hall``: every table on the broker as a tile — the hall's view of
messages, 50 simulated tables publishing at once through a real Mosquitto (none lost, all
online, then all offline), the terminal's --once, and the web hall in headless Chromium whose
tile opens that table's own display (with screenshots)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from cardtable.cli import main
from cardtable.display.hall import HallView, follow_hall, table_of, table_path
from cardtable.feed import parse_broker_url
from tests.broker import Broker
from tests.hall_tables import run_tables, table_id
from tests.web_pages import Chromium, png_size, served_page

STATE = {"game": "banka-bever", "seats": ["Anna", "Bo", "Cia"], "counts": [10, 7, 9],
         "pile": ["2C", "5S"], "bottom": "2C", "turn": 1, "out": [], "over": False,
         "winners": None, "cards_played": 12, "tricks": 1, "session": "s1", "seq": 4,
         "recent": [{"t": 5, "verdict": "challenge", "by": 0, "seat": 1, "owes": 2,
                     "session": "s1", "seq": 4, "text": "Anna challenges: Bo owes 2 cards"}]}


def msg(hall: HallView, table: str, kind: str, obj: Any) -> tuple[str | None, bool]:
    payload = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return hall.on_message(f"cardtable/{table}/{kind}", payload)


def test_a_tile_says_what_the_tables_own_display_says() -> None:
    hall = HallView()
    hall.set_connection(True, None)
    assert msg(hall, "kitchen", "status", b"online") == ("kitchen", False)
    assert msg(hall, "kitchen", "state", STATE) == ("kitchen", False)
    tile = hall.scene()["tables"][0]
    assert tile == {
        "table": "kitchen", "title": "Banka bäver", "round": None, "status": "online",
        "headline": "Bo to play",
        "seats": [{"name": "Anna", "count": 10, "turn": False, "out": False, "winner": False},
                  {"name": "Bo", "count": 7, "turn": True, "out": False, "winner": False},
                  {"name": "Cia", "count": 9, "turn": False, "out": False, "winner": False}],
        "pile": 2, "last": "Anna challenges: Bo owes 2 cards", "alerts": [], "seq": 4,
        "stale": False, "waiting": False}
    # A gap in the verdicts asks for the retained states again.
    gap = {"t": 9, "verdict": "false_slap", "seat": 2, "session": "s1", "seq": 9}
    assert msg(hall, "kitchen", "events", gap) == ("kitchen", True)
    # The winner; then the referee goes offline: the tile is stale.
    msg(hall, "kitchen", "state", {**STATE, "seq": 10, "turn": None, "over": True,
                                   "winners": [2], "counts": [0, 0, 26]})
    msg(hall, "kitchen", "status", b"offline")
    tile = hall.scene()["tables"][0]
    assert (tile["headline"], tile["status"], tile["stale"]) == ("Winner: Cia", "offline", True)
    # An unreadable state is an alert on the tile; the last readable one stays.
    msg(hall, "kitchen", "state", b"{not json")
    tile = hall.scene()["tables"][0]
    assert tile["alerts"] == ["Unreadable state from the referee (not JSON); the last "
                              "readable one is shown"] and tile["headline"] == "Winner: Cia"
    # Other topics and impossible ids are no tables.
    assert msg(hall, "kitchen", "seat/1", {}) == (None, False)
    assert table_of("cardtable/a/b/state") is None and table_of("other/a/state") is None
    assert msg(hall, "bad\x01id", "state", STATE) == (None, False)
    assert sorted(hall.tables) == ["kitchen"]  # no table from the impossible id
    # A table with no verdict yet says who just played what.
    v1 = {"game": "vandatta", "seats": ["Anna", "Bo", "Cia"], "counts": [5, 5, 5],
          "pile": ["7H"], "turn": 2, "cards_played": 0, "tricks": 0, "stock": 30, "round": 1,
          "session": "v", "seq": 1}
    msg(hall, "den", "state", v1)
    assert hall.tile("den")["last"] is None
    msg(hall, "den", "state", {**v1, "counts": [5, 5, 4], "pile": ["7H", "9H"], "turn": 0,
                               "cards_played": 1, "seq": 2})
    assert hall.tile("den")["last"] == "Cia played 9♥"
    hall.set_connection(False, "connection lost")
    assert hall.scene()["tables"][0]["stale"]
    assert table_path("a b/c") == "/table/a%20b%2Fc/"


@pytest.mark.slow
def test_fifty_tables_at_once_through_one_broker(mosquitto: Broker) -> None:
    """50 seeded tables publish a change every 0.25 s for 3 s, all at once: the hall shows
    every table, each at the last seq its referee published, then every one offline."""
    n = 50
    hall = HallView()
    published: dict[str, int] = {}

    def on_publish(table: str, seq: int, at: float) -> None:
        published[table] = seq

    async def go() -> dict[str, int]:
        stop = asyncio.Event()
        follower = asyncio.create_task(
            follow_hall(parse_broker_url(mosquitto.url("display")), hall, stop=stop))
        last = await run_tables(mosquitto.url(), n, interval=0.25, duration=3.0,
                                on_publish=on_publish, limit=60)
        for _ in range(300):  # the offline status of every table comes in (15 s at most)
            if sum(v.status == "offline" for v in hall.tables.values()) == n:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await follower
        return last

    last = asyncio.run(go())
    assert sorted(hall.tables) == sorted(table_id(k) for k in range(n))
    scene = hall.scene()
    assert scene["count"] == n and scene["online"] == 0
    assert {t["table"]: t["seq"] for t in scene["tables"]} == last == published
    assert all(v >= 2 for v in last.values())  # every table played (fewer on a busy machine)
    assert all(t["status"] == "offline" and t["title"] for t in scene["tables"])
    assert hall.connections == 1


@pytest.mark.slow
def test_the_terminal_hall_once(mosquitto: Broker, capsys: pytest.CaptureFixture[str]) -> None:
    async def tables() -> None:
        await run_tables(mosquitto.url(), 3, interval=0.1, duration=0.3, limit=5)

    asyncio.run(tables())  # their retained states and offline status stay on the broker
    code = main(["display", "--hall", "--once", "--broker", mosquitto.url("display")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Hall · 3 tables, 0 online" in out
    for k, game in enumerate(("Banka bäver", "Vändåtta", "Beggar My")):
        assert re.search(rf"{table_id(k)} .*{game}.*OFF", out), out
    assert main(["display", "--hall", "--table", "x", "--broker", "mqtt://h"]) == 2
    assert "leave out --table" in capsys.readouterr().err
    assert main(["display", "--hall", "--once", "--timeout", "0.5",
                 "--broker", "mqtt://127.0.0.1:9"]) == 1
    assert "cannot reach the broker" in capsys.readouterr().err


def hall_web(broker_url: str) -> contextlib.AbstractContextManager[str]:
    """``referee display --hall --web --port 0`` as its own process; yields its address."""
    return served_page("display", "--hall", "--web", "--port", "0", "--broker", broker_url)


@contextlib.contextmanager
def tables_running(url: str, n: int, duration: float) -> Iterator[threading.Event]:
    ready = threading.Event()
    done: dict[str, Any] = {}

    def work() -> None:
        async def go() -> None:
            flag = asyncio.Event()
            waiter = asyncio.create_task(flag.wait())
            waiter.add_done_callback(lambda _: ready.set())
            done["last"] = await run_tables(url, n, interval=0.3, duration=duration,
                                            ready=flag, limit=80)
        asyncio.run(go())

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        assert ready.wait(30), "the tables did not connect"
        yield ready
    finally:
        thread.join(duration + 15)


async def publish_retained(url: str, topic: str, obj: Any) -> None:
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs()) as client:
        await client.publish(topic, json.dumps(obj).encode(), qos=1, retain=True)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


@pytest.mark.slow
def test_the_web_hall_in_chromium(mosquitto: Broker,
                                  open_chromium: Callable[[int, int], Chromium],
                                  tmp_path: Path) -> None:
    chromium = open_chromium(1600, 900)
    n = 24
    with tables_running(mosquitto.url(), n, duration=6.0), \
            hall_web(mosquitto.url("display")) as base:
        deadline = time.monotonic() + 10
        while True:
            status, body = get(base + "hall.json")
            hall = json.loads(body)
            if hall["count"] == n or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert hall["count"] == n and hall["online"] == n
        assert get(base + "table/nope/")[0] == 404
        status, body = get(base + "table/t04/scene.json")
        assert status == 200 and json.loads(body)["table"] == "t04"
        assert get(base + "table/t04")[0] == 200  # redirected to table/t04/
        page = get(base + "table/t04/")[1].decode()
        assets = [a for a in re.findall(r'(?:src|href)="([^"]+)"', page)
                  if not a.startswith("data:")]  # the page's icon, inline
        assert "display.js" in assets and "standings.js" in assets
        for name in assets:  # everything the table's page loads is served under table/<id>/
            assert get(base + "table/t04/" + name)[0] == 200, name
        chromium.goto(base)
        chromium.wait(f"document.querySelectorAll('a.tile').length === {n}")
        chromium.wait("document.getElementById('summary').textContent === "
                      f"'{n} tables, {n} online'")
        # The page follows: a tile's seq grows while its table plays.
        seq = int(chromium.js("document.querySelector('a.tile[data-table=t05]').dataset.seq"))
        chromium.wait("+document.querySelector('a.tile[data-table=t05]').dataset.seq > "
                      f"{seq}")
        data = chromium.screenshot(tmp_path / "hall-24-tables.png")
        assert png_size(data) == (1600, 900)
        href = chromium.js("document.querySelector('a.tile[data-table=t04]').href")
        assert href == base + "table/t04/"
        # The table's evening, as its referee publishes it (cardtable.history.summary).
        history = {"table": "t04", "standings": {"games": 2, "points": None, "players": [
            {"name": "Cia", "played": 2, "wins": 2, "shared": 0},
            {"name": "Anna", "played": 2, "wins": 0, "shared": 0}]}}
        asyncio.run(publish_retained(mosquitto.url(), "cardtable/t04/history", history))
        chromium.js("document.querySelector('a.tile[data-table=t04]').click()")
        chromium.wait("document.title.endsWith('table t04')")
        chromium.wait("document.getElementById('seats').children.length > 0")
        assert chromium.js("document.getElementById('where').textContent") == "table t04"
        chromium.wait("document.getElementById('standings').textContent.includes("
                      "'Tonight (2 games): Cia 2 wins of 2 · Anna 0 wins of 2')")
        chromium.screenshot(tmp_path / "hall-table-t04.png")
        # In Swedish: each table once, in Swedish (the tiles drawn before the language came
        # had stayed beside the new ones, frozen in English).
        chromium.goto(base + "?lang=sv")
        chromium.wait("document.documentElement.lang === 'sv' && "
                      f"document.querySelectorAll('a.tile').length >= {n}")
        chromium.wait("!document.getElementById('summary').textContent.includes('tables')")
        time.sleep(0.5)  # a redraw after the language came would have added the doubles
        assert chromium.js("document.querySelectorAll('a.tile').length") == n
        assert chromium.js("new Set([...document.querySelectorAll('a.tile')].map("
                           "(a) => a.dataset.table)).size") == n
        # On a phone the tiles' words are readable (the room's sizes had made them 4 px).
        phone = open_chromium(390, 844)
        phone.goto(base)
        phone.wait(f"document.querySelectorAll('a.tile').length === {n}")
        size = phone.js("parseFloat(getComputedStyle(document.querySelector('.tile-seats'))"
                        ".fontSize)")
        assert size >= 13, size
        assert phone.js("document.documentElement.scrollWidth") <= 390
        phone.screenshot(tmp_path / "hall-phone.png")
