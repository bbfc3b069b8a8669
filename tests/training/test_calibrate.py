"""``training.calibrate`` counts, at each candidate, what the recogniser's rule would name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("cv2")

from training.calibrate import main, pips_grid  # noqa: E402


def _row(top: str, named: str | None, pips: list[float]) -> dict[str, object]:
    return {"deck": "d", "top": top, "named": named, "enrolled_named": named, "pips": pips,
            "read": {"card": named}, "enrolled": {"card": named}, "reason": "",
            "enrolled_reason": ""}


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
    dump = tmp_path / "reads.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main([str(dump)]) == 0
    assert "pips are this sure" in capsys.readouterr().out
