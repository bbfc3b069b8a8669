"""Banka bäver (docs/rules.md §2): the slap game as a pure state machine.

The engine has no clock, no I/O and no randomness: time is the ``t`` (ns) of each input, and the
cards come from the deal (known mode) or from the ``card`` of each ``lay`` (observed mode, where
the stacks start as ``None`` cards by ``GAME.seat_counts``).

How the engine reads the points of docs/rules.md §2 that need a reading (each is pinned by a test in
``tests/referee/games/test_banka_bever.py``):

* **Slaps at the same instant.** The tie rule (clockwise from the seat whose turn it is) needs
  every slap of one instant before any of them can be judged, but inputs come one at a time. So a
  slap is *held* and judged, with every other slap of its instant, as soon as the engine knows no
  further slap can share that instant: at the next input with a later ``t``, at ``advance(t)``
  with a later ``t``, at ``finish()``, or (out of judging order) before a lay at the same ``t``.
  Its verdicts carry the slap's own ``t`` and come first in the list that call returns. A slap
  refused because the game is over is refused at once. An *instant* is one ``t`` exactly
  (docs/rules.md §2), or, with the table option ``slap_resolution_us`` = R > 0 (this referee's
  addition, for stamps whose real resolution is coarser than a nanosecond: docs/timing.md),
  every slap less than R µs after the first valid slap of the group (a slap refused, ``no_cards``
  or ``out_of_game``, opens no instant); the group is judged against the pile as it was at its
  first slap.
* **Timing of each slap** (docs/timing.md): ``reaction_ns`` (from the card that made the pile
  slappable, or the last lay), ``margin_ns`` of a lost race (from the winning edge), ``tie`` on a
  pile won by the tie rule; ``state()["timing"]`` counts each seat's slaps, wins, false slaps,
  lost races and missed chances (a chance: from the card that made the pile slappable until the
  next lay or the pile taken, for the seats then allowed to slap; one that did not slap missed
  it). They never change a ruling: the golden replays strip them and still match.
* **Judging a group.** All slaps of one instant are judged against the pile as it was at that
  instant. If the pile can be won, the first seat in tie order allowed to slap wins (verdict
  first); every other slap of the instant lost the race (``slap_lost``, or its refusal), in tie
  order. Otherwise each is a false slap, in tie order (burns happen in that order).
* **Claim and slap at the same instant.** A claim is final *at* the end of its grace; a slap with
  exactly that ``t`` comes after it (so with ``collect_grace_ms=0`` a slap at the instant of the
  last payment card is too late: the claim, like a lay, comes first at an equal instant). A
  valid slap before the end of the grace whose instant (with ``slap_resolution_us``) runs past
  it is judged first: the claim waits for the instant to end.
* **Payment fails at once** (nobody else holds cards when a court card is laid): the layer claims
  the pile with reason ``payment_failed``, with the usual collect grace.
* **Running out by a burn.** A payer who burns their last card fails the payment (docs/rules.md). A
  seat whose turn it is to lay (no challenge, no claim) and who burns their last card has its turn
  with no cards: it goes out at once (with ``slap_back_in`` it is skipped) and the turn passes on.
* **Who goes out, in what order.** After a pile is won, every other seat still in and holding no
  cards goes out, clockwise from the winner. ``last_player``: the verdicts keep docs/rules.md's
  order (pile won, then players out, then game over): the last seat's ``pile_won`` (reason
  ``last_player``, only if the pile holds cards) comes before the ``out`` of the seats whose turn
  came with no cards (in the order the turn reached them), then ``game_over``.
* **``slap_back_in`` with nobody holding cards.** With the option on nobody is ever out, so a seat
  that lays (or burns) the last card held at the table would leave nobody able to lay: that seat
  takes the pile (reason ``last_player``) and, holding every card, wins.
* **A slap by a seat with no cards** is refused (``no_cards``) even right after a slap win, where
  a slap by a seat with cards would get ``slap_lost``.
* **Observed mode.** The leftover pile's bottom card is shown to the players, not to the referee:
  its face is unknown (``bottom`` null), so a bottom-match slap cannot be recognised until a new
  pile starts with a laid card (or a burn of a known card makes it the bottom); such a slap is
  judged false. A lay whose card the referee has not seen must carry the card
  (``card_required``). When the referee knows what a card must be (the deal, or a face learned
  earlier and collected since), a different reported card is a ``desync``, and so is a reported
  card the referee knows to be elsewhere (``expected`` null).
* A claimant's lay that the referee refuses (``card_required``, ``desync``) does not make the
  claim final: the claimant did not lay.
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from typing import Any

from referee.cards import JACK, Card, card_text, cards_text
from referee.deal import PileDeal, top_holder
from referee.describe import refuse
from referee.engine import Game
from referee.errors import DealError, OptionError
from referee.model import Input, Verdict
from referee.options import BankaOptions

NAME = "banka-bever"


class _Chance:
    """A slap chance: opened at ``t`` by the card that made the pile slappable, for the seats
    then allowed to slap; ``slapped``: who slapped before it closed."""

    __slots__ = ("t", "eligible", "slapped")

    def __init__(self, t: int, eligible: frozenset[int]) -> None:
        self.t = t
        self.eligible = eligible
        self.slapped: set[int] = set()

    def copy(self) -> _Chance:
        twin = _Chance(self.t, self.eligible)
        twin.slapped = set(self.slapped)
        return twin


class _SeatTiming:
    """One seat's slaps: counts and the reaction times of its slaps on a chance (kept in
    order)."""

    __slots__ = ("slaps", "wins", "false_slaps", "races_lost", "missed", "reactions")

    def __init__(self) -> None:
        self.slaps = self.wins = self.false_slaps = self.races_lost = self.missed = 0
        self.reactions: list[int] = []

    def copy(self) -> _SeatTiming:
        twin = _SeatTiming()
        twin.slaps, twin.wins, twin.false_slaps = self.slaps, self.wins, self.false_slaps
        twin.races_lost, twin.missed = self.races_lost, self.missed
        twin.reactions = list(self.reactions)
        return twin

    def won(self, reaction: int | None) -> None:
        self.slaps += 1
        self.wins += 1
        if reaction is not None:
            insort(self.reactions, reaction)

    def lost(self, reaction: int | None) -> None:
        self.slaps += 1
        self.races_lost += 1
        if reaction is not None:
            insort(self.reactions, reaction)

    def false_slap(self) -> None:
        self.slaps += 1
        self.false_slaps += 1

    def to_json(self) -> dict[str, Any]:
        """``slaps`` (judged: won, lost or false), ``wins``, ``false_slaps``, ``races_lost``,
        ``missed`` (chances this seat could have slapped and let pass), and over the slaps on a
        chance (won or lost) ``median_reaction_ns`` (the lower middle for an even count) and
        ``best_reaction_ns``, null before the first."""
        ordered = self.reactions
        return {
            "slaps": self.slaps, "wins": self.wins, "false_slaps": self.false_slaps,
            "races_lost": self.races_lost, "missed": self.missed,
            "median_reaction_ns": ordered[(len(ordered) - 1) // 2] if ordered else None,
            "best_reaction_ns": ordered[0] if ordered else None,
        }


def dealing_counts(n: int) -> tuple[list[int], int]:
    """docs/rules.md §2: the same number of cards to every seat; the rest start the centre pile."""
    return [52 // n] * n, 52 % n

_NS_PER_MS = 1_000_000
_FOREVER = 1 << 62


class BankaBever:
    """The Banka bäver engine: ``apply`` inputs, ``advance`` time, read ``state()``."""

    game = NAME

    def __init__(
        self,
        n_seats: int,
        dealer: int,
        options: BankaOptions | None = None,
        deal: PileDeal | None = None,
    ) -> None:
        """Start a game: ``deal`` None is observed mode (stacks of unseen cards)."""
        GAME.check_seats(n_seats, dealer)
        options = BankaOptions() if options is None else options
        if not isinstance(options, BankaOptions):
            raise OptionError("options", "Banka bäver needs BankaOptions")
        self.n_seats = n_seats
        self.dealer = dealer
        self.options = options
        self._grace = options.collect_grace_ms * _NS_PER_MS
        self._burn = options.false_slap_penalty == "burn"
        self._back_in = options.slap_back_in
        self._bottom_match = options.bottom_match
        self._resolution = options.slap_resolution_us * 1_000

        stacks: list[list[Card | None]]
        pile: list[Card | None]
        if deal is None:
            counts, left = GAME.seat_counts(n_seats, dealer)
            stacks = [[None] * c for c in counts]
            pile = [None] * left
        else:
            if not isinstance(deal, PileDeal):
                raise DealError("Banka bäver is dealt a PileDeal (stacks per seat)")
            if len(deal.stacks) != n_seats:
                raise DealError(f"the deal has {len(deal.stacks)} stacks for {n_seats} seats")
            stacks = [list(s) for s in deal.stacks]
            pile = list(deal.pile)
            if any(not s for s in stacks):
                raise DealError("every seat must be dealt at least one card")
        every = [c for s in stacks for c in s if c is not None] + [c for c in pile if c]
        if len(set(every)) != len(every):
            raise DealError("the deal holds a card more than once")

        self._stacks: list[deque[Card | None]] = [deque(s) for s in stacks]
        self._pile: list[Card | None] = pile  # bottom first
        self._laid = 0  # cards laid face up by players: always the top of the pile
        self._known: set[Card] = set(every)
        self._total = sum(len(s) for s in stacks) + len(pile)
        self._out: set[int] = set()
        self._turn: int | None = (dealer + 1) % n_seats
        self._ch_by: int | None = None  # challenge: by whom; the payer is ``_turn``
        self._ch_owes = 0
        self._cl_seat: int | None = None  # claim after a challenge
        self._cl_reason = ""
        self._cl_until = 0
        self._slap_win: tuple[int, int] | None = None  # (seat, t) until the next lay
        #: (seat, t) of the slaps of one instant, waiting to be judged: from ``_group_t``, the
        #: first slap not refused (or, while there is none, the first slap), to
        #: :meth:`_group_end`.
        self._group: list[tuple[int, int]] = []
        self._group_t = 0
        self._group_valid = False
        self._lay_t: int | None = None  # the last lay
        self._chance: _Chance | None = None  # the slap chance open now, if any
        self._timing = [_SeatTiming() for _ in range(n_seats)]
        self._last_t = 0
        self._over = False
        self._winners: list[int] | None = None
        self.cards_played = 0
        self.tricks = 0

    # -- the Engine protocol ------------------------------------------------------------------
    @property
    def over(self) -> bool:
        """True once the game is decided."""
        return self._over

    @property
    def winners(self) -> list[int] | None:
        """The winning seat(s), once the game is over."""
        return None if self._winners is None else list(self._winners)

    def apply(self, inp: Input) -> list[Verdict]:
        """Judge one input (after letting time pass up to its ``t``)."""
        t = inp.t if inp.t >= self._last_t else self._last_t
        out: list[Verdict] = []
        if self._group or (self._cl_seat is not None and self._cl_until <= t):
            self._settle(t, out, group_at_t=False)  # (else it would find nothing to do)
        self._last_t = t
        seat = inp.seat
        if not 0 <= seat < self.n_seats:
            out.append(refuse(t, seat, "no_such_seat", "not_at_table", last=self.n_seats - 1))
            return out
        if inp.act == "slap":
            if self._over:
                out.append(refuse(t, seat, "game_over", "game_over"))
            else:
                if not self._group:
                    self._group_t, self._group_valid = t, False
                if not self._group_valid and self._slap_refusal(seat, t) is None:
                    # the race's first valid slap opens the instant: slaps less than the
                    # resolution after it share it (a refused slap opens none)
                    self._group_t, self._group_valid = t, True
                self._group.append((seat, t))
            return out
        if inp.act == "lay":
            if self._group:  # out of judging order: slaps at this instant were already given
                self._judge_slaps(out)
                if self._cl_seat is not None and self._cl_until <= t:
                    self._settle(t, out, group_at_t=False)  # a claim the slaps held back
            self._lay(inp, t, out)
            return out
        out.append(refuse(t, seat, "unknown_act", "act_not_banka", act=inp.act))
        return out

    def advance(self, t: int) -> list[Verdict]:
        """Let time pass up to and including ``t``: no input at or before ``t`` is still to come
        (the arbiter's horizon), so claims whose grace ended by ``t`` become final and held slaps
        up to ``t`` are judged."""
        out: list[Verdict] = []
        if t >= self._last_t:
            if self._group or (self._cl_seat is not None and self._cl_until <= t):
                self._settle(t, out, group_at_t=True)  # (else it would find nothing to do)
            self._last_t = t
        return out

    def finish(self) -> list[Verdict]:
        """The input has ended: judge held slaps and let a pending collect grace run out."""
        out: list[Verdict] = []
        self._settle(_FOREVER, out, group_at_t=True)
        return out

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot of the table (docs/engine-contract.md plus ``last_slap_win``,
        ``held_slaps``, the seats whose slaps wait for their instant to close, and ``timing``,
        each seat's slap statistics: :meth:`_SeatTiming.to_json`)."""
        challenge = None
        if self._ch_by is not None:
            challenge = {"by": self._ch_by, "seat": self._turn, "owes": self._ch_owes}
        claim = None
        if self._cl_seat is not None:
            claim = {"seat": self._cl_seat, "reason": self._cl_reason, "until": self._cl_until}
        slap_win = None
        if self._slap_win is not None:
            slap_win = {"seat": self._slap_win[0], "t": self._slap_win[1]}
        return {
            "game": NAME,
            "counts": [len(s) for s in self._stacks],
            "pile": cards_text(self._pile),
            "turn": self._turn,
            "cards_played": self.cards_played,
            "tricks": self.tricks,
            "out": sorted(self._out),
            "over": self._over,
            "winners": self.winners,
            "challenge": challenge,
            "bottom": card_text(self._pile[0]) if self._pile else None,
            "claim": claim,
            "last_slap_win": slap_win,
            "held_slaps": [seat for seat, _ in self._group],
            "timing": [timing.to_json() for timing in self._timing],
        }

    def legal_inputs(self, t: int) -> list[Input]:
        """The lay of the seat to act (with its card when the referee knows it) and a slap for
        every seat allowed to slap, as things stand at ``t``."""
        if self._group or (self._cl_seat is not None and self._cl_until <= t):
            probe = self._clone()
            probe._settle(max(t, self._last_t), [], group_at_t=True)
            return probe._legal(t)
        return self._legal(t)

    def lay_input(self, t: int) -> Input | None:
        """The lay :meth:`legal_inputs` offers at ``t`` (its first input, when that is a lay),
        or ``None`` when it offers none: the same answer without the slaps."""
        lay = self.lay_of(t)
        return None if lay is None else Input(t, lay[0], "lay", card=lay[1])

    def lay_of(self, t: int) -> tuple[int, Card | None] | None:
        """The seat and the card of :meth:`lay_input` at ``t``, without building the input."""
        if self._group or (self._cl_seat is not None and self._cl_until <= t):
            probe = self._clone()
            probe._settle(max(t, self._last_t), [], group_at_t=True)
            return probe._lay_of()
        return self._lay_of()

    # -- reading the table --------------------------------------------------------------------
    def stack(self, seat: int) -> list[Card | None]:
        """A seat's stack, top first (``None`` for unseen cards)."""
        return list(self._stacks[seat])

    hand = stack

    def holder(self, card: Card) -> int | None:
        """The seat whose known stack has ``card`` on top, if any."""
        return top_holder(self._stacks, card)

    def _group_end(self) -> int:
        """The last nanosecond of the held slaps' instant: less than the resolution after its
        first valid slap; while every slap is refused, that slap's own nanosecond."""
        if not self._group_valid:
            return self._group_t
        return self._group_t + max(0, self._resolution - 1)

    def next_deadline(self) -> int | None:
        """The end of a pending claim's collect grace (the claim becomes final once time has
        passed it), if a claim is pending; or, where held slaps from before it wait for their
        instant to end (``slap_resolution_us``), the end of that instant."""
        if self._over or self._cl_seat is None:
            return None
        if self._group and self._group_t < self._cl_until:
            return max(self._cl_until, self._group_end())
        return self._cl_until

    def pile(self) -> list[Card | None]:
        """The centre pile, bottom first."""
        return list(self._pile)

    def pile_ends(self) -> tuple[Card | None, Card | None, Card | None]:
        """What a player sees of a pile of two cards or more: its bottom card, the card under
        the top and the top card, as ``state()`` shows them (``None`` for a face not seen);
        all three ``None`` when the pile holds fewer than two cards."""
        pile = self._pile
        if len(pile) < 2:
            return None, None, None
        return pile[0], pile[-2], pile[-1]

    def slap_seats(self) -> list[int]:
        """The seats that ``state()`` shows may slap, in seat order: not out, and holding cards
        (or any seat not out with ``slap_back_in``). Held slaps are not judged first."""
        out = self._out
        if self._back_in:
            return [s for s in range(self.n_seats) if s not in out]
        return [s for s, stack in enumerate(self._stacks) if stack and s not in out]

    def slap_reason(self) -> str | None:
        """``double`` or ``bottom_match`` if a slap now would win the pile, else ``None``."""
        if self._laid == 0:
            return None
        pile = self._pile
        top = pile[-1]
        assert top is not None  # laid cards are always seen
        if self._laid >= 2 and pile[-2].rank == top.rank:  # type: ignore[union-attr]
            return "double"
        if self._bottom_match and len(pile) >= 2:
            bottom = pile[0]
            if bottom is not None and bottom.rank == top.rank:
                return "bottom_match"
        return None

    # -- internals ----------------------------------------------------------------------------
    def _clone(self) -> BankaBever:
        twin = object.__new__(BankaBever)
        twin.__dict__.update(self.__dict__)
        twin._stacks = [deque(s) for s in self._stacks]
        twin._pile = list(self._pile)
        twin._known = set(self._known)
        twin._out = set(self._out)
        twin._group = list(self._group)
        twin._timing = [timing.copy() for timing in self._timing]
        twin._chance = None if self._chance is None else self._chance.copy()
        return twin

    def _lay_of(self) -> tuple[int, Card | None] | None:
        if self._over:
            return None
        seat = self._turn
        if seat is not None and (self._cl_seat is None or not self._claim_would_end()):
            stack = self._stacks[seat]
            if stack:
                return seat, stack[0]
            if self._cl_seat == seat and self._pile:
                return seat, self._pile[0]
        return None

    def _legal(self, t: int) -> list[Input]:
        if self._over:
            return []
        lay = self._lay_of()
        res: list[Input] = [] if lay is None else [Input(t, lay[0], "lay", card=lay[1])]
        for s in range(self.n_seats):
            if s not in self._out and (self._stacks[s] or self._back_in):
                res.append(Input(t, s, "slap"))
        return res

    def _claim_would_end(self) -> bool:
        """A pending claim, once final, would leave the claimant alone with every card."""
        c = self._cl_seat
        if c is None:
            return False
        return all(not self._stacks[s] for s in range(self.n_seats)
                   if s != c and s not in self._out)

    def _settle(self, t: int, out: list[Verdict], *, group_at_t: bool) -> None:
        """Process, in time order, held slaps from before ``t`` (or at ``t``) and a claim whose
        grace ends by ``t``; at an equal instant the claim comes first."""
        while True:
            end = self._group_end()
            group = self._group and (end < t or (group_at_t and end <= t))
            claim = self._cl_seat is not None and self._cl_until <= t
            # held slaps from before a claim's end are judged first, once their instant is
            # over: a valid slap before the claim is final wins the pile instead
            if claim and (not self._group or self._cl_until <= self._group_t):
                self._finalize_claim(self._cl_until, out)
                if self._cl_until > self._last_t:
                    self._last_t = self._cl_until
            elif group:
                self._judge_slaps(out)
            else:
                return

    def _slap_refusal(self, seat: int, t: int) -> Verdict | None:
        if self._over:
            return refuse(t, seat, "game_over", "game_over")
        if seat in self._out:
            return refuse(t, seat, "out_of_game", "seat_out")
        if not self._stacks[seat] and not self._back_in:
            return refuse(t, seat, "no_cards", "no_cards_to_slap")
        return None

    def _judge_slaps(self, out: list[Verdict]) -> None:
        """Judge every held slap of one instant (see the module notes)."""
        n = self.n_seats
        base = self._turn if self._turn is not None else 0
        order = sorted(enumerate(self._group), key=lambda p: ((p[1][0] - base) % n, p[0]))
        self._group = []
        slaps = [slap for _, slap in order]  # (seat, t) in tie order
        if self._chance is not None:
            self._chance.slapped.update(seat for seat, _ in slaps)
        if not self._over and self._slap_win is None:
            reason = self.slap_reason()
            if reason is not None:
                refusals = [self._slap_refusal(s, t) for s, t in slaps]
                win = next((i for i, r in enumerate(refusals) if r is None), None)
                if win is not None:
                    winner, won_t = slaps[win]
                    rest = [slap for i, slap in enumerate(slaps) if i != win]
                    self._take_pile(winner, reason, won_t, out)
                    self._slap_win = (winner, won_t)
                    won = out[-1]
                    won.data["reaction_ns"] = self._reaction(won_t)
                    if rest:  # a tie: the others' slaps fell in the same instant
                        won.data["tie"] = True
                        won.data["margin_ns"] = min(abs(t - won_t) for s, t in rest)
                    self._timing[winner].won(won.data["reaction_ns"])
                    for i, (s, t) in enumerate(slaps):
                        if i != win:
                            out.append(refusals[i] or self._lost(s, winner, won_t, t))
                    self._after_win(winner, won_t, out)
                    return
        for s, t in slaps:
            refusal = self._slap_refusal(s, t)
            if refusal is not None:
                out.append(refusal)
            elif self._slap_win is not None:
                out.append(self._lost(s, *self._slap_win, t))
            else:
                self._false_slap(s, t, out)

    def _reaction(self, t: int) -> int | None:
        """The time from the card that made the pile slappable (or else the last lay) to ``t``."""
        since = self._chance.t if self._chance is not None else self._lay_t
        return None if since is None else t - since

    def _lost(self, seat: int, to: int, won_t: int, t: int) -> Verdict:
        reaction = self._reaction(t)
        self._timing[seat].lost(reaction)
        return Verdict(t, "slap_lost", {"seat": seat, "to": to, "margin_ns": t - won_t,
                                        "reaction_ns": reaction})

    def _open_chance(self, t: int) -> None:
        """After the pile changed: a slap chance opens if a slap would now win it."""
        if self._chance is None and self.slap_reason() is not None:
            eligible = frozenset(s for s in range(self.n_seats) if self._slap_refusal(s, t) is None)
            self._chance = _Chance(t, eligible)

    def _close_chance(self) -> None:
        """The chance is over (a lay, the pile taken, the end): who let it pass missed it."""
        chance, self._chance = self._chance, None
        if chance is None:
            return
        for seat in chance.eligible - chance.slapped:
            self._timing[seat].missed += 1

    def _false_slap(self, seat: int, t: int, out: list[Verdict]) -> None:
        data: dict[str, Any] = {"seat": seat}
        reaction = None if self._lay_t is None else t - self._lay_t
        self._timing[seat].false_slap()
        stack = self._stacks[seat]
        if not (self._burn and stack):
            data["reaction_ns"] = reaction
            out.append(Verdict(t, "false_slap", data))
            return
        card = stack.popleft()
        self._pile.insert(0, card)  # face up under the pile: the new bottom card
        if card is not None:
            data["card"] = str(card)
        data["reaction_ns"] = reaction
        out.append(Verdict(t, "false_slap", data))
        self._open_chance(t)  # the burned card may match the top
        if stack or self._cl_seat is not None or self._turn != seat:
            return
        if self._ch_by is not None:  # the payer burned their last card: the payment fails
            self._claim(self._ch_by, "payment_failed", t)
        else:  # their turn, and no card to lay
            self._give_turn(seat, t, out, origin=seat)

    def _lay(self, inp: Input, t: int, out: list[Verdict]) -> None:
        seat = inp.seat
        if self._over:
            out.append(refuse(t, seat, "game_over", "game_over"))
            return
        if seat in self._out:
            out.append(refuse(t, seat, "out_of_game", "seat_out"))
            return
        if seat != self._turn:
            why = ("collects_and_lays" if self._cl_seat is not None
                   else "owes_a_card" if self._ch_by is not None else "turn_of")
            out.append(refuse(t, seat, "not_your_turn", why, turn=self._turn))
            return
        claiming = self._cl_seat is not None
        stack = self._stacks[seat]
        if stack:
            expected = stack[0]
        elif claiming and self._pile:
            expected = self._pile[0]
        else:  # pragma: no cover - a seat to lay always holds a card
            out.append(refuse(t, seat, "no_cards", "no_cards"))
            return
        got = inp.card
        if expected is None:
            if got is None:
                out.append(refuse(t, seat, "card_required", "card_unseen"))
                return
            if got in self._known:
                out.append(Verdict(t, "desync", {"seat": seat, "expected": None, "got": str(got)}))
                return
        elif got is not None and got is not expected and got != expected:
            out.append(Verdict(t, "desync",
                               {"seat": seat, "expected": str(expected), "got": str(got)}))
            return
        if claiming:
            self._finalize_claim(t, out)
            if self.over:  # the property: the claim may have ended the game just now
                out.append(refuse(t, seat, "game_over", "claim_ended_game"))
                return
        card = stack.popleft()
        if card is None:
            card = got
            self._known.add(card)  # type: ignore[arg-type]
        assert card is not None
        if self._chance is not None:
            self._close_chance()
        self._pile.append(card)
        self._laid += 1
        self.cards_played += 1
        self._slap_win = None
        self._lay_t = t
        self._open_chance(t)
        court = card.rank >= JACK  # card.is_court
        if self._ch_by is not None:
            if court:
                self._start_challenge(seat, card, t, out)
            else:
                self._ch_owes -= 1
                if self._ch_owes == 0:
                    self._claim(self._ch_by, "challenge", t)
                elif not stack:
                    self._claim(self._ch_by, "payment_failed", t)
        elif court:
            self._start_challenge(seat, card, t, out)
        else:
            self._give_turn(self._next_in(seat), t, out, origin=seat)

    def _next_in(self, seat: int) -> int:
        n = self.n_seats
        for i in range(1, n):
            s = (seat + i) % n
            if s not in self._out:
                return s
        return seat

    def _next_with_cards(self, seat: int) -> int | None:
        n = self.n_seats
        for i in range(1, n):
            s = (seat + i) % n
            if self._stacks[s] and s not in self._out:
                return s
        return None

    def _start_challenge(self, seat: int, card: Card, t: int, out: list[Verdict]) -> None:
        payer = self._next_with_cards(seat)
        if payer is None:  # nobody else can pay: the payment fails at once
            self._claim(seat, "payment_failed", t)
            return
        self._ch_by = seat
        self._ch_owes = card.demand
        self._turn = payer
        out.append(Verdict(t, "challenge", {"by": seat, "seat": payer, "owes": card.demand}))

    def _claim(self, seat: int, reason: str, t: int) -> None:
        self._ch_by = None
        self._ch_owes = 0
        self._cl_seat = seat
        self._cl_reason = reason
        self._cl_until = t + self._grace
        self._turn = seat

    def _finalize_claim(self, t: int, out: list[Verdict]) -> None:
        seat = self._cl_seat
        assert seat is not None
        self._take_pile(seat, self._cl_reason, t, out)
        self._after_win(seat, t, out)

    def _take_pile(self, seat: int, reason: str, t: int, out: list[Verdict]) -> None:
        """The pile, turned over as a whole, goes under ``seat``'s stack (bottom card first)."""
        if reason not in ("double", "bottom_match"):  # a claim: the chance (if any) is gone
            self._close_chance()
        cards = len(self._pile)
        self._stacks[seat].extend(self._pile)
        self._pile = []
        self._laid = 0
        self.tricks += 1
        self._ch_by = None
        self._ch_owes = 0
        self._cl_seat = None
        self._cl_reason = ""
        self._turn = seat
        out.append(Verdict(t, "pile_won", {"seat": seat, "reason": reason, "cards": cards}))

    def _after_win(self, winner: int, t: int, out: list[Verdict]) -> None:
        """Seats holding no cards go out (clockwise from the winner); then maybe game over."""
        n = self.n_seats
        if self._back_in:
            if all(not self._stacks[s] for s in range(n) if s != winner):
                self._end(winner, t, out)
            return
        for i in range(1, n):
            s = (winner + i) % n
            if s not in self._out and not self._stacks[s]:
                self._out.add(s)
                out.append(Verdict(t, "out", {"seat": s}))
        if len(self._out) == n - 1:
            self._end(winner, t, out)

    def _give_turn(self, start: int, t: int, out: list[Verdict], *, origin: int) -> None:
        """The turn to lay comes to ``start``: a seat with no cards goes out (or, with
        ``slap_back_in``, is skipped) and the turn goes on clockwise."""
        n = self.n_seats
        if self._back_in:
            for i in range(n):
                s = (start + i) % n
                if self._stacks[s]:
                    self._turn = s
                    return
            self._take_pile(origin, "last_player", t, out)  # nobody holds a card
            self._end(origin, t, out)
            return
        seat = start
        outs: list[Verdict] = []
        while True:
            if self._stacks[seat]:
                self._turn = seat
                out.extend(outs)
                return
            self._out.add(seat)
            outs.append(Verdict(t, "out", {"seat": seat}))
            if len(self._out) == n - 1:
                # docs/rules.md §2: the pile is won, then players go out, then the game is over.
                last = next(s for s in range(n) if s not in self._out)
                if self._pile:
                    self._take_pile(last, "last_player", t, out)
                out.extend(outs)
                self._end(last, t, out)
                return
            seat = self._next_in(seat)

    def _end(self, winner: int, t: int, out: list[Verdict]) -> None:
        self._close_chance()
        self._over = True
        self._winners = [winner]
        self._turn = None
        self._ch_by = None
        self._ch_owes = 0
        self._cl_seat = None
        self._cl_reason = ""
        out.append(Verdict(t, "game_over", {"winners": [winner]}))


#: Banka bäver as the registry knows it (docs/rules.md §2).
GAME = Game(
    name=NAME,
    title="Banka bäver",
    min_seats=2,
    max_seats=8,
    options=BankaOptions,
    engine=BankaBever,
    deal_kind="pile",
    acts=("lay", "slap"),
    counts=dealing_counts,
    turn_button="call",
)
