"""How well the recogniser reads rendered scenes: right, wrong and unclear counts, timings; and a
deck enrolled from photos rendered by the virtual camera, as a person would enroll it from a
folder of photos. Used by the benches and the tests."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from hardware.camera.reader.enroll import Enroller, Seen, build
from hardware.camera.reader.recognise import Read, Recogniser
from hardware.camera.reader.templates import EnrolledDeck
from hardware.camera.synthetic.scene import Scene, random_scene, render
from referee.cards import full_deck

#: Issue 33's goals, the baseline of the benches' lines: shares right and wrong of decks never
#: seen in training, out of the box and enrolled.
TARGETS = {"out_of_box_correct": 0.97, "out_of_box_wrong": 0.005,
           "enrolled_correct": 0.995, "enrolled_wrong": 0.001}


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

    def add(self, scene: Scene, read: Read, ms: float) -> None:
        """Count one read of a scene."""
        self.times_ms.append(ms)
        if read.card is None:
            self.unclear += 1
        elif read.card == scene.top:
            self.correct += 1
        else:
            self.wrong += 1
            self.wrong_seeds.append((scene.seed, str(scene.top), str(read.card)))

    def figures(self) -> dict[str, object]:
        """Shares and the median read time, for a bench line."""
        n = max(self.total, 1)
        return {"scenes": self.total, "correct": round(self.correct / n, 4),
                "wrong": round(self.wrong / n, 4), "unclear": round(self.unclear / n, 4),
                "median_ms": round(statistics.median(self.times_ms), 2) if self.times_ms
                else None}


def timed_read(recogniser: Recogniser, frame: object) -> tuple[Read, float]:
    """A read and its CPU time in ms (other programs on the machine do not count)."""
    t0 = time.process_time()
    read = recogniser.read(frame)  # type: ignore[arg-type]
    return read, (time.process_time() - t0) * 1000


def score_deck(deck: str, seeds: Iterable[int], recogniser: Recogniser, **kw: object) -> Score:
    """Render a scene per seed (:func:`random_scene`, ``kw`` passed on) and read it."""
    score = Score(deck)
    for seed in seeds:
        scene = random_scene(seed, deck, **kw)  # type: ignore[arg-type]
        read, ms = timed_read(recogniser, render(scene))
        score.add(scene, read, ms)
    return score


def photo(deck: str, card: object, seed: int = 0) -> Scene:
    """A photo of one card alone, as a person takes it to enroll a deck: the card filling a
    good part of a 640x480 frame, a plain table, soft even light."""
    scene = random_scene(seed, deck, top=card, beneath=0, hands=False,  # type: ignore[arg-type]
                         size=(640, 480), length=(240.0, 380.0), tilt=8.0)
    scene.glare, scene.blur, scene.motion, scene.noise = None, 0.0, (0.0, 0.0), 2.0
    scene.light = (1.0, 0.1 * scene.light[1], 0.1 * scene.light[2])
    return scene


def enrolled(deck: str, enroller: Enroller | None = None, seed: int = 0) -> EnrolledDeck:
    """The deck enrolled from 52 rendered photos (as ``referee camera enroll --images``)."""
    enroller = enroller or Enroller()
    seen: dict[object, Seen] = {}
    for card in full_deck():
        for attempt in range(5):
            got = enroller.see(render(photo(deck, card, seed + 100 * attempt)))
            if got is not None:
                seen[card] = got
                break
        else:
            raise RuntimeError(f"{deck}: no photo of {card} showed a card")
    return build(seen)  # type: ignore[arg-type]
