"""The evening's standings on a display: what the feed's retained ``history`` topic says
(:func:`cardtable.history.summary`), read defensively and turned into a part of the scene
that both displays draw — the wins per player and, in a Vändåtta points game, the round-by-round
table of hand scores and running totals.

:func:`read_history` checks a ``history`` payload (size, JSON, the types of what is drawn) and
never raises; :func:`standings_scene` is the scene's ``standings`` key; :func:`draw_standings`
draws it in the terminal (the web page's ``web/standings.js`` draws the same dict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from cardtable.display.check import MAX_PAYLOAD, Unreadable, read_json
from cardtable.i18n import ENGLISH_LANGUAGE, Language

#: Rounds of a points game a display shows (the latest ones; the totals are running).
ROUNDS_SHOWN = 8


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _items(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def read_history(payload: bytes, max_payload: int = MAX_PAYLOAD) -> dict[str, Any] | None:
    """A ``history`` payload as a dict, or None when it cannot be read (too large, not JSON,
    not an object). What it holds is checked by :func:`standings_scene`."""
    try:
        obj = read_json(payload, max_payload)
    except Unreadable:
        return None
    return obj if isinstance(obj, dict) else None


def standings_scene(history: Mapping[str, Any] | None,
                    lang: Language = ENGLISH_LANGUAGE) -> dict[str, Any] | None:
    """The scene's ``standings``: ``games`` (finished games of the evening), ``players``
    (``name``, ``wins``, ``played``, ``shared``, ``text``), ``points`` (``seats``, ``rounds``:
    ``round``, ``winner`` and ``cells`` — ``"15 (40)"`` per seat, ``-`` for no hand — the
    ``totals``, ``over``, ``hidden``: rounds left out), ``words`` (``tonight``, ``caption``,
    ``round``, ``won_by``, ``earlier``, in ``lang``) — or None when there is nothing to show.
    Anything of the wrong type is left out, never an error."""
    if not isinstance(history, Mapping):
        return None
    table = history.get("standings")
    if not isinstance(table, Mapping):
        return None
    players = []
    for row in _items(table.get("players")):
        if not isinstance(row, Mapping) or not isinstance(row.get("name"), str):
            continue
        wins, played, shared = (_int(row.get(k)) or 0 for k in ("wins", "played", "shared"))
        text = lang.ngettext("{wins} win of {played}", "{wins} wins of {played}",
                             wins).format(wins=wins, played=played)
        if shared:
            text += " " + lang.gettext("({n} shared)").format(n=shared)
        players.append({"name": row["name"], "wins": wins, "played": played,
                        "shared": shared, "text": text})
    points = _points(table.get("points"), lang)
    games = _int(table.get("games")) or 0
    if not players and points is None:
        return None
    over = points is not None and points["over"]
    words = {"tonight": lang.ngettext("Tonight ({n} game): ", "Tonight ({n} games): ",
                                      games).format(n=games),
             "caption": lang.gettext("Points, round by round: hand (total)") if over else
             lang.gettext("Points, round by round: hand (total) so far"),
             "round": lang.gettext("Round"), "won_by": lang.gettext("Won by"),
             "earlier": lang.gettext("{n} earlier")}
    return {"games": games, "players": players, "points": points, "words": words}


def _points(points: Any, lang: Language) -> dict[str, Any] | None:
    if not isinstance(points, Mapping):
        return None
    seats = points.get("seats")
    if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
        return None
    rounds: list[dict[str, Any]] = []
    totals: list[int | None] = [None] * len(seats)
    for r in _items(points.get("rounds")):
        if not isinstance(r, Mapping):
            continue
        scores: list[Any] = r["scores"] if isinstance(r.get("scores"), list) else []
        tots: list[Any] = r["totals"] if isinstance(r.get("totals"), list) else []
        cells = []
        for i in range(len(seats)):
            score = _int(scores[i]) if i < len(scores) else None
            total = _int(tots[i]) if i < len(tots) else None
            if total is not None:
                totals[i] = total
            cells.append(("-" if score is None else str(score))
                         + ("" if total is None else f" ({total})"))
        winner = _int(r.get("winner"))
        rounds.append({"round": _int(r.get("round")) or len(rounds) + 1,
                       "winner": seats[winner] if winner is not None and winner < len(seats)
                       else lang.gettext("blocked"), "cells": cells})
    hidden = max(0, len(rounds) - ROUNDS_SHOWN)
    return {"seats": list(seats), "rounds": rounds[hidden:], "hidden": hidden,
            "totals": totals, "over": bool(points.get("over"))}


def draw_standings(sc: Mapping[str, Any] | None) -> RenderableType | None:
    """The terminal's drawing of a scene's ``standings`` (None: nothing to draw)."""
    if not sc:
        return None
    parts: list[RenderableType] = []
    words = sc["words"]
    if sc["players"]:
        line = Text.assemble((words["tonight"], "bold"))
        line += Text(" · ".join(f"{p['name']} {p['text']}" for p in sc["players"]))
        parts.append(line)
    points = sc["points"]
    if points is not None and points["rounds"]:
        grid = RichTable(title=words["caption"], title_justify="left",
                         show_edge=False, pad_edge=False)
        grid.add_column(words["round"], justify="right")
        grid.add_column(words["won_by"])
        for name in points["seats"]:
            grid.add_column(name, justify="right")
        if points["hidden"]:
            grid.add_row("…", words["earlier"].format(n=points["hidden"]),
                         *[""] * len(points["seats"]))
        for r in points["rounds"]:
            grid.add_row(str(r["round"]), r["winner"], *r["cells"])
        parts.append(grid)
    return Group(*parts) if parts else None
