"""Plain words for verdicts (``referee.describe``): seat names, never seat numbers or Python
spellings, in what a person at the table reads (issue 10.15)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import referee
from referee.cards import Card
from referee.deal import PileDeal
from referee.describe import describe
from referee.games import new_engine, parse_options
from referee.model import Input

DATA = Path(__file__).resolve().parents[1] / "data"
NAMES = ("Anna", "Bo", "Cia", "Dan")
SEAT_NUMBER = re.compile(r"\bseat \d")


def _journals() -> list[Path]:
    return sorted(p for p in DATA.rglob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


def test_every_refusal_of_every_journal_names_its_seats() -> None:
    """Engines write a seat in a reason as ``seat N``; describe puts the table's names there,
    once for every refusal of every game."""
    refusals = 0
    for path in _journals():
        journal = referee.read_journal(path)
        seats = journal.header.seats
        for v in referee.replay(journal).verdicts:
            if v.verdict != "illegal":
                continue
            refusals += 1
            text = describe(v.to_json(), seats)
            assert not SEAT_NUMBER.search(text), (path.name, text)
            assert "None" not in text and "True" not in text, (path.name, text)
    assert refusals > 50


def _pile_engine(game: str, stacks: list[str], **options: object) -> object:
    deal = PileDeal(tuple(tuple(Card.parse(c) for c in s.split()) for s in stacks), ())
    return new_engine(game, len(stacks), len(stacks) - 1, parse_options(game, options), deal)


def test_not_your_turn_in_every_pile_game_says_whose_turn_by_name() -> None:
    beggar = _pile_engine("beggar-my-neighbour", ["5H 6H", "7C 8C", "9D 2D"])
    v = beggar.apply(Input(1, 2, "lay"))  # type: ignore[attr-defined]
    assert describe(v[-1].to_json(), NAMES) == "Cia: not allowed — it is Anna's turn"

    banka = _pile_engine("banka-bever", ["QH 5S", "8D 6C", "9S 4D"])
    banka.apply(Input(1, 0, "lay"))  # type: ignore[attr-defined]
    v = banka.apply(Input(2, 2, "lay"))  # type: ignore[attr-defined]
    assert describe(v[-1].to_json(), NAMES) == "Cia: not allowed — Bo owes a card"


def test_with_names_leaves_what_is_not_a_seat_of_the_table() -> None:
    from referee.describe import with_names

    assert with_names("it is seat 1's turn", NAMES) == "it is Bo's turn"
    assert with_names("there is no seat 9 (seats 0..3)", NAMES) == \
        "there is no seat 9 (seats 0..3)"
    assert with_names("seat 2 and seat 10", ("A", "B", "C")) == "C and seat 10"
    assert with_names("seat 1", ()) == "seat 1"


@pytest.mark.parametrize(("verdict", "words"), [
    ({"verdict": "round_over", "winner": 2, "scores": [10, None, 0], "totals": [40, 104, 75]},
     "Cia wins the round — hand scores Anna 10, Bo out, Cia 0; totals Anna 40, Bo 104, "
     "Cia 75"),
    ({"verdict": "round_over", "winner": None, "scores": [10, None], "totals": None},
     "Round blocked — hand scores Anna 10, Bo not seen"),
    ({"verdict": "round_over", "winner": 0, "scores": [0, None, 5], "totals": [20, 30, 5]},
     "Anna wins the round — hand scores Anna 0, Bo not seen, Cia 5; totals Anna 20, Bo 30, "
     "Cia 5"),
])
def test_round_over_never_shows_none(verdict: dict[str, object], words: str) -> None:
    """A seat already out of the points game (null score, total 100 or more) has no hand to
    score: "out"; a hand with unseen cards is "not seen"."""
    assert describe(verdict, NAMES) == words
    from referee.describe import round_scores

    assert "None" not in round_scores(verdict, NAMES)


def test_every_notice_kind_has_words() -> None:
    """Every notice the table program publishes reads as a sentence, never the raw fallback."""
    from referee.model import NOTICE_KINDS

    for kind in NOTICE_KINDS:
        text = describe({"verdict": kind, "seat": 0, "button": "slap", "reason": "why",
                         "line": 3, "tag": "04AA", "act": "lay"}, ["Anna", "Bo"])
        assert not text.startswith(f"{kind}:"), (kind, text)


def test_a_desync_does_not_show_the_hidden_card_the_referee_expected() -> None:
    """The expected card is the top of the seat's face-down stack (issue 37): the words every
    display shows name the card laid, never the one expected."""
    text = describe({"verdict": "desync", "t": 1, "seat": 0, "expected": "QC", "got": "5S"},
                    NAMES)
    assert text == ("Anna: the table and the referee disagree — the 5 of spades is not the "
                    "card the referee expected")
    assert "queen" not in text.lower()


def test_a_game_the_time_limit_ended_says_why_and_who_holds_the_most() -> None:
    """Found by the 2026-12-07 CLI audit: "Game over: Anna wins" dropped the verdict's
    ``"reason": "time_limit"``, so the game seemed to stop for no reason."""
    from cardtable.i18n import language

    seats = ["Anna", "Bo", "Cia"]
    ended = {"t": 5, "verdict": "game_over", "winners": [0], "reason": "time_limit"}
    assert describe(ended, seats) == "Time is up: Anna holds the most cards and wins"
    assert describe({**ended, "winners": [0, 2]}, seats) == (
        "Time is up: Anna and Cia hold the most cards and win")
    assert describe(ended, seats, language("sv")) == (
        "Tiden är ute: Anna har flest kort och vinner")
    assert describe({**ended, "winners": []}, seats) == "Time is up: game over"
    assert describe({"t": 5, "verdict": "game_over", "winners": [1]}, seats) == (
        "Game over: Bo wins")
