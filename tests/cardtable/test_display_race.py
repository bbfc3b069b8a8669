"""The latest slap race and the seats' slap statistics on both displays (issue 11.3-4).

Hand-made verdict streams, as the feed sends them (a state, then the verdicts of its change).
The race in most tests: Bo lays 5S at 10 000 ms on Anna's 5H, a double. Cia slaps at
+212.4 ms and wins; Bo at +212.9 ms loses by 212.9 - 212.4 = 0.5 ms (500 µs, a photo finish);
Anna at +260 ms loses by 47.6 ms; Dag, judged in a change of his own, at +431.25 ms loses by
431.25 - 212.4 = 218.85 ms.

The web page is tested in headless Chromium against the real broker, as
``test_display_web.py`` does (``referee display --web`` as its own process, the feed through
Mosquitto); the screenshot is kept in the test's folder (and ``/tmp/race-timeline.png``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cardtable.display.race import RaceWatch, race_scene, timing_scene
from cardtable.display.render import render
from cardtable.display.view import TableView
from tests.broker import Broker
from tests.cardtable.test_display_web import feed_thread, show, wait_flushed, web_display
from tests.web_pages import Chromium, png_size

MS = 1_000_000
LAY = 10_000 * MS
NAMES = ["Anna", "Bo", "Cia", "Dag"]
BASE: dict[str, Any] = {
    "game": "banka-bever", "counts": [10, 9, 12, 11], "pile": ["9C", "5H"], "bottom": "9C",
    "turn": 1, "challenge": None, "claim": None, "out": [], "over": False, "winners": None,
    "cards_played": 20, "tricks": 3,
}


def slap(kind: str, seat: int, offset_ns: int, **extra: Any) -> dict[str, Any]:
    return {"t": LAY + offset_ns, "verdict": kind, "seat": seat, "reaction_ns": offset_ns,
            **extra}


#: The changes of the race (state, verdicts of its change).
RACE: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    (BASE, []),
    (dict(BASE, pile=["9C", "5H", "5S"], counts=[10, 8, 12, 11], cards_played=21, turn=2), []),
    (dict(BASE, pile=[], counts=[10, 8, 15, 11], cards_played=21, turn=2, tricks=4),
     [slap("pile_won", 2, 212_400_000, reason="double", cards=3),
      slap("slap_lost", 1, 212_900_000, to=2, margin_ns=500_000),
      slap("slap_lost", 0, 260 * MS, to=2, margin_ns=47_600_000)]),
    (dict(BASE, pile=[], counts=[10, 8, 15, 11], cards_played=21, turn=2, tricks=4),
     [slap("slap_lost", 3, 431_250_000, to=2, margin_ns=218_850_000)]),
]

LINE = ("Race: 5S laid · Cia +212.400 ms WON · Bo +212.900 ms (+500 µs) · "
        "Anna +260.000 ms (+47.600 ms) · Dag +431.250 ms (+218.850 ms) · double · photo finish")

TIMING = [
    {"slaps": 9, "wins": 2, "false_slaps": 1, "races_lost": 6, "missed": 3,
     "median_reaction_ns": 301_250_000, "best_reaction_ns": 260 * MS},
    {"slaps": 8, "wins": 1, "false_slaps": 0, "races_lost": 7, "missed": 4,
     "median_reaction_ns": 280 * MS, "best_reaction_ns": 212_900_000},
    {"slaps": 12, "wins": 9, "false_slaps": 2, "races_lost": 1, "missed": 0,
     "median_reaction_ns": 230_500_000, "best_reaction_ns": 212_400_000},
    {"slaps": 0, "wins": 0, "false_slaps": 0, "races_lost": 0, "missed": 12,
     "median_reaction_ns": None, "best_reaction_ns": None},
]
OVER = dict(BASE, pile=[], counts=[0, 0, 52, 0], over=True, winners=[2], turn=None,
            out=[0, 1, 3], timing=TIMING, cards_played=40)


def fed(changes: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> TableView:
    """A view fed the changes as the feed sends them (seq from 1, one session)."""
    view = TableView("t1")
    for seq, (state, verdicts) in enumerate(changes, 1):
        view.on_state(dict(state, seats=NAMES, session="s1", seq=seq))
        for v in verdicts:
            assert view.on_event(dict(v, session="s1", seq=seq)) is False
    return view


def text(renderable: Any) -> str:
    console = Console(record=True, width=200)
    console.print(renderable)
    return console.export_text()


# ------------------------------------------------------------------ terminal


def test_the_terminal_shows_the_latest_race_as_one_line() -> None:
    view = fed(RACE)
    race = view.scene()["race"]
    assert race["line"] == LINE
    assert race["card"] == "5S" and race["photo_finish"] and race["deciding"] == "500 µs"
    assert [(s["name"], s["offset_ns"]) for s in race["slaps"]] == [
        ("Cia", 212_400_000), ("Bo", 212_900_000), ("Anna", 260 * MS), ("Dag", 431_250_000)]
    assert LINE.replace("5S laid", "5♠ laid") in text(view.render())  # as the pile shows it


def test_a_race_decided_by_more_than_a_millisecond_is_no_photo_finish() -> None:
    changes = [RACE[0], RACE[1], (RACE[2][0], [RACE[2][1][0], RACE[2][1][2]])]
    line = fed(changes).scene()["race"]["line"]
    assert line == ("Race: 5S laid · Cia +212.400 ms WON · Anna +260.000 ms (+47.600 ms) · "
                    "double")


def test_the_card_is_not_guessed_when_the_lay_came_in_the_same_change() -> None:
    """The feed skipped the state that showed 5S: the state before the change holds 2 cards,
    not the 3 the pile had, so the card is not named."""
    view = fed([RACE[0], RACE[2]])
    assert view.scene()["race"]["line"].startswith("Race: a card laid · Cia +212.400 ms WON")


def test_a_false_slap_race_and_a_verdict_sent_twice() -> None:
    """Anna laid 7D at 10 000 ms (the state shows it); Dag slaps 150 ms later: false. The
    state of the next change repeats the verdict in ``recent``: it is taken once."""
    state = dict(BASE, pile=["9C", "5H", "7D"], cards_played=21, turn=2)
    false = slap("false_slap", 3, 150 * MS)
    view = fed([(state, [false]),
                (dict(state, recent=[dict(false, seq=1, session="s1")]), [])])
    race = view.scene()["race"]
    assert race["line"] == "Race: 7D laid · Dag +150.000 ms false slap · nothing to slap"
    assert len(race["slaps"]) == 1 and race["ruling"] == "false_slap"


def test_a_new_game_forgets_the_last_race() -> None:
    view = fed(RACE + [(dict(BASE, pile=[], cards_played=0, tricks=0), [])])
    assert view.scene()["race"] is None


def test_a_display_without_timing_fields_still_shows_who_won() -> None:
    """A referee from before the timing fields: no offsets, no opening, no photo finish."""
    view = fed([(BASE, [{"t": 5, "verdict": "pile_won", "seat": 2, "reason": "double",
                         "cards": 3}, {"t": 9, "verdict": "slap_lost", "seat": 0, "to": 2}])])
    assert view.scene()["race"]["line"] == "Race · Cia WON · Anna · double"


def test_the_statistics_table_at_game_end_only() -> None:
    assert timing_scene(dict(OVER, over=False)) is None
    assert timing_scene(dict(BASE, over=True)) is None  # no statistics (another game)
    got = timing_scene(dict(OVER, seats=NAMES))
    assert got is not None
    assert [list(r.values()) for r in got["rows"]] == [
        ["Anna", "9", "2", "1", "6", "3", "301.250 ms", "260.000 ms"],
        ["Bo", "8", "1", "0", "7", "4", "280.000 ms", "212.900 ms"],
        ["Cia", "12", "9", "2", "1", "0", "230.500 ms", "212.400 ms"],
        ["Dag", "0", "0", "0", "0", "12", "-", "-"]]
    drawn = text(render(dict(OVER, seats=NAMES), [], "online"))
    assert "Slap statistics" in drawn
    assert "Cia  │    12 │   9 │     2 │    1 │      0 │ 230.500 ms │ 212.400 ms" in drawn
    assert "Slap statistics" not in text(render(dict(BASE, seats=NAMES), [], "online"))


def test_the_simulators_view_shows_the_race_of_its_recent_verdicts() -> None:
    """``render(state, events)`` with no view (``referee simulate``) finds the race in the
    verdicts it is given; it has no earlier state, so it does not name the card."""
    drawn = text(render(dict(BASE, seats=NAMES), RACE[2][1] + RACE[3][1], "online"))
    assert "Race: a card laid · Cia +212.400 ms WON · Bo +212.900 ms (+500 µs)" in drawn


def test_race_scene_of_nothing() -> None:
    assert race_scene(None, NAMES) is None
    assert RaceWatch().feed([{"t": 1, "verdict": "challenge", "by": 0}]).latest is None


# ------------------------------------------------------------------ web page


TICKS = """[...document.querySelectorAll('#race svg.timeline .tick')].map((t) => ({
  name: t.dataset.name, kind: t.dataset.kind, offset: Number(t.dataset.offsetNs),
  x: Number(t.getAttribute('x1'))}))"""
SEATS_TOP = "document.getElementById('seats').getBoundingClientRect().top"
SVG = """(() => { const s = document.querySelector('#race svg.timeline');
  const r = s.getBoundingClientRect();
  return {span: Number(s.dataset.spanNs), x0: Number(s.dataset.x0), x1: Number(s.dataset.x1),
          bottom: r.bottom, width: r.width, height: innerHeight,
          label: Math.min(...[...s.querySelectorAll('text.label')].map(
                 (t) => t.getBoundingClientRect().height))}; })()"""


@pytest.mark.slow
def test_the_web_page_draws_the_race_as_a_timeline(mosquitto: Broker, chromium: Chromium,
                                                   tmp_path: Path) -> None:
    with feed_thread(mosquitto, "race", NAMES) as feed, \
            web_display(mosquitto.url("display"), "race") as page:
        chromium.goto(page)
        chromium.wait("document.body.dataset.connected === 'true'")
        for state, verdicts in RACE:  # one change at a time, as at a table
            feed.publish(state, verdicts)
            wait_flushed(feed)
        chromium.wait(f"document.body.dataset.seq === '{len(RACE)}' && "
                      "document.querySelectorAll('#race svg.timeline .tick').length === 4")
        shot = chromium.screenshot(tmp_path / "race-timeline.png")
        shutil.copy(tmp_path / "race-timeline.png", "/tmp/race-timeline.png")
        assert png_size(shot) == (1280, 720)

        ticks = chromium.js(TICKS)
        svg = chromium.js(SVG)
        # In the order of the slaps, each placed by its offset from the lay (the mark at x0).
        assert [t["name"] for t in sorted(ticks, key=lambda t: t["x"])] == [
            "Cia", "Bo", "Anna", "Dag"]
        assert [t["kind"] for t in ticks] == ["won", "lost", "lost", "lost"]
        assert svg["span"] == 431_250_000
        for t in ticks:
            want = svg["x0"] + t["offset"] / svg["span"] * (svg["x1"] - svg["x0"])
            assert t["x"] == pytest.approx(want, abs=0.01), t
        assert ticks[-1]["x"] == pytest.approx(svg["x1"])  # the last slap ends the axis
        assert float(chromium.js("document.querySelector('#race .lay').getAttribute('x')")) \
            == svg["x0"] - 6  # the lay mark, 12 wide, centred on x0
        # The photo finish: a badge; the margins in µs and ms beside the ticks.
        shown = chromium.js("document.getElementById('race').textContent")
        assert "Photo finish" in shown and "Race · Cia won · double · by 500 µs" in shown
        assert "5♠ laid" in shown
        lanes = chromium.js("[...document.querySelectorAll('#race .slap')].map((g) => "
                            "[...g.querySelectorAll('text')].map((t) => t.textContent))")
        assert lanes == [["Cia", "+212.400 ms", "WON"], ["Bo", "+212.900 ms", "+500 µs"],
                         ["Anna", "+260.000 ms", "+47.600 ms"],
                         ["Dag", "+431.250 ms", "+218.850 ms"]]
        # Readable across a table: labels at least 24 px, all of it on the screen, above the
        # seats.
        print(f"race labels {svg['label']:.1f} px high on a {svg['width']:.0f} px wide "
              f"timeline, its foot at {svg['bottom']:.0f} of {svg['height']} px")
        assert svg["label"] >= 24 and svg["bottom"] <= svg["height"], svg
        assert svg["bottom"] <= chromium.js(SEATS_TOP), svg

        # Other screens: the timeline in the room the table leaves it, never over the seats,
        # its words 20 px or more; or else the race as one line of words.
        for width, height in [(1920, 1080), (768, 1024), (1280, 720)]:
            show(chromium, width, height)
            chromium.screenshot(tmp_path / f"race-{width}x{height}.png")
            race_box = chromium.js("document.getElementById('race').getBoundingClientRect()"
                                   ".bottom")
            assert race_box <= chromium.js(SEATS_TOP) + 0.5, (width, height)
            if chromium.js("!!document.querySelector('#race svg.timeline')"):
                assert chromium.js(SVG)["label"] >= 20, (width, height)
            else:
                assert chromium.js("document.querySelector('#race .race-line').textContent"
                                   ).startswith("5♠ laid · Cia +212.400 ms WON · Bo"), (width,
                                                                                     height)
        assert chromium.js(TICKS) == ticks  # drawn again the same at the first size

        # Game over: the seats' statistics.
        feed.publish(OVER, [{"t": LAY + 20_000 * MS, "verdict": "game_over", "winners": [2]}])
        chromium.wait(f"document.body.dataset.seq === '{len(RACE) + 1}' && "
                      "!document.getElementById('timing').hidden")
        rows = chromium.js("[...document.querySelectorAll('#timing tr')].map((r) => "
                           "[...r.children].map((c) => c.textContent))")
        assert rows[0] == ["Seat", "Slaps", "Won", "False", "Lost", "Missed", "Median", "Best"]
        assert rows[3] == ["Cia", "12", "9", "2", "1", "0", "230.500 ms", "212.400 ms"]
        # The last race stays, as its heading line: the statistics take the room.
        assert chromium.js("document.querySelector('#race .race-head').textContent") == (
            "Race · Cia won · double · by 500 µs Photo finish")
        assert chromium.js("!document.querySelector('#race svg')") is True
        assert chromium.js("document.getElementById('race').getBoundingClientRect().bottom") \
            <= chromium.js(SEATS_TOP)
        assert chromium.js("document.getElementById('timing').getBoundingClientRect().bottom") \
            <= chromium.js(SEATS_TOP)  # under the winner, above the seats
        chromium.screenshot(tmp_path / "race-statistics.png")
        shutil.copy(tmp_path / "race-statistics.png", "/tmp/race-statistics.png")
