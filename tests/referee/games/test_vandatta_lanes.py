"""Vändåtta's fast lanes (issue 36) judge exactly as the acts' handlers: ``Vandatta.apply``
lays the seat in turn's one matching ordinary card, and hands over the stock's known top card,
without going through ``_on_play``/``_judge`` and ``_on_draw``. Here every input of seeded games
(every option on and off, two to seven seats, known deals and the same inputs in observed mode,
the inputs players make and random ones the referee refuses, and simulated games) is judged by
an engine with its lanes and by one that sends every input to its handler, and the two agree on
every verdict, the state, every hand and the stock after each input."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from referee.cards import full_deck, shuffled_deck
from referee.deal import HandDeal
from referee.games import seeded_deal
from referee.games.vandatta import Vandatta, next_deal
from referee.model import Input, Verdict
from referee.options import VandattaOptions
from tests.referee.games.test_vandatta_plays import OPTIONS  # every combination of the options


class ByHandlers(Vandatta):
    """The engine without its fast lanes: every input goes to its act's handler."""

    def apply(self, inp: Input) -> list[Verdict]:
        if inp.t > self._t:
            self._t = inp.t
        self._seq += 1
        return self._handle(inp)


class Pair:
    """The same game in both engines, and how many inputs took a lane."""

    def __init__(self, n: int, dealer: int, opts: VandattaOptions, deal: object) -> None:
        self.fast = Vandatta(n, dealer, opts, deal)  # type: ignore[arg-type]
        self.slow = ByHandlers(n, dealer, opts, deal)  # type: ignore[arg-type]
        self.handled = 0
        handle = self.fast._handle

        def counted(inp: Input) -> list[Verdict]:
            self.handled += 1
            return handle(inp)

        self.fast._handle = counted  # type: ignore[method-assign]
        self.inputs = 0
        self.laned: Counter[str] = Counter()

    def apply(self, inp: Input) -> None:
        before = self.handled
        got = [v.to_json() for v in self.fast.apply(inp)]
        want = [v.to_json() for v in self.slow.apply(inp)]
        if self.handled == before:  # which lane it took
            if inp.act == "play" and inp.cards:
                self.laned["eight" if inp.cards[0].rank == 8 else
                           "play" if len(inp.cards) == 1 else "plays"] += 1
            elif inp.act == "draw" and self.slow.state()["phase"] in ("ace_draws", "ace_follow"):
                self.laned["ace draw"] += 1
            else:
                self.laned[inp.act] += 1
        self.inputs += 1
        assert got == want, inp
        fast, slow = self.fast, self.slow
        assert fast.state() == slow.state(), inp
        assert [fast.hand(s) for s in range(fast.n_seats)] == [
            slow.hand(s) for s in range(slow.n_seats)], inp
        assert fast.stock_cards() == slow.stock_cards(), inp
        assert fast.turn_options() == slow.turn_options(), inp
        assert (fast._t, fast._seq, fast._pool, fast._bag) == (
            slow._t, slow._seq, slow._pool, slow._bag), inp


def play(seed: int, n: int, opts: VandattaOptions, steps: int = 250) -> list[Pair]:
    """A seeded game in both engines, known and observed; the pairs played."""
    rng = random.Random(seed)
    dealer = seed % n
    known = Pair(n, dealer, opts, seeded_deal("vandatta", n, dealer, seed))
    observed = Pair(n, dealer, opts, None)
    deck = full_deck()
    for t in range(1, steps + 1):
        e = known.slow
        if e.over:
            break
        legal = e.legal_inputs(t)
        state = e.state()
        if state["phase"] == "round_over":
            inp = next_deal(state, rng.randrange(1 << 30), t)
        elif state["stock"] == 0 and len(state["pile"]) > 1 and opts.reshuffle_discards \
                and (not legal or rng.random() < 0.5):
            below = [c for c in e.pile_cards()[:-1] if c is not None]
            rng.shuffle(below)
            inp = Input(t, state["turn"] or 0, "reshuffle",
                        # a third without the order: the stock's cards are not seen then
                        stock=None if rng.random() < 0.3 else tuple(below))
        elif opts.lappen and rng.random() < 0.15:  # a call, often long before it counts
            inp = Input(t, rng.randrange(n), "call", call="lappen")
        elif legal and rng.random() < 0.8:
            inp = rng.choice(legal)
        else:  # what the referee refuses: cards not held, out of turn, a draw naming another
            seat = rng.randrange(n)
            hand = [c for c in e.hand(seat) if c is not None] or deck
            picks = tuple(rng.sample(hand, min(len(hand), rng.randint(1, 2))))
            inp = rng.choice([Input(t, seat, "play", cards=picks, as_=rng.choice(deck)),
                              Input(t, seat, "play", cards=(rng.choice(deck),)),
                              Input(t, seat, "call", call="lappen"), Input(t, seat, "draw"),
                              Input(t, seat, "draw", card=rng.choice(deck)),
                              Input(t, seat, "pass")])
        known.apply(inp)
        observed.apply(inp)
    return [known, observed]


@pytest.mark.slow
@pytest.mark.parametrize("part", range(8))
def test_the_lanes_judge_as_the_handlers(part: int) -> None:
    pairs: list[Pair] = []
    for k, opts in enumerate(OPTIONS[part::8]):
        for seed in range(4):
            pairs += play(1000 * part + 10 * k + seed, 2 + (k + seed) % 6, opts)
    assert sum(p.inputs for p in pairs) > 2500
    # Every lane taken, and many inputs not: the comparison met both sides.
    laned = sum((p.laned for p in pairs), Counter())
    assert all(laned[lane] > 20 for lane in ("play", "plays", "eight", "draw", "pass",
                                              "ace draw")), laned
    assert sum(p.handled for p in pairs) > 500


def test_simulated_games_too() -> None:
    from cardtable.simulate import Simulation

    laned = handled = 0
    for seats, options in [(2, {}), (3, {}), (4, {"lappen": True, "no_special_on_special": True}),
                           (5, {"no_special_finish": True, "reshuffle_discards": False}),
                           (7, {"points_game": True})]:
        for seed in range(1, 5):
            sim = Simulation("vandatta", seats, seed, options=options)
            sim.run()
            h = sim.header
            for deal in (h.deal, None):
                pair = Pair(h.n_seats, h.dealer, h.options, deal)  # type: ignore[arg-type]
                for inp in sim.table.inputs:
                    pair.apply(inp)
                laned += sum(pair.laned.values())
                handled += pair.handled
    assert laned > 500 and handled > 500


@pytest.mark.parametrize("reshuffle", [False, True])
def test_draws_and_passes_as_the_stock_runs_out(reshuffle: bool) -> None:
    """A short stock: draws that empty it, passes after three draws with and without a card
    left to draw, and the round that ends when every seat passes without one."""
    laned: Counter[str] = Counter()
    for n in (2, 3):
        for stock_size in range(6):
            deck = shuffled_deck(10 * n + stock_size)
            hands = tuple(tuple(deck[6 * s:6 * s + 6]) for s in range(n))
            stock = tuple(deck[6 * n + 1:6 * n + 1 + stock_size])
            deal = HandDeal(hands=hands, stock=stock, upcard=deck[6 * n])
            opts = VandattaOptions(reshuffle_discards=reshuffle)
            for given in (deal, None):
                pair = Pair(n, 0, opts, given)
                t = 0
                while not pair.slow.over and t < 60:
                    t += 1
                    seat = pair.slow.turn_options()
                    if seat is None:
                        break
                    who = seat[0]
                    pair.apply(Input(t, who, "draw"))
                    pair.apply(Input(t, who, "pass"))
                laned += pair.laned
    assert laned["pass"] > 5 and laned["draw"] > 5
