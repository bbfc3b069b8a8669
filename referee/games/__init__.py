"""The game registry: the three games, each declared once by its engine module.

>>> import referee
>>> sorted(referee.games)
['banka-bever', 'beggar-my-neighbour', 'vandatta']
>>> referee.games["banka-bever"].title
'Banka bäver'
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from referee.deal import Deal
from referee.engine import Engine, Game
from referee.errors import GameError
from referee.games import banka_bever, beggar_my_neighbour, vandatta
from referee.options import TableOptions

__all__ = ["GAME_NAMES", "Game", "game", "games", "new_engine", "parse_options", "seeded_deal"]

#: Every game by name, in the order docs/rules.md describes them.
games: Mapping[str, Game] = MappingProxyType(
    {g.name: g for g in (beggar_my_neighbour.GAME, banka_bever.GAME, vandatta.GAME)}
)
#: The games' names, for choices on a command line.
GAME_NAMES: tuple[str, ...] = tuple(games)


def game(name: object) -> Game:
    """The game called ``name``; an unknown name is a :class:`GameError` listing the known."""
    found = games.get(name) if isinstance(name, str) else None
    if found is None:
        raise GameError(f"unknown game {name!r} (known: {', '.join(games)})")
    return found


def parse_options(name: str, raw: Any = None) -> TableOptions:
    """The table options of game ``name`` from ``raw`` (see :meth:`Game.parse_options`)."""
    return game(name).parse_options(raw)


def new_engine(name: str, n_seats: int, dealer: int = 0, options: TableOptions | None = None,
               deal: Deal | None = None) -> Engine:
    """A new engine of game ``name`` (see :meth:`Game.new_engine`)."""
    return game(name).new_engine(n_seats, dealer, options, deal)


def seeded_deal(name: str, n_seats: int, dealer: int, seed: int) -> Deal:
    """The deal of game ``name`` shuffled with ``seed`` (see :meth:`Game.seeded_deal`)."""
    return game(name).seeded_deal(n_seats, dealer, seed)
