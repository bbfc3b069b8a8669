"""The interface every game engine offers (``docs/engine-contract.md``), and the declaration
of a game (:class:`Game`).

An engine is a pure state machine: no clock, no I/O, no threads, no randomness. Time comes in as
the ``t`` of each input; cards come in through the deal (known mode) or the inputs (observed
mode, where a ``None`` card is one whose face the referee has not yet seen). Callers ask an
engine only what this protocol offers: no caller reads a game's private state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from referee.cards import Card
from referee.deal import Deal, DealKind, by_seat, deal_hands, deal_piles
from referee.errors import GameError, shown
from referee.model import Act, Input, Verdict
from referee.options import TableOptions, options_from

__all__ = ["Engine", "Game", "TurnButton"]


class Engine(Protocol):
    """What the referee asks of a game engine."""

    game: str
    n_seats: int

    def apply(self, inp: Input) -> list[Verdict]:
        """Judge one input (inputs come in judging order, ``t`` never decreasing)."""
        ...

    def advance(self, t: int) -> list[Verdict]:
        """Let time pass up to ``t`` with no input: claims whose grace ended become final."""
        ...

    def finish(self) -> list[Verdict]:
        """The input has ended: let any pending grace run out."""
        ...

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: at least ``counts``, ``pile``, ``turn``, ``cards_played``,
        ``tricks``, plus the game's own fields."""
        ...

    @property
    def over(self) -> bool:
        """True once the game is decided."""
        ...

    def legal_inputs(self, t: int) -> list[Input]:
        """Inputs the seat to act may make now, stamped ``t`` (bots and displays use them)."""
        ...

    def next_deadline(self) -> int | None:
        """The table time at which time alone changes the game (a collect grace ends, a time
        limit runs out), or None: a live table must :meth:`advance` past it even when no input
        comes."""
        ...

    def hand(self, seat: int) -> list[Card | None]:
        """The cards ``seat`` holds: its stack top first in the pile games, its hand in
        Vändåtta (``None`` for a card whose face is not known)."""
        ...

    def holder(self, card: Card) -> int | None:
        """The seat a laid ``card`` came from when the referee knows it (the top of a known
        stack, a card in a known hand), else None."""
        ...


#: The button a seat presses to turn its top card when a virtual deck deals (no real cards).
TurnButton = Literal["slap", "call"]


@dataclass(frozen=True)
class Game:
    """One game, declared once (each engine module declares its own ``GAME``); everything
    that needs a fact about a game reads it here, through :data:`referee.games.games`."""

    name: str
    """The name in journals, configurations and on the command line (``banka-bever``)."""
    title: str
    """The name a person reads (``Banka bäver``)."""
    min_seats: int
    max_seats: int
    options: type[TableOptions]
    """The class of the game's table options (docs/rules.md's *bordsval*)."""
    engine: Callable[..., Engine]
    """The engine: ``engine(n_seats, dealer, options, deal)``; ``deal`` None is observed mode."""
    deal_kind: DealKind
    """``pile``: a stack per seat and a leftover pile; ``hand``: hands, stock and upcard."""
    acts: tuple[Act, ...]
    """The journal acts the game knows."""
    counts: Callable[[int], tuple[list[int], int]]
    """The dealing rule for ``n`` seats: cards per seat in dealing order (left of the dealer
    first) and the cards left over (Banka bäver's centre pile, Vändåtta's stock and upcard)."""
    turn_button: TurnButton | None = None
    """With a virtual deck, the button that turns a seat's top card (None: the game has no
    such turn)."""
    hand_size: int | None = None
    """Cards dealt to each hand (Vändåtta)."""
    tally: str = "piles collected"
    """What the state's ``tricks`` count, in words (``rounds played`` in Vändåtta)."""
    tally_one: str = "pile collected"
    """The same for a count of one (``round played`` in Vändåtta)."""

    def tally_of(self, n: int) -> str:
        """``n`` of what the state's ``tricks`` count: ``1 pile collected``, ``3 rounds
        played``."""
        return f"{n} {self.tally_one if n == 1 else self.tally}"

    @property
    def in_rounds(self) -> bool:
        """True for a game of hands played in rounds, where a laid card is a play from a hand
        (Vändåtta); False for the pile games, where a laid card is the top of a stack."""
        return self.deal_kind == "hand"

    @property
    def seat_range(self) -> range:
        """The seat counts the game takes."""
        return range(self.min_seats, self.max_seats + 1)

    def check_seats(self, n_seats: int, dealer: int = 0) -> None:
        """Raise :class:`GameError` unless the game takes ``n_seats`` and ``dealer`` is one."""
        if isinstance(n_seats, bool) or not isinstance(n_seats, int) or (
                n_seats not in self.seat_range):
            raise GameError(f"{self.title} takes {self.min_seats} to {self.max_seats} "
                            f"players, not {shown(n_seats)}")
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n_seats:
            raise GameError(f"dealer {shown(dealer)} is not a seat (seats 0..{n_seats - 1})")

    def seat_counts(self, n_seats: int, dealer: int) -> tuple[list[int], int]:
        """Cards per seat indexed by seat number, and the cards left over."""
        in_order, left = self.counts(n_seats)
        return by_seat(in_order, dealer), left

    def parse_options(self, raw: Any = None) -> TableOptions:
        """Validate ``raw`` (option name → value): missing keys take defaults, unknown keys and
        bad values are an :class:`OptionError` naming the key."""
        return options_from(self.options, self.name, raw)

    def seeded_deal(self, n_seats: int, dealer: int, seed: int) -> Deal:
        """Shuffle with ``seed`` and deal by the game's rule: the same seed, the same deal."""
        self.check_seats(n_seats, dealer)
        if self.deal_kind == "hand":
            assert self.hand_size is not None
            return deal_hands(seed, n_seats, dealer, self.hand_size)
        in_order, left = self.counts(n_seats)
        return deal_piles(seed, in_order, left, dealer)

    def new_engine(self, n_seats: int, dealer: int = 0, options: TableOptions | None = None,
                   deal: Deal | None = None) -> Engine:
        """A new game at a table of ``n_seats``; ``deal`` None is observed mode."""
        return self.engine(n_seats, dealer,
                           self.parse_options() if options is None else options, deal)
