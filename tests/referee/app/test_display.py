"""The terminal display: what it draws (pure rendering), its command line, its web server."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from referee.app.commands.display import main, register, run
from referee.app.display.render import render
from referee.app.display.view import TableView
from referee.app.display.web import start_web_server, web_config
from referee.app.feed import TableFeed, parse_broker_url
from tests.broker import Broker

NAMES = ["Anna", "Bo", "Cia"]


def text_of(renderable: Any, width: int = 100) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(renderable)
    return console.export_text()


def banka(**extra: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "game": "banka-bever", "seats": NAMES, "counts": [17, 14, 12],
        "pile": ["3C", "4D", "5S", "9D", "10H", "QH"], "bottom": "7S", "turn": 1,
        "challenge": {"by": 2, "seat": 1, "owes": 2}, "claim": None, "out": [],
        "over": False, "winners": None, "cards_played": 9, "tricks": 0,
        "session": "s1", "seq": 12,
    }
    state.update(extra)
    return state


def test_render_shows_turn_pile_bottom_counts_and_challenge() -> None:
    text = text_of(render(banka(), [], "online", table_id="t1"))
    assert "Banka bäver" in text and "table t1" in text
    assert "Turn: Bo" in text
    assert "Q♥" in text and "10♥" in text and "9♦" in text
    assert "3♣" not in text  # only the top five of the pile…
    assert "(6 cards)" in text  # …and how many there are
    assert "Bottom card: 7♠" in text
    assert "Bo owes 2 more cards to Cia" in text
    for name, count in zip(NAMES, (17, 14, 12), strict=True):
        assert any(name in line and str(count) in line for line in text.splitlines())
    assert "OFFLINE" not in text and "referee online" in text


def test_render_says_verdicts_in_plain_words_newest_first() -> None:
    events = [
        {"t": 1, "verdict": "false_slap", "seat": 0, "seq": 3},
        {"t": 2, "verdict": "illegal", "seat": 2, "code": "not_your_turn",
         "reason": "it is Bo's turn to lay", "seq": 4},
        {"t": 3, "verdict": "pile_won", "seat": 1, "reason": "bottom_match", "cards": 6,
         "seq": 5},
        {"t": 3, "verdict": "slap_lost", "seat": 2, "to": 1, "seq": 5},
        {"t": 4, "verdict": "out", "seat": 0, "seq": 6},
    ]
    text = text_of(render(banka(challenge=None, out=[0]), events, "online"))
    lines = text.splitlines()
    order = [i for i, line in enumerate(lines) for word in
             ("Anna is out", "Cia was too late: Bo won the slap",
              "Bo slapped a match with the bottom card", "it is Bo's turn to lay",
              "Anna slapped falsely") if word in line]
    assert len(order) == 5 and order == sorted(order)
    assert "Out: Anna" in text
    assert "owes" not in text


def test_render_uses_the_feeds_words_when_given() -> None:
    text = text_of(render(banka(), [{"verdict": "out", "seat": 0, "text": "Anna leaves"}], None))
    assert "Anna leaves" in text and "referee status unknown" in text


def test_render_offline_banner_and_lost_broker() -> None:
    text = text_of(render(banka(), [], "offline", connected=False))
    assert "REFEREE OFFLINE" in text
    assert "no connection to the broker" in text
    assert "Turn: Bo" in text  # the last known state stays on screen
    waiting = text_of(render(None, [], None, table_id="t9"))
    assert "Waiting for the referee" in waiting and "t9" in waiting


def test_render_vandatta_round_scores_and_winner() -> None:
    state = {
        "game": "vandatta", "seats": NAMES, "counts": [0, 4, 2], "pile": ["7H", "7C"],
        "top": "7C", "current": {"suit": "C", "rank": 7}, "stock": 20, "must_draw": None,
        "turn": None, "round": 3, "totals": [40, 105, 70], "out": [1], "over": True,
        "winners": [0], "session": "s", "seq": 80,
    }
    events = [{"t": 1, "verdict": "round_over", "winner": 0, "scores": [0, 35, 15],
               "totals": [40, 105, 70], "seq": 79},
              {"t": 1, "verdict": "game_over", "winners": [0], "seq": 80}]
    text = text_of(render(state, events, "online"))
    assert "Vändåtta" in text and "round 3" in text
    assert "WINNER: Anna" in text
    assert "Play on: 7 or ♣" in text and "Stock: 20" in text
    assert "Round won by Anna. Scores: Anna 0, Bo 35, Cia 15" in text
    assert any("Bo" in line and "105" in line and "OUT" in line for line in text.splitlines())
    assert "Game over: Anna wins" in text
    shared = text_of(render(dict(state, winners=[0, 2]), [], "online"))
    assert "SHARED WIN: Anna and Cia" in shared
    drawing = text_of(render(dict(state, winners=None, over=False, turn=2, must_draw=2), [],
                             "online"))
    assert "Cia must draw" in drawing and "Turn: Cia" in drawing


def test_render_is_pure() -> None:
    state, events = banka(), [{"t": 1, "verdict": "out", "seat": 0, "seq": 1}]
    before = json.dumps([state, events])
    assert text_of(render(state, events, "online")) == text_of(render(state, events, "online"))
    assert json.dumps([state, events]) == before


def test_view_follows_sessions_and_seq() -> None:
    view = TableView("t1")
    view.on_state(banka(seq=5, recent=[{"t": 1, "verdict": "out", "seat": 0, "seq": 4}]))
    assert view.seq == 5 and [e["verdict"] for e in view.events] == ["out"]
    assert view.on_message("cardtable/t1/events", json.dumps(
        {"session": "s1", "seq": 6, "verdict": "false_slap", "seat": 1}).encode()) is False
    view.on_state(banka(seq=3))  # an older state never replaces a newer one
    assert view.state is not None and view.state["seq"] == 5
    assert view.on_message("cardtable/t1/status", b"offline") is False
    assert view.status == "offline"
    assert view.on_message("cardtable/t1/state", b"not json") is False
    view.on_state(banka(session="s2", seq=1))
    assert view.session == "s2" and view.seq == 1 and not view.events
    assert "REFEREE OFFLINE" in text_of(view.render())


def test_register_adds_the_display_subcommand() -> None:
    parser = argparse.ArgumentParser(prog="referee")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["display", "--broker", "mqtt://h", "--table", "t1", "--web",
                              "--port", "0"])
    assert args.func is run and args.web and args.port == 0 and args.table == "t1"


def test_bad_arguments_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--table", "t1"]) == 2
    assert "--broker is required" in capsys.readouterr().err
    assert main(["--table", "a/b", "--broker", "mqtt://h"]) == 2
    assert "table id" in capsys.readouterr().err
    assert main(["--table", "t1", "--broker", "http://h"]) == 2
    assert "unknown scheme" in capsys.readouterr().err


def test_display_once_against_the_broker(mosquitto: Broker,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    async def publish() -> None:
        async with TableFeed(mosquitto.url(), "t1", seats=NAMES) as feed:
            assert await feed.wait_connected(5)
            feed.publish(banka(), [{"t": 1, "verdict": "challenge", "by": 2, "seat": 1,
                                    "owes": 2}])
            while feed._state_dirty or feed._events:
                await asyncio.sleep(0.01)

    asyncio.run(publish())
    code = main(["--broker", mosquitto.url("display"), "--table", "t1", "--once"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Turn: Bo" in out and "Bo owes 2 more cards to Cia" in out
    assert "Cia challenges: Bo owes 2 cards" in out
    assert "REFEREE OFFLINE" in out  # the feed above has exited cleanly
    # A table nobody publishes: no state within the timeout, exit status 1.
    assert main(["--broker", mosquitto.url("display"), "--table", "empty", "--once",
                 "--timeout", "0.5"]) == 1
    assert "Waiting for the referee" in capsys.readouterr().out


def test_web_server_serves_the_page_and_its_config() -> None:
    ws = parse_broker_url("ws://display:pw@192.0.2.7:9001/mqtt")
    config = web_config("t1", ws)
    assert config == {"table": "t1", "ws": "ws://192.0.2.7:9001/mqtt", "ws_port": 9001,
                      "username": "display", "password": "pw"}
    server, thread = start_web_server("127.0.0.1", 0, config)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(base + "/config.json") as r:
            assert json.load(r) == config
            assert r.headers["Cache-Control"] == "no-store"
        with urllib.request.urlopen(base + "/") as r:
            page = r.read().decode()
        assert "mqtt-lite.js" in page and "display.js" in page
        for name in ("mqtt-lite.js", "display.js", "style.css"):
            with urllib.request.urlopen(f"{base}/{name}") as r:
                assert r.status == 200 and len(r.read()) > 500
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(base + "/../feed.py")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    page_host = web_config("t1", None)
    assert page_host["ws"] is None and page_host["ws_port"] == 9001


def test_display_web_command_serves_until_stopped() -> None:
    """``referee display --web``: prints where it serves; config.json carries the display
    account and, with an mqtt:// broker, lets the page use its own host at port 9001."""
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.app.cli", "display", "--web", "--port", "0",
         "--table", "t1",
         "--broker", "mqtt://display:pw@127.0.0.1:1883"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line + (proc.stderr.read() if proc.stderr else "")
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/config.json") as r:
            config = json.load(r)
        assert config == {"table": "t1", "ws": None, "ws_port": 9001, "username": "display",
                          "password": "pw"}
    finally:
        proc.terminate()
        proc.wait(5)
