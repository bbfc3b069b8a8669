"""Slap races (:mod:`referee.races`) on hand-made journals (``tests/data/races``), every figure
worked out by hand from the stamps in the journal (times in ms after the table clock's zero).

``photo_finish.jsonl`` (Anna 0, Bo 1, Cia 2; dealer Cia, so Anna lays first; no options):

* 500: Cia slaps before any card is laid: a false slap with no reaction time, a race with no
  opening.
* 1000 Anna lays 8C, 2000 Bo lays 8D: a double, opened at 2000. Cia slaps at 2212.4
  (+212.400 ms), Bo at 2212.9 (+212.900 ms), Anna at 2600 (+600 ms). Cia wins; Bo lost by
  2212.9 - 2212.4 = 0.5 ms = 500 µs, Anna by 600 - 212.4 = 387.6 ms. Deciding margin 500 µs:
  a photo finish.
* 3000 Cia (the winner) lays 5S; Anna slaps at 3150: false, 150 ms after that lay.
* 4000 Anna lays 4H, 5000 Bo lays 4S: a double. Bo slaps at 5300 (+300 ms) and wins, Cia at
  5305 (+305 ms) lost by 5 ms: not a photo finish. 6000 Bo lays 2D (the race is closed).

``tie_and_burn.jsonl`` (the same seats; ``false_slap_penalty=burn``, ``slap_resolution_us=5``):

* 1000 Anna lays 9C, 2000 Bo lays 9D: a double, Cia to lay next. Anna slaps at 2250.000, Cia
  at 2250.003: 3 µs apart, within the 5 µs resolution, so one instant. The tie rule starts at
  Cia (to lay), so Cia wins with ``tie`` and margin 3 µs; Anna's margin is 2250.000 - 2250.003
  = -3 µs (she was first). Photo finish (3 µs).
* 3000 Cia lays 7H, 4000 Anna lays 5C (bottom 7, top 5: nothing). 4100 Bo slaps: false,
  100 ms after the lay; he burns 5D under the pile: now the bottom (5D) matches the top (5C),
  so the burn opens a race at 4100. Cia slaps at 4350 (+250 ms after the burn) and wins
  (bottom match), Anna at 4360 (+260 ms) lost by 10 ms.
* 5000 Cia lays 6S, 6000 Anna lays 3D, her last card. Anna slaps at 6200: refused (no cards);
  Bo at 6210 (+210 ms): false, burns 2S (bottom 2, top 3: nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee import read_journal, replay
from referee.races import (
    Opening,
    Race,
    RaceTracker,
    journal_openings,
    journal_races,
    margin_text,
    ms_text,
    races,
    seat_statistics,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "races"
MS = 1_000_000
US = 1_000


def load(name: str) -> list[Race]:
    return journal_races(read_journal(DATA / f"{name}.jsonl"))


def timeline(race: Race) -> list[tuple[int, str, int | None, int | None]]:
    """(seat, kind, offset_ns, margin_ns) of each slap, in the order of their edges."""
    return [(s.seat, s.kind, s.offset_ns, s.margin_ns) for s in race.slaps]


def test_a_photo_finish_its_margins_and_the_races_around_it() -> None:
    before, double, false, second = load("photo_finish")
    assert before.opening is None and before.ruling == "false_slap"
    assert timeline(before) == [(2, "false", None, None)]
    assert before.slaps[0].reaction_ns is None

    assert double.opening == Opening(2000 * MS, 1, "8D", "lay")
    assert timeline(double) == [(2, "won", 212_400_000, None),
                                (1, "lost", 212_900_000, 500 * US),
                                (0, "lost", 600 * MS, 387_600_000)]
    assert (double.winner, double.reason, double.tie) == (2, "double", False)
    assert double.deciding_margin_ns == 500 * US and double.photo_finish
    assert double.explanation(["Anna", "Bo", "Cia"]) == (
        "Cia wins the pile (a double): first slap, 500 µs ahead of Bo")

    assert false.opening == Opening(3000 * MS, 2, "5S", "lay")
    assert timeline(false) == [(0, "false", 150 * MS, None)]
    assert false.winner is None and not false.photo_finish

    assert second.opening == Opening(5000 * MS, 1, "4S", "lay")
    assert timeline(second) == [(1, "won", 300 * MS, None), (2, "lost", 305 * MS, 5 * MS)]
    assert second.deciding_margin_ns == 5 * MS and not second.photo_finish


def test_a_declared_tie_a_burn_that_opens_a_race_and_a_refused_slap() -> None:
    tie, false, burn, refused = load("tie_and_burn")
    assert tie.opening == Opening(2000 * MS, 1, "9D", "lay")
    assert timeline(tie) == [(0, "lost", 250 * MS, -3 * US), (2, "won", 250 * MS + 3 * US, None)]
    assert tie.tie and tie.winner == 2 and tie.deciding_margin_ns == 3 * US and tie.photo_finish
    assert "by the tie rule: Cia and Anna slapped in the same instant (3 µs apart" in (
        tie.explanation(["Anna", "Bo", "Cia"]))

    assert false.opening == Opening(4000 * MS, 0, "5C", "lay")
    assert timeline(false) == [(1, "false", 100 * MS, None)]
    assert false.slaps[0].burned == "5D"

    assert burn.opening == Opening(4100 * MS, 1, "5D", "burn")
    assert timeline(burn) == [(2, "won", 250 * MS, None), (0, "lost", 260 * MS, 10 * MS)]
    assert burn.reason == "bottom_match" and not burn.photo_finish
    assert [s.reaction_ns for s in burn.slaps] == [250 * MS, 260 * MS]

    assert refused.opening == Opening(6000 * MS, 0, "3D", "lay")
    assert [(s.seat, s.kind, s.offset_ns, s.code) for s in refused.slaps] == [
        (0, "refused", 200 * MS, "no_cards"), (1, "false", 210 * MS, None)]
    assert refused.ruling == "false_slap"


def test_the_judging_pass_gives_the_replays_verdicts() -> None:
    for name in ("photo_finish", "tie_and_burn"):
        journal = read_journal(DATA / f"{name}.jsonl")
        openings, verdicts = journal_openings(journal)
        assert [v.to_json() for v in verdicts] == [v.to_json() for v in
                                                   replay(journal).verdicts]
        assert len(openings) == 6  # every lay of both journals was accepted


def test_a_display_without_the_lays_finds_the_same_races_from_the_verdicts() -> None:
    """The feed has no lays: openings are known by their time only, races are the same."""
    journal = read_journal(DATA / "photo_finish.jsonl")
    verdicts = [v.to_json() for v in replay(journal).verdicts]
    found = races(verdicts)
    assert [timeline(r) for r in found] == [timeline(r) for r in load("photo_finish")]
    assert found[1].opening == Opening(2000 * MS, None, None, "seen")


def test_a_display_that_missed_the_winning_verdict_knows_the_winner_from_the_loser() -> None:
    tracker = RaceTracker()
    race = tracker.verdict({"t": 2212 * MS, "verdict": "slap_lost", "seat": 1, "to": 2,
                            "margin_ns": 400 * US, "reaction_ns": 212 * MS})
    assert race is not None and race.winner == 2 and race.winner_t == 2212 * MS - 400 * US
    assert race.photo_finish and race.opening == Opening(2000 * MS, None, None, "seen")
    assert race.explanation(["A", "B", "C"]).endswith("these slaps came too late")


def test_verdicts_from_before_the_timing_fields_still_make_races() -> None:
    """A referee that sends no ``reaction_ns``: the slap starts a race with no known opening;
    a slap lost to its winner joins it; other verdicts are no slaps."""
    tracker = RaceTracker()
    won = tracker.verdict({"t": 5, "verdict": "pile_won", "seat": 0, "reason": "double",
                           "cards": 4})
    late = tracker.verdict({"t": 9, "verdict": "slap_lost", "seat": 1, "to": 0})
    assert won is late and won is not None and [s.kind for s in won.slaps] == ["won", "lost"]
    assert tracker.verdict({"t": 9, "verdict": "pile_won", "seat": 0, "reason": "challenge",
                            "cards": 4}) is None
    assert tracker.verdict({"t": 9, "verdict": "challenge", "by": 0, "seat": 1}) is None
    again = tracker.verdict({"t": 20, "verdict": "pile_won", "seat": 1, "reason": "double",
                             "cards": 2})
    assert again is not won and len(tracker.races) == 2 and again is not None
    assert not again.timed and again.opening is None and again.winner == 1


def test_statistics_rows_from_the_state() -> None:
    """photo_finish: Anna lost at 600 ms, slapped falsely once, let the 4S double pass; Bo lost
    at 212.9 ms and won at 300 ms (median of two: the lower, 212.9 ms); Cia won at 212.4 ms,
    lost at 305 ms, slapped falsely before any lay."""
    state = replay(read_journal(DATA / "photo_finish.jsonl")).state
    rows = seat_statistics(state)
    assert [(r["name"], r["slaps"], r["wins"], r["false_slaps"], r["races_lost"], r["missed"],
             r["median_reaction_ns"], r["best_reaction_ns"]) for r in rows] == [
        ("Anna", 2, 0, 1, 1, 1, 600 * MS, 600 * MS),
        ("Bo", 2, 1, 0, 1, 0, 212_900_000, 212_900_000),
        ("Cia", 3, 1, 1, 1, 0, 212_400_000, 212_400_000)]
    assert seat_statistics({"game": "vandatta"}) == []
    assert seat_statistics({"timing": [{"slaps": "x"}]})[0]["slaps"] is None


@pytest.mark.parametrize(("ns", "ms", "margin"), [
    (212_400_000, "+212.400 ms", "+212.400 ms"),
    (500_000, "+0.500 ms", "+500 µs"),
    (-3_000, "-0.003 ms", "-3 µs"),
    (400, "+0.000 ms", "+0.4 µs"),
    (0, "+0.000 ms", "+0 µs"),
])
def test_times_in_words(ns: int, ms: str, margin: str) -> None:
    assert ms_text(ns) == ms and margin_text(ns) == margin
