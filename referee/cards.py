"""Cards of the standard 52-card French deck, and their text forms.

A card prints as rank then suit: ``2C`` … ``10H``, ``JS``, ``QD``, ``KC``, ``AH``.
Parsing also accepts ``T`` for ten and the Swedish/Danish names a person types
(``hjärter dam``, ``klør konge``, ``spader 7``, ``ess ruter``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import FrozenInstanceError

from referee.errors import CardError, shown

SUITS = "CDHS"
RANKS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
RANK_TEXT = {2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", 10: "10",
             11: "J", 12: "Q", 13: "K", 14: "A"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
RANK_NAMES = {11: "jack", 12: "queen", 13: "king", 14: "ace"}

JACK, QUEEN, KING, ACE = 11, 12, 13, 14

#: Cards a court card demands in the two pile games (J 1, Q 2, K 3, A 4).
COURT_DEMAND = {JACK: 1, QUEEN: 2, KING: 3, ACE: 4}

_RANK_WORDS = {
    "j": 11, "knekt": 11, "knægt": 11, "kn": 11,
    "q": 12, "dam": 12, "dronning": 12,
    "k": 13, "kung": 13, "konge": 13,
    "a": 14, "ess": 14, "es": 14, "t": 10,
}
_SUIT_WORDS = {
    "c": "C", "♣": "C", "klöver": "C", "klover": "C", "klør": "C", "klor": "C",
    "d": "D", "♦": "D", "ruter": "D",
    "h": "H", "♥": "H", "hjärter": "H", "hjarter": "H", "hjerter": "H",
    "s": "S", "♠": "S", "spader": "S",
}


class Card:
    """One playing card: ``rank`` 2..14 (11 J, 12 Q, 13 K, 14 A) and ``suit`` one of ``CDHS``.

    A value type with one object per card: ``Card(12, "H")``, :func:`parse_card` and
    :func:`full_deck` give the very same object for the queen of hearts, so two cards are equal
    exactly when they are the same object. Sets and dicts of cards hash them by identity, in
    C; ``is`` tells two cards apart at no cost, where ``==`` between two different cards calls
    back into Python (cards order, by rank then suit, in Python), so the engines' hot paths
    compare cards with ``is``. Cards are immutable (as the frozen dataclass they were)."""

    __slots__ = ("rank", "suit", "_text")
    __match_args__ = ("rank", "suit")
    rank: int
    suit: str
    _text: str

    def __new__(cls, rank: int, suit: str) -> Card:
        try:
            return _CARD_OF[rank, suit]
        except (KeyError, TypeError):
            raise CardError(f"no such card: rank {rank!r}, suit {suit!r}") from None

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Card):
            return (self.rank, self.suit) < (other.rank, other.suit)
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, Card):
            return (self.rank, self.suit) <= (other.rank, other.suit)
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if isinstance(other, Card):
            return (self.rank, self.suit) > (other.rank, other.suit)
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if isinstance(other, Card):
            return (self.rank, self.suit) >= (other.rank, other.suit)
        return NotImplemented

    def __reduce__(self) -> tuple[type[Card], tuple[int, str]]:
        return Card, (self.rank, self.suit)  # unpickled as the one object of its card

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __str__(self) -> str:
        return self._text  # RANK_TEXT[rank] + suit, made once

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @property
    def is_court(self) -> bool:
        """J, Q, K or A: the demand cards of the pile games."""
        return self.rank >= JACK

    @property
    def demand(self) -> int:
        """Cards this card demands in the pile games (0 for a number card)."""
        return COURT_DEMAND.get(self.rank, 0)

    def name(self) -> str:
        """Plain English, e.g. ``queen of hearts``."""
        rank = RANK_NAMES.get(self.rank, str(self.rank))
        return f"{rank} of {SUIT_NAMES[self.suit]}"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read any accepted text form; raises :class:`CardError` with the text otherwise."""
        return parse_card(text)


def _rank_of(word: str) -> int | None:
    if word.isdigit():
        value = int(word)
        return value if 2 <= value <= 10 else None
    return _RANK_WORDS.get(word)


def parse_card(text: str) -> Card:
    """Parse ``QH``, ``10H``, ``TH``, ``hjärter dam``, ``dam hjärter``, ``klør 7`` …

    Every text of a card gives the same object, the one :func:`full_deck` hands out: the
    engines compare the cards of a parsed journal by identity first (``list.index``, ``in``),
    as they do the cards of a seeded deal."""
    card = _CANONICAL_TEXT.get(text) if text.__class__ is str else None
    if card is not None:  # the journal's own form, ``QH``
        return card
    if not isinstance(text, str):
        raise CardError(f"not a card: {shown(text)} (expected text such as 'QH')")
    raw = text.strip().lower()
    words = [w for w in re.split(r"[\s_\-]+", raw) if w]
    if len(words) == 2:
        for rank_word, suit_word in (words, words[::-1]):
            rank, suit = _rank_of(rank_word), _SUIT_WORDS.get(suit_word)
            if rank is not None and suit is not None:
                return _CARD_OF[rank, suit]
    elif len(words) == 1 and len(raw) >= 2:
        rank, suit = _rank_of(raw[:-1]), _SUIT_WORDS.get(raw[-1])
        if rank is not None and suit is not None:
            return _CARD_OF[rank, suit]
    raise CardError(
        f"not a card: {text!r} (expected rank then suit, e.g. 'QH', '10D', 'TS', 'hjärter dam')"
    )


def full_deck() -> list[Card]:
    """The 52 cards in a fixed order: clubs 2..A, diamonds, hearts, spades (a new list each
    call; cards are immutable, so the same 52 are handed out)."""
    return list(_FULL_DECK)


def _new_card(rank: int, suit: str) -> Card:
    card = object.__new__(Card)
    object.__setattr__(card, "rank", rank)
    object.__setattr__(card, "suit", suit)
    object.__setattr__(card, "_text", RANK_TEXT[rank] + suit)
    return card


_FULL_DECK = tuple(_new_card(rank, suit) for suit in SUITS for rank in RANKS)
#: The one object of each card, by (rank, suit).
_CARD_OF = {(c.rank, c.suit): c for c in _FULL_DECK}
#: Each card by its text form (``QH``, ``10H``): what a journal holds.
_CANONICAL_TEXT = {str(c): c for c in _FULL_DECK}


def shuffled_deck(seed: int) -> list[Card]:
    """The full deck shuffled by ``random.Random(seed)``: the same seed, the same order."""
    deck = full_deck()
    random.Random(seed).shuffle(deck)
    return deck


def card_text(card: Card | None) -> str | None:
    """The text form, or ``None`` for a card whose face is unknown."""
    return None if card is None else str(card)


def cards_text(cards: Iterable[Card | None]) -> list[str | None]:
    """Text forms of several cards (``None`` kept for unknown faces)."""
    return [None if c is None else str(c) for c in cards]
