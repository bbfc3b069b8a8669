"""Deals: the two shapes a game starts from, dealing by a game's rule, and their journal form.

A pile game (Beggar My Neighbour, Banka bäver) starts from a :class:`PileDeal`, Vändåtta from a
:class:`HandDeal`. How many cards each seat gets is the game's own rule (``Game.counts`` in
:mod:`referee.games`); the functions here deal by such counts and know no game by name.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from referee.cards import Card, cards_text, parse_card, shuffled_deck
from referee.errors import CardError, DealError

__all__ = [
    "Deal",
    "DealError",
    "DealKind",
    "HandDeal",
    "PileDeal",
    "by_seat",
    "deal_from_json",
    "deal_hands",
    "deal_piles",
    "deal_to_json",
    "next_dealer",
    "reshuffled",
    "top_holder",
]


@dataclass(frozen=True)
class PileDeal:
    """Pile games: each seat's stack (top first) and the leftover centre pile (bottom first).

    ``None`` in a stack or pile is a card whose face is not known (observed mode).
    """

    stacks: tuple[tuple[Card | None, ...], ...]
    pile: tuple[Card | None, ...] = ()


@dataclass(frozen=True)
class HandDeal:
    """Vändåtta: the hands, the stock (top first) and the upcard; ``None`` for unseen cards."""

    hands: tuple[tuple[Card | None, ...], ...]
    stock: tuple[Card | None, ...]
    upcard: Card | None


Deal = PileDeal | HandDeal
#: Which shape of deal a game starts from.
DealKind = Literal["pile", "hand"]


def by_seat(in_order: Sequence[int], dealer: int) -> list[int]:
    """Counts given in dealing order (left of the dealer first) re-indexed by seat number."""
    n = len(in_order)
    counts = [0] * n
    for i, c in enumerate(in_order):
        counts[(dealer + 1 + i) % n] = c
    return counts


def top_holder(stacks: Sequence[Sequence[Card | None]], card: Card) -> int | None:
    """The seat whose stack (top first) has ``card`` on top, if any: where a laid card came
    from in the pile games."""
    return next((seat for seat, stack in enumerate(stacks) if stack and stack[0] == card), None)


def next_dealer(dealer: int, n: int, out: Collection[int] = ()) -> int:
    """The deal passes clockwise: the next seat after ``dealer`` that is not ``out``."""
    return next(((dealer + k) % n for k in range(1, n + 1) if (dealer + k) % n not in out),
                dealer)


def deal_piles(seed: int, in_order: Sequence[int], left: int, dealer: int) -> PileDeal:
    """Shuffle with ``seed`` and deal one card at a time round the table, left of the dealer
    first, ``in_order[i]`` cards to the i-th seat; each card lands on top of the seat's stack.
    The last ``left`` cards are the centre pile."""
    deck = shuffled_deck(seed)
    n = len(in_order)
    stacks: list[list[Card]] = [[] for _ in range(n)]
    pos = 0
    dealt = [0] * n
    while pos < 52 - left:
        for i in range(n):
            if dealt[i] < in_order[i] and pos < 52 - left:
                stacks[(dealer + 1 + i) % n].insert(0, deck[pos])
                dealt[i] += 1
                pos += 1
    return PileDeal(stacks=tuple(tuple(s) for s in stacks), pile=tuple(deck[pos:]))


def deal_hands(seed: int, n: int, dealer: int, hand_size: int) -> HandDeal:
    """Shuffle with ``seed`` and deal ``hand_size`` cards to each seat, left of the dealer
    first; the next card is the upcard and the rest the stock (top first)."""
    deck = shuffled_deck(seed)
    hands = [deck[i * hand_size:(i + 1) * hand_size] for i in range(n)]
    seats: list[tuple[Card, ...]] = [()] * n
    for i, hand in enumerate(hands):
        seats[(dealer + 1 + i) % n] = tuple(hand)
    rest = deck[n * hand_size:]
    return HandDeal(hands=tuple(seats), stock=tuple(rest[1:]), upcard=rest[0])


def reshuffled(discards: Sequence[Card | str | None], rng: random.Random) -> tuple[Card, ...]:
    """The new stock when the discards are turned (docs/rules.md §3): every discard but the top one
    (the last), shuffled with ``rng``; cards not seen (``None``) are left out."""
    stock = [c if isinstance(c, Card) else parse_card(c) for c in discards[:-1] if c is not None]
    rng.shuffle(stock)
    return tuple(stock)


def _cards(value: Any, what: str) -> tuple[Card, ...]:
    if not isinstance(value, list):
        raise DealError(f"{what} must be a list of cards")
    try:
        return tuple(parse_card(v) for v in value)
    except CardError as exc:
        raise DealError(f"{what}: {exc}") from exc


def deal_from_json(kind: DealKind, n: int, obj: Any) -> Deal:
    """Read the header's ``deal`` object of a game dealt as ``kind`` with ``n`` seats; checks
    that every card is there once at most."""
    if not isinstance(obj, dict):
        raise DealError("'deal' must be an object or null")
    every: list[Card | None]
    deal: Deal
    if kind == "hand":
        for key in ("hands", "stock", "upcard"):
            if key not in obj:
                raise DealError(f"'deal' lacks {key!r}")
        hands = obj["hands"]
        if not isinstance(hands, list) or len(hands) != n:
            raise DealError(f"'deal.hands' must list one hand per seat ({n})")
        hand_deal = HandDeal(
            hands=tuple(_cards(h, f"deal.hands[{i}]") for i, h in enumerate(hands)),
            stock=_cards(obj["stock"], "deal.stock"),
            upcard=_cards([obj["upcard"]], "deal.upcard")[0],
        )
        every = [c for h in hand_deal.hands for c in h] + list(hand_deal.stock)
        every.append(hand_deal.upcard)
        deal = hand_deal
    else:
        if "stacks" not in obj:
            raise DealError("'deal' lacks 'stacks'")
        stacks = obj["stacks"]
        if not isinstance(stacks, list) or len(stacks) != n:
            raise DealError(f"'deal.stacks' must list one stack per seat ({n})")
        pile_deal = PileDeal(
            stacks=tuple(_cards(s, f"deal.stacks[{i}]") for i, s in enumerate(stacks)),
            pile=_cards(obj.get("pile", []), "deal.pile"),
        )
        every = [c for s in pile_deal.stacks for c in s] + list(pile_deal.pile)
        deal = pile_deal
    twice = [str(c) for c, k in Counter(every).items() if k > 1]
    if twice:
        raise DealError(f"the deal holds {', '.join(sorted(twice))} more than once")
    return deal


def deal_to_json(deal: Deal) -> dict[str, Any]:
    """The header's ``deal`` object."""
    if isinstance(deal, HandDeal):
        return {
            "hands": [cards_text(h) for h in deal.hands],
            "stock": cards_text(deal.stock),
            "upcard": None if deal.upcard is None else str(deal.upcard),
        }
    return {"stacks": [cards_text(s) for s in deal.stacks], "pile": cards_text(deal.pile)}
