"""The picture of a table in a terminal: a :mod:`scene <cardtable.display.scene>` drawn
with rich as one renderable. Pure, so the terminal display and the live view of ``referee
simulate`` draw the same table the same way (and the web page draws the same scene)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from cardtable.display.race import draw_race, draw_timing
from cardtable.display.scene import GAME_TITLES, scene, table_alerts
from cardtable.display.standings import draw_standings
from cardtable.i18n import ENGLISH_LANGUAGE, Language
from referee.cards import SUIT_SYMBOLS, parse_card
from referee.describe import join_names

__all__ = ["GAME_TITLES", "card_label", "draw", "render", "table_alerts"]

#: The banner style of each scene banner kind.
BANNER_STYLES = {"broker": "bold black on yellow", "unreadable": "bold white on dark_orange3",
                 "offline": "bold white on red", "alert": "bold black on yellow"}


def card_label(text: str | None) -> Text:
    """A card as ``Q♥`` in red or black; ``▒▒`` for a face-down card."""
    if text is None:
        return Text("▒▒", style="dim")
    card = parse_card(text)
    rank = str(card)[:-1]
    return Text(rank + SUIT_SYMBOLS[card.suit], style="bold red" if card.suit in "DH" else "bold")


def suit_label(suit: str | None) -> Text:
    """A suit symbol, red for hearts and diamonds."""
    if suit not in SUIT_SYMBOLS:
        return Text(str(suit))
    return Text(SUIT_SYMBOLS[suit], style="bold red" if suit in "DH" else "bold")


def _cards(shown: Sequence[str | None], *, mark_top: bool = True) -> Text:
    line = Text()
    for i, card in enumerate(shown):
        label = card_label(card)
        if mark_top and i == len(shown) - 1:
            label.stylize("reverse")
        line += label + Text("  " if mark_top else " ")
    return line


def render(
    state: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    status: str | None,
    *,
    table_id: str | None = None,
    connected: bool = True,
    error: str | None = None,
    problem: str | None = None,
    last_play: Mapping[str, Any] | None = None,
    lang: Language = ENGLISH_LANGUAGE,
) -> RenderableType:
    """The whole table as one rich renderable, from the retained state, the recent verdicts
    (oldest first) and the ``status`` text: :func:`draw` of their
    :func:`~cardtable.display.scene.scene`, in ``lang``. Pure: same input, same picture."""
    return draw(scene(state, events, status, table_id=table_id, connected=connected,
                      error=error, problem=problem, last_play=last_play, lang=lang), lang)


def _filled(template: str, **parts: Text) -> Text:
    """A template's words with rich texts (cards, a suit) where it has ``{name}``."""
    out = Text()
    rest = template
    while rest:
        at = min(((rest.find("{" + k + "}"), k) for k in parts if "{" + k + "}" in rest),
                 default=None)
        if at is None:
            out += Text(rest)
            break
        i, key = at
        out += Text(rest[:i])
        out += parts[key]
        rest = rest[i + len(key) + 2:]
    return out


def draw(sc: Mapping[str, Any], lang: Language = ENGLISH_LANGUAGE) -> RenderableType:
    """A scene as one rich renderable (its labels in ``lang``, the scene's language)."""
    parts: list[RenderableType] = [Text(f" {b['text']} ", style=BANNER_STYLES.get(b["kind"],
                                                                                 "bold"))
                                   for b in sc["banners"]]
    where = (lang.gettext("table {table}").format(table=sc["table"]) if sc["table"]
             else lang.gettext("table"))
    if sc["waiting"]:
        parts.append(Text(lang.gettext("Waiting for the referee…"), style="dim"))
        return Panel(Group(*parts), title=where, subtitle=sc["status"] and sc["subtitle"]
                     or lang.gettext("no status yet"))
    title = f"{sc['title']} · {where}"
    if sc["round"] is not None:
        title += " · " + lang.gettext("round {n}").format(n=sc["round"])
    dim = " dim" if sc["stale"] else ""

    head = sc["headline"]
    if head and head["kind"] == "winner":
        who = join_names(head["names"], lang)
        text = (lang.gettext("WINNER: {names}") if len(head["names"]) == 1
                else lang.gettext("SHARED WIN: {names}")).format(names=who)
        parts.append(Text(text, style="bold green" + dim))
    elif head and head["kind"] == "turn":
        parts.append(Text.assemble((lang.gettext("Turn: "), "bold"),
                                   (head["names"][0], "bold green" + dim)))
    elif head:
        parts.append(Text(sc["words"]["turn"], style="bold"))

    pile = sc["pile"]
    line = Text.assemble((lang.gettext("Pile: "), "bold"))
    line += (_cards(pile["cards"]) if pile["count"]
             else Text(lang.gettext("empty") + "  ", style="dim"))
    line += Text(f"({sc['words']['pile_count']})", style="dim")
    if sc["bottom"] is not None:
        line += Text("   " + lang.gettext("Bottom card: "), style="bold")
        card = sc["bottom"]["card"]
        line += card_label(card) if card else Text(lang.gettext("none"), style="dim")
    parts.append(line)
    match = sc["match"]
    if match:
        extra = _filled(sc["words"]["match"], suit=suit_label(match["suit"]))
        extra.stylize("bold")
        if match["stock"] is not None:
            extra += Text("   " + lang.ngettext("Stock: {n} card", "Stock: {n} cards",
                                                match["stock"]).format(n=match["stock"]))
        parts.append(extra)
    play = sc["last_play"]
    if play:
        cards = _cards(play.get("cards") or [], mark_top=False)
        cards.rstrip()
        said = _filled(sc["words"]["last_play"], cards=cards,
                       card=card_label(play["as"]) if play.get("as") else Text(""))
        label = lang.gettext("Last play: {play}").split("{play}")[0]
        said.stylize("bold", 0, len(label))
        parts.append(said)
    for notice in sc["notices"]:
        parts.append(Text(notice["text"], style="bold yellow" if notice["kind"] == "challenge"
                          else "yellow"))
    race = draw_race(sc.get("race"), lang)  # display/race.py
    if race is not None:
        parts.append(race)

    grid = RichTable(show_edge=False, pad_edge=False)
    grid.add_column(lang.gettext("Seat"))
    grid.add_column(lang.gettext("Cards"), justify="right")
    points = any(seat["total"] is not None for seat in sc["seats"])
    if points:
        grid.add_column(lang.gettext("Points"), justify="right")
    grid.add_column("")
    for seat in sc["seats"]:
        notes = (["◀ " + lang.gettext("to play")] if seat["turn"] else []) + seat["notes"]
        row = [seat["name"], "?" if seat["count"] is None else str(seat["count"])]
        if points:
            row.append("" if seat["total"] is None else str(seat["total"]))
        row.append(" · ".join(notes))
        grid.add_row(*row, style="dim" if seat["out"] else ("bold" if seat["turn"] else None))
    parts.append(grid)

    if sc["out"]:
        parts.append(Text(lang.gettext("Out: {names}").format(names=", ".join(sc["out"]))))
    if sc["round_result"]:
        parts.append(Text(sc["round_result"], style="cyan"))
    if sc["verdicts"]:
        parts.append(Text(lang.gettext("Last verdicts:"), style="bold"))
        for j, words in enumerate(sc["verdicts"][:6]):
            parts.append(Text(("» " if j == 0 else "  ") + words,
                              style="bold" if j == 0 else "dim"))
    timing = draw_timing(sc.get("timing"))
    if timing is not None:
        parts.append(timing)
    standings = draw_standings(sc.get("standings"))
    if standings is not None:
        parts.append(standings)
    return Panel(Group(*parts), title=title, subtitle=sc["subtitle"])
