"""Card text forms: every form docs/rules.md names parses, prints back, and junk is refused."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.cards import Card, full_deck, parse_card, shuffled_deck
from referee.errors import CardError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("QH", "QH"), ("10H", "10H"), ("TH", "10H"), ("th", "10H"), ("2C", "2C"), ("as", "AS"),
        ("hjärter dam", "QH"), ("dam hjärter", "QH"), ("klöver knekt", "JC"),
        ("klør konge", "KC"), ("hjerter dronning", "QH"), ("spader ess", "AS"),
        ("ruter es", "AD"), ("knægt ruter", "JD"), ("kung spader", "KS"), ("ruter 7", "7D"),
        ("  kS ", "KS"), ("Q♥", "QH"),
    ],
)
def test_parse_every_form(text: str, expected: str) -> None:
    assert str(parse_card(text)) == expected


@pytest.mark.parametrize(
    "text", ["", "1H", "11H", "QX", "Q", "H", "hjärter", "dam dam", "ZZ", "QHH"]
)
def test_junk_is_refused_with_the_text(text: str) -> None:
    with pytest.raises(CardError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


def test_non_text_is_refused() -> None:
    with pytest.raises(CardError):
        parse_card(12)  # type: ignore[arg-type]


@given(st.sampled_from(full_deck()))
def test_print_parse_round_trip(card: Card) -> None:
    assert parse_card(str(card)) == card


def test_deck_is_52_distinct_and_seeded_shuffle_repeats() -> None:
    assert len(set(full_deck())) == 52
    assert shuffled_deck(7) == shuffled_deck(7)
    assert shuffled_deck(7) != shuffled_deck(8)
    assert sorted(shuffled_deck(3)) == sorted(full_deck())


def test_court_demands() -> None:
    assert [parse_card(c).demand for c in ("JH", "QH", "KH", "AH", "10H")] == [1, 2, 3, 4, 0]


@pytest.mark.parametrize("text", ["QH", "qh", "Q♥", "hjärter dam", "dam hjärter", "  QH "])
def test_every_form_gives_the_one_object_of_its_card(text: str) -> None:
    """Cards compare by identity in C (issue 36): each card is one object, however made."""
    queen = Card(12, "H")
    assert parse_card(text) is queen and queen is full_deck()[full_deck().index(queen)]
    assert queen == parse_card("QH") and queen != Card(12, "S") and queen != "QH"


def test_a_card_is_an_immutable_value() -> None:
    import copy
    import dataclasses
    import pickle

    queen = Card(12, "H")
    assert pickle.loads(pickle.dumps(queen)) is queen
    assert copy.copy(queen) is queen and copy.deepcopy([queen])[0] is queen
    assert {queen: 1}[parse_card("QH")] == 1 and len({queen, Card(12, "H"), Card(12, "S")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        queen.rank = 13  # type: ignore[misc]
    assert sorted([Card(12, "S"), Card(2, "H"), Card(12, "C")]) == [
        Card(2, "H"), Card(12, "C"), Card(12, "S")]
    assert Card(2, "H") < Card(2, "S") <= Card(2, "S") < Card(3, "C")
    for rank, suit in ((1, "H"), (15, "H"), (2, "X"), (2, "CD"), ([2], "C")):
        with pytest.raises(CardError, match="no such card"):
            Card(rank, suit)  # type: ignore[arg-type]
