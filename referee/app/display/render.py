"""The picture of a table: everything a display shows, drawn with rich as one renderable from
the state, the recent verdicts and the referee's status. Pure, so the terminal display and the
live view of ``referee simulate`` draw the same table the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from referee.cards import RANK_TEXT, SUIT_SYMBOLS, parse_card
from referee.describe import describe, seat_name, seat_names

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


def _cards(pile: Sequence[str | None], last: int) -> Text:
    shown = list(pile)[-last:]
    line = Text()
    for i, card in enumerate(shown):
        label = card_label(card)
        if i == len(shown) - 1:
            label.stylize("reverse")
        line += label + Text("  ")
    return line


def _match_text(current: Mapping[str, Any]) -> str:
    rank, suit = current.get("rank"), current.get("suit")
    rank_text = RANK_TEXT.get(rank, str(rank)) if isinstance(rank, int) else str(rank)
    suit_text = SUIT_SYMBOLS.get(str(suit), str(suit))
    return f"{rank_text} or {suit_text}"


def _latest_round(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    v: Mapping[str, Any]  # reversed() of a Sequence of Mapping[str, Any] is Any to mypy
    for v in reversed(events):
        if v.get("verdict") == "round_over":
            return v
    return None


def table_alerts(state: Mapping[str, Any] | None) -> list[str]:
    """What is wrong at the table right now, in words: paused, board offline, stuck buttons."""
    if not state:
        return []
    names = seat_names(state)
    alerts = state.get("alerts") or {}
    out = []
    if alerts.get("board") == "offline":
        out.append("TABLE BOARD OFFLINE: the game waits for it")
    if state.get("paused"):
        out.append("PAUSED by the referee")
    for stuck in alerts.get("stuck") or []:
        out.append(f"{seat_name(names, stuck.get('seat'))}'s {stuck.get('button')} button is "
                   "stuck: ignored until released")
    return out


def render(
    state: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    status: str | None,
    *,
    table_id: str | None = None,
    connected: bool = True,
) -> RenderableType:
    """The whole table as one rich renderable, from the retained state, the recent verdicts
    (oldest first) and the ``status`` text. Pure: same input, same picture."""
    parts: list[RenderableType] = []
    if not connected:
        parts.append(Text(" no connection to the broker: reconnecting… ", style="bold black on "
                          "yellow"))
    if status == "offline":
        parts.append(Text(" REFEREE OFFLINE: the last known state is shown ",
                          style="bold white on red"))
    for alert in table_alerts(state):
        parts.append(Text(f" {alert} ", style="bold black on yellow"))
    where = f"table {table_id}" if table_id else "table"
    if state is None:
        parts.append(Text("Waiting for the referee…", style="dim"))
        return Panel(Group(*parts), title=where, subtitle=status or "no status yet")

    names = seat_names(state)
    game = str(state.get("game") or "")
    title = f"{GAME_TITLES.get(game, game or 'game')} · {where}"
    if state.get("round") is not None:
        title += f" · round {state['round']}"

    winners = state.get("winners") or []
    if winners:
        who = " and ".join(seat_name(names, w) for w in winners)
        parts.append(Text(f"WINNER: {who}" if len(winners) == 1 else f"SHARED WIN: {who}",
                          style="bold green"))
    elif state.get("turn") is not None:
        parts.append(Text.assemble(("Turn: ", "bold"),
                                   (seat_name(names, state["turn"]), "bold green")))
    elif state.get("over"):
        parts.append(Text("Game over", style="bold"))

    pile = list(state.get("pile") or [])
    line = Text.assemble(("Pile: ", "bold"))
    line += _cards(pile, 5) if pile else Text("empty  ", style="dim")
    line += Text(f"({len(pile)} card{'s' * (len(pile) != 1)})", style="dim")
    if game == "banka-bever" or state.get("bottom") is not None:
        line += Text("   Bottom card: ", style="bold")
        line += card_label(state.get("bottom")) if state.get("bottom") else Text("none",
                                                                                 style="dim")
    parts.append(line)

    current = state.get("current")
    if isinstance(current, Mapping) and current:
        extra = Text.assemble(("Play on: ", "bold"), _match_text(current))
        if state.get("stock") is not None:
            extra += Text(f"   Stock: {state['stock']} cards")
        parts.append(extra)
    if state.get("must_draw") is not None:
        parts.append(Text(f"{seat_name(names, state['must_draw'])} must draw a card",
                          style="yellow"))

    challenge = state.get("challenge")
    if isinstance(challenge, Mapping) and challenge:
        owes = challenge.get("owes")
        parts.append(Text(
            f"Challenge: {seat_name(names, challenge.get('seat'))} owes {owes} more "
            f"card{'s' * (owes != 1)} to {seat_name(names, challenge.get('by'))}",
            style="bold yellow"))
    claim = state.get("claim")
    if isinstance(claim, Mapping) and claim:
        parts.append(Text(f"{seat_name(names, claim.get('seat'))} is collecting the pile "
                          f"({str(claim.get('reason', '')).replace('_', ' ')}): slap now or "
                          "never", style="yellow"))

    grid = RichTable(show_edge=False, pad_edge=False)
    grid.add_column("Seat")
    grid.add_column("Cards", justify="right")
    totals = state.get("totals")
    if totals:
        grid.add_column("Points", justify="right")
    grid.add_column("")
    counts = list(state.get("counts") or [])
    out = set(state.get("out") or [])
    for i, name in enumerate(names):
        notes: list[str] = []
        if state.get("turn") == i:
            notes.append("◀ to play")
        if isinstance(challenge, Mapping) and challenge and challenge.get("seat") == i:
            notes.append(f"owes {challenge.get('owes')}")
        if state.get("must_draw") == i:
            notes.append("must draw")
        if i in out:
            notes.append("OUT")
        if i in winners:
            notes.append("WINNER")
        row = [name, str(counts[i]) if i < len(counts) else "?"]
        if totals:
            row.append(str(totals[i]) if i < len(totals) else "")
        row.append(" · ".join(notes))
        grid.add_row(*row, style="dim" if i in out else ("bold" if state.get("turn") == i
                                                         else None))
    parts.append(grid)

    if out:
        parts.append(Text("Out: " + ", ".join(seat_name(names, s) for s in sorted(out))))
    last_round = _latest_round(events)
    if last_round is not None:
        scores = last_round.get("scores") or []
        head = ("Round blocked" if last_round.get("winner") is None
                else f"Round won by {seat_name(names, last_round.get('winner'))}")
        parts.append(Text(f"{head}. Scores: " + ", ".join(
            f"{seat_name(names, i)} {s}" for i, s in enumerate(scores)), style="cyan"))

    if events:
        parts.append(Text("Last verdicts:", style="bold"))
        for j, v in enumerate(reversed(list(events)[-6:])):
            words = v.get("text") or describe(dict(v), names)
            parts.append(Text(("» " if j == 0 else "  ") + str(words),
                              style="bold" if j == 0 else "dim"))
    subtitle = {"online": "referee online", "offline": "referee OFFLINE"}.get(
        status or "", "referee status unknown")
    return Panel(Group(*parts), title=title, subtitle=subtitle)
