"""TODO docstring."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from referee.cards import Card, parse_card
from referee.model import Input

DEFAULT_NAMES = ("Anna", "Bo", "Cia", "Dan", "Eva", "Frej", "Gun", "Hugo")


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


def slappers(state: dict[str, Any], options: Any,
             rng: random.Random) -> list[tuple[int, float]]:
    """The seats that slap after a card is laid, with their mean reaction in ms: most players
    slap a pile that looks slappable, a few slap falsely, some miss."""
    holds = slap_holds(state, getattr(options, "bottom_match", True))
    out = []
    for seat, count in enumerate(state["counts"]):
        if seat in state.get("out", []) or (count == 0 and not options.slap_back_in):
            continue
        if holds and rng.random() < 0.9:
            out.append((seat, 320.0))
        elif not holds and rng.random() < 0.004:
            out.append((seat, 380.0))
    return out


def slap_holds(state: dict[str, Any], bottom_match: bool = True) -> bool:
    """Whether a slap looks valid from the public state (what a player at the table sees:
    the two top cards, and the bottom card)."""
    pile = state.get("pile") or []
    if len(pile) >= 2 and pile[-1] and pile[-2] and parse_card(pile[-1]).rank == parse_card(
            pile[-2]).rank:
        return True
    bottom = state.get("bottom")
    return bool(bottom_match and bottom and len(pile) >= 2 and pile[-1]
                and parse_card(pile[-1]).rank == parse_card(bottom).rank)


def stamped(inp: Input, t: int) -> Input:
    """The same input at time ``t``."""
    return dataclasses.replace(inp, t=t)
