"""The engines' cheap accessors for virtual players (issue 13.4) say what ``legal_inputs`` and
``state()`` say: Banka bäver's and Beggar My Neighbour's ``lay_input`` and ``lay_of``, Banka bäver's
``pile_ends`` and ``slap_seats``, Vändåtta's ``turn_state``. Checked after every input of
seeded simulated games (known deals, and the same inputs judged in observed mode), and at
times inside a collect grace and past it."""

from __future__ import annotations

from typing import Any

import pytest

from cardtable.simulate import Simulation
from referee.cards import parse_card
from referee.games import game
from referee.games.banka_bever import BankaBever
from referee.games.beggar_my_neighbour import BeggarMyNeighbour
from referee.games.vandatta import Vandatta
from referee.model import Input


def _inputs(name: str, seats: int, seed: int, options: dict[str, Any]) -> list[Input]:
    sim = Simulation(name, seats, seed, options=options)
    sim.run()
    return list(sim.table.inputs)


def _first_lay(legal: list[Input]) -> Input | None:
    return next((i for i in legal if i.act == "lay"), None)


def _check_banka(engine: BankaBever, t: int) -> None:
    for at in (t, t + 1, t + 3_000_000_000):  # inside a collect grace and past it
        lay = _first_lay(engine.legal_inputs(at))
        assert engine.lay_input(at) == lay
        assert engine.lay_of(at) == (None if lay is None else (lay.seat, lay.card))
    state = engine.state()
    pile = state["pile"]
    shown = tuple(None if c is None else str(c) for c in engine.pile_ends())
    if len(pile) < 2:
        assert shown == (None, None, None)
    else:
        assert shown == (state["bottom"], pile[-2], pile[-1])
    back_in = engine.options.slap_back_in
    assert engine.slap_seats() == [s for s, n in enumerate(state["counts"])
                                   if (n or back_in) and s not in state["out"]]


@pytest.mark.parametrize("seats, options", [
    (2, {}), (4, {}), (8, {}),
    (3, {"slap_back_in": True, "false_slap_penalty": "burn"}),
    (5, {"bottom_match": False, "false_slap_penalty": "burn"}),
])
@pytest.mark.slow
@pytest.mark.parametrize("observed", [False, True])
def test_banka_bever_accessors_match_legal_inputs_and_state(seats: int, options: dict[str, Any],
                                                            observed: bool) -> None:
    spec = game("banka-bever")
    for seed in (1, 2):
        inputs = _inputs("banka-bever", seats, seed, options)
        deal = None if observed else spec.seeded_deal(seats, 0, seed)
        engine = spec.new_engine(seats, 0, spec.parse_options(options), deal)
        assert isinstance(engine, BankaBever)
        checked = 0
        for inp in inputs:
            engine.apply(inp)
            _check_banka(engine, inp.t)
            engine.advance(inp.t)
            _check_banka(engine, inp.t)
            checked += 1
        assert checked > 50


def test_banka_bever_lay_input_settles_held_slaps_and_a_due_claim_first() -> None:
    """A probe case: a slap held at the instant of the lay, and a claim whose grace has ended,
    are settled before the lay is offered (as legal_inputs settles them)."""
    spec = game("banka-bever")
    inputs = _inputs("banka-bever", 3, 4, {})
    engine = spec.new_engine(3, 0, spec.parse_options({}), spec.seeded_deal(3, 0, 4))
    assert isinstance(engine, BankaBever)
    held = due = 0
    for inp in inputs:
        engine.apply(inp)
        held += bool(engine.state()["held_slaps"])
        claim = engine.state()["claim"]
        if claim is not None:
            due += 1
            at = claim["until"]
            assert engine.lay_input(at) == _first_lay(engine.legal_inputs(at))
        assert engine.lay_input(inp.t) == _first_lay(engine.legal_inputs(inp.t))
        engine.advance(inp.t)
    assert held and due


@pytest.mark.parametrize("seats", [2, 4])
def test_beggar_lay_input_is_its_one_legal_input(seats: int) -> None:
    spec = game("beggar-my-neighbour")
    inputs = _inputs("beggar-my-neighbour", seats, 3, {})
    engine = spec.new_engine(seats, 0, None, spec.seeded_deal(seats, 0, 3))
    assert isinstance(engine, BeggarMyNeighbour)
    for inp in inputs:
        assert [engine.lay_input(inp.t)] == engine.legal_inputs(inp.t)
        assert engine.lay_of(inp.t) == (inp.seat, inp.card)
        engine.apply(inp)
    assert engine.over
    assert engine.lay_input(1) is None and engine.legal_inputs(1) == []
    assert engine.lay_of(1) is None


@pytest.mark.parametrize("seats, options", [(3, {}), (5, {"points_game": True})])
def test_vandatta_turn_state_is_what_state_says(seats: int, options: dict[str, Any]) -> None:
    spec = game("vandatta")
    inputs = _inputs("vandatta", seats, 2, options)
    engine = spec.new_engine(seats, 0, spec.parse_options(options), spec.seeded_deal(seats, 0, 2))
    assert isinstance(engine, Vandatta)
    phases = set()
    for inp in inputs:
        engine.apply(inp)
        state = engine.state()
        phases.add(state["phase"])
        assert engine.turn_state() == (state["must_draw"], state["turn"], state["stock"],
                                       len(state["pile"]), state["phase"])
    assert len(phases) >= 2


def test_pile_ends_keep_unseen_faces_as_none() -> None:
    """Observed mode: the leftover pile's faces are not known, laid cards are."""
    spec = game("banka-bever")
    engine = spec.new_engine(3, 0, spec.parse_options({}), None)  # 52 = 3 * 17 + 1 left over
    assert isinstance(engine, BankaBever)
    assert engine.pile_ends() == (None, None, None)
    engine.apply(Input(1_000, 1, "lay", card=parse_card("5H")))
    assert engine.pile_ends() == (None, None, parse_card("5H"))
