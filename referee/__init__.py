"""A referee for card games: the rules library.

Three games exact to docs/rules.md (Beggar My Neighbour, Banka bäver, Vändåtta) as pure state
machines, the journal of timestamped inputs, the arbiter that orders them and the
:class:`Table` that ties them together. Standard library only: no clock, no I/O beyond reading
and writing journals, no threads; time comes in as the ``t`` of each input, in nanoseconds.

>>> import referee
>>> referee.games["banka-bever"].title
'Banka bäver'
>>> header = referee.JournalHeader("banka-bever", ("Anna", "Bo"), seed=7)
>>> table = referee.Table(header)
>>> lay = table.engine.legal_inputs(1_000_000_000)[0]
>>> lay.act, lay.seat
('lay', 1)
>>> table.push(lay) == lay
True
>>> [referee.describe(v.to_json(), header.seats) for v in table.flush()]
['Bo challenges: Anna owes 1 card']
>>> table.state()["cards_played"]
1

The program at a table (the service, feed, displays, simulation and the ``referee`` command)
is :mod:`cardtable`; importing :mod:`referee` loads none of it.
"""

from __future__ import annotations

from referee.arbiter import DEFAULT_SETTLE_NS, Arbiter
from referee.cards import Card, full_deck, parse_card, shuffled_deck
from referee.deal import Deal, HandDeal, PileDeal
from referee.describe import describe, seat_name
from referee.engine import Engine, Game
from referee.errors import (
    CardError,
    ConfigError,
    DealError,
    GameError,
    InputError,
    JournalError,
    OptionError,
    RefereeError,
)
from referee.games import GAME_NAMES, game, games, new_engine, parse_options, seeded_deal
from referee.journal import Journal, JournalHeader, JournalWriter, parse_lines, read_journal
from referee.model import (
    ACTS,
    NOTICE_KINDS,
    REFUSAL_CODES,
    VERDICT_KINDS,
    Act,
    Input,
    NoticeKind,
    RefusalCode,
    Verdict,
    VerdictKind,
)
from referee.options import BankaOptions, BeggarOptions, TableOptions, VandattaOptions
from referee.table import ReplayResult, Table, replay

__version__ = "0.2.0"

__all__ = [
    "ACTS",
    "DEFAULT_SETTLE_NS",
    "GAME_NAMES",
    "NOTICE_KINDS",
    "REFUSAL_CODES",
    "VERDICT_KINDS",
    "Act",
    "Arbiter",
    "BankaOptions",
    "BeggarOptions",
    "Card",
    "CardError",
    "ConfigError",
    "Deal",
    "DealError",
    "Engine",
    "Game",
    "GameError",
    "HandDeal",
    "Input",
    "InputError",
    "Journal",
    "JournalError",
    "JournalHeader",
    "JournalWriter",
    "NoticeKind",
    "OptionError",
    "PileDeal",
    "RefereeError",
    "RefusalCode",
    "ReplayResult",
    "Table",
    "TableOptions",
    "VandattaOptions",
    "Verdict",
    "VerdictKind",
    "describe",
    "full_deck",
    "game",
    "games",
    "new_engine",
    "parse_card",
    "parse_lines",
    "parse_options",
    "read_journal",
    "replay",
    "seat_name",
    "seeded_deal",
    "shuffled_deck",
]
