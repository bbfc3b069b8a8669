"""The displays show a round's hand scores in the words of the verdict text (issue 10.15): a
seat already out of the points game is "out", a hand with unseen cards is "not seen" (never
``None``, and never "out" for a seat that is still in)."""

from __future__ import annotations

from typing import Any

import pytest

from cardtable.display.scene import scene

NAMES = ["Anna", "Bo", "Cia"]
STATE: dict[str, Any] = {
    "game": "vandatta", "seats": NAMES, "counts": [0, 0, 3], "pile": ["7H"], "top": "7H",
    "current": {"suit": "H", "rank": "7"}, "stock": 20, "must_draw": None, "turn": None,
    "round": 2, "out": [1], "over": False, "winners": None, "session": "s", "seq": 9,
}


@pytest.mark.parametrize(("scores", "totals", "words"), [
    ([10, None, 0], [40, 104, 75], "Round won by Cia. Scores: Anna 10, Bo out, Cia 0"),
    ([10, None, 0], None, "Round won by Cia. Scores: Anna 10, Bo not seen, Cia 0"),
])
def test_round_result_never_shows_none(scores: list[Any], totals: list[int] | None,
                                       words: str) -> None:
    event = {"t": 1, "verdict": "round_over", "winner": 2, "scores": scores, "totals": totals,
             "seq": 9}
    assert scene(dict(STATE, totals=totals), [event], "online")["round_result"] == words
