"""Live enrollment (``referee camera enroll --device``, hardware/camera/reader/enroll.py): each
card in turn taken once it lies still, never the card before still lying there."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.enroll import EnrollError, enroll_live  # noqa: E402
from hardware.camera.reader.find import find_cards  # noqa: E402
from hardware.camera.reader.sources import Frame  # noqa: E402
from hardware.camera.reader.warp import warp  # noqa: E402
from hardware.camera.synthetic.scene import random_scene, render  # noqa: E402
from referee.cards import Card, full_deck  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402

DECK = "anglo"


def photo(card: Card) -> np.ndarray:
    scene = random_scene(7, DECK, top=card, beneath=0, hands=False)
    scene.glare, scene.blur, scene.motion = None, 0.0, 0.0
    return render(scene)


def camera(photos: dict[Card, np.ndarray], upto: int = 52) -> Iterator[Frame]:
    """A camera over a table where the operator lays the deck's cards one after the other: the
    card before still lies there longer than it takes to take one, then the table is bare,
    then the new card lies still (each frame with its own sensor noise)."""
    rng = np.random.default_rng(3)
    table = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    t = 0
    previous: np.ndarray | None = None
    for card in list(full_deck())[:upto]:
        shown = [previous] * 10 + [table] * 2 + [photos[card]] * 12
        for image in shown:
            if image is None:
                continue
            noise = rng.normal(0, 2.0, image.shape)
            yield Frame(t, np.clip(image + noise, 0, 255).astype(np.uint8))
            t += 33_000_000
        previous = photos[card]


@pytest.fixture(scope="module")
def photos() -> dict[Card, np.ndarray]:
    need_artwork(DECK)
    return {card: photo(card) for card in full_deck()}


@pytest.mark.slow
def test_each_card_is_taken_in_turn_and_names_itself(photos: dict[Card, np.ndarray]) -> None:
    said: list[tuple[str, str]] = []
    deck = enroll_live(camera(photos), lambda card, what: said.append((str(card), what)))
    assert [c for c, what in said if what == "taken"] == [str(c) for c in full_deck()]
    named = sum(deck.look(warp(image, find_cards(image)[0])).card == card
                for card, image in photos.items())
    assert named == 52


@pytest.mark.slow
def test_a_camera_that_stops_early_is_a_clear_error(photos: dict[Card, np.ndarray]) -> None:
    with pytest.raises(EnrollError, match="stopped before 5C"):
        enroll_live(camera(photos, upto=3), lambda card, what: None)
