"""The table as a rich renderable: what a person looking up at a screen needs to see."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from referee.cards import SUIT_SYMBOLS, parse_card
from referee.describe import describe

GAME_TITLES = {
    "beggar-my-neighbour": "Beggar My Neighbour",
    "banka-bever": "Banka bäver",
    "vandatta": "Vändåtta",
}


def card_label(text: str | None) -> Text:
    """A card as ``Q♥`` in red or black; ``▒▒`` for a face-down card."""
    if text is None:
        return Text("▒▒", style="dim")
    card = parse_card(text)
    rank = str(card)[:-1]
    style = "bold red" if card.suit in "DH" else "bold"
    return Text(rank + SUIT_SYMBOLS[card.suit], style=style)


def render_table(state: dict[str, Any], recent: Sequence[dict[str, Any]],
                 status: str = "online") -> Panel:
    """The whole table: seats with counts and turn, the pile, the challenge, last verdicts."""
    seats = state.get("seats") or [f"seat {i}" for i in range(len(state.get("counts", [])))]
    grid = RichTable(expand=True, show_edge=False)
    grid.add_column("Seat")
    grid.add_column("Cards", justify="right")
    grid.add_column("")
    out = set(state.get("out") or [])
    challenge = state.get("challenge") or {}
    totals = state.get("totals")
    for i, name in enumerate(seats):
        notes = []
        if state.get("turn") == i:
            notes.append("[bold green]◀ to play[/]")
        if state.get("must_draw") == i:
            notes.append("[yellow]must draw[/]")
        if challenge and challenge.get("seat") == i:
            notes.append(f"[yellow]owes {challenge.get('owes')}[/]")
        if i in out:
            notes.append("[dim]out[/]")
        if totals:
            notes.append(f"total {totals[i]}")
        grid.add_row(name, str(state.get("counts", [0] * len(seats))[i]), " ".join(notes))
    pile = state.get("pile") or []
    line = Text("Pile: ")
    for card in pile[-6:]:
        line += card_label(card) + Text(" ")
    line += Text(f"({len(pile)} cards)", style="dim")
    parts: list[Any] = [grid, line]
    if state.get("bottom") is not None or state.get("game") == "banka-bever":
        parts.append(Text("Bottom card: ") + card_label(state.get("bottom")))
    current = state.get("current")
    if current:
        parts.append(Text(f"To match: {current.get('rank')} or {current.get('suit')}"))
    if challenge:
        parts.append(Text(
            f"{seats[challenge['by']]} challenges: {seats[challenge['seat']]} owes "
            f"{challenge['owes']}", style="yellow"))
    if state.get("winners"):
        parts.append(Text("Winner: " + " and ".join(seats[w] for w in state["winners"]),
                          style="bold green"))
    for v in recent[-6:]:
        parts.append(Text("• " + describe(v, seats)))
    title = GAME_TITLES.get(state.get("game", ""), state.get("game", "table"))
    if status == "offline":
        title += " — referee offline"
    return Panel(Group(*parts), title=title, subtitle=status)
