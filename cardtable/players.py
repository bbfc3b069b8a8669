"""The virtual players, shared by both simulators (:mod:`cardtable.simulate` on a virtual
clock, :mod:`cardtable.fullstack` at a table run by the real service): their names, how fast
each of them reacts, who slaps in Banka bäver and what a Vändåtta player plays.

Everything a player decides comes from the seeded rng it is given, so a seed gives the same
players and the same game.
"""

from __future__ import annotations

import dataclasses
import operator
import random
from collections.abc import Callable, Mapping
from math import exp as _exp
from math import log as _log
from math import sqrt as _sqrt
from types import MappingProxyType
from typing import Any

from referee.cards import Card, full_deck, parse_card
from referee.games.banka_bever import BankaBever
from referee.games.vandatta import TurnOptions
from referee.model import Act, Input

DEFAULT_NAMES = ("Anna", "Bo", "Cia", "Dan", "Eva", "Frej", "Gun", "Hugo")

#: A player's base reaction in ms when it is their turn, per game: a card laid in Beggar My
#: Neighbour or Banka bäver, a choice made in Vändåtta.
TURN_MS: Mapping[str, float] = MappingProxyType(
    {"beggar-my-neighbour": 550, "banka-bever": 450, "vandatta": 1400}
)
#: The spread (sigma of the lognormal factor) of a reaction unless the caller says otherwise.
SPREAD = 0.25
_NS_PER_MS = 1_000_000
#: ``random.NV_MAGICCONST``, by the same expression.
_NV_MAGICCONST = 4 * _exp(-0.5) / _sqrt(2.0)


class Reactions:
    """How fast each virtual player reacts: every seat gets a skill factor (0.8 to 1.3) from
    ``rng`` at the start, and each reaction is ``base_ms`` times a lognormal factor times the
    seat's skill. The same rng drawn in the same order gives the same players."""

    def __init__(self, rng: random.Random, seats: int) -> None:
        self.rng = rng
        self.skill = [rng.uniform(0.8, 1.3) for _ in range(seats)]
        self._plain: random.Random | None = None  # the plain Random whose methods are below
        self._random: Callable[[], float] = rng.random
        self._getrandbits: Callable[[int], int] = rng.getrandbits

    def ms(self, seat: int, base_ms: float, spread: float = SPREAD) -> float:
        """One reaction of ``seat`` in ms."""
        return self.rng.lognormvariate(0, spread) * base_ms * self.skill[seat]

    def ns(self, seat: int, base_ms: float, spread: float = SPREAD) -> int:
        """One reaction in ns on a virtual table clock, plus up to 1000 ns of jitter (so two
        reactions rarely fall on the same instant).

        For a plain :class:`random.Random` the draws are made here as ``lognormvariate(0,
        spread)`` and ``randrange(1000)`` make them (the same calls of ``random()`` and
        ``getrandbits(10)`` with the same arithmetic, without their layers of calls); the
        same numbers come out (``tests/cardtable/test_players.py``)."""
        rng = self.rng
        if rng is not self._plain:
            if type(rng) is not random.Random:
                return (int(rng.lognormvariate(0, spread) * base_ms * self.skill[seat]
                            * _NS_PER_MS) + rng.randrange(1000))
            self._plain, self._random, self._getrandbits = rng, rng.random, rng.getrandbits
        uniform = self._random
        while True:  # random.Random.normalvariate (Kinderman and Monahan)
            u1 = uniform()
            u2 = 1.0 - uniform()
            z = _NV_MAGICCONST * (u1 - 0.5) / u2
            if z * z / 4.0 <= -_log(u2):
                break
        getrandbits = self._getrandbits
        jitter = getrandbits(10)  # random.Random._randbelow_with_getrandbits(1000)
        while jitter >= 1000:
            jitter = getrandbits(10)
        return int(_exp(z * spread) * base_ms * self.skill[seat] * _NS_PER_MS) + jitter

    def seconds(self, seat: int, base_ms: float, spread: float = SPREAD, *,
                speed: float = 1.0) -> float:
        """One reaction in seconds of real time, ``speed`` times faster than a person."""
        return self.ms(seat, base_ms, spread) / 1000 / speed


def choose_vandatta(legal: list[Input], hand_of: Callable[[int], list[Card | None]],
                    rng: random.Random) -> Input:
    """A virtual Vändåtta player's choice among the legal inputs: call lappen when one rank is
    left (mostly), lay rather than draw, keep eights and aces for later, lay many at once."""
    by_act: dict[str, list[Input]] = {}
    for inp in legal:
        by_act.setdefault(inp.act, []).append(inp)
    if "call" in by_act:
        hand = hand_of(by_act["call"][0].seat)
        if len({c.rank for c in hand if c is not None}) <= 1 and rng.random() < 0.85:
            return by_act["call"][0]
    plays = by_act.get("play", [])
    if plays:
        def score(inp: Input) -> tuple[int, int, float]:
            cards = inp.cards or ()
            special = sum(1 for c in cards if c.rank in (8, 14))
            return (-special if len(cards) > 1 else -special * 2, len(cards), rng.random())
        if rng.random() < 0.9:
            return max(plays, key=score)
        return rng.choice(plays)
    for act in ("draw", "pass"):
        if act in by_act:
            return by_act[act][0]
    return legal[0]


#: The ranks a Vändåtta player keeps for later: eights and aces.
_SPECIAL = (8, 14)


#: A Vändåtta player's choice, as :func:`choose_vandatta_option` gives it: the act and, for a
#: play, its cards and what an eight counts as; for a draw, the card drawn.
VandattaChoice = tuple[Act, tuple[Card, ...] | None, Card | None, Card | None]


def choose_vandatta_option(options: TurnOptions, hand_of: Callable[[int], list[Card | None]],
                           rng: random.Random) -> VandattaChoice:
    """:func:`choose_vandatta` among what :meth:`Vandatta.turn_options
    <referee.games.vandatta.Vandatta.turn_options>` offers, without an input per offer: the
    same draws from ``rng`` and the same choice, as ``(act, cards, as, card)``
    (:func:`vandatta_input` makes it an input)."""
    seat, plays, draw, card, pass_, call = options
    if call:
        hand = hand_of(seat)
        if len({c.rank for c in hand if c is not None}) <= 1 and rng.random() < 0.85:
            return "call", None, None, None
    if plays:
        random_ = rng.random
        if random_() < 0.9:
            # max(plays, key=score) of choose_vandatta: a draw per play in order, the first
            # of the highest (special, size, draw).
            best = plays[0]
            top: tuple[int, int, float] | None = None
            for play in plays:
                cards = play[0]
                size = len(cards)
                if size == 1:
                    key = (-2 if cards[0].rank in _SPECIAL else 0, 1, random_())
                else:
                    key = (-sum(1 for c in cards if c.rank in _SPECIAL), size, random_())
                if top is None or key > top:
                    best, top = play, key
        else:
            best = rng.choice(plays)
        return "play", best[0], best[1], None
    if draw:
        return "draw", None, None, card
    if pass_:
        return "pass", None, None, None
    if call:  # legal_inputs(t)[0] is then the call
        return "call", None, None, None
    raise ValueError(f"seat {seat} has nothing to choose from")


def vandatta_input(t: int, seat: int, choice: VandattaChoice) -> Input:
    """The input of a :func:`choose_vandatta_option` choice made by ``seat`` at ``t``."""
    act, cards, as_, card = choice
    if act == "play":
        return Input(t, seat, "play", cards=cards, as_=as_)
    if act == "draw":
        return Input(t, seat, "draw", card=card)
    if act == "call":
        return Input(t, seat, "call", call="lappen")
    return Input(t, seat, act)


def slappers(state: dict[str, Any], options: Any,
             rng: random.Random) -> list[tuple[int, float]]:
    """The seats that slap after a card is laid, with their mean reaction in ms: most players
    slap a pile that looks slappable, a few slap falsely, some miss."""
    holds = slap_holds(state, getattr(options, "bottom_match", True))
    gone = state.get("out", [])
    back_in = options.slap_back_in
    # Every seat that may slap draws once: below 0.9 it slaps a good pile, below 0.004 a bad one.
    chance, ms = (0.9, 320.0) if holds else (0.004, 380.0)
    random = rng.random
    return [(seat, ms) for seat, count in enumerate(state["counts"])
            if (count or back_in) and seat not in gone and random() < chance]


def engine_slappers(engine: BankaBever, options: Any,
                    rng: random.Random) -> list[tuple[int, float]]:
    """:func:`slappers` of the state ``engine`` would give, read from the engine's
    :meth:`~referee.games.banka_bever.BankaBever.pile_ends` and
    :meth:`~referee.games.banka_bever.BankaBever.slap_seats` without building that state: the
    same seats from the same draws."""
    bottom, under, top = engine.pile_ends()
    holds = top is not None and (
        (under is not None and under.rank == top.rank)
        or bool(getattr(options, "bottom_match", True) and bottom is not None
                and bottom.rank == top.rank))
    chance, ms = (0.9, 320.0) if holds else (0.004, 380.0)
    random = rng.random
    return [(seat, ms) for seat in engine.slap_seats() if random() < chance]


def slap_holds(state: dict[str, Any], bottom_match: bool = True) -> bool:
    """Whether a slap looks valid from the public state (what a player at the table sees:
    the two top cards, and the bottom card)."""
    pile = state.get("pile") or []
    if len(pile) < 2 or not pile[-1]:
        return False
    top = _rank(pile[-1])
    if pile[-2] and _rank(pile[-2]) == top:
        return True
    bottom = state.get("bottom")
    return bool(bottom_match and bottom and _rank(bottom) == top)


#: The rank of each card's text as the engines' states spell it.
_RANKS = {str(card): card.rank for card in full_deck()}


def _rank(text: str) -> int:
    """The rank of a card's text (any form :func:`parse_card` reads)."""
    rank = _RANKS.get(text)
    return parse_card(text).rank if rank is None else rank


#: Every field of an input but its time, in the order :class:`Input` takes them after ``t``.
_FIELDS = dataclasses.fields(Input)
assert _FIELDS[0].name == "t" and all(f.init for f in _FIELDS)
_REST = operator.attrgetter(*(f.name for f in _FIELDS[1:]))


def stamped(inp: Input, t: int) -> Input:
    """The same input at time ``t``."""
    return Input(t, *_REST(inp))
