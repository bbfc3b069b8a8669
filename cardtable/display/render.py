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
from cardtable.display.scene import GAME_TITLES, play_words, scene, table_alerts
from cardtable.display.standings import draw_standings
from referee.cards import SUIT_SYMBOLS, parse_card

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
) -> RenderableType:
    """The whole table as one rich renderable, from the retained state, the recent verdicts
    (oldest first) and the ``status`` text: :func:`draw` of their
    :func:`~cardtable.display.scene.scene`. Pure: same input, same picture."""
    return draw(scene(state, events, status, table_id=table_id, connected=connected,
                      error=error, problem=problem, last_play=last_play))


def draw(sc: Mapping[str, Any]) -> RenderableType:
    """A scene as one rich renderable."""
    parts: list[RenderableType] = [Text(f" {b['text']} ", style=BANNER_STYLES.get(b["kind"],
                                                                                 "bold"))
                                   for b in sc["banners"]]
    where = f"table {sc['table']}" if sc["table"] else "table"
    if sc["waiting"]:
        parts.append(Text("Waiting for the referee…", style="dim"))
        return Panel(Group(*parts), title=where, subtitle=sc["status"] and sc["subtitle"]
                     or "no status yet")
    title = f"{sc['title']} · {where}"
    if sc["round"] is not None:
        title += f" · round {sc['round']}"
    dim = " dim" if sc["stale"] else ""

    head = sc["headline"]
    if head and head["kind"] == "winner":
        who = " and ".join(head["names"])
        parts.append(Text(f"WINNER: {who}" if len(head["names"]) == 1 else f"SHARED WIN: {who}",
                          style="bold green" + dim))
    elif head and head["kind"] == "turn":
        parts.append(Text.assemble(("Turn: ", "bold"), (head["names"][0], "bold green" + dim)))
    elif head:
        parts.append(Text("Game over", style="bold"))

    pile = sc["pile"]
    line = Text.assemble(("Pile: ", "bold"))
    line += _cards(pile["cards"]) if pile["count"] else Text("empty  ", style="dim")
    line += Text(f"({pile['count']} card{'s' * (pile['count'] != 1)})", style="dim")
    if sc["bottom"] is not None:
        line += Text("   Bottom card: ", style="bold")
        card = sc["bottom"]["card"]
        line += card_label(card) if card else Text("none", style="dim")
    parts.append(line)
    match = sc["match"]
    if match:
        extra = Text.assemble(("Play on: ", "bold"), (f"{match['rank']} or ", "bold"))
        extra += suit_label(match["suit"])
        if match["stock"] is not None:
            extra += Text(f"   Stock: {match['stock']} cards")
        parts.append(extra)
    play = sc["last_play"]
    if play:
        text = Text.assemble(("Last play: ", "bold"), play_words(play))
        if play.get("cards"):
            text += Text(" ") + _cards(play["cards"], mark_top=False)
            if play.get("as"):
                text += Text("as ") + card_label(play["as"])
        parts.append(text)
    for notice in sc["notices"]:
        parts.append(Text(notice["text"], style="bold yellow" if notice["kind"] == "challenge"
                          else "yellow"))
    race = draw_race(sc.get("race"))  # display/race.py
    if race is not None:
        parts.append(race)

    grid = RichTable(show_edge=False, pad_edge=False)
    grid.add_column("Seat")
    grid.add_column("Cards", justify="right")
    points = any(seat["total"] is not None for seat in sc["seats"])
    if points:
        grid.add_column("Points", justify="right")
    grid.add_column("")
    for seat in sc["seats"]:
        notes = (["◀ to play"] if seat["turn"] else []) + seat["notes"]
        row = [seat["name"], "?" if seat["count"] is None else str(seat["count"])]
        if points:
            row.append("" if seat["total"] is None else str(seat["total"]))
        row.append(" · ".join(notes))
        grid.add_row(*row, style="dim" if seat["out"] else ("bold" if seat["turn"] else None))
    parts.append(grid)

    if sc["out"]:
        parts.append(Text("Out: " + ", ".join(sc["out"])))
    if sc["round_result"]:
        parts.append(Text(sc["round_result"], style="cyan"))
    if sc["verdicts"]:
        parts.append(Text("Last verdicts:", style="bold"))
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
