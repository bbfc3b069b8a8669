"""``training.calibrate`` counts, at each candidate, what the recogniser's rule would name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cv2")

from training.calibrate import main, pips_grid  # noqa: E402


def _row(top: str, named: str | None, pips: list[float]) -> dict[str, object]:
    return {"deck": "d", "top": top, "named": named, "enrolled_named": named, "pips": pips,
            "read": {"card": named}, "enrolled": {"card": named}, "reason": "",
            "enrolled_reason": ""}


def _printed(rows: list[dict[str, Any]], tmp_path: Path,
             capsys: pytest.CaptureFixture[str]) -> str:
    """What ``python3 -m training.calibrate`` prints for a dump of these rows."""
    dump = tmp_path / "reads.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main([str(dump)]) == 0
    return capsys.readouterr().out


def test_the_pips_grid_counts_what_each_least_chance_leaves_unclear(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_row("3C", "3S", [0.995, 0.0, 0.0, 0.005]),  # a club read as a spade
            _row("4S", "4S", [0.93, 0.0, 0.0, 0.07]),  # the pips wrong, not very sure
            _row("KC", "KS", [0.999, 0.0, 0.0, 0.001]),  # a face card: its pips not asked
            _row("5H", "5H", [0.0, 0.0, 1.0, 0.0])]
    grid = {least: (right, wrong) for least, right, wrong, _, _ in pips_grid(rows)}
    assert grid[None] == (0.5, 0.5)
    assert grid[0.99] == (0.5, 0.25)
    assert grid[0.9] == (0.25, 0.25)
    assert "pips are this sure" in _printed(rows, tmp_path, capsys)


def test_the_count_grid_names_unclear_reads_by_the_counted_rank_s_chance(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hardware.camera.reader.classify import GLYPHS, NO_GLYPH
    from training.calibrate import counted_grid

    def unclear(top: str, guess: str, ranks: dict[str, float],
                count: int | None) -> dict[str, object]:
        pips = [0.0] * 4
        pips["CDHS".index(guess[-1])] = 1.0
        view = [0.0] * (NO_GLYPH + 1)
        for glyph, chance in ranks.items():
            view[GLYPHS.index(glyph)] = chance
        return {"deck": "d", "top": top, "named": None, "reason": "unclear", "guess": guess,
                "chance": max(ranks.values()), "suit": 1.0, "count": count, "indexed": True,
                "pips": pips, "glyphs": [view] * 4, "suits": [pips] * 4}

    rows: list[dict[str, Any]] = [
        unclear("7H", "7H", {"7": 0.8, "1": 0.2}, 7),  # named from 0.7 down
        unclear("8S", "8S", {"8": 0.4, "3": 0.6}, 8),  # named at 0.3 and below
        unclear("9D", "8D", {"8": 0.6, "9": 0.4}, 8),  # the count of a wrong rank: from 0.5
        unclear("5C", "6C", {"6": 0.85, "5": 0.15}, 5),  # the count's rank 0.15: at 0.1
        unclear("6C", "6C", {"6": 0.9, "10": 0.1}, 4),  # no rank the index holds: never
        {"deck": "d", "top": "QH", "named": "QH", "reason": ""}]
    older = dict(unclear("7C", "7C", {"7": 0.9}, 7))
    del older["glyphs"]  # a dump from before the glyphs were written: never named, no error
    rows.append(older)
    grid = {least: (right, wrong) for least, right, wrong, _ in counted_grid(rows)}
    assert grid[None] == pytest.approx((1 / 7, 0.0))
    assert grid[0.7] == pytest.approx((2 / 7, 0.0))
    assert grid[0.5] == pytest.approx((2 / 7, 1 / 7))
    assert grid[0.3] == pytest.approx((3 / 7, 1 / 7))
    assert grid[0.1] == pytest.approx((4 / 7, 1 / 7))
    assert "named by its pips' count" in _printed(rows, tmp_path, capsys)


def test_the_enrolled_replay_names_nothing_by_the_deck_s_features_alone() -> None:
    """As decide_enrolled: the deck's features clearly nearest 7D and the classifier unsure
    of 7H name nothing; the two agreeing name 7D."""
    from training.calibrate import enrolled

    row = {"deck": "d", "top": "7D", "match": "7D", "margin": 0.12, "score": 0.97,
           "deck_guess": "7H", "deck_chance": 0.4, "deck_index": 1.0}
    assert enrolled(row, agree=0.01, margin=0.05) is None
    assert enrolled({**row, "deck_guess": "7D", "deck_chance": 0.6}, agree=0.01,
                    margin=0.05) == "7D"


def test_the_enrolled_replay_vetoes_or_overrules_a_weak_agreement_as_decide_enrolled() -> None:
    """As decide_enrolled: the deck's features only just agreeing with the classifier on 3S
    and the deck's clear picture of 3C: 3C where the picture is at least OVERRULE alike,
    else nothing; without a clear picture, 3S."""
    from hardware.camera.reader.recognise import OVERRULE, PICTURE_MARGIN, PICTURE_NEAR
    from training.calibrate import enrolled

    row = {"deck": "d", "top": "3C", "match": "3S", "margin": 0.02, "score": 0.93,
           "deck_guess": "3S", "deck_chance": 0.999, "deck_index": 1.0,
           "picture": "3C", "picture_margin": 0.1}
    pictures = (PICTURE_MARGIN, PICTURE_NEAR)
    assert enrolled({**row, "picture_score": OVERRULE}, 0.01, 0.05, picture=pictures) == "3C"
    half_way = (OVERRULE + PICTURE_NEAR) / 2
    assert enrolled({**row, "picture_score": half_way}, 0.01, 0.05, picture=pictures) is None
    faint = PICTURE_NEAR - 0.01
    assert enrolled({**row, "picture_score": faint}, 0.01, 0.05, picture=pictures) == "3S"
    assert enrolled({**row, "picture_score": OVERRULE}, 0.01, 0.05) == "3S"
