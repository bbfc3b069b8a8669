"""``referee replay JOURNAL --slaps`` and ``--stats`` (issue 11.3-4) on the hand-made journals of
``tests/data/races``; the figures are worked out in ``tests/referee/test_races.py``'s
docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardtable.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
PHOTO = str(DATA / "races" / "photo_finish.jsonl")
TIE = str(DATA / "races" / "tie_and_burn.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["replay", *argv])
    return code, capsys.readouterr().out


def test_slaps_prints_each_race_as_a_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, PHOTO, "--slaps")
    assert code == 0
    races = out.strip().split("\n\n")
    assert len(races) == 4
    assert races[1].splitlines() == [
        "Race 2 at 0:02.000: Bo laid 8D",
        "    +212.400 ms  Cia   WON",
        "    +212.900 ms  Bo    lost  +500 µs after Cia",
        "    +600.000 ms  Anna  lost  +387.600 ms after Cia",
        "  Ruling: Cia wins the pile (a double): first slap, 500 µs ahead of Bo",
        "  PHOTO FINISH: decided by 500 µs",
    ]
    assert races[0].splitlines()[0] == "Race 1, before the first lay"
    assert "PHOTO FINISH" not in races[3] and "+5.000 ms after Bo" in races[3]


def test_slaps_says_a_tie_and_a_burn(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, TIE, "--slaps")
    assert code == 0
    assert "    +250.000 ms  Anna  lost  3 µs before Cia, same instant (tie rule)" in out
    assert "Race 3 at 0:04.100: Bo burned 5D under the pile" in out
    assert "    +200.000 ms  Anna  refused (no cards)" in out


def test_slaps_json_is_one_object_per_race(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, PHOTO, "--slaps", "--json")
    assert code == 0
    races = [json.loads(line) for line in out.splitlines()]
    assert [r["ruling"] for r in races] == ["false_slap", "won", "false_slap", "won"]
    photo = races[1]
    assert photo["opening"] == {"t": 2_000_000_000, "seat": 1, "card": "8D", "how": "lay"}
    assert [(s["seat"], s["offset_ns"], s["margin_ns"]) for s in photo["slaps"]] == [
        (2, 212_400_000, None), (1, 212_900_000, 500_000), (0, 600_000_000, 387_600_000)]
    assert photo["photo_finish"] is True and photo["deciding_margin_ns"] == 500_000
    assert races[3]["photo_finish"] is False


def test_stats_prints_the_seats_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, PHOTO, "--stats")
    assert code == 0
    assert out.splitlines() == [
        "Slap statistics so far (the game is not over):",
        "  seat  slaps  wins  false  lost  missed  median reaction  best reaction",
        "  Anna      2     0      1     1       1       600.000 ms     600.000 ms",
        "  Bo        2     1      0     1       0       212.900 ms     212.900 ms",
        "  Cia       3     1      1     1       0       212.400 ms     212.400 ms",
    ]
    code, out = run(capsys, TIE, "--stats", "--json")
    got = json.loads(out)
    assert got["over"] is False
    assert [(r["name"], r["false_slaps"], r["missed"], r["median_reaction_ns"])
            for r in got["seats"]] == [("Anna", 0, 0, 250_000_000), ("Bo", 2, 2, None),
                                       ("Cia", 0, 0, 250_000_000)]


def test_a_game_without_slaps(capsys: pytest.CaptureFixture[str]) -> None:
    journal = DATA / "scenarios" / "beggar_my_neighbour" / "01_seeded_three_dealer0.jsonl"
    code, out = run(capsys, str(journal), "--slaps", "--stats")
    assert code == 0
    assert out.splitlines() == ["No slap races: Beggar My Neighbour has no slaps.",
                                "No slap statistics: Beggar My Neighbour has no slaps."]


def test_a_damaged_journal_shows_the_races_before_the_bad_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(Path(PHOTO).read_text() + "{not json\n")
    code = main(["replay", str(bad), "--slaps"])
    captured = capsys.readouterr()
    assert code == 1 and "line 15" in captured.err
    assert captured.out.count("Ruling:") == 4
