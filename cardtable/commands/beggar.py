"""``referee beggar``: play a two-player Beggar My Neighbour deal given in the notation of the
published long-game records, and say how it ends (a winner, a loop, or stopped)."""

from __future__ import annotations

import argparse
import json
import re

from cardtable.commands.argtypes import count
from cardtable.errors import CommandError


def _cmd_beggar(args: argparse.Namespace) -> int:
    from referee.games.beggar_my_neighbour import play_notation

    # the space beggar_argv put before a hand that starts with '-' is not the user's
    hand1, hand2 = (h[1:] if h.startswith(" -") else h for h in (args.hand1, args.hand2))
    try:
        result = play_notation(hand1, hand2, max_cards=args.max_cards)
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


def beggar_argv(argv: list[str]) -> list[str]:
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
            value = next(words, None) if "=" not in word else None
            if value is not None:  # none: argparse says the option needs a value
                out.append(value)
        elif (not separated and word.startswith("--") and word[2:3].isalpha()
              and not _HAND.fullmatch(word)):
            out.append(word)  # no hand: a mistyped option, which argparse names (--josn)
        else:
            out.append(" " + word if word.startswith("-") else word)
    return out


#: What a hand in record notation may hold (``referee.games.beggar_my_neighbour``).
_HAND = re.compile(r"[AKQJTakqjt2-9\s-]*(?:10[AKQJTakqjt2-9\s-]*)*")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``beggar`` subcommand."""
    p = sub.add_parser(
        "beggar", help="play a two-player Beggar My Neighbour deal in record notation",
        description="Play a two-player Beggar My Neighbour deal given in the notation of "
        "published long-game records: one string per player, top card first, 'A K Q J' "
        "court cards and '-' (or any number rank) a number card. Player 1 leads. Reports the "
        "cards laid and tricks, or that the game never ends (a position repeats).",
    )
    p.add_argument("hand1", help="player 1's stack, top first, e.g. '---K---Q-KQAJ-----AAJ--J--'")
    p.add_argument("hand2", help="player 2's stack, top first")
    p.add_argument("--max-cards", type=count, default=None,
                   help="stop at the first trick that starts after this many cards "
                   "(status 'stopped')")
    p.add_argument("--json", action="store_true",
                   help='print {"status", "cards", "tricks", "winner"} as one JSON object; '
                   '"winner" is the winning hand\'s seat: 0 for HAND1 (player 1), 1 for HAND2 '
                   '(player 2), null when the game does not end')
    p.set_defaults(func=_cmd_beggar)
