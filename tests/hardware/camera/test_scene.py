"""The virtual camera's frames (hardware/camera/synthetic/scene.py, tables.py): scenes over the
range the recogniser is held to (issue 33), the same seed the same frame, and a frame filmed
small the frame filmed whole and shrunk."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.synthetic import scene as scene_module  # noqa: E402
from hardware.camera.synthetic.scene import (  # noqa: E402
    SIZES,
    Placed,
    Scene,
    apparent_length,
    camera,
    corners_in_frame,
    in_frame,
    random_scene,
    render,
)
from hardware.camera.synthetic.tables import KINDS, kind_of, table_image  # noqa: E402
from referee.cards import Card  # noqa: E402


@pytest.mark.slow
def test_random_scenes_span_the_issue_s_range(decks: None) -> None:
    """Frames of every size, the top card wholly in view from about 120 pixels long to 90 % of
    the frame's height, 0 to 4 cards beneath, tilt up to 30 degrees, every kind of table."""
    scenes = [random_scene(seed, "anglo") for seed in range(400)]
    assert {s.size for s in scenes} == set(SIZES)
    lengths = [apparent_length(s, s.cards[-1]) / s.size[1] for s in scenes]
    small = [apparent_length(s, s.cards[-1]) for s in scenes]
    assert min(small) < 140 and min(small) > 100
    assert max(lengths) > 0.8 and max(lengths) < 0.95
    assert all(in_frame(s, s.cards[-1]) for s in scenes)
    assert {len(s.cards) - 1 for s in scenes} == {0, 1, 2, 3, 4}
    tilts = [s.tilt[0] for s in scenes]
    assert max(tilts) > 25 and max(tilts) <= 30
    assert {kind_of(s.background) for s in scenes} == set(KINDS)
    turns = {round(s.cards[-1].angle / 90) % 4 for s in scenes}
    assert turns == {0, 1, 2, 3}


def test_the_same_seed_films_the_same_frame(decks: None) -> None:
    a, b = random_scene(3, "anglo", size=(640, 480)), random_scene(3, "anglo", size=(640, 480))
    assert a == b
    assert np.array_equal(render(a), render(b))
    assert render(a).shape == (480, 640, 3)


def test_a_level_camera_sees_the_table_as_it_lies() -> None:
    s = Scene(deck="anglo", background=0, size=(800, 600))
    assert np.allclose(camera(s), np.eye(3))
    s.tilt = (25.0, 40.0)
    h = camera(s)
    # a square on the table seen tilted is no longer a square: its far side is shorter
    sq = np.array([[[300.0, 200.0]], [[500.0, 200.0]], [[500.0, 400.0]], [[300.0, 400.0]]])
    seen = cv2.perspectiveTransform(sq, h).reshape(4, 2)
    sides = [np.linalg.norm(seen[i] - seen[(i + 1) % 4]) for i in range(4)]
    assert max(sides) / min(sides) > 1.1


def test_a_top_card_is_drawn_where_its_corners_say(decks: None) -> None:
    """Inside the top card's outline the frame is the card (light paper near its corner), and
    the outline is where the card's edge is."""
    for seed in range(6):
        s = random_scene(seed, "anglo", beneath=0, hands=False, size=(640, 480))
        s.glare, s.blur, s.motion, s.noise, s.jpeg = None, 0.0, (0.0, 0.0), 0.0, 0
        s.light, s.tint, s.vignette = (1.0, 0.0, 0.0), (1.0, 1.0, 1.0), 0.0
        frame = render(s)
        quad = corners_in_frame(s, s.cards[-1])
        inside = np.zeros(frame.shape[:2], np.uint8)
        cv2.fillConvexPoly(inside, np.round(quad).astype(np.int32), 1)
        inside = cv2.erode(inside, np.ones((9, 9), np.uint8))
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        assert np.median(grey[inside > 0]) > 180, seed  # a white card


@pytest.mark.slow
def test_a_frame_filmed_small_is_the_frame_filmed_whole_and_shrunk(decks: None) -> None:
    """The locator's training films straight at its input size: that is close to the full
    frame shrunk by area (noise, JPEG and blur left out)."""
    off = []
    for seed in range(12):
        s = random_scene(seed, "touati", size=(640, 480))
        s.noise, s.jpeg, s.blur, s.motion = 0.0, 0, 0.0, (0.0, 0.0)
        small = render(s, (160, 120))
        assert small.shape == (120, 160, 3)
        shrunk = cv2.resize(render(s), (160, 120), interpolation=cv2.INTER_AREA)
        off.append(float(np.abs(small.astype(np.float32) - shrunk).mean()))
    # measured: 2.8 on average; 8.9 at most (a checked cloth, tilted 22 degrees: its fine
    # pattern drawn small differs from the large one shrunk)
    assert float(np.mean(off)) < 4.0 and max(off) < 11.0, off


@pytest.mark.slow
def test_cards_are_composed_only_in_their_box(decks: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each card is laid on the frame only inside its box and a margin: the frames are the very
    ones composed with a margin as wide as the frame."""
    scenes = [random_scene(seed, "anglo", size=(640, 480)) for seed in range(10)]
    boxed = [render(s) for s in scenes]
    monkeypatch.setattr(scene_module, "_MARGIN", 10_000)
    whole = [render(s) for s in scenes]
    assert all(np.array_equal(a, b) for a, b in zip(boxed, whole, strict=True))


@pytest.mark.slow
def test_every_kind_of_table_is_drawn_at_any_size() -> None:
    numbers: dict[str, int] = {}
    for n in range(300):
        numbers.setdefault(kind_of(n), n)
    assert set(numbers) == set(KINDS)
    for kind, n in numbers.items():
        for size in ((160, 128), (1280, 960)):
            image, margin = table_image(n, size)
            assert image.shape == (size[1] + 2 * margin, size[0] + 2 * margin, 3), kind
            assert image.dtype == np.uint8


def test_a_long_card_keeps_in_the_frame_at_any_tilt(decks: None) -> None:
    """A card 90 % of the frame's height, the camera tilted 30 degrees: the scene shortens it
    as needed to keep it wholly in view."""
    for seed in range(20):
        s = random_scene(seed, "anglo", length=(0.9 * 480, 0.9 * 480), size=(640, 480))
        assert in_frame(s, s.cards[-1])
        assert apparent_length(s, s.cards[-1]) > 0.6 * 480


def test_placed_cards_turn_about_their_centre() -> None:
    s = Scene(deck="anglo", background=0)
    p = Placed(Card.parse("QH"), 320, 240, 200, 90)
    monkey = dataclasses.replace(p, angle=0)
    a = scene_module.card_corners(p, 1.4)
    b = scene_module.card_corners(monkey, 1.4)
    assert np.allclose(a.mean(axis=0), b.mean(axis=0))
    assert math.isclose(float(np.linalg.norm(a[0] - a[3])), 200, rel_tol=1e-5)
    assert s.top is None
