"""The ``referee`` command: replay journals, study Beggar deals, simulate games, run a table."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence

from referee.describe import describe, format_time
from referee.journal import JournalError, read_journal
from referee.table import replay

#: Modules that add subcommands of their own through ``register(subparsers)``.
PLUGIN_MODULES = (
    "referee.simulate",
    "referee.display",
    "referee.service",
    "firmware_bridge.deck",
)


class CommandError(Exception):
    """An error meant for the person at the terminal: printed without a traceback."""


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        journal = read_journal(args.journal)
        error = None
    except JournalError as exc:
        if exc.journal is None:
            raise CommandError(f"{args.journal}: {exc}") from None
        journal, error = exc.journal, exc
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


def _state_text(state: dict) -> str:
    seats = state.get("seats") or [f"seat {i}" for i in range(len(state["counts"]))]
    counts = ", ".join(f"{s} {c}" for s, c in zip(seats, state["counts"], strict=False))
    turn = state.get("turn")
    what = "rounds played" if state.get("game") == "vandatta" else "piles collected"
    lines = [f"Cards held: {counts}",
             f"Cards played: {state['cards_played']}, {what}: {state['tricks']}"]
    if state.get("winners"):
        lines.append("Winner: " + " and ".join(seats[w] for w in state["winners"]))
    elif turn is not None:
        lines.append(f"Turn: {seats[turn]}")
    return "\n".join(lines)


def _cmd_beggar(args: argparse.Namespace) -> int:
    from referee.beggar_my_neighbour import play_notation

    try:
        result = play_notation(args.hand1, args.hand2, max_cards=args.max_cards)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(result))
    else:
        if result["status"] == "finished":
            print(f"Player {result['winner'] + 1} wins after {_n(result['cards'], 'card')} "
                  f"and {_n(result['tricks'], 'trick')}.")
        elif result["status"] == "loop":
            print(f"The game never ends: the position repeats after "
                  f"{_n(result['cards'], 'card')} and {_n(result['tricks'], 'trick')}.")
        else:
            print(f"Stopped after {_n(result['cards'], 'card')} and "
                  f"{_n(result['tricks'], 'trick')}.")
    return 0


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, subcommands included."""
    parser = argparse.ArgumentParser(
        prog="referee",
        description="A referee for physical card games: Beggar My Neighbour, Banka bäver "
        "and Vändåtta. Replays journals, simulates games, and runs a real table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

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

    p = sub.add_parser(
        "beggar", help="play a two-player Beggar My Neighbour deal in record notation",
        description="Play a two-player Beggar My Neighbour deal given in the notation of "
        "published long-game records: one string per player, top card first, 'A K Q J' "
        "court cards and '-' (or any number rank) a number card. Player 1 leads. Reports the "
        "cards laid and tricks, or that the game never ends (a position repeats).",
    )
    p.add_argument("hand1", help="player 1's stack, top first, e.g. '---K---Q-KQAJ-----AAJ--J--'")
    p.add_argument("hand2", help="player 2's stack, top first")
    p.add_argument("--max-cards", type=int, default=None,
                   help="stop at the first trick that starts after this many cards "
                   "(status 'stopped')")
    p.add_argument("--json", action="store_true",
                   help='print {"status", "cards", "tricks", "winner"} as one JSON object')
    p.set_defaults(func=_cmd_beggar)

    for name in PLUGIN_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _beggar_argv(argv: list[str]) -> list[str]:
    """Hands in record notation start with '-' and may be '--' itself; argparse (3.11) takes
    such words for options and drops every '--'. Each hand goes in with a leading space (the
    notation ignores spaces), so ``referee beggar -J --`` and ``referee beggar -- -J --`` work."""
    out = argv[:1]
    words = iter(argv[1:])
    separated = False
    for word in words:
        if word == "--" and not separated:
            separated = True
        elif not separated and word in ("--json", "-h", "--help"):
            out.append(word)
        elif not separated and word.startswith("--max-cards"):
            out.append(word)
            if "=" not in word:
                out.append(next(words, ""))
        else:
            out.append(" " + word if word.startswith("-") else word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``referee`` console script."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["beggar"]:
        argv = _beggar_argv(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: one clear line; the traceback with REFEREE_DEBUG=1
        if os.environ.get("REFEREE_DEBUG"):
            raise
        print(f"referee: unexpected error ({type(exc).__name__}: {exc}); run again with "
              "REFEREE_DEBUG=1 for the details, and please report it", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
