"""Beggar My Neighbour end to end: hand-worked scenario journals through ``referee replay --json``.

Each ``tests/data/scenarios/beggar_my_neighbour/NAME.jsonl`` is a table journal (docs/journal.md)
with a small explicit ``deal`` (or a ``seed``, or neither for observed mode);
``NAME.expected.jsonl`` holds exactly the verdict lines ``referee replay NAME.jsonl --json`` must
print, worked out by hand from docs/rules.md §1 and docs/journal.md, and optionally a last
``{"state": {...}}`` line of which only the keys given are compared. What each scenario checks:

- 01, 02: §1.1 seeded 3-player deal: left of the dealer holds 18, the others 17; §1.2 it leads.
- 03: observed mode counts (18/17/17), ``card_required``.
- 04: §1.2 number cards pass the turn; §1.6 out when the turn comes with none; §1.7
  last_player; ``game_over`` refusals (a seat that is out included).
- 05: §1.3 A 4, K 3, Q 2, J 1; §1.5 the collector leads; §1.6 payment_failed; §1.7 one seat
  holds every card.
- 06: §1.4 a new court card stops the payment, the pile goes to the last court card; desync in
  known mode; ``not_your_turn``; ``out_of_game``.
- 07: §1.6 a seat whose last card was a court card is not out and collects; ``no_cards``.
- 08: §1.6 a waiting seat passed over by a later demand goes out; a court card with nobody left
  to pay (last_player).
- 09: two seats: the demand comes back to a seat with none: out, last_player.
- 10, 11: §1.8 ``time_limit_s``: most cards wins; ties share the win.
- 12: observed mode: faces learned from ``card`` fields and then checked (desync),
  ``duplicate_card``.
- 13: §1.5 order of the collected pile under the stack, checked by the following lays' cards.
- 14: §1.6 out when the pile is collected by someone else while holding none.
- 15: four seats: demands and turns skip seats that are out.

The ``referee beggar`` tests below play tiny record-notation deals worked out card by card.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "beggar_my_neighbour"
JOURNALS = sorted(p for p in SCENARIOS.glob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


def _expected(journal: Path) -> tuple[list[dict], dict | None]:
    lines = [json.loads(line) for line in
             journal.with_name(journal.stem + ".expected.jsonl").read_text().splitlines()
             if line.strip()]
    state = None
    if lines and "state" in lines[-1]:
        state = lines.pop()["state"]
    return lines, state


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[dict], dict]:
    assert main(["replay", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines()]
    assert "state" in lines[-1], "the last line of replay --json is the state"
    return lines[:-1], lines[-1]["state"]


def test_every_scenario_has_its_expected_verdicts():
    expected = sorted(SCENARIOS.glob("*.expected.jsonl"))
    assert len(JOURNALS) >= 15
    assert [p.stem for p in JOURNALS] == [p.name[: -len(".expected.jsonl")] for p in expected]


@pytest.mark.parametrize("journal", JOURNALS, ids=lambda p: p.stem)
def test_scenario_replays_to_the_hand_worked_verdicts(journal, capsys):
    verdicts, state = _replay(journal, capsys)
    want, want_state = _expected(journal)
    assert verdicts == want
    if want_state is not None:
        assert {key: state.get(key) for key in want_state} == want_state


@pytest.mark.parametrize("journal", JOURNALS, ids=lambda p: p.stem)
def test_scenario_verdicts_are_in_time_order(journal, capsys):
    """Verdict ``t`` never goes back (a time limit's game_over is stamped at the limit)."""
    verdicts, _ = _replay(journal, capsys)
    ts = [v["t"] for v in verdicts]
    assert ts == sorted(ts)


# ------------------------------------------------------------------------- referee beggar

# Hands worked out card by card (player 1 leads; winner 0 is player 1):
#   -J / 22   : 1 -, 2 2, 1 J, 2 pays 2 (its last): player 1 collects 4 and holds all.
#   -  / J    : 1 -, 2 J, player 1's turn to pay comes with none: out, 2 takes the 2 cards.
#   2- / -    : 1 2, 2 -, 1 -, player 2's turn comes with none: 1 takes 3.
#   J- / -J   : 1 J, 2 pays - : 1 collects 2 (stack - J -); 1 -, 2 J (its last), 1 pays J: the
#               demand goes to 2, who has none: 1 takes 3. 5 cards, 2 tricks.
#   -J / ---  : 1 -, 2 -, 1 J, 2 pays -: 1 collects 4 (- - J -); 1 -, 2 - (its last), 1 -,
#               2 is out: 1 takes 3. 7 cards, 2 tricks.
#   J-- / -J- : trick 1 (1 leads J--, 2 has -J-): 1 J, 2 pays -: 1 collects, stacks --J- / J-;
#               trick 2: 1 -, 2 J, 1 pays -: 2 collects -J-: stacks J- / --J-, 2 leads;
#               trick 3: 2 -, 1 J, 2 pays -: 1 collects -J-: stacks --J- / J-, 1 leads: the
#               start of trick 2 again, found after 8 cards and 3 tricks.
BEGGAR_DEALS = [
    ("-J", "22", {"status": "finished", "cards": 4, "tricks": 1, "winner": 0}),
    ("-", "J", {"status": "finished", "cards": 2, "tricks": 1, "winner": 1}),
    ("2-", "-", {"status": "finished", "cards": 3, "tricks": 1, "winner": 0}),
    ("J-", "-J", {"status": "finished", "cards": 5, "tricks": 2, "winner": 0}),
    ("-J", "---", {"status": "finished", "cards": 7, "tricks": 2, "winner": 0}),
    ("J--", "-J-", {"status": "loop", "cards": 8, "tricks": 3, "winner": None}),
]


@pytest.mark.parametrize("hand1, hand2, want", BEGGAR_DEALS)
def test_beggar_json_on_hand_worked_deals(hand1, hand2, want, capsys):
    assert main(["beggar", "--json", "--", hand1, hand2]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    result = json.loads(out[0])
    assert list(result) == ["status", "cards", "tricks", "winner"]
    assert result == want


def test_beggar_text_output(capsys):
    assert main(["beggar", "--", "-J", "22"]) == 0
    assert capsys.readouterr().out == "Player 1 wins after 4 cards and 1 trick.\n"
    assert main(["beggar", "--", "J--", "-J-"]) == 0
    assert capsys.readouterr().out == (
        "The game never ends: the position repeats after 8 cards and 3 tricks.\n")


def test_beggar_max_cards_stops_at_a_trick_start(capsys):
    # J-- / -J-: tricks start after 0, 2 and 5 cards; the first start with >= 3 laid is at 5.
    assert main(["beggar", "--json", "--max-cards", "3", "--", "J--", "-J-"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "status": "stopped", "cards": 5, "tricks": 2, "winner": None}


def test_beggar_hand_written_as_two_dashes(capsys):
    for argv in (["beggar", "--json", "--", "-J", "--"], ["beggar", "-J", "22", "--json"],
                 ["beggar", "--json", "-J", "22"]):
        assert main(argv) == 0, argv
        assert json.loads(capsys.readouterr().out) == {
            "status": "finished", "cards": 4, "tricks": 1, "winner": 0}
