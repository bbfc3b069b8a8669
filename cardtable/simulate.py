"""A whole game between virtual players on a virtual table clock: the game ``referee simulate``
plays (:mod:`cardtable.commands.simulate` is the command) and ``referee analyse`` plays by the
thousand (:mod:`cardtable.analyse`).

The players are seeded: the same ``--seed`` gives the same deal, the same reactions and so the
same journal and verdicts. Every input goes through the table's journal and arbiter
(:class:`referee.table.Table`) to the engine, so replaying the written journal reproduces the
simulation's verdicts exactly.

:meth:`Simulation.run` plays without building the table's state after every input: the
players read what they decide on from the engines' accessors for players (``lay_of``,
``pile_ends``, ``slap_seats``; Vändåtta's ``turn_options``, ``can_reshuffle``, ``pile_cards``:
docs/engine-contract.md), and the state only for a Vändåtta deal; a Vändåtta player's choice is
made among the offers as :func:`~cardtable.players.choose_vandatta` makes it among the legal
inputs, and only the input chosen is built. :meth:`Simulation.steps` gives the state with every
step, for a live view or a feed. Both play the same game: the same seed gives the same journal
either way (``tests/cardtable/test_simulate.py`` checks 200 seeds per game against journals
of the simulator before it was made faster).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from cardtable.players import (
    DEFAULT_NAMES,
    TURN_MS,
    Reactions,
    choose_vandatta_option,
    engine_slappers,
    slappers,
    stamped,
    vandatta_input,
)
from referee.cards import Card
from referee.deal import reshuffled
from referee.engine import Engine
from referee.games import game as game_named
from referee.games.banka_bever import BankaBever
from referee.games.beggar_my_neighbour import BeggarMyNeighbour
from referee.games.vandatta import Vandatta, next_deal
from referee.journal import JournalHeader, JournalWriter
from referee.model import Input, Verdict
from referee.table import Table

MS = 1_000_000
#: The table time at which a simulated game starts (its first plan is made then).
START_NS = 1_000 * MS
#: A game that has not ended after this many inputs is stopped (Beggar can loop for ever).
MAX_INPUTS = 200_000
#: A plan that is not a seat's turn (a slap): never made stale by a newer turn.
_ANY_TURN = -1
_CHANGES = frozenset(("pile_won", "out"))
_REFUSED = frozenset(("illegal", "desync"))

#: A planned input: (time, order of planning, the input, turn version, inputs pushed when
#: it was planned). ``order`` is unique, so the heap never compares the rest. A turn's lay is
#: planned as (seat, card): its input is built when it is made.
_Plan = tuple[int, int, Input | tuple[int, Card | None], int, int]


@dataclass
class Step:
    """One judged input of the simulation, with the verdicts and state it produced."""

    t: int
    input: Input | None
    verdicts: list[Verdict]
    state: dict[str, Any]


class Simulation:
    """A seeded game between virtual players; :meth:`run` plays it, :meth:`steps` shows it."""

    def __init__(
        self,
        game: str,
        players: int,
        seed: int,
        *,
        options: dict[str, Any] | None = None,
        dealer: int = 0,
        names: list[str] | None = None,
        journal: JournalWriter | None = None,
        journal_path: str | None = None,
        overwrite: bool = False,
    ) -> None:
        spec = game_named(game)
        spec.check_seats(players, dealer)
        names = names or list(DEFAULT_NAMES[:players])
        opts = spec.parse_options(options or {})
        self.header = JournalHeader(game, tuple(names), dealer, opts, seed).resolved()
        if journal is None and journal_path is not None:
            journal = JournalWriter.create(journal_path, self.header, fsync=False,
                                           replace=overwrite)
        self.table = Table(self.header, settle_ns=0, journal=journal)
        self.rng = random.Random(f"players-{seed}")
        self.reactions = Reactions(self.rng, players)
        self._plans: list[_Plan] = []
        self._order = 0
        self._version = 0
        self._live = 0  # plans in the heap of the current turn version
        self.t = START_NS
        self._slaps = "slap" in spec.acts
        self._vandatta = game == "vandatta"
        self._turn_ms = TURN_MS[game]
        self._state: dict[str, Any] | None = None  # the engine's state, until the next input
        engine = self.table.engine
        #: The engine's one lay at a time, where it answers it without the other inputs.
        self._lay_input: Callable[[int], Input | None] | None = None
        self._lay_of: Callable[[int], tuple[int, Card | None] | None] | None = None
        if isinstance(engine, (BankaBever, BeggarMyNeighbour)):
            self._lay_input, self._lay_of = engine.lay_input, engine.lay_of
        self._vandatta_engine = engine if isinstance(engine, Vandatta) else None

    @property
    def engine(self) -> Engine:
        """The engine judging the game."""
        return self.table.engine

    def _engine_state(self) -> dict[str, Any]:
        """The engine's state now (asked once per judged input, whoever reads it)."""
        if self._state is None:
            self._state = self.table.engine.state()
        return self._state

    # -- planning -----------------------------------------------------------------------
    def _plan(self, t: int, inp: Input, *, versioned: bool = True) -> None:
        self._order += 1
        version = _ANY_TURN
        if versioned:
            version = self._version
            self._live += 1
        heapq.heappush(self._plans, (t, self._order, inp, version, len(self.table.inputs)))

    def _plan_turn(self, now: int) -> None:
        """Plan the next act of the seat(s) to act; older plans of this kind become stale."""
        self._version += 1
        self._live = 0
        table = self.table
        if table.engine.over:
            return
        if self._vandatta:
            self._plan_vandatta(now)
            return
        lay: tuple[int, Card | None] | None
        if self._lay_of is not None:
            lay = self._lay_of(now)
        else:
            found = self._lay_at(now)
            lay = None if found is None else (found.seat, found.card)  # a lay has no more
        if lay is not None:
            self._order += 1
            self._live = 1
            heapq.heappush(self._plans, (now + self.reactions.ns(lay[0], self._turn_ms, 0.3),
                                         self._order, lay, self._version, len(table.inputs)))

    def _plan_slaps(self, now: int) -> None:
        engine = self.table.engine
        if isinstance(engine, BankaBever):
            chosen = engine_slappers(engine, self.header.options, self.rng)
        else:
            chosen = slappers(self._engine_state(), self.header.options, self.rng)
        if not chosen:
            return
        ns = self.reactions.ns
        plans = self._plans
        pushed = len(self.table.inputs)
        for seat, base_ms in chosen:
            when = now + ns(seat, base_ms)
            self._order += 1  # as _plan(..., versioned=False); stamped as it will be made
            heapq.heappush(plans, (when, self._order, Input(when, seat, "slap"), _ANY_TURN,
                                   pushed))

    def _plan_vandatta(self, now: int) -> None:
        engine = self._vandatta_engine
        assert engine is not None
        # What legal_inputs(now) offers, without its inputs: choose_vandatta's choice is made
        # among them with the same draws, and only the input chosen is built, at its time.
        offered = engine.turn_options()
        if offered is not None and engine.can_reshuffle():
            # The table reshuffles as soon as the stock is empty (docs/rules.md allows any moment),
            # the seat to act for it: the cards of state()'s pile, read from the engine.
            self._plan(now + 2500 * MS, Input(0, offered[0], "reshuffle",
                                              stock=reshuffled(engine.pile_cards(), self.rng)))
            return
        if offered is None or not (offered[1] or offered[2] or offered[4] or offered[5]):
            if offered is None and not engine.over:  # the round is over: the next deal
                self._plan(now + 3000 * MS, self._next_deal(self._engine_state()))
            return
        seat = offered[0]
        choice = choose_vandatta_option(offered, engine.hand, self.rng)
        when = now + self.reactions.ns(seat, self._turn_ms, 0.35)
        self._order += 1  # as _plan(when, ...)
        self._live += 1
        heapq.heappush(self._plans, (when, self._order, vandatta_input(when, seat, choice),
                                     self._version, len(self.table.inputs)))

    def _next_deal(self, state: dict[str, Any]) -> Input:
        return next_deal(state, self.rng.getrandbits(32), 0)

    # -- running ------------------------------------------------------------------------
    def _lay_at(self, t: int) -> Input | None:
        """The first lay the engine offers at ``t`` (its ``lay_input``, where it has one)."""
        if self._lay_input is not None:
            return self._lay_input(t)
        for lay in self.table.engine.legal_inputs(t):
            if lay.act == "lay":
                return lay
        return None

    def _lay_now(self, t: int, seat: int) -> Input | None:
        """The engine's lay for ``seat`` at ``t``, or None when that seat has none now."""
        if self._lay_input is not None:  # one lay at most
            lay = self._lay_input(t)
            return lay if lay is not None and lay.seat == seat else None
        for lay in self.table.engine.legal_inputs(t):
            if lay.act == "lay" and lay.seat == seat:
                return lay
        return None

    def moves(self) -> Iterator[tuple[int, Input | None, list[Verdict]]]:
        """Play the game: each judged input with its time and verdicts (no state: the fast
        path); last, with no input, the verdicts of the end of the input (a game stopped
        before its end).

        Each input is journaled and held by the table (:meth:`Table.push`) and judged as
        :meth:`Table.release` judges it, but without building the state for listeners when
        the table has none (with listeners, ``release`` itself judges). A planned lay is made
        as planned when nothing was pushed since the plan and no deadline fell in between:
        time alone changes a game only at ``next_deadline``, so the engine's answer would be
        the same lay; otherwise the engine is asked again."""
        table = self.table
        engine = table.engine
        arbiter = table.arbiter
        inputs = table.inputs
        plans = self._plans
        pop = heapq.heappop
        slaps = self._slaps
        push = table.push
        release = arbiter.release
        apply = engine.apply
        advance = engine.advance
        next_deadline = engine.next_deadline
        plan_turn = self._plan_turn
        self._plan_turn(self.t)
        count = 0
        while plans and not engine.over and count < MAX_INPUTS:
            t, _, plan, version, pushed = pop(plans)
            if version != _ANY_TURN:
                if version != self._version:
                    continue
                self._live -= 1
            if isinstance(plan, tuple):  # a turn's lay: (seat, card)
                act = "lay"
                seat, card = plan
                deadline = (next_deadline() if pushed == len(inputs) and not len(arbiter)
                            else t)
                if deadline is None or deadline > t:
                    inp = Input(t, seat, "lay", card=card)
                else:
                    lay = self._lay_now(t, seat)
                    if lay is None:
                        continue
                    inp = lay
            else:
                inp = plan
                act = inp.act
                if inp.t != t:  # a slap or a Vändåtta choice is planned with its time
                    inp = stamped(inp, t)
            count += 1
            self.t = t
            self._state = None
            push(inp)
            if table.listeners or table.judged_listeners:
                verdicts = table.release(t)
            else:
                verdicts = []
                for released in release(t):
                    verdicts += apply(released)
                assert arbiter.horizon is not None
                verdicts += advance(arbiter.horizon)
                table.verdicts += verdicts
            # What the players do next: slap a laid card, and the next turn when it changed.
            if act == "slap":
                changed = bool(verdicts) and any(v.verdict in _CHANGES for v in verdicts)
            else:
                changed = True
                if slaps and act == "lay" and not (verdicts and any(v.verdict in _REFUSED
                                                                    for v in verdicts)):
                    self._plan_slaps(t)
            if changed or not self._live:
                plan_turn(t)
            yield t, inp, verdicts
        if not engine.over:
            self._state = None
            verdicts = table.flush(finish=True)
            if verdicts:
                yield self.t, None, verdicts

    def steps(self) -> Iterator[Step]:
        """Play the game, one judged input at a time, each with the table's state after it."""
        seats = list(self.header.seats)
        for t, inp, verdicts in self.moves():
            state = dict(self._engine_state())
            state["seats"] = list(seats)
            yield Step(t, inp, verdicts, state)

    def run(self, on_step: Callable[[Step], None] | None = None) -> list[Verdict]:
        """Play to the end (telling ``on_step`` every step, if given); returns every verdict."""
        if on_step is not None:
            for step in self.steps():
                on_step(step)
        else:
            for _ in self.moves():
                pass
        return self.table.verdicts
