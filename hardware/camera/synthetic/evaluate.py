"""How well the recogniser reads rendered scenes: correct, wrong and unclear counts, timings.
Used by ``bench/camera.py`` and the tests."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from hardware.camera.reader.recognise import Recogniser
from hardware.camera.synthetic.scene import random_scene, render


@dataclass
class Score:
    """The tally of one deck's scenes."""

    deck: str
    correct: int = 0
    wrong: int = 0
    unclear: int = 0
    times_ms: list[float] = field(default_factory=list)
    wrong_seeds: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Scenes read."""
        return self.correct + self.wrong + self.unclear

    def figures(self) -> dict[str, object]:
        """Shares and the median read time, for a bench line."""
        n = max(self.total, 1)
        return {"scenes": self.total, "correct": round(self.correct / n, 4),
                "wrong": round(self.wrong / n, 4), "unclear": round(self.unclear / n, 4),
                "median_ms": round(statistics.median(self.times_ms), 2) if self.times_ms
                else None}


def score_deck(deck: str, seeds: Iterable[int], recogniser: Recogniser) -> Score:
    """Render a scene per seed and read it."""
    score = Score(deck)
    for seed in seeds:
        scene = random_scene(seed, deck)
        frame = render(scene)
        t0 = time.process_time()  # CPU time: other programs on the machine do not count
        read = recogniser.read(frame)
        score.times_ms.append((time.process_time() - t0) * 1000)
        if read.card is None:
            score.unclear += 1
        elif read.card == scene.top:
            score.correct += 1
        else:
            score.wrong += 1
            score.wrong_seeds.append((seed, str(scene.top), str(read.card)))
    return score
