"""The virtual players' shortcuts (issue 13.4) draw what the plain calls draw: reaction times
made inline as ``lognormvariate`` and ``randrange`` make them, slappers read from the
engine as from its state, and a Vändåtta player's choice among the engine's turn options as
among its legal inputs."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from cardtable.players import (
    Reactions,
    choose_vandatta,
    choose_vandatta_option,
    engine_slappers,
    slappers,
    vandatta_input,
)
from referee.deal import reshuffled
from referee.games import game
from referee.games.banka_bever import BankaBever
from referee.games.vandatta import Vandatta, next_deal
from referee.model import Input


def _reference_ns(rng: random.Random, skill: float, base_ms: float, spread: float) -> int:
    """Reactions.ns as it was written before issue 13."""
    return int(rng.lognormvariate(0, spread) * base_ms * skill * 1_000_000) + rng.randrange(1000)


@pytest.mark.parametrize("spread", [0.25, 0.3, 0.35, 1.5])
def test_inline_reactions_draw_the_same_numbers(spread: float) -> None:
    for seed in range(40):
        reactions = Reactions(random.Random(seed), 4)
        twin = random.Random(seed)
        skill = [twin.uniform(0.8, 1.3) for _ in range(4)]
        assert skill == reactions.skill
        for i in range(200):
            base = 300.0 + 7 * i
            assert reactions.ns(i % 4, base, spread) == _reference_ns(twin, skill[i % 4], base,
                                                                      spread)
        assert reactions.rng.random() == twin.random()  # and the streams are still in step


def test_a_new_rng_is_drawn_from() -> None:
    """The methods of the rng are kept for the next reaction, not past a new rng."""
    reactions = Reactions(random.Random(1), 2)
    reactions.ns(0, 450.0)
    reactions.rng = random.Random(2)
    twin = random.Random(2)
    assert reactions.ns(1, 450.0) == _reference_ns(twin, reactions.skill[1], 450.0, 0.25)
    assert reactions.rng.random() == twin.random()


def test_a_random_subclass_takes_the_library_calls() -> None:
    class Loud(random.Random):
        calls = 0

        def lognormvariate(self, mu: float, sigma: float) -> float:
            Loud.calls += 1
            return super().lognormvariate(mu, sigma)

    reactions = Reactions(Loud(5), 2)
    twin = random.Random(5)
    skill = [twin.uniform(0.8, 1.3) for _ in range(2)]
    assert reactions.ns(1, 450.0) == _reference_ns(twin, skill[1], 450.0, 0.25)
    assert Loud.calls == 1


@pytest.mark.parametrize("options", [{}, {"bottom_match": False}, {"slap_back_in": True},
                                     {"false_slap_penalty": "burn"}])
def test_engine_slappers_are_the_slappers_of_the_state(options: dict[str, object]) -> None:
    spec = game("banka-bever")
    opts = spec.parse_options(options)
    for seats in (2, 3, 6):
        engine = spec.new_engine(seats, 0, opts, spec.seeded_deal(seats, 0, seats))
        assert isinstance(engine, BankaBever)
        rng_a, rng_b = random.Random(seats), random.Random(seats)
        t, holds = 1_000_000_000, 0
        while not engine.over and t < 2_000 * 1_000_000_000:
            a = engine_slappers(engine, opts, rng_a)
            assert a == slappers(engine.state(), opts, rng_b)
            holds += bool(a) and a[0][1] == 320.0
            lay = engine.lay_input(t)
            if lay is None:
                engine.advance(t)
            else:
                engine.apply(lay)
                if a:  # now and then the first of them slaps
                    coin = rng_a.random()
                    rng_b.random()  # the two streams stay in step
                    if coin < 0.5:
                        engine.apply(Input(t + 1, a[0][0], "slap"))
            t += 400_000_000
        assert holds, seats


@pytest.mark.slow
@pytest.mark.parametrize("seats, options", [(2, {}), (3, {"lappen": True}),
                                            (5, {"points_game": True, "lappen": True}),
                                            (4, {"no_special_on_special": True})])
def test_the_choice_among_turn_options_is_choose_vandattas(seats: int,
                                                          options: dict[str, object]) -> None:
    """choose_vandatta_option (what the simulator asks) chooses what choose_vandatta chooses
    among legal_inputs, with the same draws, at every state of seeded games."""
    spec = game("vandatta")
    opts = spec.parse_options(options)
    choices = Counter()
    for seed in range(1, 9):
        engine = spec.new_engine(seats, 0, opts, spec.seeded_deal(seats, 0, seed))
        assert isinstance(engine, Vandatta)
        rng_a, rng_b = random.Random(seed), random.Random(seed)
        t = 1
        while not engine.over and t < 400:
            t += 1
            legal = engine.legal_inputs(t)
            offered = engine.turn_options()
            if not legal:
                assert offered is None or not (offered[1] or offered[2] or offered[4]
                                               or offered[5])
                if engine.state()["phase"] == "round_over":
                    engine.apply(next_deal(engine.state(), seed + t, t))
                    continue
                state = engine.state()  # an empty stock: the table reshuffles
                engine.apply(Input(t, state["turn"], "reshuffle",
                                   stock=reshuffled(state["pile"], rng_a)))
                reshuffled(state["pile"], rng_b)
                continue
            assert offered is not None
            for k in range(6):  # other draws at the same state
                twin_a, twin_b = random.Random(k * t), random.Random(k * t)
                assert vandatta_input(t, offered[0], choose_vandatta_option(
                    offered, engine.hand, twin_a)) == choose_vandatta(legal, engine.hand, twin_b)
                assert twin_a.getstate() == twin_b.getstate()
            expected = choose_vandatta(legal, engine.hand, rng_b)
            chosen = vandatta_input(t, offered[0], choose_vandatta_option(offered, engine.hand,
                                                                          rng_a))
            assert chosen == expected
            assert rng_a.getstate() == rng_b.getstate()
            choices[chosen.act, len(chosen.cards or ())] += 1
            engine.apply(chosen)
    assert {("play", 1), ("draw", 0)} <= set(choices), choices
    if "lappen" in options:
        assert ("call", 0) in choices


def test_a_choice_with_nothing_to_choose_from_is_an_error() -> None:
    with pytest.raises(ValueError):
        choose_vandatta_option((0, [], False, None, False, False), lambda seat: [],
                               random.Random(1))
