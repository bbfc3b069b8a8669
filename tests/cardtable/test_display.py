"""The terminal display: what it draws (pure rendering), what it reads (and refuses), its command
line, and the web display's server."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import aiomqtt
import pytest
from rich.console import Console

from cardtable.commands.display import main, register, run
from cardtable.display.follow import follow, link_reporter
from cardtable.display.render import render
from cardtable.display.view import TableView
from cardtable.display.web import WebDisplay
from cardtable.feed import TableFeed, parse_broker_url
from tests.broker import Broker, free_port
from tests.web_pages import ROOT, served_page

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
    # Newest change first; within one change the pile won leads the slap lost (issue 10.14).
    order = [i for word in ("Anna is out", "Bo slapped a match with the bottom card",
                            "Cia was too late: Bo won the slap", "it is Bo's turn to lay",
                            "Anna slapped falsely")
             for i, line in enumerate(lines) if word in line]
    assert len(order) == 5 and order == sorted(order)
    assert "Out: Anna" in text
    assert "owes" not in text


def test_the_pile_won_leads_the_late_slaps_that_follow_it() -> None:
    """As the referee judges them (``referee simulate --game banka-bever --players 8 --seed 7
    --json``): each late slap comes in a change of its own after the pile was won. The pile won
    stays the headline; a later verdict of another kind leads again."""
    events = [
        {"t": 1, "verdict": "challenge", "by": 0, "seat": 1, "owes": 2, "seq": 3},
        {"t": 2, "verdict": "pile_won", "seat": 2, "reason": "double", "cards": 6, "seq": 4},
        {"t": 3, "verdict": "slap_lost", "seat": 1, "to": 2, "seq": 5},
        {"t": 4, "verdict": "slap_lost", "seat": 0, "to": 2, "seq": 6},
    ]
    text = text_of(render(banka(challenge=None), events, "online"))
    lines = text.split("Last verdicts:")[1].splitlines()[1:]
    assert "» Cia slapped a double and takes the pile (6 cards)" in lines[0]
    assert ["Bo was too late" in lines[1], "Anna was too late" in lines[2]] == [True, True]
    later = [*events, {"t": 5, "verdict": "false_slap", "seat": 0, "seq": 7}]
    text = text_of(render(banka(challenge=None), later, "online"))
    assert "» Anna slapped falsely" in text


def test_render_words_verdicts_itself_and_the_feeds_words_only_for_what_it_does_not_know(
) -> None:
    """A display words each verdict from its codes, in its own language (issue 35); the feed's
    English ``text`` is shown only for a kind this display cannot word."""
    text = text_of(render(banka(), [{"verdict": "out", "seat": 0, "text": "Anna leaves"}], None))
    assert "Anna is out of the game" in text and "Anna leaves" not in text
    assert "referee status unknown" in text
    text = text_of(render(banka(), [{"verdict": "new_kind", "seat": 0, "text": "Anna flies"}],
                          None))
    assert "Anna flies" in text


def test_render_offline_banner_and_lost_broker() -> None:
    text = text_of(render(banka(), [], "offline", connected=False, error="connection refused"),
                   width=160)
    assert "REFEREE OFFLINE" in text
    assert "No connection to the broker (connection refused): reconnecting" in text
    assert "may be out of date" in text  # issue 10.14: stale state is said to be stale
    assert "Turn: Bo" in text  # the last known state stays on screen
    waiting = text_of(render(None, [], None, table_id="t9"))
    assert "Waiting for the referee" in waiting and "t9" in waiting


def test_render_says_every_table_alert() -> None:
    alerts = {"board": "offline", "board_link": "20 % of the frames are corrupt",
              "stuck": [{"seat": 1, "button": "slap"}],
              "chatter": [{"seat": 2, "button": "call"}],
              "journal": "the journal cannot be written (No space left on device at /j): the "
              "game is paused until it can"}
    text = text_of(render(banka(alerts=alerts, paused=True), [], "online"), width=160)
    for words in ("The journal cannot be written (No space left on device at /j)",
                  "TABLE BOARD OFFLINE", "TABLE BOARD LINK UNUSABLE: 20 % of the frames",
                  "PAUSED", "Bo's slap button is stuck",
                  "Cia's call button chatters: ignored until it is still"):
        assert words in text


def test_a_full_disk_is_said_in_the_display_s_language() -> None:
    """A Swedish table paused by a full disk had said so in English on every display: the
    service's alert carries the system's English words, which the display now says in its
    own, the folder as it is."""
    import errno
    import os

    from cardtable.display.scene import journal_alert, table_alerts
    from cardtable.i18n import language

    def alert(why: str) -> dict[str, Any]:
        return {"game": "banka-bever", "seats": ["Anna", "Bo"], "alerts": {
            "journal": f"the journal cannot be written ({why} at /var/lib/j): the game is "
                       "paused until it can"}}

    full = os.strerror(errno.ENOSPC)
    sv = language("sv")
    assert table_alerts(alert(full), sv) == [
        "Journalen kan inte skrivas (disken är full i /var/lib/j): spelet står still tills den "
        "kan det"]
    assert table_alerts(alert(full)) == [  # English as the service wrote it
        f"The journal cannot be written ({full} at /var/lib/j): the game is paused until it can"]
    odd = os.strerror(errno.ENOLCK)  # a reason no catalog knows: the system's words
    assert f"({odd} i /var/lib/j)" in table_alerts(alert(odd), sv)[0]
    assert journal_alert("the journal cannot be written", sv) == "The journal cannot be written"
    at_home = alert(full)["alerts"]["journal"].replace("/var/lib/j", "/home/cards at home")
    assert "(disken är full i /home/cards at home)" in journal_alert(at_home, sv)


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
    assert "wins the round" not in text  # the round result once (issue 10.14)
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
    assert view.problem == "not JSON" and view.state["seq"] == 5
    view.on_state(banka(session="s2", seq=1))
    assert view.problem is None
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
    assert main(["--table", "t1", "--web"]) == 2  # the web display is the MQTT client too
    assert "--broker is required" in capsys.readouterr().err
    assert main(["--table", "t1", "--web", "--broker", "mqtt://h",
                 "--ws-url", "ws://h:9001/mqtt"]) == 2
    assert "--ws-url is gone" in capsys.readouterr().err
    assert main(["--table", "a/b", "--broker", "mqtt://h"]) == 2
    assert "table id" in capsys.readouterr().err
    assert main(["--table", "t1", "--broker", "http://h"]) == 2
    assert "unknown scheme" in capsys.readouterr().err


def publish_retained(broker: Broker, table: str, payload: bytes) -> None:
    """Leave ``payload`` as the retained ``state`` of ``table``, as a broken referee would."""
    async def go() -> None:
        async with aiomqtt.Client(**parse_broker_url(broker.url()).client_kwargs()) as c:
            await c.publish(f"cardtable/{table}/state", payload, qos=1, retain=True)

    asyncio.run(go())


@pytest.mark.slow
def test_display_once_against_the_broker(mosquitto: Broker,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10.13: connected, ``--once`` says nothing of a lost connection; a table that does
    not exist, or a broker that cannot be reached, is named on stderr with exit status 1."""
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
    assert "no connection" not in out.lower()
    # A table nobody publishes: no state within the timeout, exit status 1, and why.
    assert main(["--broker", mosquitto.url("display"), "--table", "empty", "--once",
                 "--timeout", "0.5"]) == 1
    got = capsys.readouterr()
    assert "no table 'empty' on the broker at mqtt://display@127.0.0.1" in got.err
    assert "no connection" not in got.out.lower()
    # No broker at all, and a broker that refuses the display.
    assert main(["--broker", f"mqtt://display:x@127.0.0.1:{free_port()}", "--table", "t1",
                 "--once", "--timeout", "0.5"]) == 1
    assert "cannot reach the broker" in capsys.readouterr().err
    assert main(["--broker", f"mqtt://display:wrong@127.0.0.1:{mosquitto.port}",
                 "--table", "t1", "--once", "--timeout", "0.5"]) == 1
    assert "refused by the broker: not authorized" in capsys.readouterr().err


# --------------------------------------------------------------- unreadable states (10.12)

GOOD = banka(seq=5, recent=[{"t": 1, "verdict": "out", "seat": 0, "seq": 4}])
BAD_VALUES: list[Any] = [5, -1, 1.5, True, "x", [1], [None], ["ZZ"], [[1]], {"a": 1}, [{"a": 1}]]
KEYS = ["game", "seats", "counts", "pile", "bottom", "top", "turn", "challenge", "claim", "out",
        "winners", "totals", "current", "stock", "must_draw", "called", "round", "over",
        "paused", "alerts", "recent", "session", "seq", "table"]


@pytest.mark.slow
def test_no_state_can_break_the_drawing() -> None:
    """Every key a display draws, set to every kind of wrong value: the drawing never fails
    (before: ``TypeError: 'int' object is not iterable`` and the like)."""
    failures = []
    for key in KEYS:
        for bad in BAD_VALUES:
            state = dict(GOOD, **{key: bad})
            try:
                text_of(render(state, [dict(v, seq=bad) for v in GOOD["recent"]], "online"))
                view = TableView("t1")
                view.on_message("cardtable/t1/state", json.dumps(state).encode())
                text_of(view.render())
            except Exception as exc:
                failures.append(f"{key}={bad!r}: {exc!r}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("payload", [
    b"{not json", b"[1, 2]", b'"text"', b"[" * 100_000,
    json.dumps(dict(GOOD, counts=5)).encode(),
    json.dumps(dict(GOOD, pile=["QH", "nonsense"])).encode(),
    json.dumps(dict(GOOD, challenge={"seat": "Bo", "owes": 2})).encode(),
    json.dumps(dict(GOOD, seq=6, pile=["QH"] * 300_000)).encode(),  # 1.8 MB
], ids=["not-json", "list", "string", "deep", "counts-int", "bad-card", "bad-challenge",
        "oversized"])
def test_an_unreadable_state_is_said_and_the_last_readable_one_stays(payload: bytes) -> None:
    view = TableView("t1")
    view.on_message("cardtable/t1/state", json.dumps(GOOD).encode())
    assert view.on_message("cardtable/t1/state", payload) is False
    assert view.problem and view.state is not None and view.state["seq"] == 5
    text = text_of(view.render())
    assert "Unreadable state from the referee" in text and "Turn: Bo" in text
    if len(payload) > 1_000_000:
        assert "more than the 256 KB a display reads" in text
    view.on_message("cardtable/t1/state", json.dumps(dict(GOOD, seq=7)).encode())
    assert view.problem is None and view.state["seq"] == 7
    assert "Unreadable" not in text_of(view.render())


def test_an_unreadable_verdict_is_dropped_and_the_state_read_again() -> None:
    view = TableView("t1")
    view.on_state(dict(GOOD))
    assert view.on_message("cardtable/t1/events", b"{not json") is True
    assert view.on_message("cardtable/t1/events", json.dumps(
        {"session": "s1", "seq": 6, "verdict": "out", "seat": [0]}).encode()) is True
    assert [e["seq"] for e in view.events] == [4] and view.unreadable == 2


def test_the_display_keeps_following_after_an_unreadable_state(mosquitto: Broker) -> None:
    """Drawing at every change as the live display does, through an unreadable retained
    state and on to a good one."""
    publish_retained(mosquitto, "t1", json.dumps(dict(GOOD, counts=5)).encode())

    async def go() -> None:
        view = TableView("t1")
        stop = asyncio.Event()
        drawn: list[str] = []
        task = asyncio.create_task(follow(parse_broker_url(mosquitto.url("display")), view,
                                          lambda: drawn.append(text_of(view.render())),
                                          stop=stop))
        # Drawn once connected, then once with the retained (unreadable) state.
        await wait_for(lambda: len(drawn) >= 2 or task.done())
        assert not task.done(), task.exception() if task.done() else None
        assert "Unreadable state from the referee ('counts' is 5" in drawn[-1]
        async with TableFeed(mosquitto.url(), "t1", seats=NAMES) as feed:
            assert await feed.wait_connected(5)
            feed.publish(banka(), [])
            await wait_for(lambda: view.state is not None or task.done())
        assert not task.done() and "Turn: Bo" in drawn[-1]
        assert "Unreadable" not in drawn[-1]
        stop.set()
        await task

    asyncio.run(asyncio.wait_for(go(), 30))


def test_display_once_with_an_unreadable_state(mosquitto: Broker,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    publish_retained(mosquitto, "t1", b"{not json")
    assert main(["--broker", mosquitto.url("display"), "--table", "t1", "--once"]) == 1
    got = capsys.readouterr()
    assert "Unreadable state from the referee (not JSON)" in got.out
    assert "no connection" not in got.out.lower()
    assert "the state of table 't1' on the broker at" in got.err and "unreadable" in got.err


def test_display_memory_with_an_oversized_retained_state(mosquitto: Broker) -> None:
    """An 18 MB retained state is refused unparsed, with its size in the message (before: it
    was parsed, 308 MB). The child process's peak RSS is printed."""
    payload = json.dumps(dict(GOOD, pile=["QH"] * 3_150_000)).encode()
    assert len(payload) > 18 * 1024 * 1024
    publish_retained(mosquitto, "big", payload)
    code = ("import resource, sys\n"
            "from cardtable.commands.display import main\n"
            f"rc = main(['--broker', {mosquitto.url('display')!r}, '--table', 'big', '--once'])\n"
            "print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
            "sys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "(18.0 MB, more than the 256 KB a display reads)" in proc.stderr
    rss_mb = int(proc.stdout.rsplit("maxrss", 1)[1]) / 1024
    # Printed, not asserted: most of it is the MQTT client's own receive buffers for the 18 MB
    # packet, which vary from run to run (106-274 MB seen); a memory target belongs in a
    # benchmark, not in a unit test on a shared machine.
    print(f"display peak RSS with an 18 MB retained state: {rss_mb:.0f} MB")


async def wait_for(pred: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


# --------------------------------------------------------------- what the displays show (10.14)

def ansi_of(renderable: Any) -> str:
    console = Console(record=True, width=100, color_system="standard", force_terminal=True)
    console.print(renderable)
    return console.export_text(styles=True)


def vandatta(**extra: Any) -> dict[str, Any]:
    state: dict[str, Any] = {
        "game": "vandatta", "seats": NAMES, "counts": [4, 5, 6], "pile": ["7H", "JH"],
        "top": "JH", "current": {"suit": "H", "rank": "J"}, "stock": 20, "must_draw": None,
        "turn": 0, "round": 2, "totals": None, "called": [0], "out": [], "over": False,
        "winners": None, "cards_played": 30, "session": "v", "seq": 3,
    }
    state.update(extra)
    return state


def test_terminal_shows_red_suits_lappen_calls_and_who_just_played_what() -> None:
    view = TableView("t1")
    view.on_state(vandatta())
    view.on_state(vandatta(seq=4, counts=[2, 5, 6], pile=["7H", "JH", "9H", "8C"], top="8C",
                           current={"suit": "H", "rank": "8"}, cards_played=32, turn=1))
    text = text_of(view.render())
    assert "Play on: 8 or ♥" in text
    assert "Lappen called: Anna" in text
    assert any("Anna" in line and "lappen!" in line for line in text.splitlines())
    assert "Last play: Anna played 9♥ 8♣ as 8♥" in text
    ansi = ansi_of(view.render())
    red_heart = re.compile(r"\x1b\[[0-9;]*31m[0-9JQKA]*♥")
    assert red_heart.search(ansi.split("Play on:")[1].split("\n")[0])  # red, not white
    bottom = ansi_of(render(banka(bottom="9H"), [], "online"))
    assert red_heart.search(bottom.split("Bottom card:")[1].split("\n")[0])
    # A draw and a pass are said too; a change that is no play keeps what was said.
    after = {"counts": [2, 6, 6], "stock": 19, "cards_played": 32,
             "pile": ["7H", "JH", "9H", "8C"], "current": {"suit": "H", "rank": "8"}}
    view.on_state(vandatta(seq=5, turn=1, **after))
    assert "Last play: Bo drew a card" in text_of(view.render())
    view.on_state(vandatta(seq=6, turn=2, **after))
    assert "Last play: Bo passed" in text_of(view.render())
    view.on_state(vandatta(seq=7, turn=2, **after))  # e.g. a refused input
    assert "Last play: Bo passed" in text_of(view.render())
    # Issue 37: an eight named as another card says which ("Play on: A or ♥" alone did not)
    view.on_state(vandatta(seq=8, turn=0, counts=[2, 6, 5], stock=19, cards_played=33,
                           pile=["7H", "JH", "9H", "8C", "8S"], top="8S",
                           current={"suit": "H", "rank": "A"}))
    text = text_of(view.render())
    assert "Play on: A or ♥" in text and "Last play: Cia played 8♠ as A♥" in text
    view.on_state(vandatta(seq=9, turn=1, counts=[1, 6, 5], stock=19, cards_played=34,
                           pile=["7H", "JH", "9H", "8C", "8S", "AH"], top="AH",
                           current={"suit": "H", "rank": "A"}))
    assert "Last play: Anna played A♥" in text_of(view.render())
    assert " as " not in text_of(view.render()).split("Last play:")[1].split("\n")[0]


# --------------------------------------------------------------- the web display (10.11)

def read_event(stream: Any) -> dict[str, Any]:
    """The next scene on a server-sent event stream."""
    while True:
        line = stream.readline()
        assert line, "the stream ended"
        if line.startswith(b"data: "):
            return dict(json.loads(line[6:]))


def test_web_display_streams_the_scene() -> None:
    """The page's files, the scene of the moment, and a stream that sends the whole scene at
    once and then each change; nothing of a broker and no mqtt-lite.js; at most the budget's
    pages at once (503 for one more)."""
    view = TableView("t1")

    async def check() -> str:
        async with WebDisplay(view, max_streams=2) as web:
            base = web.url

            def client() -> None:
                with urllib.request.urlopen(base) as r:
                    page = r.read().decode()
                    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
                    assert r.headers["X-Content-Type-Options"] == "nosniff"
                assert "display.js" in page and "mqtt-lite.js" not in page
                for name in ("display.js", "style.css"):
                    with urllib.request.urlopen(base + name) as r:
                        assert r.status == 200 and len(r.read()) > 500
                for gone in ("mqtt-lite.js", "config.json", "../feed.py", "hall.html"):
                    with pytest.raises(urllib.error.HTTPError):
                        urllib.request.urlopen(base + gone)
                with urllib.request.urlopen(base + "events", timeout=5) as stream, \
                        urllib.request.urlopen(base + "events", timeout=5):
                    assert stream.headers["Content-Type"].startswith("text/event-stream")
                    first = read_event(stream)
                    assert first["table"] == "t1" and first["waiting"]
                    assert not first["connected"]
                    assert first["banners"][0]["kind"] == "broker"
                    with pytest.raises(urllib.error.HTTPError) as busy:
                        urllib.request.urlopen(base + "events", timeout=5)
                    assert busy.value.code == 503
                    view.connected, view.status = True, "online"
                    view.on_state(banka())
                    loop.call_soon_threadsafe(web.changed)
                    scene = read_event(stream)
                    assert scene["seq"] == 12 and scene["connected"] and not scene["banners"]
                    assert scene["headline"] == {"kind": "turn", "names": ["Bo"]}
                    assert scene["notices"][0]["text"] == "Bo owes 2 more cards to Cia"
                    with urllib.request.urlopen(base + "scene.json") as r:
                        assert json.load(r) == scene

            loop = asyncio.get_running_loop()
            await asyncio.to_thread(client)
            return base

    base = asyncio.run(check())
    with pytest.raises(OSError):  # closed: the port is free again
        urllib.request.urlopen(base, timeout=2)


@pytest.mark.slow
def test_display_web_command_follows_the_broker_itself(mosquitto: Broker) -> None:
    """``referee display --web`` is the MQTT client over TCP: what it serves is the table and
    never a broker password (before: config.json handed the display account to every page)."""
    async def publish() -> None:
        async with TableFeed(mosquitto.url(), "t1", seats=NAMES) as feed:
            assert await feed.wait_connected(5)
            feed.publish(banka(), [])
            while feed._state_dirty or feed._events:
                await asyncio.sleep(0.01)

    asyncio.run(publish())
    with served_page("display", "--web", "--port", "0", "--table", "t1",
                     "--broker", mosquitto.url("display")) as base:
        with urllib.request.urlopen(base + "events", timeout=10) as stream:
            scene = read_event(stream)
            while not (scene["connected"] and scene["seq"] == 1):
                scene = read_event(stream)
        assert scene["headline"]["names"] == ["Bo"] and scene["status"] == "offline"
        served = []
        for name in ("", "display.js", "style.css", "scene.json"):
            with urllib.request.urlopen(base + name) as r:
                served.append(r.read().decode())
        assert mosquitto.passwords["display"] not in "".join(served)
        # A second display on the same port: a message, not a traceback.
        busy = subprocess.run(
            [sys.executable, "-m", "cardtable.cli", "display", "--web", "--port",
             str(urlsplit(base).port), "--table", "t1", "--broker", mosquitto.url("display")],
            cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert busy.returncode == 1 and "cannot serve the page on" in busy.stderr


class _Link:
    def __init__(self) -> None:
        self.connected, self.error, self.connections = False, None, 0

    def set_connection(self, connected: bool, error: str | None) -> None:
        self.connected, self.error = connected, error


@pytest.mark.parametrize("terminal", [False, True])
def test_a_display_not_on_a_terminal_says_the_broker_s_state_on_stderr(
        terminal: bool, capsys: pytest.CaptureFixture[str]) -> None:
    # Rich draws a live picture on such an output only at the end: a broker that was down
    # left `referee display > log` silent
    link = _Link()
    report = link_reporter(link, "the broker at mqtt://h:1", Console(
        file=io.StringIO(), force_terminal=terminal))
    seen = []
    for connected, error in [(False, None), (False, "connection refused"),
                             (False, "connection refused"), (True, None), (True, None),
                             (False, "connection lost")]:
        link.set_connection(connected, error)
        report()
        seen.append(capsys.readouterr().err)
    if terminal:
        assert seen == [""] * 6
    else:
        assert seen == [
            "", "referee display: cannot reach the broker at mqtt://h:1 (connection refused); "
            "trying again\n", "", "referee display: connected to the broker at mqtt://h:1\n",
            "", "referee display: cannot reach the broker at mqtt://h:1 (connection lost); "
            "trying again\n"]
