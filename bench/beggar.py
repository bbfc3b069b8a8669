"""Cards per second of ``play_notation`` on the published record deals, against a minimal loop.

Prints one JSON line. The reference, timed in the same run on the same deals, is the minimal
straightforward pure-Python solver: deques of ints, one card per loop step, and a set of the
positions at the start of every trick (each stack as ``bytes``, which hashes faster than a
tuple, so the reference is as quick as such a loop gets). Both must reproduce the published card
and trick counts, or the benchmark fails. Runs in a few seconds.
"""

from __future__ import annotations

import json
import time
from collections import deque
from pathlib import Path

from referee.games.beggar_my_neighbour import parse_notation, play_notation

ROOT = Path(__file__).resolve().parent.parent
RECORDS = json.loads((ROOT / "tests" / "data" / "beggar_records.json").read_text())["records"]
ROUNDS = 7  # best of ROUNDS, the two solvers alternating
REPEATS = 20  # passes over all record deals per round


def reference_play(hand1: str, hand2: str) -> dict:
    """The minimal straightforward solver: one loop step per card laid."""
    hands = (deque(parse_notation(hand1)), deque(parse_notation(hand2)))
    seen: set[tuple] = set()
    player = 0
    cards = tricks = 0
    while True:
        position = (player, bytes(hands[0]), bytes(hands[1]))
        if position in seen:
            return {"status": "loop", "cards": cards, "tricks": tricks, "winner": None}
        seen.add(position)
        pile: list[int] = []
        owes = 0
        layer, other = hands[player], hands[1 - player]
        while True:
            if not layer:  # no card to lay: the other player takes the pile
                other.extend(pile)
                return {"status": "finished", "cards": cards + len(pile), "tricks": tricks + 1,
                        "winner": 1 - player}
            card = layer.popleft()
            pile.append(card)
            if card:  # a court card: the other pays
                owes = card
                layer, other = other, layer
                player ^= 1
            elif owes:
                owes -= 1
                if not owes:
                    break
            else:
                layer, other = other, layer
                player ^= 1
        player ^= 1  # the player of the last court card collects and leads
        other.extend(pile)
        cards += len(pile)
        tricks += 1
        if not layer:
            return {"status": "finished", "cards": cards, "tricks": tricks, "winner": player}


def _time(solver, deals: list[tuple[str, str]]) -> float:
    start = time.perf_counter()
    for _ in range(REPEATS):
        for hand1, hand2 in deals:
            solver(hand1, hand2)
    return time.perf_counter() - start


def main() -> None:
    """Check both solvers on the records, then time them and print the JSON line."""
    began = time.perf_counter()
    deals = [(r["hand1"], r["hand2"]) for r in RECORDS]
    for record in RECORDS:
        published = (record["cards"], record["tricks"])
        for solver in (play_notation, reference_play):
            got = solver(record["hand1"], record["hand2"])
            if (got["cards"], got["tricks"]) != published:
                raise SystemExit(f"{solver.__name__} gives {got} for {record['name']}")
    total_cards = REPEATS * sum(r["cards"] for r in RECORDS)
    fast, slow = [], []
    for _ in range(ROUNDS):
        fast.append(_time(play_notation, deals))
        slow.append(_time(reference_play, deals))
    fast_rate = total_cards / min(fast)
    slow_rate = total_cards / min(slow)
    print(json.dumps({
        "bench": "beggar",
        "deals": len(deals),
        "cards_per_pass": total_cards // REPEATS,
        "play_notation_cards_per_s": round(fast_rate),
        "reference_cards_per_s": round(slow_rate),
        "ratio": round(fast_rate / slow_rate, 2),
        "seconds": round(time.perf_counter() - began, 2),
    }))


if __name__ == "__main__":
    main()
