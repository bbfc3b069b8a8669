"""``referee replay``: judge a table journal again and print its verdicts and final state, in
words or as the JSON lines of JOURNAL.md."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from referee.app.errors import CommandError
from referee.describe import describe, format_time
from referee.games import games
from referee.journal import JournalError, read_before, read_journal
from referee.table import replay


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        journal = read_journal(args.journal)
        error = None
    except JournalError as exc:
        before = read_before(exc)
        if before is None:
            raise CommandError(f"{args.journal}: {exc}") from None
        journal, error = before, exc
    except OSError as exc:
        raise CommandError(f"cannot read {args.journal}: {exc.strerror}") from None
    result = replay(journal, finish=error is None)
    seats = journal.header.seats
    for v in result.verdicts:
        if args.json:
            print(json.dumps(v.to_json(), ensure_ascii=False))
        else:
            print(f"{format_time(v.t)}  {describe(v.to_json(), seats)}")
    if args.json:
        print(json.dumps({"state": result.state}, ensure_ascii=False))
    else:
        print(_state_text(result.state))
    if error is not None:
        print(f"{args.journal}: {error}", file=sys.stderr)
        return 1
    return 0


def _state_text(state: dict[str, Any]) -> str:
    seats = state.get("seats") or [f"seat {i}" for i in range(len(state["counts"]))]
    counts = ", ".join(f"{s} {c}" for s, c in zip(seats, state["counts"], strict=False))
    turn = state.get("turn")
    what = games[str(state.get("game"))].tally
    lines = [f"Cards held: {counts}",
             f"Cards played: {state['cards_played']}, {what}: {state['tricks']}"]
    if state.get("winners"):
        lines.append("Winner: " + " and ".join(seats[w] for w in state["winners"]))
    elif turn is not None:
        lines.append(f"Turn: {seats[turn]}")
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    p = sub.add_parser(
        "replay", help="judge a table journal and print its verdicts",
        description="Judge a table journal (JSON Lines, see JOURNAL.md) and print every "
        "verdict in judging order, then the final state. A malformed line stops the replay "
        "with its line number and reason (exit status 1); verdicts before it are printed.",
    )
    p.add_argument("journal", help="path of the journal file")
    p.add_argument("--json", action="store_true",
                   help="print the verdict lines and the final state line of JOURNAL.md")
    p.set_defaults(func=_cmd_replay)
