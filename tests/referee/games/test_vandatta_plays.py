"""Vändåtta's quick legality of candidate plays (issue 13.4) is the full judging: at every
state of seeded games (every option on and off, two to seven seats, inputs the players would
make and random ones the referee refuses, known deals and the same inputs in observed mode),
``legal_inputs`` offers exactly what it offered when it judged each candidate play with
``_judge``, in the same order, and ``turn_options`` says the same without the inputs."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from referee.cards import Card, full_deck, shuffled_deck
from referee.deal import HandDeal
from referee.games import seeded_deal
from referee.games.vandatta import _OWN_PLAY, _OWN_TURN, Vandatta, _Refusal
from referee.model import Input
from referee.options import VandattaOptions

#: Every combination of the options that change what may be laid or when.
OPTIONS = [VandattaOptions(lappen=a, no_special_on_special=b, no_special_finish=c,
                           reshuffle_discards=d, points_game=e)
           for a, b, c, d, e in itertools.product((False, True), repeat=5)]


def judged_legal_inputs(e: Vandatta, t: int) -> list[Input]:
    """``legal_inputs`` as it was written before issue 13.4's quick legality: every candidate
    play judged in full by ``_judge``."""
    seat = e._actor()
    if seat is None:
        return []
    out: list[Input] = []
    phase = e._phase
    stock = e._stock
    if phase == "ace_draws":
        if stock:
            out.append(Input(t, seat, "draw", card=stock[-1]))
    elif phase == "lappen_penalty":
        if stock:
            out.append(Input(t, seat, "draw", card=stock[-1]))
        elif not e._can_draw():
            out.append(Input(t=t, seat=seat, act="pass"))
        return out
    else:
        for cards, as_ in e._candidate_plays(seat):
            if not isinstance(e._judge(seat, cards, as_), _Refusal):
                out.append(Input(t, seat, "play", cards=cards, as_=as_))
        # in a special finish a drawn card that may be laid is laid: no draw, no pass
        laid_only = phase == "special_finish" and bool(out) and None not in e._hands[seat]
        if phase in ("play", "special_finish") and not laid_only:
            if e._draws < 3 and stock:
                out.append(Input(t, seat, "draw", card=stock[-1]))
            if e._draws >= 3 or not e._can_draw():
                out.append(Input(t=t, seat=seat, act="pass"))
    if e.options.lappen and seat not in e._called_seats():
        out.append(Input(t=t, seat=seat, act="call", call="lappen"))
    return out


def check(e: Vandatta, t: int, refusals: Counter[str]) -> list[Input]:
    """Assert the quick and the judged answers agree at this state; count why candidates were
    refused (so the test knows it met each case)."""
    judged = judged_legal_inputs(e, t)
    assert e.legal_inputs(t) == judged
    options = e.turn_options()
    # What the simulator reads of them: whether the table reshuffles now and whether the round
    # is over, as it read them from turn_state() (state()'s keys) before.
    must_draw, turn, stock, pile, phase = e.turn_state()
    seat = must_draw if must_draw is not None else turn
    assert (options is not None and e.can_reshuffle()) == (
        stock == 0 and pile > 1 and seat is not None and e.options.reshuffle_discards
        and phase != "round_over")
    assert (options is None and not e.over) == (phase == "round_over")
    assert options is None or options[0] == seat
    assert [None if c is None else str(c) for c in e.pile_cards()] == e.state()["pile"]
    # The acts' shortcut past _turn_refusal: it refuses nothing of the seat in turn there.
    if e._turn is not None:
        for act, phases in (("play", _OWN_PLAY), ("draw", _OWN_TURN), ("pass", _OWN_TURN)):
            if e._phase in phases:
                assert e._turn_refusal(e._turn, act) is None, (act, e._phase)
    if options is None:
        assert judged == []
    else:
        seat, plays, draw, card, pass_, call = options
        rebuilt = [Input(t, seat, "play", cards=c, as_=a) for c, a in plays]
        rebuilt += [Input(t, seat, "draw", card=card)] if draw else []
        rebuilt += [Input(t, seat, "pass")] if pass_ else []
        rebuilt += [Input(t, seat, "call", call="lappen")] if call else []
        assert rebuilt == judged
        if e._phase in ("play", "special_finish", "ace_follow"):
            assert plays == e._judged_plays(seat)
            for cards, as_ in e._candidate_plays(seat):
                why = e._judge(seat, cards, as_)
                if isinstance(why, _Refusal):
                    refusals[why.code] += 1
    return judged


def play_game(seed: int, n: int, opts: VandattaOptions, refusals: Counter[str],
              steps: int = 250) -> int:
    """A seeded game, checked at every state, and the same inputs in observed mode (checked at
    every third); returns the states checked."""
    rng = random.Random(seed)
    dealer = seed % n
    known = Vandatta(n, dealer, opts, seeded_deal("vandatta", n, dealer, seed))
    observed = Vandatta(n, dealer, opts, None)
    deck = full_deck()
    checked = 0
    for t in range(1, steps + 1):
        if known.over:
            break
        legal = check(known, t, refusals)
        if t % 3 == 0:
            check(observed, t, refusals)
        checked += 1
        state = known.state()
        if state["phase"] == "round_over":
            inp = _next_deal(rng, known, t)
        elif state["stock"] == 0 and len(state["pile"]) > 1 and opts.reshuffle_discards \
                and (not legal or rng.random() < 0.5):
            below = [known._discard[i] for i in range(len(known._discard) - 1)]
            rng.shuffle(below)
            inp = Input(t, state["turn"] or 0, "reshuffle", stock=tuple(c for c in below if c))
        elif legal and rng.random() < 0.8:
            inp = rng.choice(legal)
        else:  # a play the referee may refuse, a lappen call out of turn, any act
            seat = rng.randrange(n)
            hand = [c for c in known.hand(seat) if c is not None] or deck
            picks = tuple(rng.sample(hand, min(len(hand), rng.randint(1, 2))))
            inp = rng.choice([Input(t, seat, "play", cards=picks, as_=rng.choice(deck)),
                              Input(t, seat, "call", call="lappen"), Input(t, seat, "draw"),
                              Input(t, seat, "pass")])
        known.apply(inp)
        observed.apply(inp)
    return checked


def _next_deal(rng: random.Random, e: Vandatta, t: int) -> Input:
    deck = shuffled_deck(rng.randrange(1 << 30))
    out = set(e.state()["out"])
    hands = []
    for s in range(e.n_seats):
        hands.append(() if s in out else tuple(deck[:6]))
        if s not in out:
            deck = deck[6:]
    seat = next(s for s in range(e.n_seats) if s not in out)
    return Input(t, seat, "deal", hands=tuple(hands), stock=tuple(deck[1:]), upcard=deck[0])


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_quick_legal_plays_are_the_judged_plays(part: int) -> None:
    refusals: Counter[str] = Counter()
    states = 0
    for k, opts in enumerate(OPTIONS[part::4]):
        for seed in range(4):
            states += play_game(1000 * part + 10 * k + seed, 2 + (k + seed) % 6, opts,
                                refusals)
    assert states > 2500
    # The candidates the quick test leaves out, each case met (refused by _judge).
    assert {"ace_without_follow_up", "no_lappen", "special_on_special"} <= set(refusals), \
        refusals


def test_the_simulations_states_too() -> None:
    """The states seeded simulations pass through (the virtual players' choices)."""
    from cardtable.simulate import Simulation

    refusals: Counter[str] = Counter()
    for seats, options in [(3, {}), (4, {"lappen": True, "no_special_on_special": True}),
                           (4, {"no_special_finish": True, "reshuffle_discards": False}),
                           (5, {"points_game": True})]:
        for seed in range(1, 6):
            sim = Simulation("vandatta", seats, seed, options=options)
            sim.run()
            h = sim.header
            e = Vandatta(h.n_seats, h.dealer, sim.header.options, h.deal)  # type: ignore[arg-type]
            for inp in sim.table.inputs:
                e.apply(inp)
                check(e, inp.t, refusals)
    assert refusals


def test_hands_of_few_ranks() -> None:
    """Positions the games meet seldom: a hand of one to five cards of two or three ranks
    (mostly eights and aces), laid out with or without a lappen call, on a special card or
    not, on an upcard seen or not."""
    refusals: Counter[str] = Counter()
    deck = full_deck()
    sizes: Counter[int] = Counter()
    for seed in range(400):
        rng = random.Random(seed)
        opts = OPTIONS[seed % len(OPTIONS)]
        ranks = rng.sample([8, 14, 8, 14, *range(2, 14)], 3)[:rng.randint(2, 3)]
        pool = [c for c in deck if c.rank in ranks]
        mine = rng.sample(pool, min(len(pool), rng.randint(1, 5)))
        rest = [c for c in deck if c not in mine]
        rng.shuffle(rest)
        n = rng.randint(2, 4)
        hands = (tuple(mine), *(tuple(rest[6 * k:6 * k + 6]) for k in range(n - 1)))
        left = rest[6 * (n - 1):]
        upcard = rng.choice([c for c in left if c.rank in (8, 14)] + left[:3])
        left.remove(upcard)
        e = Vandatta(n, n - 1, opts, HandDeal(hands, tuple(left),
                                              None if seed % 5 == 0 else upcard))
        t = 1
        if rng.random() < 0.5:
            e.apply(Input(t, 0, "call", call="lappen"))
        for t in range(2, 8):
            legal = check(e, t, refusals)
            sizes.update(len(i.cards or ()) for i in legal)
            if not legal or e.over:
                break
            e.apply(rng.choice(legal))
    assert {"ace_without_follow_up", "no_lappen", "special_on_special"} <= set(refusals), \
        refusals
    assert {1, 2, 3, 4} <= set(sizes), sizes


def test_a_reshuffle_of_the_discards_is_judged_as_by_the_card_by_card_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reshuffle whose stock is the discards (the quick multiset test of _same_cards) is
    judged as the card-by-card check judges it, and so is every other stock, known or observed
    (an unseen upcard among the discards): the same verdicts and the same engine after, with
    and without the quick test."""
    import copy
    import importlib

    vandatta = importlib.import_module("referee.games.vandatta")

    deck = full_deck()
    kinds: Counter[str] = Counter()
    quick = 0
    real_same_cards = vandatta._same_cards

    def counted(a: object, b: object) -> bool:
        nonlocal quick
        same = real_same_cards(a, b)  # type: ignore[arg-type]
        quick += same
        return same

    for seed in range(120):
        rng = random.Random(seed)
        n = 2 + seed % 4
        e = Vandatta(n, 0, VandattaOptions(), seeded_deal("vandatta", n, 0, seed))
        seen = Vandatta(n, 0, VandattaOptions(), None)  # the same inputs in observed mode
        for t in range(1, 400):  # play until the stock is empty
            if not e.stock_cards() and len(e.pile_cards()) > 2 or e.over:
                break
            legal = [i for i in e.legal_inputs(t) if i.act != "call"]
            inp = rng.choice(legal)
            e.apply(inp)
            seen.apply(inp)
        if e.over or e.stock_cards():
            continue
        below = [c for c in e.pile_cards()[:-1] if c is not None]
        pool = [c for c in deck if c not in below and c != e.pile_cards()[-1]]
        kind = rng.choice(["same", "same", "other_pool", "twice", "short", "parsed", "none"])
        stock = list(below)
        rng.shuffle(stock)
        if kind == "other_pool":
            stock[rng.randrange(len(stock))] = rng.choice(pool)
        elif kind == "twice" and len(stock) > 1:
            stock[0] = stock[1]
        elif kind == "short":
            stock = stock[:-1]
        elif kind == "parsed":  # equal cards, other objects
            stock = [Card(c.rank, c.suit) for c in stock]
        inp = Input(10_000, 0, "reshuffle", stock=None if kind == "none" else tuple(stock))
        for engine, mode in ((e, ""), (seen, "observed ")):
            slow = copy.deepcopy(engine)
            monkeypatch.setattr(vandatta, "_same_cards", counted)
            fast_verdicts = [v.to_json() for v in engine.apply(inp)]
            monkeypatch.setattr(vandatta, "_same_cards", lambda a, b: False)
            slow_verdicts = [v.to_json() for v in slow.apply(inp)]
            assert fast_verdicts == slow_verdicts, kind
            assert (engine.state(), engine.stock_cards(), engine._pool, engine._bag) == (
                slow.state(), slow.stock_cards(), slow._pool, slow._bag), kind
            kinds[mode + kind + (" refused" if fast_verdicts else "")] += 1
    assert quick >= 10 and {"same", "other_pool refused", "twice refused", "short refused",
                            "parsed", "none", "observed same"} <= set(kinds), (quick, kinds)


def test_deals_are_checked_and_pooled_as_card_by_card(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deal's check for a card given twice, and the faces left unseen (the pool), are the
    same with the quick test of all-different cards (_distinct) and without it: known deals,
    partly seen ones, and deals holding a card twice."""
    import importlib

    from referee.errors import DealError

    vandatta = importlib.import_module("referee.games.vandatta")
    real = vandatta._distinct
    outcomes: Counter[str] = Counter()
    for seed in range(200):
        rng = random.Random(seed)
        n = rng.randint(2, 5)
        deck = shuffled_deck(seed)
        hands = [list(deck[6 * k:6 * k + 6]) for k in range(n)]
        stock = list(deck[6 * n + 1:])
        upcard: Card | None = deck[6 * n]
        kind = rng.choice(["known", "unseen", "twice", "parsed twice"])
        if kind == "unseen":
            for _ in range(rng.randint(1, 8)):
                hands[rng.randrange(n)][rng.randrange(6)] = None  # type: ignore[call-overload]
            upcard = rng.choice([upcard, None])
        elif kind == "twice":
            stock[rng.randrange(len(stock))] = hands[0][0]
        elif kind == "parsed twice":
            card = hands[1][2]
            assert card is not None
            hands[0][rng.randrange(6)] = Card(card.rank, card.suit)
        deal = HandDeal(tuple(tuple(h) for h in hands), tuple(stock), upcard)
        results = []
        for distinct in (real, lambda cards: False):
            monkeypatch.setattr(vandatta, "_distinct", distinct)
            try:
                e = Vandatta(n, 0, VandattaOptions(), deal)
            except DealError as exc:
                results.append(str(exc))
            else:
                results.append((e.state(), e._pool, e._bag, [e.hand(s) for s in range(n)]))
        assert results[0] == results[1], kind
        outcomes[kind + (" refused" if isinstance(results[0], str) else "")] += 1
    assert {"known", "unseen", "twice refused", "parsed twice refused"} <= set(outcomes), outcomes
