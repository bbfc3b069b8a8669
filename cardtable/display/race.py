"""The latest slap race and the seats' slap statistics on a display (issue 11): a small model
fed from the feed's verdicts and states, the parts of the scene that both displays draw, and
the terminal's drawing of them (the web page's ``web/race.js`` draws the same dicts as an SVG
timeline and a table).

The feed sends no lays, only verdicts: :class:`RaceWatch` builds races with
:class:`referee.races.RaceTracker` from the slap verdicts' timing fields (each slap's
``reaction_ns`` names the moment the race opened) and takes the card that opened it from the
states it saw: for a false slap, the top card of its change's state; for a pile won by a slap,
the top card of the state just before that change, when that state holds exactly the cards
the pile had (``cards``) and shows the double or the bottom match. Otherwise the card is not
named ("a card laid"), never guessed.

Scene keys: ``race`` (:func:`race_scene`) and ``timing`` (:func:`timing_scene`, at game end).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from referee.cards import SUIT_SYMBOLS
from referee.describe import seat_name
from referee.races import (
    Race,
    RaceTracker,
    margin_text,
    ms_text,
    seat_statistics,
    with_card,
)

#: Races a display keeps (it shows the latest).
KEPT = 4
#: Verdicts a display remembers having taken (so that one sent again is not taken twice).
REMEMBERED = 256


def _rank(card: Any) -> str | None:
    return card[:-1] if isinstance(card, str) and len(card) >= 2 else None


def _won_top(pile: Sequence[Any], v: Mapping[str, Any]) -> str | None:
    """The top card of ``pile`` if it is the pile that ``v`` (a ``pile_won`` by slap) won."""
    if len(pile) != v.get("cards") or len(pile) < 2:
        return None
    top = pile[-1]
    if v.get("reason") == "double" and _rank(pile[-2]) == _rank(top) is not None:
        return str(top)
    if v.get("reason") == "bottom_match" and _rank(pile[0]) == _rank(top) is not None:
        return str(top)
    return None


class RaceWatch:
    """What a display knows of the slap races: fed every verdict (:meth:`on_verdict`) and state
    (:meth:`on_state`) it reads, in the order it reads them."""

    def __init__(self) -> None:
        self.tracker = RaceTracker(keep=KEPT)
        self._seen: deque[tuple[Any, ...]] = deque(maxlen=REMEMBERED)
        self._piles: dict[tuple[Any, Any], list[Any]] = {}  # (session, seq) -> pile

    @property
    def latest(self) -> Race | None:
        """The newest race, if any."""
        return self.tracker.latest

    def forget(self) -> None:
        """A new game: forget the races (the verdicts already taken stay taken)."""
        self.tracker = RaceTracker(keep=KEPT)
        self._piles.clear()

    def on_state(self, state: Mapping[str, Any]) -> None:
        """A checked state: its pile is kept (by ``session`` and ``seq``) for naming cards."""
        pile = state.get("pile")
        if isinstance(pile, list):
            self._piles[(state.get("session"), state.get("seq"))] = list(pile)
            while len(self._piles) > 8:
                del self._piles[next(iter(self._piles))]

    def on_verdict(self, v: Mapping[str, Any]) -> Race | None:
        """One checked verdict (each taken once, whatever its ``session``/``seq``); the race it
        joined, if it is a slap verdict."""
        key = (v.get("t"), v.get("verdict"), v.get("seat"), v.get("to"), v.get("reason"))
        if key in self._seen:
            return None
        self._seen.append(key)
        race = self.tracker.verdict(v)
        if race is None or race.opening is None or race.opening.card is not None:
            return race
        session, seq = v.get("session"), v.get("seq")
        if v.get("verdict") == "false_slap":
            pile = self._piles.get((session, seq)) or []
            return with_card(race, pile[-1] if pile and pile[-1] else None)
        if v.get("verdict") == "pile_won" and isinstance(seq, int):
            return with_card(race, _won_top(self._piles.get((session, seq - 1)) or [], v))
        return race

    def feed(self, events: Iterable[Mapping[str, Any]]) -> RaceWatch:
        """Take verdicts in order; returns itself."""
        for v in events:
            self.on_verdict(v)
        return self


def race_scene(race: Race | None, names: Sequence[str]) -> dict[str, Any] | None:
    """The scene's ``race``: ``line`` (the race as one line of text), ``card`` (what opened
    it: ``5S``, None when not known), ``opened`` (``lay``, ``burn``, ``seen``, None before the
    first lay), ``slaps`` (``seat``, ``name``, ``kind``, ``offset_ns``, ``offset`` in words,
    ``margin_ns``, ``margin`` in words), ``winner`` (a name), ``reason``, ``tie``,
    ``ruling``, ``explanation``, ``deciding`` (the deciding margin in words),
    ``photo_finish``, ``timed`` (False: the verdicts had no timing fields); None without a
    race."""
    if race is None:
        return None
    o = race.opening
    slaps = []
    for s in race.slaps:
        slaps.append({
            "seat": s.seat, "name": seat_name(names, s.seat), "kind": s.kind,
            "offset_ns": s.offset_ns,
            "offset": None if s.offset_ns is None else ms_text(s.offset_ns),
            "margin_ns": s.margin_ns,
            "margin": None if s.margin_ns is None else margin_text(s.margin_ns),
        })
    deciding = race.deciding_margin_ns
    return {
        "line": race_line(race, names),
        "card": None if o is None else o.card,
        "opened": None if o is None else o.how,
        "slaps": slaps,
        "winner": None if race.winner is None else seat_name(names, race.winner),
        "reason": race.reason, "tie": race.tie, "ruling": race.ruling,
        "explanation": race.explanation(names),
        "deciding": None if deciding is None else margin_text(deciding, sign=False),
        "photo_finish": race.photo_finish, "timed": race.timed,
    }


def race_line(race: Race, names: Sequence[str]) -> str:
    """One line: ``Race: 5S laid · Cia +212.400 ms WON · Bo +212.900 ms (+500 µs) · double ·
    photo finish``."""
    o = race.opening
    if o is None:
        parts = ["Race: before the first lay" if race.timed else "Race"]
    elif o.how == "burn":
        parts = [f"Race: {o.card} burned"]
    else:
        parts = [f"Race: {o.card or 'a card'} laid"]
    for s in race.slaps:
        part = seat_name(names, s.seat)
        if s.offset_ns is not None:
            part += f" {ms_text(s.offset_ns)}"
        part += {"won": " WON", "false": " false slap", "refused": " refused"}.get(s.kind, "")
        if s.kind == "lost" and s.margin_ns is not None:
            part += f" ({margin_text(s.margin_ns)})"
        parts.append(part)
    if race.ruling == "won":
        why = str(race.reason or "").replace("_", " ")
        parts.append(why + (", tie rule" if race.tie else "") if why else "won earlier")
    elif race.ruling == "false_slap":
        parts.append("nothing to slap")
    if race.photo_finish:
        parts.append("photo finish")
    return " · ".join(parts)


def timing_scene(state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The scene's ``timing``, at game end only: ``rows`` (``name`` and each statistic in words:
    ``slaps``, ``wins``, ``false_slaps``, ``races_lost``, ``missed``, ``median``, ``best``)
    and ``columns`` (their headings); None before the end or without statistics."""
    if not state or not state.get("over"):
        return None
    rows = seat_statistics(state)
    if not rows:
        return None

    def count(x: Any) -> str:
        return "-" if x is None else str(x)

    def ms(x: Any) -> str:
        return "-" if x is None else ms_text(x, sign=False)

    return {
        "columns": ["Seat", "Slaps", "Won", "False", "Lost", "Missed", "Median", "Best"],
        "rows": [{"name": r["name"], "slaps": count(r["slaps"]), "wins": count(r["wins"]),
                  "false_slaps": count(r["false_slaps"]), "races_lost": count(r["races_lost"]),
                  "missed": count(r["missed"]), "median": ms(r["median_reaction_ns"]),
                  "best": ms(r["best_reaction_ns"])} for r in rows],
    }


def draw_race(race: Mapping[str, Any] | None) -> Text | None:
    """The scene's ``race`` as one terminal line (the photo finish stands out)."""
    if not race:
        return None
    words = str(race["line"])
    card = race.get("card")
    if isinstance(card, str) and card[-1:] in SUIT_SYMBOLS and words.startswith(f"Race: {card} "):
        shown = card[:-1] + SUIT_SYMBOLS[card[-1]]  # 5♠, as the pile shows it
        words = f"Race: {shown} " + words[len(f"Race: {card} "):]
    line = Text(words, style="bold magenta")
    if race.get("photo_finish"):
        line.highlight_words(["photo finish"], style="bold black on yellow")
    return line


def draw_timing(timing: Mapping[str, Any] | None) -> RenderableType | None:
    """The scene's ``timing`` as a table (game end)."""
    if not timing:
        return None
    grid = RichTable(title="Slap statistics", title_justify="left", show_edge=False,
                     pad_edge=False)
    for i, col in enumerate(timing["columns"]):
        grid.add_column(col, justify="left" if i == 0 else "right")
    for r in timing["rows"]:
        grid.add_row(r["name"], r["slaps"], r["wins"], r["false_slaps"], r["races_lost"],
                     r["missed"], r["median"], r["best"])
    return grid
