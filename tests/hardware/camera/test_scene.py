"""The virtual camera's frames (hardware/camera/synthetic/scene.py)."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.synthetic import scene as scene_module  # noqa: E402
from hardware.camera.synthetic.scene import (  # noqa: E402
    FILM_SCALE,
    Scene,
    corners_in_frame,
    random_scene,
    render,
)


@pytest.mark.slow
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


def test_a_small_frame_is_the_frame_filmed_and_shrunk(decks: None) -> None:
    """A scene filmed straight at the locator's input size (160x120) is the 640x480 frame
    shrunk as the locator shrinks a camera's frame, to within the pixels that the artwork's
    own shrinking changes (sensor noise and JPEG left out here: a small frame draws other
    noise, and no JPEG)."""
    scenes = [random_scene(seed, deck) for seed in range(20)
              for deck in ("anglo", "touati+plain")]
    for s in scenes:
        s.noise, s.jpeg = 0.0, 0
    small = [render(s, 0.25) for s in scenes]
    assert {f.shape for f in small} == {(120, 160, 3)}
    assert np.array_equal(render(scenes[0], 0.25), small[0])
    shrunk = [cv2.resize(render(s), (160, 120), interpolation=cv2.INTER_AREA) for s in scenes]
    off = [float(np.abs(a.astype(np.float32) - b).mean()) for a, b in zip(small, shrunk,
                                                                          strict=True)]
    # measured: 1.8 on average, 2.9 at most; each card one small pixel off gives 4.2 and 6.6
    assert float(np.mean(off)) < 2.5 and max(off) < 4.0, off


def _edges(scene: Scene) -> np.ndarray:
    """The pixels of a 160x120 frame within a pixel or so of a card's edge."""
    band = np.zeros((120, 160), np.uint8)
    for card in scene.cards:
        quad = np.round(corners_in_frame(scene, card) * 4).astype(np.int32)  # /4, 4 bits
        cv2.polylines(band, [quad.reshape(-1, 1, 2)], True, 1, 3, cv2.LINE_8, 4)
    return band > 0


@pytest.mark.slow
def test_the_locator_s_training_frames_are_filmed_at_half_size_for_the_card_edges(
        decks: None) -> None:
    """The locator's training films at half size and shrinks (:func:`training.locator.sample`):
    along the cards' edges, where the network finds the top card, that is much nearer the
    full frame shrunk than filming straight at the input size."""
    scenes = [random_scene(seed, deck) for seed in range(20)
              for deck in ("anglo", "touati+plain")]
    half, quarter, whole = [], [], []
    for s in scenes:
        s.noise, s.jpeg = 0.0, 0
        shrunk = cv2.resize(render(s), (160, 120), interpolation=cv2.INTER_AREA)
        filmed = cv2.resize(render(s, FILM_SCALE), (160, 120), interpolation=cv2.INTER_AREA)
        edge = _edges(s)
        off = np.abs(filmed.astype(np.float32) - shrunk)
        half.append(float(off[edge].mean()))
        whole.append(float(off.mean()))
        quarter.append(float(np.abs(render(s, 0.25).astype(np.float32) - shrunk)[edge].mean()))
    # measured: 4.2 grey levels along the edges at half size, 7.6 at the input size; 1.2 over
    # the whole frame (2.4 at most)
    assert float(np.mean(half)) < 0.7 * float(np.mean(quarter)), (half, quarter)
    assert float(np.mean(whole)) < 1.6 and max(whole) < 3.0, whole


def test_a_long_card_filmed_at_half_size_keeps_its_artwork_sharp(decks: None) -> None:
    """A card 290 pixels long is 145 long at half size: its artwork is kept at 192 pixels, not
    enlarged from the 96 kept for a quarter (which blurred its face). Inside the card the half
    frame is then within 2.3 grey levels on average of the full frame shrunk (3.6 from
    96-pixel artwork)."""
    import dataclasses

    off = []
    for seed in range(12):
        scene = random_scene(seed, "anglo", beneath=0, hands=False)
        scene.noise, scene.jpeg, scene.blur, scene.motion = 0.0, 0, 0.0, 0.0
        scene.cards[-1] = dataclasses.replace(scene.cards[-1], height=290.0)
        shrunk = cv2.resize(render(scene), (320, 240), interpolation=cv2.INTER_AREA)
        inside = np.zeros((240, 320), np.uint8)
        cv2.fillConvexPoly(inside, np.round(corners_in_frame(scene, scene.cards[-1]) / 2)
                           .astype(np.int32), 1)
        inside = cv2.erode(inside, np.ones((7, 7), np.uint8))
        diff = np.abs(render(scene, 0.5).astype(np.float32) - shrunk)
        off.append(float(diff[inside > 0].mean()))
    assert float(np.mean(off)) < 2.9, off
