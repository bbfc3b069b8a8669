"""The virtual camera's frames (hardware/camera/scene.py)."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera import scene as scene_module  # noqa: E402
from hardware.camera.scene import random_scene, render  # noqa: E402


def test_a_card_composed_in_its_box_is_the_card_composed_on_the_whole_frame(
        decks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each card is laid on the frame only inside its box and a margin (the cost of a frame
    is then the cards' area, not the frame's times the cards): the frames are the very ones
    composed on the whole frame, shadows and all, near the frame's edges too."""
    scenes = [random_scene(seed, deck) for seed in range(40)
              for deck in ("anglo", "touati+plain")]
    boxed = [render(s) for s in scenes]
    monkeypatch.setattr(scene_module, "_MARGIN", 10_000)  # every box leaves the frame: whole
    whole = [render(s) for s in scenes]
    assert all(np.array_equal(a, b) for a, b in zip(boxed, whole, strict=True))
    monkeypatch.setattr(scene_module, "_MARGIN", 4)  # a margin narrower than the shadow
    narrow = [render(s) for s in scenes]
    assert not all(np.array_equal(a, b) for a, b in zip(narrow, whole, strict=True))
