"""End-to-end Banka bäver scenarios: journals replayed through ``referee replay --json``.

Each ``tests/data/scenarios/banka_bever/NAME.jsonl`` is a journal with an explicit small deal (or
observed mode), and ``NAME.expected.jsonl`` holds the verdict lines worked out by hand from
docs/rules.md §2 and docs/journal.md, optionally followed by a ``{"state": {...}}`` line whose keys
(only those) are checked against the final state. An ``illegal`` line without ``reason`` checks only
that the reason is some plain-words text (the wording is not part of the contract).

``WHY`` says, per scenario, which rule sentences the expectations come from. Times are in
seconds on the table clock (1 s = 10^9 ns); ``collect_grace_ms`` is 1500 unless said otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.cli import main
from referee.describe import REFUSALS
from referee.model import TIMING_FIELDS, without_timing

DIR = Path(__file__).resolve().parents[2] / "data" / "scenarios" / "banka_bever"

WHY: dict[str, str] = {
    # Seats A=0, B=1, C=2; the dealer is the last seat so seat 0 starts, unless said otherwise.
    "01_seed_example": (
        "Seed example: Anna QH -> Bo owes 2; 8D 5S are number cards -> Anna's claim (reason "
        "challenge). Anna's lay at 4 s ends the grace (pile_won at 4 s, not 4.5 s). The pile goes "
        "under her stack bottom card first: after her 2C, the next card of hers is QH "
        "(checked by giving its card), which challenges Bo again."),
    "02_challenge_passes_on": (
        "A KS -> B owes 3; B 6H then JD: 'the demand passes to the next player, with the new "
        "count' -> C owes 1; C 2D pays -> B claims. A's lay during the grace: not_your_turn. "
        "Grace ends at 4+1.5 = 5.5 s (verdict t = end of grace, made final by the next input); "
        "C's slap at 6 s hits an empty pile won by a challenge (not a slap): false_slap."),
    "03_payment_fails_nobody_holds": (
        "B laid its last card (still in: its turn has not come, no pile won). A's QD: 'If no "
        "other player holds cards to pay with, the payment fails at once' -> claim "
        "payment_failed with a grace from 3 s. B's slap: no_cards. At the end of the journal "
        "the grace runs out at 4.5 s: pile won, then B out, then game over."),
    "04_payer_runs_out": (
        "A KH -> B owes 3; B lays its only card: 'the payment fails at that moment', claim "
        "payment_failed from 2 s; C's false slap during the grace. A's lay at 4 s comes after "
        "the grace (3.5 s): pile_won at 3.5 s, then B goes out 'when that claim becomes "
        "final'; A lays 2C and the turn skips out seat B."),
    "05_double_beats_bottom": (
        "Leftover 5C is the bottom. B's lay 5H and B's slap share t (slap written first in the "
        "file): 'a slap with exactly the same instant as a lay is judged after that lay'. 5D 5H "
        "is a double and 5H matches the bottom 5C: 'When both hold, the reason given is "
        "double'. The winner lays next."),
    "06_bottom_match_two_cards": (
        "Empty start: the first card 7C becomes the bottom; B's slap on the lone 7C is false "
        "('a lone first card never matches itself'). A's 7S on a 5-card pile matches the "
        "bottom 7C: bottom_match."),
    "07_leftover_never_double": (
        "Leftovers 4C 9D (bottom 4C); A lays 9S on 9D: the face-down leftover cards never form "
        "a double, and 9S is not the bottom's rank: both slaps are false, no penalty."),
    "08_slap_1ns_before_lay": (
        "A's slap 1 ns before B's 8H (written last in the file; inputs are judged in t order) "
        "sees the lone 8C: false. B's slap at the lay's own instant sees 8C 8H: double."),
    "09_tie_turn_seat_first": (
        "After B's 6D the turn is C's. Three valid slaps at 3 s (file order B, A, C) go "
        "clockwise from the seat whose turn it is, that seat first: C wins, then A and B "
        "slap_lost in tie order. C's own extra slap and A's later slap before the next lay: "
        "slap_lost (to C). After C's lay, A's slap is an ordinary false slap."),
    "10_tie_during_challenge_payer_first": (
        "A KC -> B owes 3; B 7D 7S makes a double while B still owes. A (the challenger) and C "
        "slap at the same instant: the seat whose turn it is during a challenge is the payer B, "
        "so clockwise B, C, A: C wins; the challenge is void, C lays next."),
    "11_tie_during_grace_claimant_first": (
        "B QC -> C owes 2; C 6H 6S completes the payment and forms a double: B's claim is not "
        "yet final. A and B slap together during the grace: tie order starts at the claimant B, "
        "so B wins by the double (reason double), A slap_lost; no claim is left for 5.5 s."),
    "12_burn": (
        "false_slap_penalty burn. B's slap on the empty pile burns 3D, which starts the pile "
        "and matches nothing; A's burn 3C goes under it; B's slap on two burned 3s is false "
        "(burned cards never form a double) and burns 8S, the new bottom. A's laid 8H matches "
        "the burned bottom 8S: bottom_match, 6 cards."),
    "13_burn_payer_fails": (
        "Burn: the payer B burns its only card ('a burned card counts as spent'): the payment "
        "fails at that moment, A claims (payment_failed) from 2 s; at the end of the journal "
        "the grace runs out at 3.5 s and B goes out."),
    "14_last_player": (
        "A's 7C: the turn comes to B and then C, who hold none, so both are out; A is the last "
        "player and takes the pile (last_player). Order of verdicts from one input: pile won, "
        "then players out, then game over. Every later input: game_over (checked before "
        "out_of_game)."),
    "15_slap_back_in": (
        "slap_back_in: B holds no cards after 9S, is not out, and is skipped when its turn comes "
        "(A's 2D passes the turn to C); B slaps the 2D 2S double and is back in with 5 cards "
        "and lays next."),
    "16_no_cards_out_of_game": (
        "B, holding no cards, may not slap (no_cards), also at a lay's instant (judged after "
        "it). A's KD: the demand goes to the next player with cards, C (B is skipped, not out). "
        "Grace ends at 9.5 s: A takes 7 cards, B holds none and goes out; its slap and lay are "
        "then out_of_game."),
    "17_claimant_lay_ends_game": (
        "As 03, but the claimant A lays at 4 s during its grace: the claim becomes final at "
        "that lay (pile won, B out, game over) and the lay itself is refused game_over "
        "('including a claimant's lay whose claim ended the game')."),
    "18_bottom_match_off": (
        "bottom_match false: 7D on the leftover bottom 7C is no slap (false_slap), a double "
        "still wins."),
    "19_observed_mode": (
        "Observed mode (deal null, no seed), 3 seats, dealer 0: 17 cards each, 1 unseen "
        "leftover; seat 1 starts. A lay without its card: card_required. The bottom's face is "
        "unknown to the referee, so the slap on 9H is judged false (engine's reading). 9H "
        "again: desync (expected null). 9H 9C double. The new pile's bottom 2S is seen; KH "
        "challenge; 2D matches 2S during the challenge: bottom_match."),
    "20_desync_known": (
        "Known deal: a reported card other than the expected one is a desync naming both and is "
        "not applied ('TH' is read as 10H); the same lay without a card is then applied."),
    "21_slap_at_grace_end": (
        "The payment ends on a double (6S 6H) at 3 s. B's slap at exactly 4.5 s: the claim is "
        "final at 4.5 s and 'a valid slap before that wins the pile instead' - this one is not "
        "before: pile_won (challenge) first, then the slap on an empty pile is false "
        "(engine's reading of the equal-instant case)."),
    "22_slap_just_before_grace_end": (
        "As 21 with B's slap 1 ns before the grace ends: it wins the double; the claim is gone, "
        "B lays next (A's lay: not_your_turn)."),
    "23_slap_win_ends_game": (
        "A and B laid their last cards (5C 5D). Slaps at 3 s by A, B (no_cards) and C: C wins; "
        "tie order from the turn seat C is C, A, B, so the winner's verdict, then the refusals "
        "in tie order, then A and B out (clockwise from the winner), then game over."),
    "24_slap_lost_never_burns": (
        "burn option. A and B slap the 4C 4S double at the same instant with A to lay: A wins, "
        "B slap_lost; B's later slap before the next card is slap_lost again, 'never a "
        "penalty' (no burn). After A's 9D, B's slap is false and burns 2H under the pile."),
    "25_challenger_without_cards_wins": (
        "A lays its last card KD: A 'is still in the game while a challenge they started can "
        "still win them the pile'; its slap meanwhile is no_cards. B pays 4C 5C 6C; the grace "
        "runs out at the end of the journal (5.5 s) and A takes 4 cards, nobody out."),
    "26_out_when_turn_comes": (
        "B laid its last card; when the turn reaches B (after A's 9C) it is out and the turn "
        "goes on to C. After C's 8H the turn skips B and reaches A with none: A out, C is the "
        "last player: pile won (last_player), then out, then game over."),
}


def _names() -> list[str]:
    return sorted(p.name[: -len(".jsonl")] for p in DIR.glob("*.jsonl")
                  if not p.name.endswith(".expected.jsonl"))


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_every_scenario_is_explained() -> None:
    assert len(_names()) >= 26
    assert sorted(WHY) == _names()
    for name in _names():
        assert (DIR / f"{name}.expected.jsonl").exists(), name


@pytest.mark.parametrize("name", _names())
def test_scenario(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(DIR / f"{name}.jsonl"), "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out and "state" in out[-1]
    got, state = out[:-1], out[-1]["state"]
    expected = _read(DIR / f"{name}.expected.jsonl")
    want_state = expected.pop()["state"] if expected and "state" in expected[-1] else None
    shown = [dict(v) for v in got]
    if not any(k in w for w in expected for k in TIMING_FIELDS):  # worked out before them
        shown = [without_timing(v) for v in shown]
    for v, w in zip(shown, expected, strict=False):
        if v.get("verdict") == "illegal":
            assert v.get("why") in REFUSALS and isinstance(v.get("args"), dict), v
            for key in ("reason", "why", "args"):  # words for a person, and their sentence
                if key not in w:
                    assert key != "reason" or isinstance(v.get("reason"), str) and v["reason"]
                    del v[key]
    assert shown == expected, WHY[name]
    if want_state is not None:
        assert {k: state.get(k) for k in want_state} == want_state, WHY[name]
