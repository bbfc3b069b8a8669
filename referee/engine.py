"""The interface every game engine offers, the deals it starts from, and the engine factory.

An engine is a pure state machine: no clock, no I/O, no threads, no randomness. Time comes in as
the ``t`` of each input; cards come in through the deal (known mode) or the inputs (observed
mode, where a ``None`` card is one whose face the referee has not yet seen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from referee.cards import Card
from referee.model import Input, Verdict
from referee.options import TableOptions


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


class Engine(Protocol):
    """What the referee asks of a game engine."""

    game: str
    n_seats: int

    def apply(self, inp: Input) -> list[Verdict]:
        """Judge one input (inputs come in judging order, ``t`` never decreasing)."""

    def advance(self, t: int) -> list[Verdict]:
        """Let time pass up to ``t`` with no input: claims whose grace ended become final."""

    def finish(self) -> list[Verdict]:
        """The input has ended: let any pending grace run out."""

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: at least ``counts``, ``pile``, ``turn``, ``cards_played``,
        ``tricks``, plus the game's own fields."""

    @property
    def over(self) -> bool:
        """True once the game is decided."""

    def legal_inputs(self, t: int) -> list[Input]:
        """Inputs the seat to act may make now, stamped ``t`` (bots and displays use them)."""


def new_engine(
    game: str, seats: int, dealer: int, options: TableOptions, deal: Deal | None
) -> Engine:
    """The engine of ``game``; ``deal`` None means observed mode."""
    if game == "beggar-my-neighbour":
        from referee.beggar_my_neighbour import BeggarMyNeighbour

        return BeggarMyNeighbour(seats, dealer, options, deal)  # type: ignore[arg-type]
    if game == "banka-bever":
        from referee.banka_bever import BankaBever

        return BankaBever(seats, dealer, options, deal)  # type: ignore[arg-type]
    if game == "vandatta":
        from referee.vandatta import Vandatta

        return Vandatta(seats, dealer, options, deal)  # type: ignore[arg-type]
    raise ValueError(f"unknown game {game!r}")


#: Seats each game accepts (RULES.md).
SEAT_LIMITS = {"beggar-my-neighbour": (2, 4), "banka-bever": (2, 8), "vandatta": (2, 7)}
