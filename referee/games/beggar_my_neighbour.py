"""Beggar My Neighbour (docs/rules.md §1): the table engine and a fast solver for record notation.

Two things live here:

- :class:`BeggarMyNeighbour`, the pure engine of the Engine protocol (``referee/engine.py``) for
  2–4 seats, in known-deal or observed mode.
- :func:`parse_notation` / :func:`play_notation`, a fast two-player solver for the notation of
  published long-game records (``---AJ--Q---------QAKQJJ-QK``), with loop detection. It works a
  trick at a time, not a card at a time (stacks are ``bytes``; runs of number cards are skipped
  by C code), and reproduces the published counts: ``cards`` = cards laid, ``tricks`` = piles
  collected, the last one included (``tests/data/beggar_records.json``). The engine and the
  solver agree on every deal (``tests/referee/games/test_beggar_my_neighbour.py``).

Rulings this module makes where docs/rules.md §1 leaves a detail open (each pinned by a test):

- "The next player with cards" (§1.2, §1.3): the turn — to lay or to pay — goes clockwise to the
  next seat still in the game. A seat that the turn reaches while it holds no cards has had "its
  turn to lay come with none" (§1.6): it is out at that moment and the turn moves on. If the turn
  comes back round to the seat that just laid, every other seat is out and that seat takes the
  pile (reason ``last_player``).
- A seat that is still in the game but holds no cards (it laid its last card and waits) and tries
  to lay is refused with ``no_cards`` (checked before ``not_your_turn``).
- A verdict ``challenge`` comes before the ``out`` verdicts of seats the demand passed over.
- ``last_player`` is a collection like any other: it counts as a trick, and its ``pile_won``
  comes before the ``out`` verdicts (pile won, then outs, then game over).
- Observed mode: a face already seen at this table can not be laid again (code
  ``duplicate_card``): the reader or the person typing made a mistake.
- ``time_limit_s``: the ``game_over`` verdict it causes is stamped with the instant the limit ran
  out (start + limit), like a collect grace that runs out; at the end of the input
  (:meth:`BeggarMyNeighbour.finish`) a running limit runs out, so the replay of a table's journal
  shows the ``game_over`` the table announced when its time was up.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import product
from typing import Any

from referee.cards import ACE, JACK, KING, QUEEN, SUITS, Card, cards_text
from referee.deal import PileDeal, top_holder
from referee.describe import refuse
from referee.engine import Game
from referee.errors import DealError, OptionError, shown
from referee.model import Input, Verdict
from referee.options import BeggarOptions

NAME = "beggar-my-neighbour"


def dealing_counts(n: int) -> tuple[list[int], int]:
    """docs/rules.md §1: the whole deck, one at a time, left of the dealer first."""
    return [52 // n + (1 if i < 52 % n else 0) for i in range(n)], 0


@dataclass
class Challenge:
    """A demand in progress: ``seat`` owes ``owes`` more cards to ``by`` (the last court card)."""

    by: int
    seat: int
    owes: int

    def to_json(self) -> dict[str, int]:
        """The ``challenge`` object of ``state()``."""
        return {"by": self.by, "seat": self.seat, "owes": self.owes}


class BeggarMyNeighbour:
    """The Beggar My Neighbour engine: a pure state machine judging ``lay`` inputs.

    ``deal`` None is observed mode: every stack holds ``None`` cards by the dealing rule, and
    faces are learned from the ``card`` field of each ``lay``. A known deal may hold stacks of
    any size (at least one card each), so that small positions can be studied.
    """

    game = NAME

    def __init__(
        self,
        n_seats: int,
        dealer: int,
        options: BeggarOptions | None = None,
        deal: PileDeal | None = None,
    ) -> None:
        GAME.check_seats(n_seats, dealer)
        if options is not None and not isinstance(options, BeggarOptions):
            raise OptionError("options", "Beggar My Neighbour needs BeggarOptions")
        self.n_seats = n_seats
        self.dealer = dealer
        self.options = options if options is not None else BeggarOptions()
        self.observed = deal is None
        if deal is None:
            counts, _ = GAME.seat_counts(n_seats, dealer)
            stacks: list[list[Card | None]] = [[None] * c for c in counts]
        else:
            if not isinstance(deal, PileDeal):
                raise DealError("Beggar My Neighbour needs a PileDeal (stacks per seat)")
            if len(deal.stacks) != n_seats:
                raise DealError(f"the deal has {len(deal.stacks)} stacks for {n_seats} seats")
            if deal.pile:
                raise DealError("Beggar My Neighbour deals the whole deck: no leftover pile")
            stacks = [list(s) for s in deal.stacks]
            for seat, stack in enumerate(stacks):
                if not stack:
                    raise DealError(f"seat {seat} is dealt no cards")
        faces = [c for s in stacks for c in s if c is not None]
        if len(set(faces)) != len(faces):
            raise DealError("the deal holds a card more than once")
        self._seen: set[Card] = set(faces)
        self._stacks: list[deque[Card | None]] = [deque(s) for s in stacks]
        self._total = sum(len(s) for s in stacks)
        self._pile: list[Card | None] = []
        self._in = [True] * n_seats
        self._out: list[int] = []
        self._turn = (dealer + 1) % n_seats
        self._challenge: Challenge | None = None
        self._cards_played = 0
        self._tricks = 0
        self._over = False
        self._winners: list[int] | None = None
        limit = self.options.time_limit_s
        self._limit_ns = None if limit is None else int(round(limit * 1_000_000_000))
        self._start_t: int | None = None
        self._last_t: int | None = None

    # ----------------------------------------------------------------- the Engine protocol

    @property
    def over(self) -> bool:
        """True once the game is decided."""
        return self._over

    def apply(self, inp: Input) -> list[Verdict]:
        """Judge one input: a ``lay`` by the seat to act, or a refusal that changes nothing."""
        t = inp.t
        if self._last_t is not None and t < self._last_t:  # as _clock() does
            t = self._last_t
        self._last_t = t
        if self._start_t is None:
            self._start_t = t
        verdicts = [] if self._limit_ns is None else self._check_time(t)
        seat = inp.seat
        if self._over:
            return verdicts + [refuse(t, seat, "game_over", "game_over")]
        if not isinstance(seat, int) or not 0 <= seat < self.n_seats:
            return verdicts + [
                refuse(t, seat, "no_such_seat", "no_seat")
            ]
        if inp.act != "lay":
            return verdicts + [
                refuse(t, seat, "unknown_act", "act_not_beggar", act=inp.act)
            ]
        if not self._in[seat]:
            return verdicts + [refuse(t, seat, "out_of_game", "seat_out")]
        stack = self._stacks[seat]
        if not stack:
            return verdicts + [refuse(t, seat, "no_cards", "no_cards")]
        if seat != self._turn:
            return verdicts + [
                refuse(t, seat, "not_your_turn", "turn_of", turn=self._turn)
            ]
        expected = stack[0]
        got = inp.card
        if expected is None:
            if got is None:
                return verdicts + [
                    refuse(t, seat, "card_required", "face_unknown")
                ]
            if got in self._seen:
                return verdicts + [
                    refuse(t, seat, "duplicate_card", "seen_before", card=got)
                ]
            self._seen.add(got)
            card: Card = got
        else:
            if got is not None and got is not expected and got != expected:
                return verdicts + [
                    Verdict(t, "desync", {"seat": seat, "expected": str(expected), "got": str(got)})
                ]
            card = expected
        stack.popleft()
        stack_was_emptied = not stack
        laid = self._lay(t, seat, card, stack_was_emptied)
        return verdicts + laid if verdicts else laid

    def advance(self, t: int) -> list[Verdict]:
        """Let time pass to ``t``: the time limit, if any, may end the game.

        The clock starts at the first input's ``t``; before any input, time does not count.
        """
        if self._limit_ns is None:  # nothing to check: only the clock moves
            if self._last_t is None or t > self._last_t:
                self._last_t = t
            return []
        return self._check_time(self._clock(t))

    def finish(self) -> list[Verdict]:
        """The input has ended: a running time limit runs out, as a collect grace does at the
        end of a replay (a table whose game ended by its time limit journals no input for it,
        so this is how a replay reproduces that ``game_over``)."""
        if self._limit_ns is None or self._start_t is None:
            return []
        return self._check_time(self._start_t + self._limit_ns)

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot (docs/engine-contract.md keys plus ``challenge``)."""
        return {
            "game": NAME,
            "counts": [len(s) for s in self._stacks],
            "pile": cards_text(self._pile),
            "turn": None if self._over else self._turn,
            "cards_played": self._cards_played,
            "tricks": self._tricks,
            "out": list(self._out),
            "over": self._over,
            "winners": None if self._winners is None else list(self._winners),
            "challenge": None if self._challenge is None else self._challenge.to_json(),
        }

    def stack(self, seat: int) -> list[Card | None]:
        """Seat ``seat``'s stack, top first (``None`` for faces not seen): for simulation and
        tests, never for a seat's display."""
        return list(self._stacks[seat])

    hand = stack

    def holder(self, card: Card) -> int | None:
        """The seat whose known stack has ``card`` on top, if any."""
        return top_holder(self._stacks, card)

    def next_deadline(self) -> int | None:
        """When a running time limit ends the game (the clock starts at the first input)."""
        if self._over or self._limit_ns is None or self._start_t is None:
            return None
        return self._start_t + self._limit_ns

    def legal_inputs(self, t: int) -> list[Input]:
        """The one ``lay`` of the seat to act (its card when the face is known), as things stand
        at ``t``: none when over, or when a running time limit has run out by ``t``."""
        if self._done_by(t):
            return []
        return [Input(t=t, seat=self._turn, act="lay", card=self._stacks[self._turn][0])]

    def lay_input(self, t: int) -> Input | None:
        """The one input :meth:`legal_inputs` offers at ``t``, or ``None`` when it offers none."""
        if self._done_by(t):
            return None
        return Input(t, self._turn, "lay", card=self._stacks[self._turn][0])

    def lay_of(self, t: int) -> tuple[int, Card | None] | None:
        """The seat and the card of :meth:`lay_input` at ``t``, without building the input."""
        if self._done_by(t):
            return None
        return self._turn, self._stacks[self._turn][0]

    # ------------------------------------------------------------------------ internals

    def _done_by(self, t: int) -> bool:
        """Over, or over at ``t`` once time has passed to it (the time limit runs out at
        start + limit, as :meth:`advance` would find): a virtual player lays nothing then."""
        deadline = self.next_deadline()
        return self._over or (deadline is not None and max(t, self._last_t or t) >= deadline)

    def _clock(self, t: int) -> int:
        """Inputs never go back in time: an early ``t`` is judged at the last one seen."""
        if self._last_t is not None and t < self._last_t:
            t = self._last_t
        self._last_t = t
        return t

    def _check_time(self, t: int) -> list[Verdict]:
        if self._over or self._limit_ns is None or self._start_t is None:
            return []
        deadline = self._start_t + self._limit_ns
        if t < deadline:
            return []
        counts = [len(s) for s in self._stacks]
        most = max(counts)
        winners = [seat for seat, c in enumerate(counts) if c == most]
        self._end(winners)
        return [Verdict(deadline, "game_over", {"winners": winners, "reason": "time_limit"})]

    def _lay(self, t: int, seat: int, card: Card, emptied: bool) -> list[Verdict]:
        self._pile.append(card)
        self._cards_played += 1
        challenge = self._challenge
        if card.rank >= JACK:  # card.is_court
            return self._demand(t, seat, card.demand)
        if challenge is not None:
            challenge.owes -= 1
            if challenge.owes == 0:
                return self._collect(t, challenge.by, "challenge")
            if emptied:
                # §1.6 Decision: the payer ran out, so the last court card's player collects.
                return self._collect(t, challenge.by, "payment_failed")
            return []
        outs: list[Verdict] = []
        nxt = self._next_with_cards(t, seat, outs)
        if nxt is None:
            return self._last_player(t, seat, outs)
        self._turn = nxt
        return outs

    def _demand(self, t: int, by: int, owes: int) -> list[Verdict]:
        outs: list[Verdict] = []
        payer = self._next_with_cards(t, by, outs)
        if payer is None:
            return self._last_player(t, by, outs)
        self._challenge = Challenge(by=by, seat=payer, owes=owes)
        self._turn = payer
        return [Verdict(t, "challenge", {"by": by, "seat": payer, "owes": owes})] + outs

    def _next_with_cards(self, t: int, seat: int, outs: list[Verdict]) -> int | None:
        """The next seat clockwise in the game with cards; seats passed over with none go out."""
        n = self.n_seats
        for step in range(1, n):
            other = (seat + step) % n
            if not self._in[other]:
                continue
            if self._stacks[other]:
                return other
            outs.append(self._go_out(t, other))
        return None

    def _go_out(self, t: int, seat: int) -> Verdict:
        self._in[seat] = False
        self._out.append(seat)
        return Verdict(t, "out", {"seat": seat})

    def _take_pile(self, t: int, seat: int, reason: str) -> Verdict:
        cards = len(self._pile)
        # §1.5: the pile is turned over as a whole and put under the stack, so the card laid
        # first ends up nearest the top of the collected cards.
        self._stacks[seat].extend(self._pile)
        self._pile.clear()
        self._tricks += 1
        self._challenge = None
        self._turn = seat  # §1.5 Decision: the collector leads the next pile.
        return Verdict(t, "pile_won", {"seat": seat, "reason": reason, "cards": cards})

    def _collect(self, t: int, seat: int, reason: str) -> list[Verdict]:
        verdicts = [self._take_pile(t, seat, reason)]
        n = self.n_seats
        for step in range(1, n):
            other = (seat + step) % n
            if self._in[other] and not self._stacks[other]:
                verdicts.append(self._go_out(t, other))
        if len(self._stacks[seat]) == self._total or sum(self._in) == 1:
            verdicts.append(self._game_over(t, [seat]))
        return verdicts

    def _last_player(self, t: int, seat: int, outs: list[Verdict]) -> list[Verdict]:
        won = self._take_pile(t, seat, "last_player")
        return [won] + outs + [self._game_over(t, [seat])]

    def _game_over(self, t: int, winners: list[int]) -> Verdict:
        self._end(winners)
        return Verdict(t, "game_over", {"winners": list(winners)})

    def _end(self, winners: list[int]) -> None:
        self._over = True
        self._winners = list(winners)
        self._challenge = None


# ------------------------------------------------------------------ record notation solver

_NOTATION_VALUES = {"A": 4, "K": 3, "Q": 2, "J": 1, "-": 0}
_DIGITS = "23456789"
_COURT_TEXT = {0: "-", 1: "J", 2: "Q", 3: "K", 4: "A"}
_ZERO = b"\x00"


def parse_notation(text: str) -> list[int]:
    """Read one player's stack, top card first: ``A K Q J`` are 4 3 2 1, a number card is 0.

    A number card is ``-`` or any number rank ``2``..``10`` (``10`` is one card, ``T`` too);
    spaces are ignored; lower case is accepted. Anything else raises :class:`DealError` naming the
    character and its position.
    """
    if not isinstance(text, str):
        raise DealError(f"a hand in record notation is text, got {text!r}")
    out: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i].upper()
        if ch.isspace():
            i += 1
            continue
        if ch in _NOTATION_VALUES:
            out.append(_NOTATION_VALUES[ch])
        elif ch in _DIGITS or ch == "T":
            out.append(0)
        elif ch == "1" and i + 1 < n and text[i + 1] == "0":
            out.append(0)
            i += 1
        else:
            raise DealError(
                f"not a card in record notation: {text[i]!r} at position {i + 1} of "
                f"{shown(text)} "
                "(use A K Q J for court cards, - or 2..10 for number cards)"
            )
        i += 1
    return out


def notation_text(values: list[int] | bytes) -> str:
    """The inverse of :func:`parse_notation`: ``-`` for number cards, ``J Q K A`` for courts."""
    return "".join(_COURT_TEXT[v] for v in values)


def notation_deal(hand1: str, hand2: str) -> tuple[PileDeal, int]:
    """Real cards for a notation deal, for the engine: ``(deal, dealer)`` with player 1 at seat 0.

    Court cards get the suits in order (``AC``, ``AD`` …), number cards run ``2C``..``10S``; the
    dealer is seat 1, so seat 0 (player 1) leads. Raises :class:`DealError` when a deck has too few
    cards of a kind (more than four of a court rank, or more than 36 number cards).
    """
    pools: dict[int, list[Card]] = {
        4: [Card(ACE, s) for s in SUITS], 3: [Card(KING, s) for s in SUITS],
        2: [Card(QUEEN, s) for s in SUITS], 1: [Card(JACK, s) for s in SUITS],
        0: [Card(r, s) for s in SUITS for r in range(2, 11)],
    }
    stacks: list[tuple[Card, ...]] = []
    for hand in (hand1, hand2):
        stack = []
        for value in parse_notation(hand):
            if not pools[value]:
                raise DealError(f"one deck has no more {_COURT_TEXT[value]!r} cards for {hand!r}")
            stack.append(pools[value].pop(0))
        stacks.append(tuple(stack))
    return PileDeal(stacks=tuple(stacks)), 1


def _pay_table() -> dict[bytes, tuple[int, bytes, int] | None]:
    """What a payer's next cards (as many as owed, at most 4) do, for every such run of cards.

    None when they are all number cards (the payment is made, or fails if fewer than owed);
    otherwise (cards laid up to and including the first court card, those cards, its demand).
    """
    table: dict[bytes, tuple[int, bytes, int] | None] = {}
    for n in range(5):
        for combo in product(range(5), repeat=n):
            seg = bytes(combo)
            table[seg] = next(((i + 1, seg[:i + 1], c) for i, c in enumerate(seg) if c), None)
    return table


_PAY = _pay_table()
# _OPENING[5 * k + c]: a pile of k number cards and then a court card of demand c; big enough
# for 52 cards in play (k < 2 * 52).
_OPENING_MAX = 52
_OPENING = [bytes(k) + bytes([c]) for k in range(2 * _OPENING_MAX) for c in range(5)]


#: The most cards two notation hands may hold: twenty packs. Play keeps every position of the
#: game, each as long as the hands, so memory grows with the square of it (12 000 cards took
#: 1.5 GB and then ended in a MemoryError).
MAX_NOTATION_CARDS = 1040


def _solve(
    a: bytes, b: bytes, max_cards: int | None
) -> tuple[dict[str, Any], tuple[bytes, bytes, int]]:
    """Play a notation deal trick by trick (``a`` leads); also returns the final position.

    A stack is a ``bytes`` of demands (0 for a number card), top first, so that a position
    ``(leader's stack, other's stack, leader)`` is its own hash key, and runs of number cards are
    found and moved by C code: the number cards on top of a stack are
    ``len(s) - len(s.lstrip(b"\\0"))``. A payment looks its cards up in ``_PAY``.
    """
    cards = tricks = 0
    if len(a) + len(b) > MAX_NOTATION_CARDS:
        raise DealError(f"the hands hold {len(a) + len(b)} cards; at most "
                        f"{MAX_NOTATION_CARDS} (twenty packs) are played")
    if not a or not b:
        # Someone already holds every card: the game is over before it starts.
        if not a and not b:
            raise DealError("both hands are empty: there is no game")
        result = {"status": "finished", "cards": 0, "tricks": 0, "winner": 1 if not a else 0}
        return result, (a, b, 0)
    limit = (1 << 62) if max_cards is None else max_cards
    seen: set[tuple[bytes, bytes, int]] = set()
    seen_add = seen.add
    zero = _ZERO
    pay = _PAY
    total = len(a) + len(b)
    opening = _OPENING if total <= _OPENING_MAX else [
        bytes(k) + bytes([c]) for k in range(2 * total) for c in range(5)
    ]
    lead = 0  # the player (0 or 1) whose stack is ``a``
    while True:
        key = (a, b, lead)
        if key in seen:
            return {"status": "loop", "cards": cards, "tricks": tricks, "winner": None}, key
        seen_add(key)
        if cards >= limit:
            return {"status": "stopped", "cards": cards, "tricks": tricks, "winner": None}, key
        # The leader and the other lay alternately until a court card or a run-out.
        la = len(a)
        ia = la - len(a.lstrip(zero))  # the leader's first court card (la: none)
        lb = total - la
        ib = lb - len(b.lstrip(zero))
        if ia <= ib:
            if ia == la:
                # The leader's turn comes with no cards: the other takes the pile and wins.
                result = {"status": "finished", "cards": cards + 2 * la, "tricks": tricks + 1,
                          "winner": 1 - lead}
                return result, key
            owes = a[ia]
            pile = opening[10 * ia + owes]
            x, y = a[ia + 1:], b[ia:]  # x laid the last court card, y pays
            flip = 1  # 1 while x is the leader
        else:
            if ib == lb:
                # The other's turn comes with no cards: the leader takes the pile and wins.
                result = {"status": "finished", "cards": cards + 2 * lb + 1,
                          "tricks": tricks + 1, "winner": lead}
                return result, key
            owes = b[ib]
            pile = opening[10 * ib + 5 + owes]
            x, y = b[ib + 1:], a[ib + 1:]
            flip = 0
        # Payments, passing back and forth while court cards turn up.
        while True:
            seg = y[:owes]
            step = pay[seg]
            if step is None:
                break
            laid, chunk, owes = step
            pile += chunk
            x, y = y[laid:], x
            flip ^= 1
        # All number cards: paid in full, or the payer ran out (payment failed, §1.6).
        pile += seg
        y = y[owes:]
        x += pile  # the pile, turned over, under the collector's stack (§1.5)
        cards += len(pile)
        tricks += 1
        if not flip:
            lead ^= 1
        if not y:
            return {"status": "finished", "cards": cards, "tricks": tricks, "winner": lead}, key
        a, b = x, y


def play_notation(hand1: str, hand2: str, max_cards: int | None = None) -> dict[str, Any]:
    """Play a two-player deal in record notation; player 1 (``hand1``, index 0) leads.

    Returns ``{"status", "cards", "tricks", "winner"}``: ``finished`` with the cards laid, the
    piles collected (the last one included) and the winner (0 or 1); or ``loop`` when the
    position at the start of a trick (who leads, both stacks, number cards alike) repeats an
    earlier one, with the counts at which the repeat was found and winner ``None``. With
    ``max_cards``, play stops at the first trick start with at least that many cards laid and the
    status is ``stopped`` (winner ``None``).
    """
    a = bytes(parse_notation(hand1))
    b = bytes(parse_notation(hand2))
    return _solve(a, b, max_cards)[0]


def notation_cycle(hand1: str, hand2: str) -> dict[str, int] | None:
    """For a deal that never ends: the cycle's length in cards and tricks, and where it starts.

    Returns ``{"cards", "tricks", "start_cards", "start_tricks"}`` (the period, and the counts
    when the repeated position was first met), or ``None`` if the game finishes.
    """
    result, (a, b, _) = _solve(bytes(parse_notation(hand1)), bytes(parse_notation(hand2)), None)
    if result["status"] != "loop":
        return None
    # Played from the repeated position (its leader's stack first), the first repeat is that
    # very position again, one period later.
    period, _ = _solve(a, b, None)
    return {
        "cards": period["cards"],
        "tricks": period["tricks"],
        "start_cards": result["cards"] - period["cards"],
        "start_tricks": result["tricks"] - period["tricks"],
    }


#: Beggar My Neighbour as the registry knows it (docs/rules.md §1).
GAME = Game(
    name=NAME,
    title="Beggar My Neighbour",
    min_seats=2,
    max_seats=4,
    options=BeggarOptions,
    engine=BeggarMyNeighbour,
    deal_kind="pile",
    acts=("lay",),
    counts=dealing_counts,
    turn_button="slap",
)
