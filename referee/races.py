"""Slap races (issue 11): who slapped when, by how much the winner won, and why, read from
Banka bäver's slap verdicts and their timing fields (``reaction_ns``, ``margin_ns``, ``tie``:
:data:`referee.model.TIMING_FIELDS`).

**What a race is.** Every slap verdict (``pile_won`` by ``double`` or ``bottom_match``,
``slap_lost``, ``false_slap``) carries ``reaction_ns``, the time from its *reference* to the
slap's edge: for a slap on a slappable pile, the card that made it slappable; for a false slap,
the last lay. A race is the slaps that share one reference, the card that *opened* it:

* a **won race**: the card made the pile slappable (a lay making a double or a bottom match,
  or a card burned under the pile that made the bottom match); its slaps are the winning one,
  those that lost to it in the same instant (the tie rule) or later, before the next lay;
* a **false-slap race**: slaps on a pile that could not be won, judged between one lay (the
  reference) and the next (or the burn that made the pile slappable); all are false;
* the slaps before the first lay (``reaction_ns`` null) make a race with no opening.

A race therefore never mixes false slaps with a won pile: false slaps before a burn that made
the pile slappable belong to the lay's race, the slaps after it to the burn's. Slaps that the
referee refused (``illegal``: the seat holds no cards or is out) carry no timing; when the
caller knows them (:func:`journal_races` does, from the journal's slap inputs) they join the
race of the latest opening at or before them as ``refused``.

Each slap of a race: its seat and edge ``t``; ``offset_ns`` from the opening; ``reaction_ns``;
``margin_ns``, its edge minus the winner's (the verdict's own, so negative when a declared
``slap_resolution_us`` made an earlier slap a tie that went the other way); its ``kind``
(``won``, ``lost``, ``false``, ``refused``). The ruling: the winner and the ``reason``
(``double``, ``bottom_match``), ``tie`` when the clockwise tie rule decided it; the deciding
margin, from the winner to the runner-up (the nearest slap that lost to it, by absolute
margin), and ``photo_finish`` when that margin is under 1 ms (:data:`PHOTO_FINISH_NS`).

Pure (standard library, no clock): :class:`RaceTracker` is fed verdict lines one at a time (a
display does this with the verdicts of the feed, which knows no lays: its openings then have
the reference time only); :func:`journal_races` gives every race of a journal, with the lays
(seat and card) that opened them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.describe import ENGLISH, Translator, join_names, seat_name
from referee.games import game
from referee.journal import Journal
from referee.model import Verdict, judging_key

#: A race decided by less than this (winner to runner-up) is a photo finish.
PHOTO_FINISH_NS = 1_000_000

#: The ``pile_won`` reasons of a pile won by a slap.
SLAP_REASONS = ("double", "bottom_match")

#: The refusal codes a slap can get (and a lay cannot, or only when the slap would too).
SLAP_REFUSALS = ("no_cards", "out_of_game")


@dataclass(frozen=True)
class Opening:
    """The card that opened a race: at ``t``, laid (``how`` ``lay``) or burned under the pile
    (``burn``) by ``seat``; ``card`` as ``5S``. ``how`` ``seen``: known only from the slaps'
    reaction times (a display of the feed), so ``seat`` and maybe ``card`` are unknown."""

    t: int
    seat: int | None
    card: str | None
    how: str = "lay"

    def to_json(self) -> dict[str, Any]:
        """``t``, ``seat``, ``card``, ``how``."""
        return {"t": self.t, "seat": self.seat, "card": self.card, "how": self.how}


@dataclass(frozen=True)
class RaceSlap:
    """One slap of a race (see the module notes for each field)."""

    seat: int
    t: int
    kind: str  # won, lost, false, refused
    offset_ns: int | None = None
    reaction_ns: int | None = None
    margin_ns: int | None = None
    code: str | None = None  # the refusal code of a refused slap
    burned: str | None = None  # the card a false slap burned under the pile

    def to_json(self) -> dict[str, Any]:
        """Every field; ``code`` only for a refused slap, ``burned`` only for a burn."""
        out: dict[str, Any] = {"seat": self.seat, "t": self.t, "kind": self.kind,
                               "offset_ns": self.offset_ns, "reaction_ns": self.reaction_ns,
                               "margin_ns": self.margin_ns}
        if self.code is not None:
            out["code"] = self.code
        if self.burned is not None:
            out["burned"] = self.burned
        return out


@dataclass
class Race:
    """One slap race: its ``opening`` (None: before the first lay), its slaps in the order of
    their edges (equal edges in judging order: the winner of a tie first), and the ruling."""

    opening: Opening | None
    slaps: list[RaceSlap] = field(default_factory=list)
    winner: int | None = None
    reason: str | None = None
    tie: bool = False
    #: The winning slap's edge, when known: from its verdict, or (a display that missed that
    #: verdict knows the winner from ``slap_lost.to``) from a lost slap's edge and margin.
    winner_t: int | None = None
    key: int | None = None  # the reference time the slaps share
    #: False: the verdicts had no timing fields (a referee from before them), so the race's
    #: opening and the offsets are not known.
    timed: bool = True

    @property
    def ruling(self) -> str:
        """``won`` (a slap took the pile), ``false_slap`` (no slap could), ``refused`` (only
        refused slaps)."""
        if self.winner is not None:
            return "won"
        if any(s.kind == "false" for s in self.slaps):
            return "false_slap"
        return "refused"

    @property
    def deciding_margin_ns(self) -> int | None:
        """Winner to runner-up: the smallest absolute margin of the slaps that lost."""
        margins = [abs(s.margin_ns) for s in self.slaps
                   if s.kind == "lost" and s.margin_ns is not None]
        return min(margins) if self.winner is not None and margins else None

    @property
    def photo_finish(self) -> bool:
        """Decided by less than :data:`PHOTO_FINISH_NS`."""
        margin = self.deciding_margin_ns
        return margin is not None and margin < PHOTO_FINISH_NS

    def _add(self, slap: RaceSlap) -> None:
        i = len(self.slaps)
        while i and self.slaps[i - 1].t > slap.t:
            i -= 1
        self.slaps.insert(i, slap)

    def explanation(self, names: Sequence[str] = (), tr: Translator = ENGLISH) -> str:
        """The ruling and its reason in words (in ``tr``'s language)."""
        who = seat_name(names, self.winner, tr) if self.winner is not None else ""
        if self.ruling == "won":
            if self.reason == "double":
                head = tr.gettext("{name} wins the pile (a double)").format(name=who)
            elif self.reason == "bottom_match":
                head = tr.gettext("{name} wins the pile (the bottom card matched)").format(
                    name=who)
            elif self.reason:
                head = tr.gettext("{name} wins the pile").format(name=who)
            else:
                head = tr.gettext("{name} had won the pile").format(name=who)
            lost = [s for s in self.slaps if s.kind == "lost"]
            if self.tie:
                others = join_names([seat_name(names, s.seat, tr) for s in lost
                                     if s.margin_ns is not None
                                     and abs(s.margin_ns) == self.deciding_margin_ns], tr
                                    ) or tr.gettext("another seat")
                apart = self.deciding_margin_ns or 0
                when = (tr.gettext("at the same nanosecond") if apart == 0 else
                        tr.gettext("{margin} apart, within the table's slap_resolution_us"
                                   ).format(margin=margin_text(apart, sign=False)))
                return tr.gettext("{head} by the tie rule: {name} and {others} slapped in the "
                                  "same instant ({when}); it goes to the seat first clockwise "
                                  "from the seat to lay").format(head=head, name=who,
                                                                 others=others, when=when)
            if not any(s.kind == "won" for s in self.slaps):
                return tr.gettext("{head}; these slaps came too late").format(head=head)
            if not lost:
                return tr.gettext("{head}: the only slap").format(head=head)
            runner = min((s for s in lost if s.margin_ns is not None),
                         key=lambda s: abs(s.margin_ns or 0), default=None)
            if runner is None or self.deciding_margin_ns is None:
                return tr.gettext("{head}: first slap").format(head=head)
            return tr.gettext("{head}: first slap, {margin} ahead of {name}").format(
                head=head, margin=margin_text(self.deciding_margin_ns, sign=False),
                name=seat_name(names, runner.seat, tr))
        if self.ruling == "false_slap":
            burns = "".join("; " + tr.gettext("{name} burned {card}").format(
                name=seat_name(names, s.seat, tr), card=s.burned)
                for s in self.slaps if s.burned)
            return tr.gettext("false slap: the pile could not be won (no double, no bottom "
                              "match)") + burns
        codes = {s.code for s in self.slaps}
        if codes == {"no_cards"}:
            return tr.gettext("refused: the seat holds no cards")
        if codes == {"out_of_game"}:
            return tr.gettext("refused: the seat is out of the game")
        return tr.gettext("refused: the seat may not slap")

    def to_json(self, names: Sequence[str] = ()) -> dict[str, Any]:
        """The race as one JSON object: ``opening``, ``slaps``, ``winner``, ``reason``,
        ``tie``, ``ruling``, ``deciding_margin_ns``, ``photo_finish``, ``explanation`` (in
        words, with ``names``), ``timed``."""
        return {
            "opening": None if self.opening is None else self.opening.to_json(),
            "slaps": [s.to_json() for s in self.slaps],
            "winner": self.winner, "reason": self.reason, "tie": self.tie,
            "ruling": self.ruling, "deciding_margin_ns": self.deciding_margin_ns,
            "photo_finish": self.photo_finish, "explanation": self.explanation(names),
            "timed": self.timed,
        }


_NONE = object()  # the key of "no reference known" (a feed without timing fields)


class RaceTracker:
    """Builds races from verdict lines (``Verdict.to_json()`` dicts, as the feed sends them)
    fed in judging order; ``races`` holds them oldest first, ``latest`` the newest."""

    def __init__(self, openings: Iterable[Opening] = (), *, keep: int | None = None) -> None:
        """``openings``: lays known beforehand (a journal's); ``keep``: how many races to
        keep (None: all)."""
        self.races: list[Race] = []
        self._keep = keep
        self._lays: dict[int, Opening] = {}
        self._burns: dict[int, Opening] = {}
        for o in openings:
            self._lays[o.t] = o
        self._times = sorted(self._lays)

    @property
    def latest(self) -> Race | None:
        """The newest race, if any."""
        return self.races[-1] if self.races else None

    def _opening(self, ref: int) -> Opening:
        return self._burns.get(ref) or self._lays.get(ref) or Opening(ref, None, None, "seen")

    def _race(self, key: Any) -> Race:
        for race in reversed(self.races[-4:]):
            if race.timed and key is not _NONE and race.key == key:
                return race
        opening = None if key is None or key is _NONE else self._opening(key)
        race = Race(opening, key=key if isinstance(key, int) else None, timed=key is not _NONE)
        self.races.append(race)
        if self._keep is not None and len(self.races) > self._keep:
            del self.races[0]
        return race

    def verdict(self, v: Mapping[str, Any]) -> Race | None:
        """Take one verdict line; the race it joined (None: not a slap verdict). A refusal
        (``illegal``) is not taken here: see :meth:`refused`."""
        kind = v.get("verdict")
        if kind == "pile_won" and v.get("reason") not in SLAP_REASONS:
            return None
        if kind not in ("pile_won", "slap_lost", "false_slap"):
            return None
        t, seat = v.get("t"), v.get("seat")
        if not isinstance(t, int) or not isinstance(seat, int):
            return None
        reaction = v.get("reaction_ns")
        reaction = reaction if isinstance(reaction, int) else None
        key: Any = t - reaction if reaction is not None else (
            None if "reaction_ns" in v else _NONE)
        latest = self.latest
        if key is _NONE and latest is not None and not latest.timed and (
                (kind == "slap_lost" and latest.winner == v.get("to"))
                or (kind == "false_slap" and latest.ruling == "false_slap")):
            race = latest  # no timing fields: a late slap joins the race it lost
        else:
            race = self._race(key)
        offset = None if race.opening is None else t - race.opening.t
        margin = v.get("margin_ns")
        margin = margin if isinstance(margin, int) else None
        if kind == "pile_won":
            race.winner, race.reason, race.winner_t = seat, str(v.get("reason")), t
            race.tie = v.get("tie") is True
            race._add(RaceSlap(seat, t, "won", offset, reaction, None))
        elif kind == "slap_lost":
            to = v.get("to")
            if race.winner is None and isinstance(to, int):
                race.winner = to
                race.winner_t = None if margin is None else t - margin
            race._add(RaceSlap(seat, t, "lost", offset, reaction, margin))
        else:
            card = v.get("card")
            burned = card if isinstance(card, str) else None
            race._add(RaceSlap(seat, t, "false", offset, reaction, None, burned=burned))
            if burned is not None:  # a burn: it may open a race of its own
                self._burns[t] = Opening(t, seat, burned, "burn")
        return race

    def refused(self, v: Mapping[str, Any]) -> Race | None:
        """Take an ``illegal`` verdict of a *slap* (the caller knows it was one): it joins the
        race of the latest known opening at or before it (None: no opening known)."""
        t, seat = v.get("t"), v.get("seat")
        if not isinstance(t, int) or not isinstance(seat, int):
            return None
        i = bisect.bisect_right(self._times, t)
        known = [self._times[i - 1]] if i else []
        known += [b for b in self._burns if b <= t]
        if not known:
            return None
        race = self._race(max(known))
        offset = None if race.opening is None else t - race.opening.t
        race._add(RaceSlap(seat, t, "refused", offset, code=str(v.get("code"))))
        return race


def journal_openings(journal: Journal, *, finish: bool = True
                     ) -> tuple[list[Opening], list[Verdict]]:
    """Every lay a Banka bäver journal's engine accepted (seat, card, ``t``), and the verdicts:
    the journal judged input by input in judging order, as :func:`referee.replay` judges it
    (``finish``: then the end of the input, as there)."""
    header = journal.header.resolved()
    engine = game(header.game).new_engine(header.n_seats, header.dealer, header.options,
                                          header.deal)
    order = sorted(enumerate(journal.inputs), key=lambda p: judging_key(p[1], p[0]))
    openings: list[Opening] = []
    verdicts: list[Verdict] = []
    played = 0
    for _, inp in order:
        verdicts += engine.apply(inp)
        if inp.act == "lay":
            state = engine.state()
            if state["cards_played"] > played:
                played = state["cards_played"]
                pile = state["pile"]
                openings.append(Opening(inp.t, inp.seat, pile[-1] if pile else None))
    if finish:
        verdicts += engine.finish()
    return openings, verdicts


def races(verdicts: Iterable[Mapping[str, Any]], openings: Iterable[Opening] = (),
          slap_keys: Iterable[tuple[int, int]] = ()) -> list[Race]:
    """The races of verdict lines in judging order; ``openings``: the accepted lays;
    ``slap_keys``: ``(t, seat)`` of the slap inputs, so that their refusals join the races."""
    tracker = RaceTracker(openings)
    slaps = set(slap_keys)
    for v in verdicts:
        if (v.get("verdict") == "illegal" and (v.get("t"), v.get("seat")) in slaps
                and v.get("code") in SLAP_REFUSALS):
            tracker.refused(v)
        else:
            tracker.verdict(v)
    return tracker.races


def journal_races(journal: Journal, *, finish: bool = True) -> list[Race]:
    """Every slap race of a journal (none for a game without slaps), each with the lay that
    opened it; ``finish`` as :func:`referee.replay`'s (False for a journal cut short)."""
    if journal.header.game != "banka-bever":
        return []
    openings, verdicts = journal_openings(journal, finish=finish)
    lays = {(o.t, o.seat) for o in openings}
    slap_keys = [(i.t, i.seat) for i in journal.inputs if i.act == "slap"]
    return races((v.to_json() for v in verdicts), openings,
                 [k for k in slap_keys if k not in lays])


def with_card(race: Race, card: str | None) -> Race:
    """The race with its opening's card filled in (a display that knows it from the state)."""
    if race.opening is None or race.opening.card is not None or card is None:
        return race
    race.opening = replace(race.opening, card=card)
    return race


# -- words and figures ------------------------------------------------------------------------

def ms_text(ns: int, *, sign: bool = True) -> str:
    """Nanoseconds as milliseconds with microsecond precision: ``+212.400 ms``."""
    us = (abs(ns) + 500) // 1000
    head = ("-" if ns < 0 else "+") if sign else ("-" if ns < 0 else "")
    return f"{head}{us // 1000}.{us % 1000:03d} ms"


def margin_text(ns: int, *, sign: bool = True) -> str:
    """A margin: in microseconds under 1 ms (``+500 µs``, ``+0.4 µs``), else as
    :func:`ms_text`."""
    if abs(ns) >= 1_000_000:
        return ms_text(ns, sign=sign)
    head = ("-" if ns < 0 else "+") if sign else ("-" if ns < 0 else "")
    n = abs(ns)
    body = f"{n // 1000}" if n % 1000 == 0 else f"{n / 1000:.3f}".rstrip("0")
    return f"{head}{body} µs"


#: The per-seat statistics of ``state["timing"]``, in the order they are shown.
STAT_KEYS = ("slaps", "wins", "false_slaps", "races_lost", "missed", "median_reaction_ns",
             "best_reaction_ns")


def seat_statistics(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``state["timing"]`` (Banka bäver) as rows: ``seat``, ``name`` and every
    :data:`STAT_KEYS` (a value that is not a whole number is None); empty without timing."""
    timing = state.get("timing")
    if not isinstance(timing, list):
        return []
    names = state.get("seats") if isinstance(state.get("seats"), list) else []
    rows = []
    for i, t in enumerate(timing):
        if not isinstance(t, dict):
            continue
        row: dict[str, Any] = {"seat": i, "name": seat_name(names or [], i)}
        for k in STAT_KEYS:
            value = t.get(k)
            row[k] = value if isinstance(value, int) and not isinstance(value, bool) else None
        rows.append(row)
    return rows
