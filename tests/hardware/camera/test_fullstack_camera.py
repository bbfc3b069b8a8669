"""referee simulate --full-stack with the camera as card source (issue 12): the players lay
under the virtual camera, the recogniser reads the frames, and the verdicts the service gave
are the verdicts of replaying its journal. A few seconds of a game, not the whole of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cv2")

from cardtable.fullstack import full_stack_config, run_full_stack  # noqa: E402
from referee.journal import read_journal  # noqa: E402
from referee.model import NOTICE_KINDS, Verdict  # noqa: E402
from referee.table import replay  # noqa: E402


class Recorder:
    def __init__(self) -> None:
        self.verdicts: list[dict[str, Any]] = []

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        self.verdicts += [v.to_json() for v in verdicts if v.verdict not in NOTICE_KINDS]


@pytest.mark.slow
def test_camera_full_stack_verdicts_are_the_journal_s(decks: None, tmp_path: Path) -> None:
    doc = full_stack_config("banka-bever", 3, 7, journal_dir=str(tmp_path),
                            card_source="camera", settle_ms=150)
    rec = Recorder()
    service = asyncio.run(run_full_stack(doc, seed=7, speed=1.0, outputs=[rec],
                                         timeout_s=8, camera_deck="anglo"))
    camera = next(o for o in service.outputs if type(o).__name__ == "CameraTable")
    assert camera.edge.seen, "the camera saw no lay"
    journal = read_journal(str(tmp_path / "current.jsonl"))
    lays = [i for i in journal.inputs if i.act == "lay"]
    assert lays
    judged = [v.to_json() for v in replay(journal, finish=False).verdicts]
    assert judged[:len(rec.verdicts)] == rec.verdicts
    assert len(judged) - len(rec.verdicts) <= 2  # what the window still held at the stop
