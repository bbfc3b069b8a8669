"""Dealing: seeded deals, the dealing rule's counts, and the journal form of a deal."""

from __future__ import annotations

from collections import Counter
from typing import Any

from referee.cards import Card, CardError, cards_text, parse_card, shuffled_deck
from referee.engine import Deal, HandDeal, PileDeal

HAND_SIZE = 6  # Vändåtta


class DealError(ValueError):
    """A deal that does not fit the game (wrong counts, a card twice, an unreadable card)."""


def pile_counts(game: str, n: int) -> tuple[list[int], int]:
    """Cards per seat in dealing order (left of the dealer first) and the cards left over
    (the centre pile in Banka bäver, the stock and upcard in Vändåtta)."""
    if game == "banka-bever":
        return [52 // n] * n, 52 % n
    if game == "vandatta":
        return [HAND_SIZE] * n, 52 - HAND_SIZE * n
    # Beggar My Neighbour: the whole deck, one at a time, left of the dealer first.
    return [52 // n + (1 if i < 52 % n else 0) for i in range(n)], 0


def seat_counts(game: str, n: int, dealer: int) -> tuple[list[int], int]:
    """Cards per seat indexed by seat number, and the leftover pile size."""
    by_order, left = pile_counts(game, n)
    counts = [0] * n
    for i, c in enumerate(by_order):
        counts[(dealer + 1 + i) % n] = c
    return counts, left


def seeded_deal(game: str, n: int, dealer: int, seed: int) -> Deal:
    """Shuffle with ``seed`` and deal by the game's rule; the same seed gives the same deal."""
    deck = shuffled_deck(seed)
    if game == "vandatta":
        hands = [deck[i * HAND_SIZE:(i + 1) * HAND_SIZE] for i in range(n)]
        # Dealt from the left of the dealer: seat (dealer+1+i) gets the i-th hand.
        by_seat: list[tuple[Card, ...]] = [()] * n
        for i, hand in enumerate(hands):
            by_seat[(dealer + 1 + i) % n] = tuple(hand)
        rest = deck[n * HAND_SIZE:]
        return HandDeal(hands=tuple(by_seat), stock=tuple(rest[1:]), upcard=rest[0])
    counts, left = pile_counts(game, n)
    stacks: list[list[Card]] = [[] for _ in range(n)]
    pos = 0
    # One card at a time round the table; each card dealt lands on top of the seat's stack.
    dealt = [0] * n
    while pos < 52 - left:
        for i in range(n):
            if dealt[i] < counts[i] and pos < 52 - left:
                stacks[(dealer + 1 + i) % n].insert(0, deck[pos])
                dealt[i] += 1
                pos += 1
    return PileDeal(stacks=tuple(tuple(s) for s in stacks), pile=tuple(deck[pos:]))


def _cards(value: Any, what: str) -> tuple[Card, ...]:
    if not isinstance(value, list):
        raise DealError(f"{what} must be a list of cards")
    try:
        return tuple(parse_card(v) for v in value)
    except CardError as exc:
        raise DealError(f"{what}: {exc}") from None


def deal_from_json(game: str, n: int, obj: Any) -> Deal:
    """Read the header's ``deal`` object for ``game`` with ``n`` seats; checks every card once."""
    if not isinstance(obj, dict):
        raise DealError("'deal' must be an object or null")
    if game == "vandatta":
        for key in ("hands", "stock", "upcard"):
            if key not in obj:
                raise DealError(f"'deal' lacks {key!r}")
        hands = obj["hands"]
        if not isinstance(hands, list) or len(hands) != n:
            raise DealError(f"'deal.hands' must list one hand per seat ({n})")
        deal: Deal = HandDeal(
            hands=tuple(_cards(h, f"deal.hands[{i}]") for i, h in enumerate(hands)),
            stock=_cards(obj["stock"], "deal.stock"),
            upcard=_cards([obj["upcard"]], "deal.upcard")[0],
        )
        every = [c for h in deal.hands for c in h] + list(deal.stock) + [deal.upcard]
    else:
        if "stacks" not in obj:
            raise DealError("'deal' lacks 'stacks'")
        stacks = obj["stacks"]
        if not isinstance(stacks, list) or len(stacks) != n:
            raise DealError(f"'deal.stacks' must list one stack per seat ({n})")
        deal = PileDeal(
            stacks=tuple(_cards(s, f"deal.stacks[{i}]") for i, s in enumerate(stacks)),
            pile=_cards(obj.get("pile", []), "deal.pile"),
        )
        every = [c for s in deal.stacks for c in s] + list(deal.pile)
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
