"""A whole game between virtual players on a virtual table clock: the game ``referee simulate``
plays (:mod:`referee.app.commands.simulate` is the command).

The players are seeded: the same ``--seed`` gives the same deal, the same reactions and so the
same journal and verdicts. Every input goes through :class:`referee.table.Table` (journal →
arbiter → engine), the code a real table runs, so replaying the written journal reproduces the
simulation's verdicts exactly.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.app.players import (
    DEFAULT_NAMES,
    TURN_MS,
    Reactions,
    choose_vandatta,
    slappers,
    stamped,
)
from referee.deal import reshuffled
from referee.engine import Engine
from referee.games import game as game_named
from referee.games.vandatta import next_deal
from referee.journal import JournalHeader, JournalWriter
from referee.model import Input, Verdict
from referee.options import VandattaOptions
from referee.table import Table

MS = 1_000_000
#: A game that has not ended after this many inputs is stopped (Beggar can loop for ever).
MAX_INPUTS = 200_000


@dataclass
class Step:
    """One judged input of the simulation, with the verdicts and state it produced."""

    t: int
    input: Input | None
    verdicts: list[Verdict]
    state: dict[str, Any]


@dataclass(order=True)
class _Plan:
    t: int
    order: int
    inp: Input = field(compare=False)
    version: int = field(compare=False, default=-1)


class Simulation:
    """A seeded game between virtual players; iterate :meth:`steps` to play it."""

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
        self.t = 1_000 * MS
        self._deals = 0

    @property
    def engine(self) -> Engine:
        """The engine judging the game."""
        return self.table.engine

    # -- planning -----------------------------------------------------------------------
    def _plan(self, t: int, inp: Input, *, versioned: bool = True) -> None:
        self._order += 1
        heapq.heappush(
            self._plans, _Plan(t, self._order, inp, self._version if versioned else -1)
        )

    def _plan_turn(self, now: int) -> None:
        """Plan the next act of the seat(s) to act; older plans of this kind become stale."""
        self._version += 1
        if self.engine.over:
            return
        game = self.header.game
        if game == "vandatta":
            self._plan_vandatta(now)
            return
        lays = [i for i in self.engine.legal_inputs(now) if i.act == "lay"]
        if lays:
            lay = lays[0]
            delay = self.reactions.ns(lay.seat, TURN_MS[game], 0.3)
            self._plan(now + delay, lay)

    def _plan_slaps(self, now: int, state: dict[str, Any]) -> None:
        for seat, base_ms in slappers(state, self.header.options, self.rng):
            self._plan(now + self.reactions.ns(seat, base_ms), Input(0, seat, "slap"),
                       versioned=False)

    def _plan_vandatta(self, now: int) -> None:
        legal = self.engine.legal_inputs(now)
        state = self.engine.state()
        options = self.header.options
        assert isinstance(options, VandattaOptions)
        seat = state.get("must_draw") if state.get("must_draw") is not None else state["turn"]
        if (state["stock"] == 0 and len(state["pile"]) > 1 and seat is not None
                and options.reshuffle_discards and state["phase"] != "round_over"):
            # The table reshuffles as soon as the stock is empty (RULES.md allows any moment).
            self._plan(now + 2500 * MS, self._reshuffle(Input(0, seat, "reshuffle"), state))
            return
        if not legal:
            if state.get("phase") == "round_over" and not self.engine.over:
                self._plan(now + 3000 * MS, self._next_deal(state))
            return
        seat = legal[0].seat
        choice = choose_vandatta(legal, self.engine.hand, self.rng)
        self._plan(now + self.reactions.ns(seat, TURN_MS["vandatta"], 0.35), choice)

    def _reshuffle(self, template: Input, state: dict[str, Any]) -> Input:
        if template.stock is not None:
            return template
        return Input(template.t, template.seat, "reshuffle",
                     stock=reshuffled(state["pile"], self.rng))

    def _next_deal(self, state: dict[str, Any]) -> Input:
        return next_deal(state, self.rng.getrandbits(32), 0)

    # -- running ------------------------------------------------------------------------
    def steps(self) -> Iterator[Step]:
        """Play the game, one judged input at a time."""
        self._plan_turn(self.t)
        count = 0
        while self._plans and not self.engine.over and count < MAX_INPUTS:
            plan = heapq.heappop(self._plans)
            if plan.version not in (-1, self._version):
                continue
            inp = stamped(plan.inp, plan.t)
            if inp.act == "lay":
                # The card on top of the stack may have changed since the plan (a burn).
                lays = [i for i in self.engine.legal_inputs(plan.t)
                        if i.act == "lay" and i.seat == inp.seat]
                if not lays:
                    continue
                inp = lays[0]
            count += 1
            self.t = plan.t
            self.table.push(inp)
            verdicts = self.table.release(plan.t)
            state = self.table.state()
            self._after(inp, verdicts, state)
            yield Step(plan.t, inp, verdicts, state)
        if not self.engine.over:
            verdicts = self.table.flush(finish=True)
            if verdicts:
                yield Step(self.t, None, verdicts, self.table.state())

    def _after(self, inp: Input, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        game = self.header.game
        changed = inp.act != "slap" or any(v.verdict in ("pile_won", "out") for v in verdicts)
        if "slap" in game_named(game).acts and inp.act == "lay" and not any(
                v.verdict in ("illegal", "desync") for v in verdicts):
            self._plan_slaps(inp.t, state)
        if changed or not self._has_turn_plan():
            self._plan_turn(inp.t)

    def _has_turn_plan(self) -> bool:
        return any(p.version == self._version for p in self._plans)

    def run(self, on_step: Callable[[Step], None] | None = None) -> list[Verdict]:
        """Play to the end; returns every verdict."""
        for step in self.steps():
            if on_step is not None:
                on_step(step)
        return self.table.verdicts
