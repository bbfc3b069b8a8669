"""Vändåtta (Swedish Crazy Eights): the rules engine of docs/rules.md §3.

A pure state machine: inputs in, verdicts out; no clock, I/O, threads or randomness.

Cards and what the referee knows
--------------------------------
Every card slot (a hand's card, a stock position, a discard card) holds a :class:`Card` or
``None`` for a card whose face the referee has not seen. With a fully known deal nothing is
``None`` and every input is checked exactly (known mode). With ``deal=None`` (or a ``deal``
input without cards) hands and stock are ``None`` cards (observed mode): the referee learns faces
as cards are played and drawn, and checks counts and legality against what it knows. Faces whose
place is unknown form the *pool*; an unseen slot may hold any pool face. After a reshuffle
without a stock order the faces of the old discard pile are known to be in the stock but not
where (the *bag*).

Turn structure (``phase`` in :meth:`Vandatta.state`)
----------------------------------------------------
``play``            the seat in turn lays, draws (at most three) or passes (after three draws, or
                    at once when nothing can be drawn).
``ace_draws``       an ace was laid: ``must_draw`` names the seat that draws one card now
                    (one full round of draws clockwise from the ace player's left per ace).
``ace_follow``      the ace's player must lay a follow-up of the (last) ace's suit.
``special_finish``  (``no_special_finish``) the player's last card was an eight or an ace: they
                    keep the turn and draw up to three cards with a fresh count; once a drawn
                    card may be laid, they lay it (a draw or a pass is refused).
``lappen_penalty``  (``lappen``) a player tried to go out without a call: three penalty draws
                    (``penalty_draws`` left, ``must_draw`` the player), then the turn passes.
                    Where nothing can be drawn the draws left lapse (docs/rules.md §3):
                    ``penalty_draws`` 0, ``must_draw`` null, and the player may only pass.
``round_over``      (points game) the round is scored; the next ``deal`` input starts a round.
``over``            the game is decided.

Rulings of this module on points the original text leaves to the implementation
---------------------------------------------------------------------
* A draw from an empty stock while the discard pile can be reshuffled is refused with
  ``stock_empty`` ("reshuffle first"): the engine never invents a stock order, so the table
  makes the reshuffle (a ``reshuffle`` input, with the order when it is known) and the draw is
  then repeated. A pass in that position is refused with ``must_draw`` (a card can be drawn).
* An ace's follow-up of several cards of one rank is accepted when any one of them has the ace's
  suit (the source's "flera kort av samma valör där ett av korten har samma färg som esset");
  it need not be the first one laid.
* A draw or pass by the ace's player while the ace is open (draws pending or not) is refused with
  ``must_follow_ace``; a play by them while draws are pending with ``ace_draws_pending``.
* A ``call`` is accepted from any seat in the round (it is a button), except from the seat in
  its lappen penalty, where it is refused like every act but the penalty's draws
  (``must_draw``) or, once they are made or lapsed, its pass (``must_pass``). Without the
  ``lappen`` option a call has no effect. ``called`` in the state lists the seats whose call
  counts now (for the seat in turn) or for their next turn (everyone else).
* Draws asked for by a rule lapse where nothing can be drawn (docs/rules.md §3): the ace draws left
  (the ace's player then follows), the lappen penalty's (the player may only pass, ``must_pass``
  for anything else), a special finish's (the player may pass). A ``draw`` in that position is
  refused with ``stock_empty``, as every draw from a stock that cannot give a card.
* Between rounds of the points game, ``play``/``draw``/``pass`` are refused with
  ``not_your_turn`` (no one is in turn until the next ``deal``); a ``reshuffle`` with
  ``no_reshuffle``.
* A player left with no cards after a special finish in which nothing could be drawn has not gone
  out (their last card was a special card); they play on with an empty hand.
* A hand with unseen cards has an unknown score: ``null`` in ``round_over``; it adds nothing to
  the seat's total (observed-mode points games need the hands shown to be scored).
* ``deal`` inputs and the constructor's deal are checked for cards given twice, one hand per
  seat, empty hands for seats out of the game and a card for every seat in it; hand sizes other
  than six are accepted (the referee records the table as it is, and test positions use them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, combinations
from typing import Any

from referee.cards import (
    ACE,
    RANK_TEXT,
    SUITS,
    Card,
    card_text,
    cards_text,
    full_deck,
    shuffled_deck,
)
from referee.deal import HandDeal, next_dealer
from referee.describe import refusal_words, refuse
from referee.engine import Game
from referee.errors import DealError, OptionError
from referee.model import Input, RefusalCode, Verdict
from referee.options import POINTS_OUT_AT, VandattaOptions

NAME = "vandatta"
#: Cards dealt to each hand (docs/rules.md §3).
HAND_SIZE = 6


def dealing_counts(n: int) -> tuple[list[int], int]:
    """docs/rules.md §3: six cards to each seat; the rest are the upcard and the stock."""
    return [HAND_SIZE] * n, 52 - HAND_SIZE * n


def next_deal(state: dict[str, Any], seed: int, t: int) -> Input:
    """The next round's ``deal`` of the points game, shuffled with ``seed``: the deal passes
    clockwise to the next seat still in the game, who deals six cards to each seat still in,
    from their left; then the upcard, and the rest is the stock."""
    deck = shuffled_deck(seed)
    n = len(state["counts"])
    out = set(state.get("out", []))
    dealer = next_dealer(state.get("dealer", 0), n, out)
    hands: list[tuple[Card, ...]] = [() for _ in range(n)]
    pos = 0
    for k in range(1, n + 1):
        seat = (dealer + k) % n
        if seat not in out:
            hands[seat] = tuple(deck[pos:pos + HAND_SIZE])
            pos += HAND_SIZE
    return Input(t, dealer, "deal", hands=tuple(hands), stock=tuple(deck[pos + 1:]),
                 upcard=deck[pos])

EIGHT = 8
MAX_DRAWS = 3
LAPPEN_PENALTY_DRAWS = 3
OUT_AT = POINTS_OUT_AT

PLAY = "play"
ACE_DRAWS = "ace_draws"
ACE_FOLLOW = "ace_follow"
SPECIAL_FINISH = "special_finish"
LAPPEN_PENALTY = "lappen_penalty"
ROUND_OVER = "round_over"
OVER = "over"

_DECK = frozenset(full_deck())
#: The phases in which the seat in turn may draw, pass (:meth:`Vandatta._turn_refusal` finds
#: nothing to refuse) and play, and those in which it may play.
_OWN_TURN = (PLAY, SPECIAL_FINISH)
_OWN_PLAY = (PLAY, SPECIAL_FINISH, ACE_FOLLOW)


def card_points(card: Card) -> int:
    """Points of one card left in hand: eight 25, ace 15, ten and J/Q/K 10, others 5."""
    if card.rank == EIGHT:
        return 25
    if card.rank == ACE:
        return 15
    if card.rank >= 10:
        return 10
    return 5


def hand_score(hand: Iterable[Card | None]) -> int | None:
    """The points of a hand, or ``None`` when a card of it is unseen."""
    if isinstance(hand, (list, tuple)):
        try:  # a hand of cards, each looked up in C (a card hashes by identity)
            return sum(map(_POINTS_OF.__getitem__, hand))
        except (KeyError, TypeError):  # an unseen card (or not a card: as below)
            pass
    total = 0
    for card in hand:
        if card is None:
            return None
        total += card_points(card)
    return total


#: :func:`card_points` of every card.
_POINTS_OF = {card: card_points(card) for card in full_deck()}


def _is_special(card: Card | None) -> bool:
    return card is not None and card.rank in (EIGHT, ACE)


#: Every card by (rank, suit).
_CARD_OF = {(c.rank, c.suit): c for c in full_deck()}


def _suit(card: Card) -> str:
    return card.suit


_ONLY_CARDS = {Card}


def _index(cards: Sequence[Card | None], card: Card | None) -> int:
    """Where ``card`` (or ``None``) first is in ``cards``, or -1; what ``cards.index`` finds,
    by identity: a card is one object, and ``==`` on two cards calls back into Python (a card
    orders in Python, so it compares there), where ``is`` costs nothing."""
    at = 0
    for c in cards:
        if c is card:
            return at
        at += 1
    return -1


def _distinct(cards: Sequence[Card | None]) -> bool:
    """Whether ``cards`` are cards, none equal to another: different objects of the deck's
    (a card is one object, and hashes by identity in C)."""
    try:
        different = set(cards)
    except TypeError:  # not a card
        return False
    return len(different) == len(cards) and different <= _DECK


def _same_cards(a: Sequence[Card | None], b: Sequence[Card | None]) -> bool:
    """Whether ``a`` and ``b`` are cards (all seen, none ``None``) and the same ones as many
    times each."""
    if a and len(a) == len(b) and _distinct(a):  # different cards
        try:
            return set(a) == set(b)  # b as many as a: the same ones once each
        except TypeError:  # not a card
            return False
    return (set(map(type, a)) == _ONLY_CARDS and set(map(type, b)) == _ONLY_CARDS
            and sorted(map(id, a)) == sorted(map(id, b)))


def _eight_counts_as(groups: dict[int, list[Card]]) -> int:
    """:meth:`Vandatta._declared_rank` of a hand grouped by rank: the rank most common in it
    but the eights (the highest of those equally common), 2 when there is none."""
    best = (0, 2)
    for rank, group in groups.items():
        if rank != EIGHT and (len(group), rank) > best:
            best = (len(group), rank)
    return best[1]


#: What :meth:`Vandatta._prepare` gives for a deal: hands, stock (top last), upcard, the faces
#: seen in them, and whether those are all different.
_Prepared = tuple[list[list[Card | None]], list[Card | None], Card | None, list[Card], bool]
#: A play: the cards laid, in order, and what an eight counts as (``None`` otherwise).
Play = tuple[tuple[Card, ...], Card | None]
#: :meth:`Vandatta.turn_options`: (seat, plays, draw, the card drawn, pass, call).
TurnOptions = tuple[int, list[Play], bool, Card | None, bool, bool]


@dataclass(slots=True)
class _Refusal:
    """A refusal worked out before it is told: its code, its sentence and the sentence's
    arguments (:func:`referee.describe.refuse`)."""

    code: RefusalCode
    why: str
    args: dict[str, Any]


#: A play :meth:`Vandatta._judge` accepts: the hand left, and the faces it took from the pool
#: for unseen cards of the hand (a plain tuple: one is made for every card laid).
_Plan = tuple[list[Card | None], tuple[Card, ...]]


class Vandatta:
    """The Vändåtta engine for 2–7 seats (docs/rules.md §3), known or observed mode."""

    game = NAME
    # The fields the fast lanes of apply read, declared before apply (the round sets them).
    _phase: str
    _turn: int | None
    _current: tuple[str, int] | None
    _seat_after: list[int]
    _draws: int

    def __init__(
        self,
        n_seats: int,
        dealer: int,
        options: VandattaOptions | None = None,
        deal: HandDeal | None = None,
    ) -> None:
        """Start the first round; ``deal`` None deals six unseen cards to each seat."""
        GAME.check_seats(n_seats, dealer)
        if options is not None and not isinstance(options, VandattaOptions):
            raise OptionError("options", "Vändåtta needs VandattaOptions")
        self.n_seats = n_seats
        self.options = options if options is not None else VandattaOptions()
        self.dealer = dealer
        self._in_game = [True] * n_seats
        self._seats_changed()
        self._out: list[int] = []
        self._totals = [0] * n_seats
        self._winners: list[int] | None = None
        self._round = 0
        self._rounds_done = 0
        self._cards_played = 0
        self._seq = 0
        self._t = 0
        if deal is None:
            prepared = self._prepare(None, None, None)
        else:
            if not isinstance(deal, HandDeal):
                raise DealError("Vändåtta needs a HandDeal (hands, stock, upcard)")
            prepared = self._prepare(deal.hands, deal.stock, deal.upcard)
        if isinstance(prepared, _Refusal):
            raise DealError(refusal_words(prepared.why, prepared.args, None))
        self._start_round(*prepared)

    # ------------------------------------------------------------------ public interface

    @property
    def over(self) -> bool:
        """True once the game is decided."""
        return self._phase == OVER

    def hand(self, seat: int) -> list[Card | None]:
        """The cards of ``seat``'s hand (``None`` for unseen cards): for bots, not for displays."""
        return list(self._hands[seat])

    def holder(self, card: Card) -> int | None:
        """The seat whose known hand holds ``card``, if any."""
        return next((s for s, hand in enumerate(self._hands) if card in hand), None)

    def next_deadline(self) -> int | None:
        """Vändåtta has no timed rule."""
        return None

    def stock_cards(self) -> list[Card | None]:
        """The stock, top first (``None`` for unseen cards): for tests and simulation."""
        return list(reversed(self._stock))

    def pile_cards(self) -> list[Card | None]:
        """The discard pile, top last (``None`` for unseen cards): the cards of ``state()``'s
        ``pile``, for the table's reshuffle in a simulation."""
        return list(self._discard)

    def advance(self, t: int) -> list[Verdict]:
        """Vändåtta has no timed rule: nothing happens when time passes."""
        if t > self._t:
            self._t = t
        return []

    def finish(self) -> list[Verdict]:
        """Nothing is pending at the end of the input."""
        return []

    def apply(self, inp: Input) -> list[Verdict]:
        """Judge one input; a refused input changes nothing (except a ``no_lappen`` penalty).

        Most inputs of a game are the seat in turn laying cards of one rank that match (not
        an ace, not its last cards), drawing the stock's known top card or passing after its
        three draws, and a seat drawing for an ace: those are judged and made here in a few
        steps (the *fast lanes*), exactly as the act's handler would judge and make them
        (``tests/referee/games/test_vandatta_lanes.py`` judges games both ways and compares
        them after every input); every other input, and any the lanes are unsure of, goes to
        its handler."""
        t = inp.t
        if t > self._t:
            self._t = t
        self._seq += 1
        seat = inp.seat
        phase = self._phase
        if phase == PLAY:
            if seat == self._turn:
                act = inp.act
                if act == "play":
                    if self._play_lane(seat, inp):
                        return []
                elif act == "draw":
                    # Within the turn's three draws, of a stock whose top card is known (and
                    # the input names it, or none): _on_draw hands it over.
                    stock = self._stock
                    if stock and self._draws < MAX_DRAWS:
                        top = stock[-1]
                        got = inp.card
                        if top is not None and (got is None or got is top):
                            self._hands[seat].append(stock.pop())
                            self._draws += 1
                            return []
                elif act == "pass" and self._draws >= MAX_DRAWS and self._stock:
                    # After three draws, with a card left to draw: _on_pass ends the turn.
                    self._passes = 0
                    self._next_turn(seat)
                    return []
        elif phase == ACE_DRAWS and seat == self._ace_queue[0] and inp.act == "draw":
            # The seat whose draw the ace asks for, of a known top card: _on_draw hands it
            # over and counts the draw off the ace's.
            stock = self._stock
            if stock:
                top = stock[-1]
                got = inp.card
                if top is not None and (got is None or got is top):
                    self._hands[seat].append(stock.pop())
                    del self._ace_queue[0]
                    self._settle_ace()
                    return []
        return self._handle(inp)

    def _play_lane(self, seat: int, inp: Input) -> bool:
        """The fast lane of a play of the seat in turn in the play phase (:meth:`apply`):
        lay ``inp``'s cards and end the turn when :meth:`_judge` would find nothing to refuse
        and :meth:`_on_play` would do no more than that, and say so; else change nothing.

        That is cards of the hand, of one rank that is not an ace (no ace to follow), the
        first matching the card to follow, or one eight named as a card (unless the table
        forbids it on the special card on top), leaving a card in the hand (no going out, so
        no lappen and no special finish). The cards are each the first equal card of the hand
        (found by identity: a card is one object)."""
        cards = inp.cards
        if not cards:
            return False
        first = cards[0]
        rank = first.rank
        hand = self._hands[seat]
        n = len(cards)
        if rank == ACE or len(hand) <= n:
            return False
        as_ = inp.as_
        if rank == EIGHT:
            if n != 1 or as_ is None or (self.options.no_special_on_special
                                         and _is_special(self._discard[-1]
                                                         if self._discard else None)):
                return False
            laid = (as_.suit, as_.rank)  # no special effect of the named card
        else:
            current = self._current
            if current is not None and first.suit != current[0] and rank != current[1]:
                return False  # no_match
            laid = (cards[-1].suit, rank)
        if n == 1:
            at = 0
            for card in hand:  # _index, inline
                if card is first:
                    break
                at += 1
            else:
                return False
            del hand[at]
        else:
            rest = hand.copy()
            for card in cards:
                at = _index(rest, card)
                if at < 0 or card.rank != rank:
                    return False
                del rest[at]
            self._hands[seat] = rest
        self._discard += cards
        self._cards_played += n
        self._passes = 0
        self._current = laid
        self._draws = 0  # _next_turn, inline
        self._turn = turn = self._seat_after[seat]
        self._prev_start[turn] = self._cur_start[turn]
        self._cur_start[turn] = self._seq
        return True

    def _next_turn(self, seat: int) -> None:
        """:meth:`_end_turn` from the play phase, where the ace and penalty fields are already
        clear (only :meth:`_end_turn` and :meth:`_start_round` enter it)."""
        self._draws = 0
        self._turn = turn = self._seat_after[seat]
        self._prev_start[turn] = self._cur_start[turn]  # _begin_turn
        self._cur_start[turn] = self._seq

    def _handle(self, inp: Input) -> list[Verdict]:
        """Judge one input by its act's handler (:meth:`apply` has counted it)."""
        seat = inp.seat
        act = inp.act
        # The seat in turn is a seat in the game, in a round being played (no turn otherwise):
        # the checks below pass for it, and most inputs are its plays and draws.
        if seat == self._turn:
            if act == "play":
                return self._on_play(inp)
            if act == "draw":
                return self._on_draw(inp)
        elif self._phase == OVER:
            return [self._illegal(seat, "game_over", "game_over")]
        elif not 0 <= seat < self.n_seats:
            return [self._illegal(seat, "no_such_seat", "no_seat_of", last=self.n_seats - 1)]
        elif not self._in_game[seat]:
            return [self._illegal(seat, "out_of_game", "seat_out_points")]
        handler = _HANDLERS.get(act)
        if handler is None:
            return [self._illegal(seat, "unknown_act", "act_not_vandatta", act=inp.act)]
        return handler(self, inp)

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot for displays (hands are not in it: see :meth:`hand`)."""
        top = self._discard[-1] if self._discard else None
        current = None
        if self._current is not None:
            current = {"suit": self._current[0], "rank": RANK_TEXT[self._current[1]]}
        ace = None
        if self._phase in (ACE_DRAWS, ACE_FOLLOW):
            ace = {"seat": self._turn, "suit": self._ace_suit,
                   "draws_left": len(self._ace_queue)}
        return {
            "game": self.game,
            "counts": [len(h) for h in self._hands],
            "pile": cards_text(self._discard),
            "turn": self._actor(),
            "cards_played": self._cards_played,
            "tricks": self._rounds_done,
            "out": sorted(self._out),
            "over": self._phase == OVER,
            "winners": None if self._winners is None else list(self._winners),
            "top": card_text(top),
            "current": current,
            "stock": len(self._stock),
            "must_draw": self._must_draw_seat(),
            "draws": self._draws,
            "phase": self._phase,
            "round": self._round,
            "totals": list(self._totals) if self.options.points_game else None,
            "called": self._called_seats(),
            "dealer": self.dealer,
            "ace": ace,
            "penalty_draws": self._penalty_left if self._phase == LAPPEN_PENALTY else 0,
        }

    def turn_state(self) -> tuple[int | None, int | None, int, int, str]:
        """What a player at the table checks before acting, as :meth:`state` gives it without
        building the rest: ``(must_draw, turn, stock, len(pile), phase)``."""
        return (self._must_draw_seat(), self._actor(), len(self._stock), len(self._discard),
                self._phase)

    def legal_inputs(self, t: int) -> list[Input]:
        """Every input the seat to act may make now (plays in useful orders, draw, pass, call).

        Reshuffles and deals are table acts and are not offered. Sets of several cards come in
        every subset, once per possible last card (which sets the suit); eights come once per
        subset with four declarations: each suit, of the rank most common in the rest of the
        hand. Plays that the referee would refuse (including going out without a lappen call) are
        left out.
        """
        options = self.turn_options()
        if options is None:
            return []
        seat, plays, draw, card, pass_, call = options
        out = [Input(t, seat, "play", cards=cards, as_=as_) for cards, as_ in plays]
        if draw:
            out.append(Input(t, seat, "draw", card=card))
        if pass_:
            out.append(Input(t=t, seat=seat, act="pass"))
        if call:
            out.append(Input(t=t, seat=seat, act="call", call="lappen"))
        return out

    def can_reshuffle(self) -> bool:
        """The discards may be turned into a new stock now (a ``reshuffle`` input would be
        accepted in a round being played): the stock is empty, the pile holds more than its
        top card and the table reshuffles."""
        return self._can_reshuffle()

    def turn_options(self) -> TurnOptions | None:
        """What :meth:`legal_inputs` offers, without building its inputs: ``None`` when no seat
        is to act, else ``(seat, plays, draw, card, pass, call)``: the plays as ``(cards, as)``
        in the same order, whether a draw is offered and the card it names (``None`` unseen),
        whether a pass is, and whether a lappen call is. ``legal_inputs(t)`` is exactly these
        as inputs at ``t``: the plays, then the draw, the pass and the call."""
        phase = self._phase
        if phase == ROUND_OVER or phase == OVER:  # no one acts (_actor)
            return None
        stock = self._stock
        if phase == ACE_DRAWS:
            drawer = self._ace_queue[0]
            return (drawer, [], bool(stock), stock[-1] if stock else None, False,
                    self.options.lappen and drawer not in self._called_seats())
        seat = self._turn
        assert seat is not None
        if phase == LAPPEN_PENALTY:
            if stock:
                return seat, [], True, stock[-1], False, False
            return seat, [], False, None, not self._can_draw(), False
        plays = self._legal_plays(seat)
        draw = pass_ = False
        card = None
        if phase != ACE_FOLLOW and not (phase == SPECIAL_FINISH
                                        and self._drawn_fit(seat, plays) is not None):
            draws = self._draws
            if draws < MAX_DRAWS and stock:
                draw = True
                card = stock[-1]
            pass_ = draws >= MAX_DRAWS or not (stock or self._can_reshuffle())  # _can_draw
        return (seat, plays, draw, card, pass_,
                self.options.lappen and seat not in self._called_seats())

    def _legal_plays(self, seat: int) -> list[Play]:
        """The plays of :meth:`_candidate_plays` that :meth:`_judge` accepts, in their order,
        made without judging each one.

        With every card of the hand seen, once, a candidate is cards of the hand of one rank
        whose first card matches (or follows the ace), and :meth:`_judge` can refuse it only
        for the rank (an eight or ace on a special card with ``no_special_on_special``), for
        an ace's suit (no other card of it kept to follow) or for laying the whole hand
        (going out without a lappen call that counts): so the candidates are made here with
        those tests, in a few comparisons each. :meth:`_judged_plays` makes and judges every
        candidate in full; the two agree at every state of
        ``tests/referee/games/test_vandatta_plays.py``. A hand with an unseen card, or a
        card twice, is judged."""
        hand = self._hands[seat]
        groups: dict[int, list[Card]] = {}
        for c in hand:
            if c is None:
                return self._judged_plays(seat)
            same = groups.get(c.rank)
            if same is None:
                groups[c.rank] = [c]
            else:
                same.append(c)
        options = self.options
        following = self._phase == ACE_FOLLOW
        ace_suit = self._ace_suit
        current = self._current
        cur_suit, cur_rank = ("", 0) if current is None else current
        # Laying the whole hand goes out (unless no_special_finish keeps the turn after an
        # eight or ace), which lappen refuses without a call that counts.
        whole = len(hand) if options.lappen and not self._call_counts(seat) else 0
        on_special: bool | None = None  # the top card is special and no_special_on_special
        decl = 0  # the rank an eight counts as, once known
        kept: dict[str, int] | None = None  # the hand's cards of each suit that may follow an ace
        out: list[Play] = []
        for rank in sorted(groups):
            group = groups[rank]
            if len(group) == 1 and rank != EIGHT and rank != ACE:  # most plays: as below
                card = group[0]
                if following:
                    if card.suit != ace_suit:
                        continue
                elif (rank != cur_rank and card.suit != cur_suit) and current is not None:
                    continue  # no_match
                if whole != 1:  # no_lappen
                    out.append(((card,), None))
                continue
            out_size = whole
            follow: dict[str, int] | None = None  # for an ace: the cards that may follow it
            if rank == EIGHT or rank == ACE:
                if on_special is None:
                    on_special = options.no_special_on_special and _is_special(
                        self._discard[-1] if self._discard else None)
                if on_special:
                    continue  # special_on_special
                if options.no_special_finish:
                    out_size = 0
                if rank == EIGHT and not decl:
                    decl = _eight_counts_as(groups)
                elif rank == ACE and not following:
                    if kept is None:
                        kept = {}
                        eights = options.no_special_on_special  # may not follow an ace
                        for c in hand:
                            if c is not None and not (eights and c.rank == EIGHT):
                                kept[c.suit] = kept.get(c.suit, 0) + 1
                    follow = kept
            if len(group) == 1:
                card = group[0]
                if following:
                    if card.suit != ace_suit:
                        continue
                elif (rank != EIGHT and current is not None and rank != current[1]
                      and card.suit != current[0]):
                    continue  # no_match
                if out_size == 1:
                    continue  # no_lappen
                if rank == EIGHT:
                    play = (card,)
                    for suit in SUITS:
                        out.append((play, _CARD_OF[decl, suit]))
                elif follow is None or follow.get(card.suit, 0) > 1:  # ace_without_follow_up
                    out.append(((card,), None))
                continue
            group.sort(key=_suit)  # one rank: the cards' own order
            size = len(group)
            for i in range(1, size):
                if group[i - 1].suit == group[i].suit:  # a card twice: never in a real deck
                    return self._judged_plays(seat)
            match: Card | None = None  # the one card that matches, when not all do
            if following:
                if not any(c.suit == ace_suit for c in group):
                    continue
            elif rank != EIGHT and current is not None and rank != current[1]:
                for c in group:
                    if c.suit == current[0]:
                        match = c
                if match is None:
                    continue  # no_match
            for n in range(1, size + 1):
                if n == out_size:
                    continue  # no_lappen
                for subset in combinations(group, n):
                    if following and not any(c.suit == ace_suit for c in subset):
                        continue
                    if rank == EIGHT:
                        for suit in SUITS:
                            out.append((subset, _CARD_OF[decl, suit]))
                        continue
                    if match is not None and match not in subset:
                        continue  # no_match
                    if n == 1:
                        if follow is None or follow.get(subset[0].suit, 0) > 1:  # as below
                            out.append((subset, None))
                        continue
                    # Each card last in turn (it sets the suit), the others before it, first
                    # the one that matches if not all do.
                    for j in range(n):
                        last = subset[j]
                        if last is match:
                            continue  # no_match: no other card of the play matches
                        if follow is not None and follow.get(last.suit, 0) <= 1:
                            continue  # ace_without_follow_up
                        others = subset[:j] + subset[j + 1:]
                        if match is None:
                            out.append(((*others, last), None))
                        else:
                            out.append(((match, *[c for c in others if c is not match], last),
                                        None))
        return out

    def _judged_plays(self, seat: int, candidates: list[Play] | None = None) -> list[Play]:
        """The candidate plays (``candidates``, else :meth:`_candidate_plays`) that
        :meth:`_judge` accepts, each judged in full."""
        if candidates is None:
            candidates = self._candidate_plays(seat)
        out: list[Play] = []
        judged: tuple[Card, ...] | None = None
        ok = False
        for cards, as_ in candidates:
            # An eight's declarations share one judging: _judge reads as_ only for None.
            if as_ is None or cards is not judged:
                ok = not isinstance(self._judge(seat, cards, as_), _Refusal)
                judged = cards if as_ is not None else None
            if ok:
                out.append((cards, as_))
        return out

    # ------------------------------------------------------------------ set-up

    def _prepare(
        self,
        hands: Sequence[Sequence[Card | None]] | None,
        stock: Sequence[Card | None] | None,
        upcard: Card | None,
    ) -> _Prepared | _Refusal:
        """Check a deal and fill in unseen cards; returns the parts (with the faces seen in it
        and whether they are all different) or what is wrong."""
        n = self.n_seats
        if hands is None:
            new_hands: list[list[Card | None]] = [
                [None] * HAND_SIZE if self._in_game[s] else [] for s in range(n)
            ]
        else:
            if len(hands) != n:
                return _Refusal("bad_deal", "deal_hands", {"n": n, "got": len(hands)})
            new_hands = [list(h) for h in hands]
            for s in range(n):
                if not self._in_game[s] and new_hands[s]:
                    return _Refusal("bad_deal", "deal_out_seat", {"other": s})
                if self._in_game[s] and not new_hands[s]:
                    return _Refusal("bad_deal", "deal_in_seat", {"other": s})
        in_hands = sum(map(len, new_hands))
        if stock is None:
            new_stock: list[Card | None] = [None] * max(0, 52 - in_hands - 1)
        else:
            new_stock = list(stock)
        every = in_hands + len(new_stock) + 1  # the upcard
        if every > 52:
            return _Refusal("bad_deal", "deal_too_many", {"n": every})
        seen: list[Card] = [c for c in chain(chain.from_iterable(new_hands), new_stock, (upcard,))
                            if c is not None]
        distinct = _distinct(seen)
        if not distinct:
            twice = sorted(str(c) for c, k in Counter(seen).items() if k > 1)
            if twice:
                return _Refusal("bad_deal", "deal_twice", {"cards": twice})
        return new_hands, new_stock, upcard, seen, distinct

    def _start_round(
        self, hands: list[list[Card | None]], stock: list[Card | None], upcard: Card | None,
        seen: list[Card], distinct: bool,
    ) -> None:
        """Start a round of the deal :meth:`_prepare` checked (``seen``: its faces, every
        one of hands, stock and upcard; ``distinct``: all different)."""
        self._hands = hands
        self._stock = list(reversed(stock))  # top of the stock is the last element
        self._discard: list[Card | None] = [upcard]
        # The faces not seen: none when the 52 cards seen are all different (a known deal).
        self._pool: set[Card] = (set() if len(seen) == len(_DECK) and distinct
                                 else set(_DECK - set(seen)))
        self._bag: set[Card] = set()
        # The upcard counts as itself: an 8 or an ace upcard has no special effect.
        self._current = None if upcard is None else (upcard.suit, upcard.rank)
        self._phase = PLAY
        self._round += 1
        self._draws = 0
        self._passes = 0
        self._ace_queue: list[int] = []
        self._ace_suit: str | None = None
        self._penalty_left = 0
        n = self.n_seats
        self._calls: list[int | None] = [None] * n
        self._cur_start: list[int | None] = [None] * n
        self._prev_start: list[int | None] = [None] * n
        self._turn = self._next_seat(self.dealer)
        self._begin_turn(self._turn)

    # ------------------------------------------------------------------ helpers

    def _illegal(self, seat: int, code: RefusalCode, why: str, **args: Any) -> Verdict:
        return refuse(self._t, seat, code, why, **args)

    def _verdict(self, kind: str, **data: Any) -> Verdict:
        return Verdict(self._t, kind, data)

    def _active(self) -> list[int]:
        return [s for s in range(self.n_seats) if self._in_game[s]]

    def _next_seat(self, seat: int) -> int:
        return self._seat_after[seat]

    def _seats_changed(self) -> None:
        """Make :meth:`_next_seat`'s table anew: seats went out of the game (or it begins)."""
        n = self.n_seats
        if all(self._in_game):
            self._seat_after = [*range(1, n), 0]
            return
        self._seat_after = [seat for seat in range(n)]
        for seat in range(n):
            for step in range(1, n + 1):
                s = (seat + step) % n
                if self._in_game[s]:
                    self._seat_after[seat] = s
                    break

    def _begin_turn(self, seat: int) -> None:
        self._prev_start[seat] = self._cur_start[seat]
        self._cur_start[seat] = self._seq

    def _end_turn(self) -> None:
        turn = self._turn
        assert turn is not None
        self._phase = PLAY
        self._draws = 0
        self._ace_queue = []
        self._ace_suit = None
        self._penalty_left = 0
        self._turn = turn = self._seat_after[turn]
        self._prev_start[turn] = self._cur_start[turn]  # _begin_turn
        self._cur_start[turn] = self._seq

    def _actor(self) -> int | None:
        if self._phase in (ROUND_OVER, OVER):
            return None
        if self._phase == ACE_DRAWS:
            return self._ace_queue[0]
        return self._turn

    def _must_draw_seat(self) -> int | None:
        if self._phase == ACE_DRAWS:
            return self._ace_queue[0]
        if self._phase == LAPPEN_PENALTY:
            return self._turn if self._penalty_left else None
        if self._phase == SPECIAL_FINISH and self._draws < MAX_DRAWS and self._can_draw():
            return self._turn
        return None

    def _can_draw(self) -> bool:
        """A card can be drawn now, or after a reshuffle the table is allowed to make."""
        return bool(self._stock) or self._can_reshuffle()

    def _can_reshuffle(self) -> bool:
        return self.options.reshuffle_discards and not self._stock and len(self._discard) > 1

    def _call_counts(self, seat: int) -> bool:
        """The seat's lappen call counts for going out in its current turn."""
        call = self._calls[seat]
        if call is None:
            return False
        prev = self._prev_start[seat]
        return prev is None or call > prev

    def _called_seats(self) -> list[int]:
        if not self.options.lappen or self._phase in (ROUND_OVER, OVER):
            return []
        seats = []
        for s in self._active():
            call = self._calls[s]
            if call is None:
                continue
            if s == self._turn:
                ok = self._call_counts(s)
            else:
                start = self._cur_start[s]
                ok = start is None or call > start
            if ok:
                seats.append(s)
        return seats

    def _drawn_fit(self, seat: int, plays: list[Play] | None = None) -> Card | None:
        """In a special finish: a card drawn since that the seat may lay now (the first card of
        its first legal play; ``plays``: its legal plays, where already made), or None. The
        player lays it (docs/rules.md §3: "they lay it"); a hand with a card the referee has
        not seen is not held to this."""
        hand = self._hands[seat]
        if not hand or None in hand:
            return None
        plays = self._legal_plays(seat) if plays is None else plays
        return plays[0][0][0] if plays else None

    def _matches(self, card: Card) -> bool:
        if card.rank == EIGHT or self._current is None:
            return True
        suit, rank = self._current
        return card.suit == suit or card.rank == rank

    def _can_follow_ace(self, card: Card, suit: str) -> bool:
        return card.suit == suit and not (self.options.no_special_on_special
                                          and card.rank == EIGHT)

    def _has_follow_up(self, rest: Sequence[Card | None], suit: str) -> bool:
        if any(c is not None and self._can_follow_ace(c, suit) for c in rest):
            return True
        if _index(rest, None) >= 0:
            return any(self._can_follow_ace(c, suit) for c in self._pool)
        return False

    # ------------------------------------------------------------------ judging a play

    def _judge(self, seat: int, cards: Sequence[Card], as_: Card | None) -> _Refusal | _Plan:
        """Whether ``seat`` may lay ``cards`` now (turn already checked); no state change."""
        hand = self._hands[seat]
        if not cards:
            return _Refusal("not_in_hand", "name_cards", {})
        if not hand:
            return _Refusal("no_cards", "no_cards_to_lay", {})
        first = cards[0]
        rank = first.rank
        rest = hand.copy()
        from_pool: tuple[Card, ...] = ()
        at = _index(rest, first) if len(cards) == 1 else -1
        if at >= 0:  # most plays: one card of the hand
            del rest[at]
        else:
            if len(cards) > 1 and any(c.rank != rank for c in cards):
                return _Refusal("not_same_rank", "not_same_rank", {})
            taken = self._take(seat, cards, rest)
            if isinstance(taken, _Refusal):
                return taken
            from_pool = taken
        options = self.options
        if options.no_special_on_special and (rank == EIGHT or rank == ACE):
            top = self._discard[-1] if self._discard else None
            if _is_special(top):
                assert top is not None
                return _Refusal("special_on_special", "special_on_special",
                                {"card": str(first), "top": str(top)})
        following = self._phase == ACE_FOLLOW
        if following:
            assert self._ace_suit is not None
            if not any(c.suit == self._ace_suit for c in cards):
                return _Refusal("must_follow_ace", "follow_ace_suit",
                                {"suit": self._ace_suit})
        elif rank == EIGHT:  # an eight matches anything; it is laid as a card it names
            if as_ is None:
                return _Refusal("bad_declaration", "eight_needs_card", {})
        else:
            current = self._current  # _matches, inline
            if current is not None and first.suit != current[0] and rank != current[1]:
                return _Refusal("no_match", "no_match",
                                {"card": str(first), "suit": current[0], "rank": current[1]})
            if rank == ACE:
                suit = cards[-1].suit
                if not self._has_follow_up(rest, suit):
                    return _Refusal("ace_without_follow_up",
                                    "ace_needs_follow_up_no_eight"
                                    if options.no_special_on_special else "ace_needs_follow_up",
                                    {"suit": suit})
        if following and rank == EIGHT and as_ is None:
            return _Refusal("bad_declaration", "eight_needs_card", {})
        if rest or not options.lappen:
            return rest, from_pool
        goes_out = not (options.no_special_finish and (rank == EIGHT or rank == ACE))
        if goes_out and not self._call_counts(seat):
            return _Refusal("no_lappen",
                            "no_lappen_penalty" if self._can_draw() else "no_lappen_lapses",
                            {"draws": LAPPEN_PENALTY_DRAWS})
        return rest, from_pool

    def _take(self, seat: int, cards: Sequence[Card],
              rest: list[Card | None]) -> _Refusal | tuple[Card, ...]:
        """Take ``cards`` out of ``rest`` (the hand), each the first equal card, else an
        unseen card of the hand whose face is in the pool; returns the faces so taken from
        the pool, or the refusal of a card that is in neither."""
        from_pool: list[Card] = []
        for card in cards:
            at = _index(rest, card)
            if at < 0 and card in self._pool and card not in from_pool:
                at = _index(rest, None)  # an unseen card of the hand was this one
                if at >= 0:
                    from_pool.append(card)
            if at >= 0:
                del rest[at]
            else:
                return _Refusal("not_in_hand", "not_in_hand", {"card": str(card)})
        return tuple(from_pool)

    def _candidate_plays(self, seat: int) -> list[Play]:
        hand = self._hands[seat]
        groups: dict[int, list[Card]] = {}
        for c in hand:
            if c is not None:
                same = groups.get(c.rank)
                if same is None:
                    groups[c.rank] = [c]
                else:
                    same.append(c)
        following = self._phase == ACE_FOLLOW
        ace_suit = self._ace_suit
        current = self._current
        decl: int | None = None  # the rank an eight counts as
        out: list[Play] = []
        for rank in sorted(groups):
            group = groups[rank]
            if len(group) == 1:  # the tests below for one card
                card = group[0]
                if following:
                    if card.suit != ace_suit:
                        continue
                elif (rank != EIGHT and current is not None and rank != current[1]
                      and card.suit != current[0]):
                    continue
                if rank != EIGHT:
                    # The one subset below: it follows the ace, or it matches (tested just now).
                    out.append(((card,), None))
                    continue
            else:
                group.sort(key=_suit)  # one rank: the cards' own order
                if following:
                    if not any(c.suit == ace_suit for c in group):
                        continue
                elif (rank != EIGHT and current is not None and rank != current[1]
                      and not any(c.suit == current[0] for c in group)):
                    continue  # no card of the group matches (_matches)
            for size in range(1, len(group) + 1):
                for subset in combinations(group, size):
                    if following and not any(c.suit == ace_suit for c in subset):
                        continue
                    if size == 1 and rank != EIGHT:  # the loop below for one card
                        if following or self._matches(subset[0]):
                            out.append((subset, None))
                        continue
                    if rank == EIGHT:
                        if decl is None:  # the same for every subset: only eights are laid
                            decl = self._declared_rank(hand, subset)
                        for suit in SUITS:
                            out.append((subset, _CARD_OF[decl, suit]))
                        continue
                    for last in subset:
                        others = [c for c in subset if c != last]
                        if not others:
                            if following or self._matches(last):
                                out.append(((last,), None))
                            continue
                        if following:
                            first = others[0]
                        else:
                            firsts = [c for c in others if self._matches(c)]
                            if not firsts:
                                continue
                            first = firsts[0]
                        order = (first, *[c for c in others if c != first], last)
                        out.append((order, None))
        return out

    @staticmethod
    def _declared_rank(hand: Sequence[Card | None], laid: Sequence[Card]) -> int:
        rest = Counter(c.rank for c in hand
                       if c is not None and c not in laid and c.rank != EIGHT)
        if not rest:
            return 2
        return max(rest.items(), key=lambda kv: (kv[1], kv[0]))[0]

    # ------------------------------------------------------------------ turn checks

    def _turn_refusal(self, seat: int, act: str) -> Verdict | None:
        """Whether ``seat`` may make a ``play``/``draw``/``pass`` in this phase at all."""
        phase = self._phase
        if phase == ROUND_OVER:
            return self._illegal(seat, "not_your_turn", "round_over_deal_first")
        if phase == ACE_DRAWS:
            drawer = self._ace_queue[0]
            if seat == self._turn:
                if act == "play":
                    return self._illegal(seat, "ace_draws_pending", "ace_draws_first",
                                         drawer=drawer)
                return self._illegal(seat, "must_follow_ace", "ace_player_waits",
                                     drawer=drawer, suit=self._ace_suit or "C")
            if seat == drawer:
                if act == "draw":
                    return None
                if act == "pass":
                    return self._illegal(seat, "must_draw", "draw_for_ace")
                return self._illegal(seat, "not_your_turn", "draw_for_ace_not_lay",
                                     turn=self._turn or 0)
            return self._illegal(seat, "not_your_turn", "drawer_now", drawer=drawer)
        if phase == ACE_FOLLOW:
            if seat != self._turn:
                return self._illegal(seat, "not_your_turn", "follows_ace", turn=self._turn or 0)
            if act != "play":
                return self._illegal(seat, "must_follow_ace", "follow_ace_not_draw",
                                     suit=self._ace_suit or "C")
            return None
        if seat != self._turn:
            return self._illegal(seat, "not_your_turn", "turn_of", turn=self._turn or 0)
        if phase == LAPPEN_PENALTY:
            # A draw is judged as any draw (an empty stock: stock_empty); a pass only once the
            # penalty draws are made or lapsed.
            if act == "draw" or (act == "pass" and not self._penalty_left):
                return None
            return self._penalty_refusal(seat)
        return None

    def _penalty_refusal(self, seat: int) -> Verdict:
        """What the seat in its lappen penalty is told when it does anything but the penalty's
        draws (``must_draw``) or, once they lapsed, its pass (``must_pass``)."""
        if self._penalty_left:
            return self._illegal(seat, "must_draw", "penalty_draws", left=self._penalty_left)
        return self._illegal(seat, "must_pass", "penalty_pass")

    # ------------------------------------------------------------------ acts

    def _on_play(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        phase = self._phase
        if seat != self._turn or phase not in _OWN_PLAY:  # else _turn_refusal finds nothing
            refusal = self._turn_refusal(seat, "play")
            if refusal is not None:
                return [refusal]
        cards: tuple[Card, ...] = inp.cards if inp.cards is not None else (
            (inp.card,) if inp.card is not None else ())
        judged = self._judge(seat, cards, inp.as_)
        if isinstance(judged, _Refusal):
            if judged.code == "no_lappen":
                self._phase = LAPPEN_PENALTY
                self._penalty_left = LAPPEN_PENALTY_DRAWS
                self._settle_penalty()
            return [self._illegal(seat, judged.code, judged.why, **judged.args)]
        following = phase == ACE_FOLLOW
        rest, from_pool = judged
        self._hands[seat] = rest
        if from_pool:
            self._pool.difference_update(from_pool)
        self._discard += cards
        self._cards_played += len(cards)
        self._passes = 0
        last = cards[-1]
        rank = last.rank
        if rank == EIGHT:
            assert inp.as_ is not None
            self._current = (inp.as_.suit, inp.as_.rank)  # no special effect of the named card
        else:
            self._current = (last.suit, rank)
        if rank == ACE and not following:
            self._ace_suit = last.suit
            others = []
            s = seat
            while (s := self._next_seat(s)) != seat:
                others.append(s)
            self._ace_queue = others * len(cards)
            self._phase = ACE_DRAWS
            self._settle_ace()
            return []
        if not rest:
            if self.options.no_special_finish and rank in (EIGHT, ACE):
                self._phase = SPECIAL_FINISH
                self._draws = 0
                self._ace_queue = []
                self._ace_suit = None
                return []
            return self._end_round(seat)
        self._end_turn()
        return []

    def _settle_ace(self) -> None:
        """Ace draws end when all are made, or lapse when the stock cannot give a card."""
        if self._phase == ACE_DRAWS and (not self._ace_queue or not self._can_draw()):
            self._ace_queue = []
            self._phase = ACE_FOLLOW

    def _settle_penalty(self) -> None:
        """Lappen penalty draws lapse when the stock cannot give a card: the player keeps the
        turn only to pass (``penalty_draws`` 0, no ``must_draw``)."""
        if self._phase == LAPPEN_PENALTY and not self._can_draw():
            self._penalty_left = 0

    def _on_draw(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        phase = self._phase
        if seat != self._turn or phase not in _OWN_TURN:  # else _turn_refusal finds nothing
            refusal = self._turn_refusal(seat, "draw")
            if refusal is not None:
                return [refusal]
        if phase == SPECIAL_FINISH and (fits := self._drawn_fit(seat)) is not None:
            return [self._illegal(seat, "special_finish", "special_finish_fits", card=fits)]
        if phase in (PLAY, SPECIAL_FINISH) and self._draws >= MAX_DRAWS:
            return [self._illegal(seat, "draw_limit",
                                  "draw_limit" if phase == PLAY else "draw_limit_finish",
                                  max=MAX_DRAWS)]
        if not self._stock:
            why = "reshuffle_first" if self._can_reshuffle() else "nothing_to_draw"
            return [self._illegal(seat, "stock_empty", why)]
        top = self._stock[-1]
        got = inp.card
        from_bag = from_pool = False
        if top is not None:
            if got is not None and got is not top and got != top:
                return [self._verdict("desync", seat=seat, expected=str(top), got=str(got))]
            card: Card | None = top
        elif got is not None:
            unseen_slots = sum(1 for c in self._stock if c is None)
            if got in self._bag:
                from_bag = True
            elif got in self._pool and unseen_slots > len(self._bag):
                from_pool = True
            else:
                return [self._verdict("desync", seat=seat, expected=None, got=str(got))]
            card = got
        else:
            card = None
        # Apply.
        self._stock.pop()
        if from_bag:
            self._bag.discard(got)
        elif from_pool:
            self._pool.discard(got)
        elif top is None and self._bag:
            # An unseen card left the stock: which bag card it was is unknown from now on.
            self._pool |= self._bag
            self._bag = set()
        self._hands[seat].append(card)
        if phase == ACE_DRAWS:
            self._ace_queue.pop(0)
            self._settle_ace()
        elif phase == LAPPEN_PENALTY:
            self._penalty_left -= 1
            if self._penalty_left == 0:
                self._end_turn()
            else:
                self._settle_penalty()
        else:
            self._draws += 1
        return []

    def _on_pass(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        refusal = (None if seat == self._turn and self._phase in _OWN_TURN  # as it would say
                   else self._turn_refusal(seat, "pass"))
        if refusal is not None:
            return [refusal]
        if self._phase == SPECIAL_FINISH and (fits := self._drawn_fit(seat)) is not None:
            return [self._illegal(seat, "special_finish", "special_finish_fits", card=fits)]
        can_draw = self._can_draw()
        if self._phase in (PLAY, SPECIAL_FINISH) and self._draws < MAX_DRAWS and can_draw:
            if self._phase == SPECIAL_FINISH:
                last = self._discard[-1]
                if last is None:
                    return [self._illegal(seat, "special_finish", "special_finish_unseen",
                                          max=MAX_DRAWS, drawn=self._draws)]
                return [self._illegal(seat, "special_finish", "special_finish", card=last,
                                      max=MAX_DRAWS, drawn=self._draws)]
            return [self._illegal(seat, "must_draw", "draw_before_pass", drawn=self._draws,
                                  max=MAX_DRAWS)]
        if can_draw:
            self._passes = 0
        else:
            self._passes += 1
            if self._passes >= len(self._active()):
                return self._end_round(None)
        self._end_turn()
        return []

    def _on_call(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        if inp.call is None or inp.call.strip().lower() != "lappen":
            return [self._illegal(seat, "bad_call", "unknown_call", call=inp.call)]
        if self._phase == ROUND_OVER:
            return []  # calls do not carry into the next round
        if self._phase == LAPPEN_PENALTY and seat == self._turn:
            return [self._penalty_refusal(seat)]
        self._calls[seat] = self._seq
        return []

    def _on_reshuffle(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        if self._phase == ROUND_OVER:
            return [self._illegal(seat, "no_reshuffle", "no_round")]
        if not self.options.reshuffle_discards:
            return [self._illegal(seat, "no_reshuffle", "reshuffle_off")]
        if self._stock:
            return [self._illegal(seat, "no_reshuffle", "stock_not_empty", n=len(self._stock))]
        below = self._discard[:-1]
        if not below:
            return [self._illegal(seat, "no_reshuffle", "discard_only_top")]
        if inp.stock is None:
            self._stock = [None] * len(below)
            self._bag |= {c for c in below if c is not None}
        else:
            given = list(inp.stock)
            if len(given) != len(below):
                return [self._illegal(seat, "no_reshuffle", "stock_count", below=len(below),
                                      given=len(given))]
            if _same_cards(below, given):  # each discard once, nothing else: left is empty
                self._stock = list(reversed(given))
                self._discard = self._discard[-1:]
                return []
            left = list(given)
            for c in below:
                if c is None:
                    continue
                if c not in left:
                    return [self._illegal(seat, "no_reshuffle", "stock_lacks", card=c)]
                left.remove(c)
            if len(set(left)) != len(left) or any(c not in self._pool for c in left):
                bad = next(c for c in left if c not in self._pool or left.count(c) > 1)
                return [self._illegal(seat, "no_reshuffle", "not_in_discards", card=bad)]
            self._pool.difference_update(left)
            self._stock = list(reversed(given))
        self._discard = self._discard[-1:]
        return []

    def _on_deal(self, inp: Input) -> list[Verdict]:
        seat = inp.seat
        if self._phase != ROUND_OVER:
            return [self._illegal(seat, "round_not_over", "round_being_played")]
        prepared = self._prepare(inp.hands, inp.stock, inp.upcard)
        if isinstance(prepared, _Refusal):
            return [self._illegal(seat, prepared.code, prepared.why, **prepared.args)]
        self.dealer = self._next_seat(self.dealer)
        self._start_round(*prepared)
        return []

    # ------------------------------------------------------------------ end of a round

    def _end_round(self, winner: int | None) -> list[Verdict]:
        active = self._active()
        scores: list[int | None] = [
            hand_score(self._hands[s]) if self._in_game[s] else None for s in range(self.n_seats)
        ]
        if winner is not None:
            scores[winner] = 0
        self._rounds_done += 1
        self._turn = None
        self._ace_queue = []
        self._penalty_left = 0
        self._draws = 0
        points = self.options.points_game
        if points:
            for s in active:
                score = scores[s]
                if score is not None:
                    self._totals[s] += score
        verdicts = [self._verdict("round_over", winner=winner, scores=scores,
                                  totals=list(self._totals) if points else None)]
        winners: list[int] | None = None
        if not points:
            if winner is not None:
                winners = [winner]
            else:
                known = {s: sc for s in active if (sc := scores[s]) is not None}
                if known:
                    low = min(known.values())
                    winners = [s for s in active if known.get(s) == low]
                else:
                    winners = list(active)
        else:
            newly_out = [s for s in active if self._totals[s] >= OUT_AT]
            for s in newly_out:
                self._in_game[s] = False
                self._out.append(s)
                verdicts.append(self._verdict("out", seat=s))
            self._seats_changed()
            remaining = self._active()
            if len(remaining) == 1:
                winners = remaining
            elif not remaining:
                low = min(self._totals[s] for s in newly_out)
                winners = [s for s in newly_out if self._totals[s] == low]
        if winners is None:
            self._phase = ROUND_OVER
        else:
            self._phase = OVER
            self._winners = winners
            verdicts.append(self._verdict("game_over", winners=winners))
        return verdicts


#: The method that judges each act.
_HANDLERS: dict[str, Callable[[Vandatta, Input], list[Verdict]]] = {
    "play": Vandatta._on_play, "draw": Vandatta._on_draw, "pass": Vandatta._on_pass,
    "call": Vandatta._on_call, "deal": Vandatta._on_deal, "reshuffle": Vandatta._on_reshuffle}

#: Vändåtta as the registry knows it (docs/rules.md §3).
GAME = Game(
    name=NAME,
    title="Vändåtta",
    min_seats=2,
    max_seats=7,
    options=VandattaOptions,
    engine=Vandatta,
    deal_kind="hand",
    acts=("play", "draw", "pass", "call", "deal", "reshuffle"),
    counts=dealing_counts,
    hand_size=HAND_SIZE,
    tally="rounds played",
    tally_one="round played",
)
