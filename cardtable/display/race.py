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

from cardtable.i18n import ENGLISH_LANGUAGE, Language
from referee.cards import SUIT_SYMBOLS
from referee.describe import N_, seat_name
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


def race_scene(race: Race | None, names: Sequence[str],
               lang: Language = ENGLISH_LANGUAGE) -> dict[str, Any] | None:
    """The scene's ``race``: ``line`` (the race as one line of text), ``card`` (what opened
    it: ``5S``, None when not known), ``opened`` (``lay``, ``burn``, ``seen``, None before the
    first lay), ``slaps`` (``seat``, ``name``, ``kind``, ``offset_ns``, ``offset`` in words,
    ``margin_ns``, ``margin`` in words), ``winner`` (a name), ``reason``, ``tie``,
    ``ruling``, ``explanation``, ``deciding`` (the deciding margin in words),
    ``photo_finish``, ``timed`` (False: the verdicts had no timing fields), ``words`` (the
    page's words of this race: ``head``, ``opened``, each slap kind's ``marks``, ``margin``,
    ``photo``, ``later``); None without a race."""
    if race is None:
        return None
    o = race.opening
    slaps = []
    for s in race.slaps:
        slaps.append({
            "seat": s.seat, "name": seat_name(names, s.seat, lang), "kind": s.kind,
            "offset_ns": s.offset_ns,
            "offset": None if s.offset_ns is None else ms_text(s.offset_ns),
            "margin_ns": s.margin_ns,
            "margin": None if s.margin_ns is None else margin_text(s.margin_ns),
        })
    deciding = race.deciding_margin_ns
    winner = None if race.winner is None else seat_name(names, race.winner, lang)
    reason = REASONS.get(str(race.reason))
    if race.ruling == "won":
        head = [lang.gettext("{name} won").format(name=winner)]
        if reason:
            head.append(lang.gettext(reason))
        if race.tie:
            head.append(lang.gettext("tie rule"))
        if deciding is not None:
            head.append(lang.gettext("by {margin}").format(
                margin=margin_text(deciding, sign=False)))
    elif race.ruling == "false_slap":
        head = [lang.gettext("false slap: nothing to slap")]
    else:
        head = [lang.gettext("refused")]
    return {
        "line": race_line(race, names, lang),
        "card": None if o is None else o.card,
        "opened": None if o is None else o.how,
        "slaps": slaps,
        "winner": winner,
        "reason": race.reason, "tie": race.tie, "ruling": race.ruling,
        "explanation": race.explanation(names, lang),
        "deciding": None if deciding is None else margin_text(deciding, sign=False),
        "photo_finish": race.photo_finish, "timed": race.timed,
        "words": {
            "head": lang.gettext("Race · {why}").format(why=" · ".join(head)),
            "opened": lang.gettext(OPENED["burn" if o is not None and o.how == "burn"
                                          else "lay"]),
            "a_card": lang.gettext("a card"),
            "marks": {k: lang.gettext(v) for k, v in MARKS.items()},
            "margin": lang.gettext("margin"),
            "photo": lang.gettext("Photo finish"),
            "later": lang.gettext("later: {names}"),
            "later_count": lang.gettext("{n} later"),
        },
    }


#: How a pile was won by a slap (a race's ``reason``), in words.
REASONS = {"double": N_("double"), "bottom_match": N_("bottom match")}
#: How a race opened: ``{card}`` laid or burned.
OPENED = {"lay": N_("{card} laid"), "burn": N_("{card} burned")}
#: Each kind of slap's mark on the line.
MARKS = {"won": N_("WON"), "false": N_("false slap"), "refused": N_("refused")}


def race_line(race: Race, names: Sequence[str], lang: Language = ENGLISH_LANGUAGE) -> str:
    """One line: ``Race: 5S laid · Cia +212.400 ms WON · Bo +212.900 ms (+500 µs) · double ·
    photo finish``."""
    o = race.opening
    if o is None:
        parts = [lang.gettext("Race: before the first lay") if race.timed
                 else lang.gettext("Race")]
    else:
        opened = lang.gettext(OPENED["burn" if o.how == "burn" else "lay"]).format(
            card=o.card or lang.gettext("a card"))
        parts = [lang.gettext("Race: {what}").format(what=opened)]
    for s in race.slaps:
        part = seat_name(names, s.seat, lang)
        if s.offset_ns is not None:
            part += f" {ms_text(s.offset_ns)}"
        if s.kind in MARKS:
            part += " " + lang.gettext(MARKS[s.kind])
        if s.kind == "lost" and s.margin_ns is not None:
            part += f" ({margin_text(s.margin_ns)})"
        parts.append(part)
    if race.ruling == "won":
        why = REASONS.get(str(race.reason or ""))
        if why:
            parts.append(lang.gettext("{why}, tie rule").format(why=lang.gettext(why))
                         if race.tie else lang.gettext(why))
        else:
            parts.append(lang.gettext("won earlier"))
    elif race.ruling == "false_slap":
        parts.append(lang.gettext("nothing to slap"))
    if race.photo_finish:
        parts.append(lang.gettext("photo finish"))
    return " · ".join(parts)


def timing_scene(state: Mapping[str, Any] | None,
                 lang: Language = ENGLISH_LANGUAGE) -> dict[str, Any] | None:
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
        "title": lang.gettext("Slap statistics"),
        "columns": [lang.gettext(c) for c in COLUMNS],
        "rows": [{"name": r["name"], "slaps": count(r["slaps"]), "wins": count(r["wins"]),
                  "false_slaps": count(r["false_slaps"]), "races_lost": count(r["races_lost"]),
                  "missed": count(r["missed"]), "median": ms(r["median_reaction_ns"]),
                  "best": ms(r["best_reaction_ns"])} for r in rows],
    }


#: The statistics' column headings.
COLUMNS = (N_("Seat"), N_("Slaps"), N_("Won"), N_("False"), N_("Lost"), N_("Missed"),
           N_("Median"), N_("Best"))


def draw_race(race: Mapping[str, Any] | None,
              lang: Language = ENGLISH_LANGUAGE) -> Text | None:
    """The scene's ``race`` as one terminal line (the photo finish stands out)."""
    if not race:
        return None
    words = str(race["line"])
    card = race.get("card")
    if isinstance(card, str) and card[-1:] in SUIT_SYMBOLS:
        head = words.split(" · ")[0]
        if f" {card} " in f"{head} ":  # 5♠, as the pile shows it
            shown = card[:-1] + SUIT_SYMBOLS[card[-1]]
            words = f"{head} ".replace(f" {card} ", f" {shown} ", 1).rstrip() + words[len(head):]
    line = Text(words, style="bold magenta")
    if race.get("photo_finish"):
        line.highlight_words([lang.gettext("photo finish")], style="bold black on yellow")
    return line


def draw_timing(timing: Mapping[str, Any] | None) -> RenderableType | None:
    """The scene's ``timing`` as a table (game end)."""
    if not timing:
        return None
    grid = RichTable(title=timing.get("title") or "Slap statistics", title_justify="left",
                     show_edge=False, pad_edge=False)
    for i, col in enumerate(timing["columns"]):
        grid.add_column(col, justify="left" if i == 0 else "right")
    for r in timing["rows"]:
        grid.add_row(r["name"], r["slaps"], r["wins"], r["false_slaps"], r["races_lost"],
                     r["missed"], r["median"], r["best"])
    return grid
