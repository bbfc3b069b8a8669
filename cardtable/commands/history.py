"""``referee history``: every game played at a table, judged again from its journal folder,
and the evening's standings (:mod:`cardtable.history`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cardtable.commands.argtypes import path_name
from cardtable.config import load_config
from cardtable.errors import CommandError, ConfigError
from cardtable.history import GameRecord, History, read_history, standings
from referee.describe import counted
from referee.errors import visible
from referee.games import games
from referee.options import options_to_json


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s"


def _options_text(record: GameRecord) -> str:
    """The options that differ from the game's defaults, ``key=value``; ``-`` when none."""
    if record.game is None or record.game not in games:
        return ""
    defaults = options_to_json(games[record.game].parse_options({}))
    changed = [f"{k}={str(v).lower() if isinstance(v, bool) else v}"
               for k, v in record.options.items() if defaults.get(k) != v]
    return " ".join(changed) or "-"


def _result_text(record: GameRecord) -> str:
    if record.status == "unreadable":
        return "unreadable"
    if record.winners:
        return " and ".join(record.winner_names)
    return {"in progress": "(being played)", "ended": "(ended undecided)"}.get(
        record.status, "(no winner)")


def _tally_text(record: GameRecord) -> str:
    if record.status == "unreadable":
        return ""
    cards = counted(record.cards_played, "card")
    spec = games.get(record.game or "")
    tally = f"{cards}, {spec.tally_of(record.tricks) if spec else record.tricks}"
    if record.rounds and record.points_game:
        tally = f"{cards}, {counted(len(record.rounds), 'round')} scored"
    return tally


def history_text(history: History, now: float | None = None) -> str:
    """The history as lines for a terminal: one line per game, the files kept aside, the
    evening's standings and the round table of its latest points game."""
    lines = [f"Games at {history.journal_dir}: {len(history.games)} (each judged again from "
             "its journal)"]
    rows = [("#", "start", "time", "game", "options", "seats", "winner", "played", "file")]
    for n, g in enumerate(history.games, start=1):
        start = GameRecord.to_json(g)["start_text"].replace("T", " ")[:16] if g.end else "?"
        rows.append((str(n), start, _duration(g.duration_s), g.title if g.game else "?",
                     _options_text(g), ", ".join(g.seats), _result_text(g), _tally_text(g),
                     g.file))
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    for g in history.games:
        if g.problem:
            lines.append(visible(f"! {g.file}: {g.problem}"))
    for aside in history.set_aside:
        lines.append(visible(f"  {aside['file']}: {aside['why']}"))
    lines += standings_text(standings(history.evening(now)))
    return "\n".join(lines)


def standings_text(table: dict[str, Any]) -> list[str]:
    """The standings (:func:`cardtable.history.standings`) as lines."""
    if not table["games"] and table["points"] is None:
        return ["No finished game this evening."]
    lines = [f"Standings this evening ({table['games']} finished "
             f"game{'s' * (table['games'] != 1)}):"]
    for row in table["players"]:
        shared = f" ({row['shared']} shared)" if row["shared"] else ""
        lines.append(f"  {row['name']}: {row['wins']} win{'s' * (row['wins'] != 1)}{shared} "
                     f"of {row['played']}")
    points = table["points"]
    if points is not None:
        seats = points["seats"]
        state = "final" if points["over"] else "so far"
        lines.append(f"Points game ({points['file']}), round by round, hand score "
                     f"(running total), {state}:")
        head = ["round", "won by", *seats]
        body = []
        for r in points["rounds"]:
            winner = "blocked" if r["winner"] is None else seats[r["winner"]]
            cells = []
            for i in range(len(seats)):
                score = r["scores"][i] if i < len(r["scores"]) else None
                total = r["totals"][i] if r["totals"] and i < len(r["totals"]) else None
                cell = "-" if score is None else str(score)
                cells.append(cell + ("" if total is None else f" ({total})"))
            body.append([str(r["round"]), winner, *cells])
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
        for x in [head, *body]:
            lines.append("  " + "  ".join(c.rjust(w) if i != 1 else c.ljust(w)
                                          for i, (c, w) in enumerate(zip(x, widths,
                                                                         strict=True))))
    return lines


def _cmd_history(args: argparse.Namespace) -> int:
    folder = Path(args.journal_dir)
    if args.config is not None:
        try:
            folder = Path(load_config(args.config).journal_dir)
        except ConfigError as exc:
            raise CommandError(str(exc)) from None
    if not folder.is_dir():
        raise CommandError((f"{folder} is a file, not a journal folder" if folder.exists() else
                            f"no journal folder {folder}") + " (give the table's journal_dir "
                           "with --journal-dir, or its configuration with --config)")
    try:
        history = read_history(folder)
    except OSError as exc:
        raise CommandError(f"cannot read {folder}: {exc.strerror or exc}") from None
    if args.json:
        out = history.to_json()
        evening = history.evening()
        out["evening"] = [g.file for g in evening]
        out["standings"] = standings(evening)
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(history_text(history))
    bad = [g for g in history.games if g.problem]
    if bad:
        print(f"referee history: {len(bad)} journal{'s' * (len(bad) != 1)} could not be read "
              "whole (listed with the reason)", file=sys.stderr)
        return 1
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``history`` subcommand."""
    p = sub.add_parser(
        "history", help="every game played at a table and the evening's standings",
        description="List every game of a table's journal folder (the archived journals and "
        "the game being played), each judged again from its journal: start, duration, game, "
        "options, seats, winner(s), cards played and piles or rounds. Then the evening's "
        "standings (wins per player) and, for a Vändåtta points game, every round's hand "
        "scores and running totals. A journal that cannot be read is listed with the reason "
        "(exit status 1).",
    )
    where = p.add_mutually_exclusive_group()  # both had been taken, --config silently
    where.add_argument("--journal-dir", default="journals", metavar="DIR", type=path_name,
                       help="the table's journal folder (default: journals, in the current folder; "
                       "table.toml's journal_dir is taken from the file's folder: --config "
                       "reads it)")
    where.add_argument("--config", metavar="TOML", type=path_name,
                       help="take the journal folder from this table configuration instead")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: every game, the files kept aside, the "
                   "evening's games and standings")
    p.set_defaults(func=_cmd_history)
