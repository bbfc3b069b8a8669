"""Vändåtta engine (docs/rules.md §3): one test per rule, per Decision and per illegal code, plus
properties over random seeded games driven by ``legal_inputs``."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cards import Card, full_deck, shuffled_deck
from referee.deal import HandDeal
from referee.games import new_engine, parse_options, seeded_deal
from referee.games.vandatta import Vandatta, card_points, hand_score
from referee.model import Input, Verdict
from referee.options import VandattaOptions

# ---------------------------------------------------------------------------- helpers


def C(text: str) -> Card:
    return Card.parse(text)


def cards(text: str) -> tuple[Card, ...]:
    return tuple(C(x) for x in text.split())


class Table:
    """A Vändåtta engine with a clock: each act is one input one nanosecond later."""

    def __init__(self, hands: list[str], stock: str = "", upcard: str = "2C",
                 dealer: int | None = None, **opts: Any) -> None:
        n = len(hands)
        self.dealer = n - 1 if dealer is None else dealer  # seat 0 starts by default
        deal = HandDeal(tuple(cards(h) for h in hands), stock_for(stock, hands, upcard),
                        C(upcard))
        self.e = Vandatta(n, self.dealer, VandattaOptions(**opts), deal)
        self.t = 0
        self.log: list[Input] = []

    def send(self, inp: Input) -> list[Verdict]:
        self.log.append(inp)
        return self.e.apply(inp)

    def _inp(self, seat: int, act: str, **kw: Any) -> Input:
        self.t += 1
        return Input(t=self.t, seat=seat, act=act, **kw)

    def play(self, seat: int, text: str, as_: str | None = None) -> list[Verdict]:
        return self.send(self._inp(seat, "play", cards=cards(text),
                                   as_=None if as_ is None else C(as_)))

    def draw(self, seat: int, card: str | None = None) -> list[Verdict]:
        return self.send(self._inp(seat, "draw", card=None if card is None else C(card)))

    def pass_(self, seat: int) -> list[Verdict]:
        return self.send(self._inp(seat, "pass"))

    def call(self, seat: int, what: str = "lappen") -> list[Verdict]:
        return self.send(self._inp(seat, "call", call=what))

    def reshuffle(self, seat: int, stock: str | None = None) -> list[Verdict]:
        return self.send(self._inp(seat, "reshuffle",
                                   stock=None if stock is None else cards(stock)))

    def deal(self, seat: int, hands: list[str] | None = None, stock: str | None = None,
             upcard: str | None = None) -> list[Verdict]:
        return self.send(self._inp(
            seat, "deal",
            hands=None if hands is None else tuple(cards(h) for h in hands),
            stock=None if stock is None else stock_for(stock, hands or [], upcard or "2C"),
            upcard=None if upcard is None else C(upcard)))

    @property
    def s(self) -> dict[str, Any]:
        return self.e.state()

    def hand(self, seat: int) -> list[str]:
        return [str(c) for c in self.e.hand(seat)]


def ok(verdicts: list[Verdict]) -> list[Verdict]:
    """Assert nothing was refused; return the verdicts."""
    bad = [v for v in verdicts if v.verdict in ("illegal", "desync")]
    assert not bad, bad
    return verdicts


def refused(verdicts: list[Verdict], code: str) -> Verdict:
    """Assert exactly one illegal verdict with ``code``; return it."""
    assert len(verdicts) == 1, verdicts
    v = verdicts[0]
    assert v.verdict == "illegal", v
    assert v["code"] == code, v
    assert isinstance(v["reason"], str) and len(v["reason"]) > 10
    return v


def snapshot(e: Vandatta) -> tuple[Any, ...]:
    return (e.state(), [e.hand(s) for s in range(e.n_seats)], e.stock_cards())


def kinds(verdicts: list[Verdict]) -> list[str]:
    return [v.verdict for v in verdicts]


#: Stock placeholder: the rest of the deck (in full_deck order) that the hands and upcard leave.
FILLER = "rest"


def stock_for(stock: str, hands: list[str], upcard: str) -> tuple[Card, ...]:
    if stock != FILLER:
        return cards(stock)
    used = {c for h in hands for c in cards(h)} | {C(upcard)}
    return tuple(c for c in full_deck() if c not in used)


# ---------------------------------------------------------------------------- set-up


def test_seats_two_to_seven() -> None:
    """Decision: 2 to 7 players."""
    for n in (2, 7):
        assert Vandatta(n, 0, VandattaOptions(), None).state()["counts"] == [6] * n
    for n in (1, 8):
        with pytest.raises(ValueError):
            Vandatta(n, 0, VandattaOptions(), None)


def test_factory_and_seeded_deal() -> None:
    deal = seeded_deal("vandatta", 4, 1, 11)
    e = new_engine("vandatta", 4, 1, parse_options("vandatta", {}), deal)
    s = e.state()
    assert s["counts"] == [6, 6, 6, 6]
    assert s["stock"] == 52 - 24 - 1
    assert s["turn"] == 2  # the player after the dealer starts
    assert s["pile"] == [str(deal.upcard)]
    assert s["phase"] == "play" and s["round"] == 1 and s["tricks"] == 0


def test_state_keys() -> None:
    s = Table(["5H", "6H"]).s
    for key in ("game", "counts", "pile", "turn", "cards_played", "tricks", "out", "over",
                "winners", "top", "current", "stock", "must_draw", "draws", "phase", "round",
                "totals", "called"):
        assert key in s
    assert s["game"] == "vandatta"
    assert s["current"] == {"suit": "C", "rank": "2"}
    assert s["top"] == "2C"
    assert s["totals"] is None  # not a points game


def test_bad_constructor_deal() -> None:
    with pytest.raises(ValueError):
        Vandatta(2, 0, VandattaOptions(), HandDeal((cards("5H"), cards("5H")), (), C("2C")))
    with pytest.raises(ValueError):
        Vandatta(3, 0, VandattaOptions(), HandDeal((cards("5H"), cards("6H")), (), C("2C")))


def test_upcard_eight_counts_as_itself() -> None:
    """Decision: an 8 upcard counts as itself (no declaration needed, no effect)."""
    t = Table(["5S 5H 9C", "6H 7C"], FILLER, upcard="8H")
    assert t.s["current"] == {"suit": "H", "rank": "8"}
    refused(t.play(0, "5S"), "no_match")
    ok(t.play(0, "5H"))
    assert t.s["turn"] == 1


def test_upcard_ace_has_no_effect() -> None:
    """Decision: an ace upcard makes nobody draw and needs no follow-up."""
    t = Table(["3S 9C", "6H 7C", "4D"], FILLER, upcard="AS")
    ok(t.play(0, "3S"))
    s = t.s
    assert s["phase"] == "play" and s["turn"] == 1 and s["must_draw"] is None
    assert s["counts"] == [1, 2, 1]


def test_upcard_is_special_for_no_special_on_special() -> None:
    """Decision: an 8 or ace upcard still counts as special for no_special_on_special."""
    t = Table(["8C AH 5H 3H", "6H"], FILLER, upcard="8H", no_special_on_special=True)
    refused(t.play(0, "8C", as_="5C"), "special_on_special")
    refused(t.play(0, "AH"), "special_on_special")
    ok(t.play(0, "5H"))


# ---------------------------------------------------------------------------- plain play


def test_first_player_is_after_the_dealer_and_turns_go_clockwise() -> None:
    t = Table(["5C 9H", "6C 9S", "7C 9D"], FILLER, dealer=1)
    assert t.s["turn"] == 2
    ok(t.play(2, "7C"))
    assert t.s["turn"] == 0
    ok(t.play(0, "5C"))
    assert t.s["turn"] == 1


def test_match_by_suit() -> None:
    t = Table(["9C 3S", "6H"], FILLER)
    ok(t.play(0, "9C"))
    assert t.s["current"] == {"suit": "C", "rank": "9"}
    assert t.s["cards_played"] == 1


def test_match_by_rank_changes_suit() -> None:
    t = Table(["2H 3S", "6H 7C"], FILLER)
    ok(t.play(0, "2H"))
    assert t.s["current"] == {"suit": "H", "rank": "2"}
    ok(t.play(1, "6H"))


def test_no_match() -> None:
    t = Table(["9H 3S", "6H"], FILLER)
    v = refused(t.play(0, "9H"), "no_match")
    assert "nine" in v["reason"] or "9" in v["reason"]
    assert t.hand(0) == ["9H", "3S"] and t.s["turn"] == 0


def test_several_same_rank_first_must_match_last_sets_suit() -> None:
    t = Table(["7H 7S 7C 4D", "6H"], FILLER, upcard="3H")
    refused(t.play(0, "7S 7H"), "no_match")  # the first card must match
    ok(t.play(0, "7H 7S 7C"))
    assert t.s["current"] == {"suit": "C", "rank": "7"}
    assert t.s["pile"] == ["3H", "7H", "7S", "7C"]
    assert t.s["counts"] == [1, 1]


def test_not_same_rank() -> None:
    t = Table(["7C 9C", "6H"], FILLER)
    refused(t.play(0, "7C 9C"), "not_same_rank")


def test_not_in_hand() -> None:
    t = Table(["7C 9C", "6H"], FILLER)
    refused(t.play(0, "KC"), "not_in_hand")
    refused(t.play(0, "7C 7C"), "not_in_hand")  # the same card twice
    refused(t.play(0, "6H"), "not_in_hand")  # another seat's card


def test_not_your_turn() -> None:
    t = Table(["7C 9C", "6C 2S"], FILLER)
    refused(t.play(1, "6C"), "not_your_turn")
    refused(t.draw(1), "not_your_turn")
    refused(t.pass_(1), "not_your_turn")


def test_unknown_act_and_seat() -> None:
    t = Table(["7C 9C", "6C 2S"], FILLER)
    refused(t.send(Input(t=1, seat=0, act="lay", card=C("7C"))), "unknown_act")
    refused(t.send(Input(t=1, seat=5, act="pass")), "no_such_seat")


def test_late_input_judged_at_last_t() -> None:
    t = Table(["7C 9C", "6C 2S"], FILLER)
    ok(t.send(Input(t=100, seat=0, act="draw")))
    v = refused(t.send(Input(t=50, seat=1, act="draw")), "not_your_turn")
    assert v.t == 100


# ---------------------------------------------------------------------------- eights


def test_eight_needs_declaration() -> None:
    t = Table(["8S 9C", "6H"], FILLER, upcard="3H")
    refused(t.play(0, "8S"), "bad_declaration")
    assert t.hand(0) == ["8S", "9C"]


def test_eight_on_any_card_and_declared_suit_or_rank_to_match() -> None:
    t = Table(["8S 9C", "4C QC 4D", "5H"], FILLER, upcard="3H")
    ok(t.play(0, "8S", as_="QD"))
    assert t.s["current"] == {"suit": "D", "rank": "Q"}
    assert t.s["top"] == "8S"
    refused(t.play(1, "4C"), "no_match")
    ok(t.play(1, "QC"))  # same rank as the declared card


def test_eight_declared_suit_matches() -> None:
    t = Table(["8S 9C", "4C QC 4D", "5H"], FILLER, upcard="3H")
    ok(t.play(0, "8S", as_="QD"))
    ok(t.play(1, "4D"))


def test_several_eights_top_one_declared() -> None:
    t = Table(["8S 8C 9C", "4C"], FILLER, upcard="3H")
    ok(t.play(0, "8S 8C", as_="4H"))
    assert t.s["current"] == {"suit": "H", "rank": "4"}
    assert t.s["pile"][-2:] == ["8S", "8C"]
    assert t.s["counts"] == [1, 1]


def test_declaration_on_other_card_is_ignored() -> None:
    t = Table(["5H 9C", "4C"], FILLER, upcard="3H")
    ok(t.play(0, "5H", as_="KS"))
    assert t.s["current"] == {"suit": "H", "rank": "5"}


def test_eight_declared_as_ace_has_no_ace_effect() -> None:
    """Decision: an eight named as an ace has none of the ace's effects."""
    t = Table(["8S 9C", "4C KS", "5H"], FILLER, upcard="3H")
    ok(t.play(0, "8S", as_="AS"))
    s = t.s
    assert s["phase"] == "play" and s["turn"] == 1 and s["must_draw"] is None
    assert s["counts"] == [1, 2, 1]
    assert s["current"] == {"suit": "S", "rank": "A"}
    ok(t.play(1, "KS"))


def test_eight_declared_as_eight_is_not_special_to_the_next_player() -> None:
    """Decision: an eight named as an eight has no eight effect (the next player matches it)."""
    t = Table(["8S 9C", "4C 4D", "5H"], FILLER, upcard="3H")
    ok(t.play(0, "8S", as_="8D"))
    refused(t.play(1, "4C"), "no_match")
    ok(t.play(1, "4D"))


# ---------------------------------------------------------------------------- aces


def test_ace_every_other_player_draws_clockwise_then_follow_up() -> None:
    stock = "2D 3D 4D 5D 6D"
    t = Table(["KS", "AH 5H 9C", "7C", "9S"], stock, upcard="3H", dealer=0)
    assert t.s["turn"] == 1
    ok(t.play(1, "AH"))
    order = []
    while t.s["must_draw"] is not None:
        seat = t.s["must_draw"]
        assert t.s["turn"] == seat and t.s["phase"] == "ace_draws"
        order.append(seat)
        ok(t.draw(seat))
    assert order == [2, 3, 0]
    assert t.s["counts"] == [2, 2, 2, 2]
    assert t.s["phase"] == "ace_follow" and t.s["turn"] == 1
    ok(t.play(1, "5H"))
    assert t.s["turn"] == 2 and t.s["phase"] == "play"


def test_ace_follow_up_before_draws_is_refused() -> None:
    t = Table(["AH 5H 9C", "7C", "9S"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    refused(t.play(0, "5H"), "ace_draws_pending")


def test_ace_follow_up_of_another_suit_or_draw_or_pass() -> None:
    t = Table(["AH 5H 5C 9C", "7C"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    refused(t.draw(0), "must_follow_ace")  # draws still pending
    ok(t.draw(1))
    refused(t.play(0, "9C"), "must_follow_ace")
    refused(t.draw(0), "must_follow_ace")
    refused(t.pass_(0), "must_follow_ace")
    refused(t.play(1, "7C"), "not_your_turn")
    ok(t.play(0, "5H"))


def test_seat_owing_ace_draw_lays_instead() -> None:
    t = Table(["AH 5H 9C", "7H", "9S"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    assert t.s["must_draw"] == 1
    refused(t.play(1, "7H"), "not_your_turn")
    refused(t.draw(2), "not_your_turn")  # not this seat's draw yet
    refused(t.pass_(1), "must_draw")
    ok(t.draw(1))
    assert t.s["must_draw"] == 2


def test_ace_draws_words_say_what_comes_first() -> None:
    """The ace's player who draws during the draws is told that the others draw first (not to
    follow at once, which ``ace_draws_pending`` would refuse); a drawer who lays is told that
    laying is not theirs now, not "before laying anything"."""
    t = Table(["AH 5H 9C", "7H", "9S"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    v = refused(t.draw(0), "must_follow_ace")
    assert "seat 1" in v["reason"] and "draw" in v["reason"], v["reason"]
    assert "first" in v["reason"] or "once" in v["reason"], v["reason"]
    v = refused(t.play(1, "7H"), "not_your_turn")
    assert "before laying anything" not in v["reason"], v["reason"]
    assert "seat 0" in v["reason"] and "draw" in v["reason"], v["reason"]
    ok(t.draw(1))
    ok(t.draw(2))
    v = refused(t.draw(0), "must_follow_ace")  # the draws are done: now follow
    assert "seat 1" not in v["reason"] and "hearts" in v["reason"], v["reason"]


def test_ace_without_follow_up() -> None:
    t = Table(["AH 5S 9C", "7C"], FILLER, upcard="3H")
    refused(t.play(0, "AH"), "ace_without_follow_up")
    t2 = Table(["AH", "7C"], FILLER, upcard="3H")
    refused(t2.play(0, "AH"), "ace_without_follow_up")  # the last card can't be an ace
    assert t2.s["counts"] == [1, 1]


def test_ace_follow_up_several_of_one_rank_any_one_of_ace_suit() -> None:
    """Ruling: in a multi-card follow-up any one card (not only the first) has the ace's suit."""
    t = Table(["AH 5S 5H 5C 9C", "7C"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    ok(t.draw(1))
    ok(t.play(0, "5S 5H 5C"))
    assert t.s["current"] == {"suit": "C", "rank": "5"}
    assert t.s["turn"] == 1


def test_ace_follow_up_eight_only_of_the_ace_suit() -> None:
    t = Table(["AH 8S 8H 9C", "7C"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    ok(t.draw(1))
    refused(t.play(0, "8S", as_="4H"), "must_follow_ace")
    refused(t.play(0, "8H"), "bad_declaration")
    ok(t.play(0, "8H", as_="4C"))
    assert t.s["current"] == {"suit": "C", "rank": "4"}


def test_ace_follow_up_not_an_eight_with_no_special_on_special() -> None:
    t = Table(["AH 8H 9C", "7C"], FILLER, upcard="3H", no_special_on_special=True)
    # The only heart left is an eight, which may not follow an ace here.
    refused(t.play(0, "AH"), "ace_without_follow_up")
    t2 = Table(["AH 8H 5H 9C", "7C"], FILLER, upcard="3H", no_special_on_special=True)
    ok(t2.play(0, "AH"))
    ok(t2.draw(1))
    refused(t2.play(0, "8H", as_="4C"), "special_on_special")
    ok(t2.play(0, "5H"))


def test_several_aces_one_round_of_draws_each_and_last_suit() -> None:
    """Decision: one full round of draws per ace; the follow-up matches the last ace's suit."""
    t = Table(["AH AS 5H 5S", "7C", "9C"], "2D 3D 4D 6D 7D 9D", upcard="3H")
    ok(t.play(0, "AH AS"))
    order = []
    while t.s["phase"] == "ace_draws":
        order.append(t.s["must_draw"])
        ok(t.draw(t.s["must_draw"]))
    assert order == [1, 2, 1, 2]
    refused(t.play(0, "5H"), "must_follow_ace")
    ok(t.play(0, "5S"))


def test_ace_draws_lapse_when_the_stock_cannot_give() -> None:
    t = Table(["AH 5H 9C", "7C", "9S"], "2D", upcard="3H", reshuffle_discards=False)
    ok(t.play(0, "AH"))
    ok(t.draw(1))
    s = t.s
    assert s["phase"] == "ace_follow" and s["must_draw"] is None and s["turn"] == 0
    assert s["counts"] == [2, 2, 1]


def test_ace_draws_lapse_at_once_on_empty_stock() -> None:
    t = Table(["AH 5H 9C", "7C"], "", upcard="3H", reshuffle_discards=False)
    ok(t.play(0, "AH"))  # empty stock and no reshuffle: nothing can be drawn
    assert t.s["phase"] == "ace_follow" and t.s["counts"] == [2, 1]


def test_ace_draw_on_empty_stock_needs_reshuffle() -> None:
    t = Table(["4H AC 5C 9D", "4C 9S"], "", upcard="3H")
    ok(t.play(0, "4H"))
    ok(t.play(1, "4C"))
    ok(t.play(0, "AC"))
    s = t.s
    assert s["phase"] == "ace_draws" and s["must_draw"] == 1
    v = refused(t.draw(1), "stock_empty")
    assert "reshuffle" in v["reason"]
    ok(t.reshuffle(1, "4H 3H 4C"))
    ok(t.draw(1, "4H"))
    assert t.s["phase"] == "ace_follow"
    assert t.hand(1) == ["9S", "4H"]


# ---------------------------------------------------------------------------- drawing


def test_draw_then_lay_any_legal_card() -> None:
    t = Table(["5C 9H", "6H"], "KD 2S 3S")
    ok(t.draw(0))
    assert t.hand(0) == ["5C", "9H", "KD"]
    assert t.s["draws"] == 1 and t.s["turn"] == 0
    ok(t.play(0, "5C"))  # not the drawn card
    assert t.s["turn"] == 1 and t.s["draws"] == 0


def test_drawing_is_allowed_with_a_playable_card() -> None:
    t = Table(["5C 9H", "6H"], "KD 2S 3S")
    ok(t.draw(0))


def test_draw_limit_and_pass_after_three() -> None:
    t = Table(["9H", "6H"], "KD QD JD 10D")
    refused(t.pass_(0), "must_draw")
    for _ in range(3):
        ok(t.draw(0))
    refused(t.draw(0), "draw_limit")
    assert t.s["draws"] == 3 and t.s["stock"] == 1
    ok(t.pass_(0))
    assert t.s["turn"] == 1 and t.s["draws"] == 0


def test_lay_after_third_draw() -> None:
    t = Table(["9H", "6H"], "KD QD 2D 10D")
    for _ in range(3):
        ok(t.draw(0))
    ok(t.play(0, "2D"))
    assert t.s["turn"] == 1


def test_must_draw_before_passing_early() -> None:
    t = Table(["9H", "6H"], "KD QD 2D")
    ok(t.draw(0))
    v = refused(t.pass_(0), "must_draw")
    assert "draw" in v["reason"]


def test_desync_on_wrong_drawn_card() -> None:
    t = Table(["9H", "6H"], "KD QD 2D")
    before = snapshot(t.e)
    vs = t.draw(0, "QD")
    assert kinds(vs) == ["desync"]
    assert vs[0].data == {"seat": 0, "expected": "KD", "got": "QD"}
    assert snapshot(t.e) == before
    ok(t.draw(0, "KD"))


def test_stock_empty_with_reshuffle_option_asks_for_a_reshuffle() -> None:
    """Decision of this engine: a draw on an empty stock that can be reshuffled is refused
    (stock_empty) until the table makes the reshuffle input."""
    t = Table(["4H 9S", "4C 9D"], "", upcard="3H")
    ok(t.play(0, "4H"))
    refused(t.draw(1), "stock_empty")
    refused(t.pass_(1), "must_draw")  # a card can be drawn after the reshuffle
    ok(t.reshuffle(0, "3H"))  # any seat makes the table's reshuffle
    assert t.s["pile"] == ["4H"] and t.s["stock"] == 1
    ok(t.draw(1, "3H"))
    assert t.hand(1) == ["4C", "9D", "3H"]


def test_reshuffle_keeps_top_and_current() -> None:
    t = Table(["8H 9S 2S", "4C 9D"], "", upcard="3H")
    ok(t.play(0, "8H", as_="KD"))
    ok(t.reshuffle(1))
    s = t.s
    assert s["pile"] == ["8H"] and s["current"] == {"suit": "D", "rank": "K"}
    assert s["stock"] == 1


def test_reshuffle_without_order_then_draws_learn_faces() -> None:
    t = Table(["4H 5H 6H 9S", "4C 9D KC"], "", upcard="3H")
    ok(t.play(0, "4H"))
    ok(t.play(1, "4C"))
    ok(t.reshuffle(0))  # stock 3H 4H in unknown order
    assert t.e.stock_cards() == [None, None]
    vs = t.draw(0, "KC")  # KC is in seat 1's hand, not in the stock
    assert kinds(vs) == ["desync"] and vs[0]["expected"] is None
    ok(t.draw(0, "4H"))
    ok(t.draw(0, "3H"))
    assert t.hand(0) == ["5H", "6H", "9S", "4H", "3H"]


def test_no_reshuffle() -> None:
    t = Table(["4H 9S", "4C 9D"], "KD", upcard="3H")
    refused(t.reshuffle(0), "no_reshuffle")  # the stock is not empty
    ok(t.draw(0))
    refused(t.reshuffle(0), "no_reshuffle")  # only the top card on the discard pile
    ok(t.play(0, "4H"))
    refused(t.reshuffle(1, "3H 9C"), "no_reshuffle")  # not the discard pile's cards
    refused(t.reshuffle(1, "3H 4H"), "no_reshuffle")  # the top card stays
    refused(t.reshuffle(1, ""), "no_reshuffle")  # too few
    off = Table(["4H 9S", "4C 9D"], "", upcard="3H", reshuffle_discards=False)
    ok(off.play(0, "4H"))
    refused(off.reshuffle(1), "no_reshuffle")


def test_reshuffle_off_empty_stock_pass_at_once() -> None:
    """Decision: with reshuffle_discards false a draw on an empty stock is refused and the
    player may pass at once."""
    t = Table(["4H 9S", "4C 9D"], "", upcard="3H", reshuffle_discards=False)
    ok(t.play(0, "4H"))
    v = refused(t.draw(1), "stock_empty")
    assert "pass" in v["reason"]
    ok(t.pass_(1))
    assert t.s["turn"] == 0


# ---------------------------------------------------------------------------- end of a round


def test_first_player_without_cards_wins() -> None:
    t = Table(["5C", "6H 9S KD"], FILLER)
    vs = ok(t.play(0, "5C"))
    assert kinds(vs) == ["round_over", "game_over"]
    assert vs[0].data == {"winner": 0, "scores": [0, 5 + 5 + 10], "totals": None}
    assert vs[1]["winners"] == [0]
    s = t.s
    assert s["over"] and s["winners"] == [0] and s["turn"] is None and s["tricks"] == 1
    refused(t.play(1, "6H"), "game_over")
    refused(t.deal(0), "game_over")


def test_blocked_round_lowest_hand_wins_without_points_game() -> None:
    """Decision: nothing to draw and everyone passes in turn: blocked; lowest hands win."""
    t = Table(["9S 2S", "KD", "QS 2D"], "", upcard="3H")
    ok(t.pass_(0))
    ok(t.pass_(1))
    assert t.s["phase"] == "play"
    vs = ok(t.pass_(2))
    assert kinds(vs) == ["round_over", "game_over"]
    assert vs[0]["winner"] is None and vs[0]["scores"] == [10, 10, 15]
    assert vs[1]["winners"] == [0, 1]  # the lowest hand scores win; equal ones share
    assert t.s["winners"] == [0, 1] and t.s["over"]


def test_blocked_count_restarts_when_anyone_lays() -> None:
    t = Table(["9S 2S", "KD 3D", "QS"], "", upcard="3H", reshuffle_discards=False)
    ok(t.pass_(0))
    ok(t.play(1, "3D"))  # lays: the count restarts
    ok(t.pass_(2))
    ok(t.pass_(0))
    assert t.s["phase"] == "play"
    vs = ok(t.pass_(1))
    assert kinds(vs) == ["round_over", "game_over"]
    assert vs[0]["scores"] == [10, 10, 10]


def test_passes_with_cards_to_draw_do_not_block() -> None:
    t = Table(["9S", "KD"], "2H 3H 4H 5H 6H 7H 10H", upcard="JC")
    for seat in (0, 1):
        for _ in range(3):
            ok(t.draw(seat))
        ok(t.pass_(seat))
    assert t.s["phase"] == "play" and not t.s["over"]


# ---------------------------------------------------------------------------- no_special_on_special


@pytest.mark.parametrize("top, first, as_", [
    ("8H", "8C", "5C"), ("AH", "AC", None), ("AH", "8H", "5C"), ("8H", "AH", None),
])
def test_no_special_on_special(top: str, first: str, as_: str | None) -> None:
    hand = f"{first} 5H 5C 9D"
    t = Table([hand, "6H"], FILLER, upcard=top, no_special_on_special=True)
    refused(t.play(0, first, as_=as_), "special_on_special")
    plain = Table([hand, "6H"], FILLER, upcard=top)
    ok(plain.play(0, first, as_=as_))


def test_no_special_on_special_set_of_eights_allowed_first_card_judged() -> None:
    t = Table(["8H 8C 9D", "6H"], FILLER, upcard="3H", no_special_on_special=True)
    ok(t.play(0, "8H 8C", as_="9D"))
    t2 = Table(["AH AC 5C 9D", "6H"], FILLER, upcard="3H", no_special_on_special=True)
    ok(t2.play(0, "AH AC"))  # the second ace lies on an ace of the same set: allowed


def test_special_on_special_judged_on_the_physical_top_card() -> None:
    """An eight named as a five is still an eight on the pile."""
    t = Table(["8S 9C", "8C 5D 6D", "4D"], FILLER, upcard="3H", no_special_on_special=True)
    ok(t.play(0, "8S", as_="5D"))
    refused(t.play(1, "8C", as_="7D"), "special_on_special")
    ok(t.play(1, "5D"))


# ---------------------------------------------------------------------------- no_special_finish


def test_no_special_finish_keeps_turn_and_draws_then_goes_out() -> None:
    t = Table(["8H", "6H 7S"], "KC JD 2S", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5D"))
    s = t.s
    assert s["phase"] == "special_finish" and s["turn"] == 0 and s["must_draw"] == 0
    assert s["pile"] == ["3H", "8H"] and s["counts"] == [0, 2] and not s["over"]
    v = refused(t.pass_(0), "special_finish")
    assert "draw" in v["reason"]
    ok(t.draw(0))  # KC: cannot be laid on the eight named 5D
    refused(t.play(0, "KC"), "no_match")
    ok(t.draw(0))  # JD: diamonds, may be laid, but KC stays in hand: not out
    assert ok(t.play(0, "JD")) == []
    s = t.s
    assert s["turn"] == 1 and s["phase"] == "play" and t.hand(0) == ["KC"]


@pytest.mark.parametrize("drawn", ["JD", "5C"], ids=["by suit", "by rank"])
def test_no_special_finish_lay_that_empties_the_hand_goes_out(drawn: str) -> None:
    """The eight named 5D: a drawn JD fits it by suit, a drawn 5C by rank (as any card on a 5D
    would); laid as the hand's last card, it goes out."""
    t = Table(["8H", "6H 7S"], f"{drawn} 2S", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5D"))
    ok(t.draw(0))
    vs = ok(t.play(0, drawn))
    assert vs[0]["winner"] == 0 and vs[1]["winners"] == [0]


def test_no_special_finish_a_drawn_eight_laid_last_starts_it_again() -> None:
    """A drawn eight, laid as the last card, is a special card again: the special finish starts
    anew with a fresh count, and a card that fits the new name goes out."""
    t = Table(["8H", "6H 7S"], "8C 9D 2S", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5D"))
    ok(t.draw(0))
    assert ok(t.play(0, "8C", as_="9S")) == []
    s = t.s
    assert s["phase"] == "special_finish" and s["turn"] == 0 and s["draws"] == 0
    ok(t.draw(0))  # 9D: fits 9S by rank
    vs = ok(t.play(0, "9D"))
    assert vs[0]["winner"] == 0 and vs[1]["winners"] == [0]


def test_no_special_finish_a_drawn_card_that_fits_is_laid_not_drawn_past() -> None:
    """RULES.md: "if a drawn card can be laid legally on that special card, they lay it and go
    out" (the source: the first card drawn of the laid card's suit goes out). Once JD is drawn
    onto the eight named 5D, a further draw or a pass is refused, and only plays are offered."""
    t = Table(["8H", "6H 7S"], "JD QD KC", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5D"))
    ok(t.draw(0))
    v = refused(t.draw(0), "special_finish")
    assert "JD" in v["reason"] or "jack of diamonds" in v["reason"]
    refused(t.pass_(0), "special_finish")
    assert {i.act for i in t.e.legal_inputs(t.t)} == {"play"}
    vs = ok(t.play(0, "JD"))
    assert vs[0]["winner"] == 0 and vs[1]["winners"] == [0]


def test_no_special_finish_fresh_count_of_three_and_then_turn_passes() -> None:
    """Decision: a fresh count of three draws in the special finish."""
    t = Table(["8H", "6H 7S"], "8S KC QC JC 9C", upcard="3H", no_special_finish=True)
    ok(t.draw(0))  # 8S: one draw in the turn already
    ok(t.play(0, "8H 8S", as_="5D"))
    assert t.s["phase"] == "special_finish" and t.s["draws"] == 0
    for _ in range(3):
        ok(t.draw(0))
    refused(t.draw(0), "draw_limit")
    ok(t.pass_(0))
    assert t.s["turn"] == 1 and t.s["phase"] == "play" and t.s["counts"] == [3, 2]


def test_no_special_finish_after_ace_follow_up_eight() -> None:
    t = Table(["AH 8H", "6C 7S"], "KC QC JC 9C", upcard="3H", no_special_finish=True)
    ok(t.play(0, "AH"))
    ok(t.draw(1))
    ok(t.play(0, "8H", as_="4S"))
    assert t.s["phase"] == "special_finish" and t.s["turn"] == 0


def test_no_special_finish_refusal_names_the_special_card_laid_last() -> None:
    """The last card laid *is* the special card: the words must not say it was laid on one."""
    t = Table(["8H", "6H 7S"], "KC JD 2S", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5C"))
    v = refused(t.pass_(0), "special_finish")
    assert "on a special card" not in v["reason"], v["reason"]
    assert "8 of hearts" in v["reason"] and "0 of 3" in v["reason"], v["reason"]


def test_module_docstring_states_the_call_and_lapse_rulings() -> None:
    from referee.games import vandatta as module

    doc = module.__doc__ or ""
    assert "always accepted" not in doc
    assert "must_pass" in doc and "lapse" in doc


def test_no_special_finish_with_nothing_to_draw() -> None:
    """Ruling: nothing to draw: the player passes and plays on with no cards (not out)."""
    t = Table(["8H", "6H 7S"], "", upcard="3H", no_special_finish=True,
              reshuffle_discards=False)
    ok(t.play(0, "8H", as_="5D"))
    assert t.s["must_draw"] is None
    ok(t.pass_(0))
    s = t.s
    assert s["turn"] == 1 and not s["over"] and s["counts"] == [0, 2]


def test_going_out_on_an_eight_without_the_variant() -> None:
    t = Table(["8H", "6H 7S"], FILLER, upcard="3H")
    vs = ok(t.play(0, "8H", as_="5D"))
    assert vs[0]["winner"] == 0


# ---------------------------------------------------------------------------- lappen


def lappen_table(**opts: Any) -> Table:
    # Seat 0 can go out on its second turn; seat 1 cannot follow hearts.
    return Table(["5H 6H", "9C 9D 9S KC"], "3C 4C 7C 2D JS QS KS", upcard="2H",
                 lappen=True, **opts)


def _seat1_draws_and_passes(t: Table) -> None:
    for _ in range(3):
        ok(t.draw(1))
    ok(t.pass_(1))


def test_lappen_going_out_without_call_penalty() -> None:
    t = lappen_table()
    ok(t.play(0, "5H"))
    _seat1_draws_and_passes(t)
    v = refused(t.play(0, "6H"), "no_lappen")
    assert "lappen" in v["reason"]
    s = t.s
    assert t.hand(0) == ["6H"] and s["phase"] == "lappen_penalty" and s["must_draw"] == 0
    assert s["turn"] == 0
    refused(t.play(0, "6H"), "must_draw")
    refused(t.pass_(0), "must_draw")
    refused(t.call(0), "must_draw")
    refused(t.play(1, "KC"), "not_your_turn")
    ok(t.draw(0))
    ok(t.draw(0))
    assert t.s["turn"] == 0
    ok(t.draw(0))
    s = t.s
    assert s["turn"] == 1 and s["phase"] == "play" and s["counts"][0] == 4


def test_lappen_call_in_previous_turn_counts() -> None:
    t = lappen_table()
    ok(t.play(0, "5H"))
    ok(t.call(0))  # after laying, in the turn before going out
    assert 0 in t.s["called"]
    _seat1_draws_and_passes(t)
    vs = ok(t.play(0, "6H"))
    assert vs[0]["winner"] == 0


def test_lappen_call_between_turns_and_in_current_turn_count() -> None:
    t = lappen_table()
    ok(t.play(0, "5H"))
    ok(t.draw(1))
    ok(t.call(0))  # during the other seat's turn
    ok(t.draw(1))
    ok(t.draw(1))
    ok(t.pass_(1))
    ok(t.play(0, "6H"))
    t2 = lappen_table()
    ok(t2.play(0, "5H"))
    _seat1_draws_and_passes(t2)
    ok(t2.call(0))  # during the turn in which the player goes out
    vs = ok(t2.play(0, "6H"))
    assert vs[0]["winner"] == 0


def test_lappen_call_before_previous_turn_does_not_count() -> None:
    t = Table(["5H 6H", "9C 9D 9S KC"], "3C 4C 7C 7H JS QS KS 10S", upcard="2H", lappen=True)
    ok(t.call(0))  # turn 1 of seat 0
    ok(t.play(0, "5H"))
    _seat1_draws_and_passes(t)
    ok(t.draw(0))  # turn 2 of seat 0: draws 7H and lays it
    ok(t.play(0, "7H"))
    ok(t.draw(1))
    ok(t.draw(1))
    ok(t.draw(1))
    ok(t.pass_(1))
    assert t.s["called"] == []
    refused(t.play(0, "6H"), "no_lappen")  # turn 3: the call was before turn 2 began


def test_lappen_penalty_with_nothing_to_draw_lapses_and_the_player_may_only_pass() -> None:
    """docs/rules.md §3: where nothing can be drawn the penalty draws lapse and the player may pass.
    The words and the state say so: no draw is owed (``penalty_draws`` 0, ``must_draw`` null);
    anything but the pass is refused with ``must_pass`` (ruling: a draw meets the empty stock,
    ``stock_empty``, as any draw does)."""
    t = Table(["5H 6H", "9H 9C"], "", upcard="2H", lappen=True, reshuffle_discards=False)
    ok(t.play(0, "5H"))
    ok(t.play(1, "9H"))
    v = refused(t.play(0, "6H"), "no_lappen")
    assert "draws 3" not in v["reason"] and "pass" in v["reason"], v["reason"]
    s = t.s
    assert s["phase"] == "lappen_penalty" and s["turn"] == 0
    assert s["penalty_draws"] == 0 and s["must_draw"] is None
    for again in (t.play(0, "6H"), t.call(0)):
        v = refused(again, "must_pass")
        assert "pass" in v["reason"] and "more)" not in v["reason"], v["reason"]
    refused(t.draw(0), "stock_empty")
    assert t.s["penalty_draws"] == 0
    ok(t.pass_(0))
    assert t.s["turn"] == 1 and t.hand(0) == ["6H"] and t.s["phase"] == "play"


def test_lappen_penalty_lapses_when_the_stock_runs_out_during_it() -> None:
    t = Table(["5H 6H", "9H 9C"], "3C", upcard="2H", lappen=True, reshuffle_discards=False)
    ok(t.play(0, "5H"))
    ok(t.play(1, "9H"))
    v = refused(t.play(0, "6H"), "no_lappen")
    assert "draws 3 cards" in v["reason"]
    assert t.s["penalty_draws"] == 3 and t.s["must_draw"] == 0
    refused(t.play(0, "6H"), "must_draw")
    ok(t.draw(0))  # the last card of the stock: the two draws left lapse
    s = t.s
    assert s["phase"] == "lappen_penalty" and s["turn"] == 0
    assert s["penalty_draws"] == 0 and s["must_draw"] is None
    refused(t.play(0, "6H"), "must_pass")
    ok(t.pass_(0))
    assert t.s["turn"] == 1 and t.hand(0) == ["6H", "3C"]


def test_lappen_penalty_on_an_empty_stock_that_can_be_reshuffled_is_drawn() -> None:
    t = Table(["5H 6H", "9H 9C"], "", upcard="2H", lappen=True)
    ok(t.play(0, "5H"))
    ok(t.play(1, "9H"))
    refused(t.play(0, "6H"), "no_lappen")
    assert t.s["penalty_draws"] == 3 and t.s["must_draw"] == 0
    refused(t.pass_(0), "must_draw")
    ok(t.reshuffle(0, "5H 2H"))
    ok(t.draw(0))
    assert t.s["penalty_draws"] == 2 and t.s["must_draw"] == 0


def test_call_codes() -> None:
    t = lappen_table()
    refused(t.call(1, "uno"), "bad_call")
    ok(t.call(1))
    assert t.s["called"] == [1]


def test_calls_do_not_carry_into_a_new_round() -> None:
    t = Table(["5H 6H", "4H"], FILLER, upcard="2H", lappen=True, points_game=True)
    ok(t.call(0))
    ok(t.call(1))
    ok(t.play(0, "5H"))
    vs = ok(t.play(1, "4H"))
    assert kinds(vs) == ["round_over"]
    assert t.s["called"] == []
    ok(t.deal(0, ["7C 9D", "9C"], FILLER, "3C"))  # dealer is now seat 0: seat 1 starts
    assert t.s["turn"] == 1
    refused(t.play(1, "9C"), "no_lappen")


def test_legal_inputs_offer_the_call_and_hide_going_out_without_it() -> None:
    t = lappen_table()
    ok(t.play(0, "5H"))
    _seat1_draws_and_passes(t)
    offered = t.e.legal_inputs(99)
    assert not any(i.act == "play" for i in offered)
    assert any(i.act == "call" for i in offered)
    ok(t.call(0))
    offered = t.e.legal_inputs(99)
    assert any(i.act == "play" and i.cards == cards("6H") for i in offered)
    assert not any(i.act == "call" for i in offered)


# ---------------------------------------------------------------------------- points game


def test_card_points() -> None:
    assert [card_points(C(x)) for x in "8C AD 10H JS QC KD 2H 9S 7D".split()] == \
        [25, 15, 10, 10, 10, 10, 5, 5, 5]
    assert hand_score(cards("8C AD 10H")) == 50
    assert hand_score([C("2C"), None]) is None


def test_points_round_scores_totals_and_next_deal() -> None:
    t = Table(["5H", "8C AD 10S KH 2C", "JC 3D"], FILLER, upcard="4H", dealer=2,
              points_game=True)
    refused(t.deal(0, ["5H", "6H", "7H"], "", "2C"), "round_not_over")
    vs = ok(t.play(0, "5H"))
    assert kinds(vs) == ["round_over"]
    assert vs[0].data == {"winner": 0, "scores": [0, 65, 15], "totals": [0, 65, 15]}
    s = t.s
    assert s["phase"] == "round_over" and s["turn"] is None and not s["over"]
    assert s["totals"] == [0, 65, 15]
    refused(t.play(1, "2C"), "not_your_turn")
    refused(t.draw(1), "not_your_turn")
    refused(t.reshuffle(1), "no_reshuffle")
    refused(t.deal(0, ["5H", "5H", "7H"], "", "2C"), "bad_deal")
    ok(t.deal(1, ["5H", "6H 9S", "7H 9D"], FILLER, "2H"))
    s = t.s
    assert s["round"] == 2 and s["dealer"] == 0 and s["turn"] == 1
    assert s["counts"] == [1, 2, 2] and s["pile"] == ["2H"] and s["cards_played"] == 1
    ok(t.play(1, "6H"))
    ok(t.play(2, "7H"))
    vs = ok(t.play(0, "5H"))
    assert vs[0].data == {"winner": 0, "scores": [0, 5, 5], "totals": [0, 70, 20]}
    assert t.s["tricks"] == 2


def test_points_out_last_under_100_wins() -> None:
    t = Table(["5H", "8C 8D 8H 8S"], FILLER, upcard="4H", points_game=True)
    vs = ok(t.play(0, "5H"))
    assert kinds(vs) == ["round_over", "out", "game_over"]
    assert vs[1]["seat"] == 1 and vs[2]["winners"] == [0]
    assert t.s["out"] == [1] and t.s["winners"] == [0] and t.s["over"]


def test_points_out_seat_skipped_and_refused() -> None:
    t = Table(["5H", "8C 8D 8H 8S", "2C"], FILLER, upcard="4H", dealer=2, points_game=True)
    vs = ok(t.play(0, "5H"))
    assert kinds(vs) == ["round_over", "out"]
    assert t.s["out"] == [1]
    refused(t.deal(0, ["5H 6H", "9C", "7H 9D"], FILLER, "2H"), "bad_deal")
    refused(t.play(1, "8C"), "out_of_game")
    refused(t.call(1), "out_of_game")
    ok(t.deal(0, ["5H 6H", "", "7H 9D"], FILLER, "2H"))
    s = t.s
    assert s["dealer"] == 0 and s["turn"] == 2  # the deal and the turn skip seat 1
    ok(t.play(2, "7H"))
    assert t.s["turn"] == 0
    refused(t.play(1, "9C"), "out_of_game")


def test_points_all_reach_100_together_lowest_total_wins() -> None:
    """Decision: the last players all reach 100 in one round: lowest total wins."""
    t = Table(["8C 8D 8H 8S", "AC AD AH AS KC KD KH KS QC"], "", upcard="3H",
              points_game=True)
    ok(t.pass_(0))
    vs = ok(t.pass_(1))
    assert kinds(vs) == ["round_over", "out", "out", "game_over"]
    assert vs[0]["totals"] == [100, 110]
    assert vs[3]["winners"] == [0]


def test_points_all_reach_100_equal_totals_share() -> None:
    t = Table(["8C 8D 8H 8S", "AC AD AH AS KC KD KH KS"], "", upcard="3H", points_game=True)
    ok(t.pass_(0))
    vs = ok(t.pass_(1))
    assert vs[-1]["winners"] == [0, 1]


def test_points_deal_without_cards_starts_observed_round() -> None:
    t = Table(["5H", "6C 7C"], FILLER, upcard="4H", points_game=True)
    ok(t.play(0, "5H"))
    ok(t.deal(1))
    s = t.s
    assert s["counts"] == [6, 6] and s["stock"] == 52 - 13 and s["pile"] == [None]
    assert s["round"] == 2 and s["dealer"] == 0 and s["turn"] == 1
    assert t.e.hand(0) == [None] * 6


def test_deal_while_a_round_runs() -> None:
    t = Table(["5H", "6C 7C"], FILLER, upcard="4H", points_game=True)
    refused(t.deal(0), "round_not_over")
    t2 = Table(["5H", "6C 7C"], FILLER, upcard="4H")
    refused(t2.deal(0), "round_not_over")


# ---------------------------------------------------------------------------- observed mode


def test_observed_mode_learns_cards_and_checks_what_it_knows() -> None:
    e = Vandatta(3, 2, VandattaOptions(), None)
    s = e.state()
    assert s["counts"] == [6, 6, 6] and s["stock"] == 52 - 19 and s["pile"] == [None]
    assert s["current"] is None

    def play(tt: int, seat: int, text: str, as_: str | None = None) -> list[Verdict]:
        return e.apply(Input(tt, seat, "play", cards=cards(text),
                             as_=None if as_ is None else C(as_)))

    assert play(1, 0, "5H") == []  # the upcard is unseen: any card is accepted
    refused(play(2, 1, "9C"), "no_match")
    refused(play(3, 1, "5H"), "not_in_hand")  # it is on the pile
    assert play(4, 1, "5C 5D") == []
    vs = e.apply(Input(5, 2, "draw", card=C("5C")))
    assert kinds(vs) == ["desync"] and vs[0]["expected"] is None
    assert e.apply(Input(6, 2, "draw")) == []
    assert e.state()["counts"] == [5, 4, 7]
    assert e.hand(2) == [None] * 7
    refused(play(7, 2, "2S 3S 4S 6S 7S 9S 10S"), "not_same_rank")
    assert play(8, 2, "5S") == []
    refused(play(9, 0, "2D 2D"), "not_in_hand")


def test_observed_hand_count_is_enforced() -> None:
    deal = HandDeal(((None,), (None, None, None)), (None,) * 10, None)
    e = Vandatta(2, 1, VandattaOptions(), deal)
    refused(e.apply(Input(1, 0, "play", cards=cards("5H 5D"))), "not_in_hand")
    assert e.apply(Input(2, 0, "draw")) == []
    vs = e.apply(Input(3, 0, "play", cards=cards("5H 5D")))
    assert kinds(vs) == ["round_over", "game_over"] and vs[0]["scores"] == [0, None]
    assert e.state()["counts"] == [0, 3]


def test_observed_round_over_scores_unknown_hands_as_null() -> None:
    e = Vandatta(2, 1, VandattaOptions(), HandDeal((cards("5H"), (None, None)), (None,) * 5,
                                                    C("4H")))
    vs = e.apply(Input(1, 0, "play", cards=cards("5H")))
    assert kinds(vs) == ["round_over", "game_over"]
    assert vs[0]["scores"] == [0, None]


def test_no_cards() -> None:
    t = Table(["8H", "6H 7S"], "KC", upcard="3H", no_special_finish=True)
    ok(t.play(0, "8H", as_="5D"))
    refused(t.play(0, "8H", as_="5D"), "no_cards")


# ---------------------------------------------------------------------------- legal_inputs


def test_legal_inputs_sets_end_in_every_suit_and_eights_are_declared() -> None:
    t = Table(["7H 7S 7C 8D 2C", "6H"], "KD", upcard="7D")
    offered = t.e.legal_inputs(5)
    plays = [i for i in offered if i.act == "play"]
    sevens = [i.cards for i in plays if i.cards and i.cards[0].rank == 7]
    lasts = {c[-1].suit for c in sevens if len(c) == 3}
    assert lasts == {"H", "S", "C"}
    assert len({frozenset(c) for c in sevens}) == 7  # every non-empty subset
    eights = [i for i in plays if i.cards == cards("8D")]
    assert sorted(i.as_.suit for i in eights if i.as_) == ["C", "D", "H", "S"]
    assert {i.as_.rank for i in eights if i.as_} == {7}
    assert any(i.act == "draw" and i.card == C("KD") for i in offered)
    assert not any(i.act == "pass" for i in offered)
    assert all(i.t == 5 and i.seat == 0 for i in offered)


def test_legal_inputs_ace_phases() -> None:
    t = Table(["AH 5H 9C", "7C", "9S"], FILLER, upcard="3H")
    ok(t.play(0, "AH"))
    offered = t.e.legal_inputs(1)
    assert [(i.seat, i.act) for i in offered] == [(1, "draw")]
    ok(t.draw(1))
    ok(t.draw(2))
    offered = t.e.legal_inputs(1)
    assert [(i.seat, i.act, i.cards) for i in offered] == [(0, "play", cards("5H"))]


def test_legal_inputs_fast_on_a_big_hand() -> None:
    deck = full_deck()
    hand = tuple(c for c in deck if c.rank != 2)[:40]
    rest = [c for c in deck if c not in hand]
    e = Vandatta(2, 1, VandattaOptions(), HandDeal((hand, tuple(rest[:5])), tuple(rest[6:]),
                                                    rest[5]))
    start = time.perf_counter()
    offered = e.legal_inputs(0)
    assert time.perf_counter() - start < 0.5
    assert offered
    for inp in offered[:200]:
        fresh = Vandatta(2, 1, VandattaOptions(), HandDeal((hand, tuple(rest[:5])),
                                                           tuple(rest[6:]), rest[5]))
        assert not [v for v in fresh.apply(inp) if v.verdict == "illegal"]


def test_legal_inputs_empty_when_over() -> None:
    t = Table(["5C", "6H"], FILLER)
    ok(t.play(0, "5C"))
    assert t.e.legal_inputs(9) == []


# ---------------------------------------------------------------------------- properties


def _all_cards(e: Vandatta) -> list[Card | None]:
    out: list[Card | None] = []
    for s in range(e.n_seats):
        out.extend(e.hand(s))
    out.extend(e.stock_cards())
    out.extend(None if c is None else C(c) for c in e.state()["pile"])
    return out


def _random_input(rng: random.Random, e: Vandatta, t: int) -> Input:
    deck = full_deck()
    seat = rng.randrange(e.n_seats)
    act = rng.choice(["play", "play", "draw", "pass", "call", "reshuffle", "deal"])
    if act == "play":
        n = rng.randint(1, 3)
        picks = tuple(rng.choice(deck) for _ in range(n))
        return Input(t, seat, act, cards=picks,
                     as_=rng.choice([None, rng.choice(deck)]))
    if act == "draw":
        return Input(t, seat, act, card=rng.choice([None, rng.choice(deck)]))
    if act == "call":
        return Input(t, seat, act, call=rng.choice(["lappen", "uno"]))
    if act == "reshuffle":  # a stock order, mostly wrong (an orderless one would hide faces)
        return Input(t, seat, act, stock=tuple(rng.sample(deck, rng.randint(0, 3))))
    if act == "deal":
        return Input(t, seat, act)
    return Input(t, seat, act)


def _next_deal(rng: random.Random, e: Vandatta, t: int) -> Input:
    deck = shuffled_deck(rng.randrange(1 << 30))
    out = set(e.state()["out"])
    hands = []
    for s in range(e.n_seats):
        if s in out:
            hands.append(())
        else:
            hands.append(tuple(deck[:6]))
            deck = deck[6:]
    seat = next(s for s in range(e.n_seats) if s not in out)
    return Input(t, seat, "deal", hands=tuple(hands), stock=tuple(deck[1:]), upcard=deck[0])


def run_game(seed: int, n: int, opts: VandattaOptions, noise: float,
             steps: int = 400) -> tuple[list[Input], list[Verdict]]:
    """A seeded game: mostly inputs offered by legal_inputs, some random (often illegal) ones,
    and the table's reshuffles and deals. Checks the invariants at every step."""
    rng = random.Random(seed)
    e = Vandatta(n, seed % n, opts, seeded_deal("vandatta", n, seed % n, seed))
    inputs: list[Input] = []
    verdicts: list[Verdict] = []
    for t in range(1, steps + 1):
        if e.over:
            break
        s = e.state()
        offered = e.legal_inputs(t)
        noisy = False
        if s["phase"] == "round_over":
            inp = _next_deal(rng, e, t)
        elif (not offered or rng.random() < 0.3) and s["stock"] == 0 \
                and len(s["pile"]) > 1 and opts.reshuffle_discards:
            below = [C(c) for c in s["pile"][:-1]]
            rng.shuffle(below)
            seat = next(x for x in range(n) if x not in s["out"])
            inp = Input(t, seat, "reshuffle", stock=tuple(below))
        elif offered and rng.random() >= noise:
            inp = rng.choice(offered)
        else:
            assert offered or noise > 0, f"stuck: {s}"
            inp = _random_input(rng, e, t)
            noisy = True
        before = snapshot(e) if noisy else None
        vs = e.apply(inp)
        inputs.append(inp)
        verdicts.extend(vs)
        refusals = [v for v in vs if v.verdict in ("illegal", "desync")]
        if not noisy:
            assert not refusals, (inp, refusals, s)
        elif refusals:
            assert len(vs) == 1
            if refusals[0].get("code") != "no_lappen":
                assert snapshot(e) == before, (inp, vs)
        every = _all_cards(e)
        assert None not in every
        assert len(every) == 52 and Counter(every) == Counter(full_deck())
        st2 = e.state()
        assert sum(st2["counts"]) + st2["stock"] + len(st2["pile"]) == 52
    return inputs, verdicts


options_strategy = st.builds(
    VandattaOptions, reshuffle_discards=st.booleans(), no_special_on_special=st.booleans(),
    no_special_finish=st.booleans(), lappen=st.booleans(), points_game=st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 7), opts=options_strategy)
@pytest.mark.slow
def test_property_legal_inputs_accepted_and_cards_conserved(
        seed: int, n: int, opts: VandattaOptions) -> None:
    run_game(seed, n, opts, noise=0.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 7), opts=options_strategy)
@pytest.mark.slow
def test_property_refused_inputs_change_nothing(seed: int, n: int, opts: VandattaOptions) -> None:
    run_game(seed, n, opts, noise=0.3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 7), opts=options_strategy)
@pytest.mark.slow
def test_property_same_inputs_same_verdicts(seed: int, n: int, opts: VandattaOptions) -> None:
    inputs, verdicts = run_game(seed, n, opts, noise=0.2)
    e = Vandatta(n, seed % n, opts, seeded_deal("vandatta", n, seed % n, seed))
    again: list[Verdict] = []
    for inp in inputs:
        again.extend(e.apply(inp))
    assert [v.to_json() for v in again] == [v.to_json() for v in verdicts]


@pytest.mark.slow
def test_random_games_finish() -> None:
    """Most random games reach a decision (the driver is not stuck in a loop)."""
    finished = 0
    for seed in range(20):
        rng = random.Random(seed)
        opts = VandattaOptions(points_game=rng.random() < 0.3, lappen=rng.random() < 0.5)
        inputs, verdicts = run_game(seed, 2 + seed % 6, opts, noise=0.0, steps=3000)
        finished += any(v.verdict == "game_over" for v in verdicts)
    assert finished >= 16
